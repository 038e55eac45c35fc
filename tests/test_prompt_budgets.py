"""Every step's prompt has a budget (prompts.BUDGET_CHARS) that no requirement and no catalogue can break: the
largest requirement a request may carry, a contractor with a long description and thousands of past uses, a
category of hundreds of APIs, eight functions with many candidates, hundreds of proposals. So no step falls back
because Tender made a prompt over the model's context."""

import json

import pytest

from tender.agents.messages import CallForProposals, Propose
from tender.agents.reasoners.prompts import (
    BUDGET_CHARS,
    answer_schema,
    budget_name,
    estimate_tokens,
    prompt_chars,
    render_messages,
    repair_message,
)
from tender.agents.request import MAX_REQUIREMENT_CHARS
from tender.agents.tasks import (
    ApiKnowledge,
    BidTask,
    CategoryCandidate,
    CoUsageEdge,
    ContractorKnowledge,
    DecomposeTask,
    FunctionSpec,
    MapAllTask,
    MapCategoriesTask,
    PastUse,
    SelectTask,
)

SENTENCE = (
    "A travel site that shows hotels, restaurants and events near the user's position on an interactive map, "
    "with reviews, photos, weather forecasts, currency conversion and a way to book and pay by text message. "
)
REQUIREMENT = (SENTENCE * (MAX_REQUIREMENT_CHARS // len(SENTENCE) + 1))[:MAX_REQUIREMENT_CHARS]
LONG = "This API gives access to a great many things of every kind; " * 80


def functions(n: int = 8) -> list[FunctionSpec]:
    return [
        FunctionSpec(id=f"f{i}", name=LONG[:200], description=LONG[:1500], depends_on=[f"f{j}" for j in range(1, i)])
        for i in range(1, n + 1)
    ]


def api(api_id: int, history: int = 2000) -> ApiKnowledge:
    return ApiKnowledge(
        api_id=api_id,
        name=f"A long API name number {api_id} " * 4,
        description=LONG,
        categories=[f"Category {c} with a long name" for c in range(12)],
        usage_count=history,
        history=[
            PastUse(
                mashup_id=m,
                name=f"Mashup {m} " * 10,
                description=LONG[:1000],
                other_apis=[f"Other {o}" for o in range(20)],
            )
            for m in range(history)
        ],
    )


def cfp(steps: list[str], function: str | None = LONG) -> CallForProposals:
    return CallForProposals(
        sender="manager",
        receiver="*",
        task_id="t1",
        requirement=REQUIREMENT,
        steps=steps,
        function_id="f1" if function else None,
        function=function,
        categories=[f"Category {c}" for c in range(8)],
    )


def candidates(n: int = 40) -> list[CategoryCandidate]:
    return [
        CategoryCandidate(name=f"Candidate category {c}", similarity=0.5 - c / 100, neighbour_votes=0.1, api_count=40)
        for c in range(n)
    ]


def large_tasks() -> dict:
    many = [api(i, history=50) for i in range(300)]
    proposals = [
        Propose(
            sender=f"api:{i}",
            receiver="manager",
            task_id="t1",
            api_id=i,
            api_name=f"API {i} " * 8,
            score=(i % 100) / 100,
            rationale=LONG[:2000],
            function_id=f"f{i % 8 + 1}",
        )
        for i in range(400)
    ]
    return {
        "decompose": DecomposeTask(requirement=REQUIREMENT),
        "map": MapCategoriesTask(
            requirement=REQUIREMENT, function=functions(1)[0], candidates=candidates(), max_categories=8
        ),
        "map_all": MapAllTask(
            items=[
                MapCategoriesTask(requirement=REQUIREMENT, function=f, candidates=candidates(), max_categories=8)
                for f in functions()
            ]
        ),
        "bid (one API, manager-led)": BidTask(
            cfp=cfp(["match"]), knowledge=ContractorKnowledge(contractor="api:1", apis=[api(1)])
        ),
        "bid (contractor-led)": BidTask(
            cfp=cfp(["decompose", "map", "match"], function=None),
            knowledge=ContractorKnowledge(contractor="api:1", apis=[api(1)]),
        ),
        "bid (collaborative)": BidTask(
            cfp=cfp(["map", "match", "select"]), knowledge=ContractorKnowledge(contractor="api:1", apis=[api(1)])
        ),
        "bid (a category of 300 APIs)": BidTask(
            cfp=cfp(["match"]),
            knowledge=ContractorKnowledge(contractor="category:Mapping", category="Mapping", apis=many),
        ),
        "bid (single agent, 300 shortlisted)": BidTask(
            cfp=cfp(["decompose", "map", "match"], function=None),
            knowledge=ContractorKnowledge(contractor="single-agent", apis=many),
        ),
        "select": SelectTask(
            requirement=REQUIREMENT,
            functions=functions(),
            proposals=proposals,
            max_apis=None,
            co_usage=[CoUsageEdge(a=a, b=b, weight=0.5) for a in range(40) for b in range(a + 1, 40)],
        ),
    }


TASKS = large_tasks()


@pytest.mark.parametrize("name", list(TASKS))
def test_each_steps_prompt_stays_within_its_budget_for_the_largest_inputs(name):
    task = TASKS[name]
    messages = render_messages(task)
    size = prompt_chars(messages)
    budget = BUDGET_CHARS[budget_name(task)]

    print(f"{name}: {size} characters, about {estimate_tokens(size)} tokens (budget {budget})")
    assert size <= budget
    assert estimate_tokens(size) <= 3200  # far inside a small model's context (SmolLM2: 8,192)
    assert "vector" not in json.dumps(messages)


@pytest.mark.parametrize("name", list(TASKS))
def test_each_answer_schema_is_small_and_the_repair_message_carries_only_the_error_and_the_shape(name):
    task = TASKS[name]
    schema = json.dumps(answer_schema(task))
    repair = repair_message("api_id 7 is not one of your APIs [3]", task)["content"]

    assert len(schema) <= 2500
    assert "api_id 7 is not one of your APIs [3]" in repair and len(repair) <= 500
    assert REQUIREMENT[:40] not in repair


def test_a_contractor_prompt_is_its_card_the_function_and_the_requirement():
    task = TASKS["bid (one API, manager-led)"]
    _, user = render_messages(task)
    content = user["content"]

    assert content.count("<requirement>") == content.count("<function>") == content.count("<your_apis>") == 1
    assert len(content.split("<your_apis>")[1].splitlines()) <= 5  # the card: three lines and the tags
    assert content.count("Mashup ") <= 2 * 10  # two past uses, each named by ten words
    assert "Other 0" not in content  # nothing about other APIs
    assert "Category 7" not in content  # categories the manager announced are not the contractor's business


def test_a_category_contractor_shows_its_apis_nearest_to_the_call_and_says_how_many_it_leaves_out():
    many = [api(i, history=3) for i in range(30)]
    many[17] = many[17].model_copy(
        update={
            "name": "Hotel booking",
            "description": "Book hotels near the user.",
            "terms": frozenset({"hotel", "book", "near"}),
        }
    )
    call = cfp(["match"], function="book hotels")
    task = BidTask(cfp=call, knowledge=ContractorKnowledge(contractor="category:Travel", category="Travel", apis=many))

    _, user = render_messages(task)

    assert (
        user["content"]
        .splitlines()[user["content"].splitlines().index("<your_apis>") + 1]
        .startswith("api_id 17: Hotel")
    )
    assert "(25 more of your APIs fit the call less well and are not shown)" in user["content"]
    assert answer_schema(task)["properties"]["proposals"]["items"]["properties"]["api_id"]["enum"][0] == 17
