"""The LLM reasoner against a scripted OpenAI-compatible server: every case ends in a valid output
(the fallback's where the LLM could not give one) and notes that say what happened."""

import threading

import pytest

from tender.agents.context import Cancelled, RunContext
from tender.agents.messages import CallForProposals, Propose
from tender.agents.reasoners.llm import LLMReasoner
from tender.agents.reasoners.prompts import answer_schema
from tender.agents.tasks import (
    ApiKnowledge,
    BidDecision,
    BidTask,
    CategoryCandidate,
    CategoryMapping,
    ContractorKnowledge,
    DecomposeTask,
    Decomposition,
    FunctionSpec,
    MapCategoriesTask,
    Selection,
    SelectTask,
)
from tests.llm_fake_server import Answer, FakeLLMServer, Hang, Status, llm_reasoner
from tests.llm_fake_server import fallback, server  # noqa: F401 (fixtures)

DECOMPOSITION = {
    "functions": [
        {
            "id": "f1",
            "name": "find restaurants",
            "description": "nearby restaurants with their reviews",
            "depends_on": [],
        },
        {"id": "f2", "name": "show on a map", "description": "shows them on a map", "depends_on": ["f1"]},
    ]
}
REQUIREMENT = "A site that shows nearby restaurants on a map with their reviews"


def decompose() -> DecomposeTask:
    return DecomposeTask(requirement=REQUIREMENT)


def bid(api_ids=(3,)) -> BidTask:
    cfp = CallForProposals(
        sender="manager",
        receiver="*",
        task_id="t1",
        function_id="f1",
        function="nearby restaurants with their reviews",
        categories=["Reviews"],
        requirement=REQUIREMENT,
    )
    apis = [
        ApiKnowledge(api_id=i, name=f"API {i}", categories=["Reviews"], description=f"API {i} gives reviews.")
        for i in api_ids
    ]
    return BidTask(cfp=cfp, knowledge=ContractorKnowledge(contractor=f"api:{api_ids[0]}", apis=apis))


def reasoner(server, fallback, **options) -> LLMReasoner:
    return llm_reasoner(server, fallback, **{"max_retries": 2, **options})


def test_a_valid_answer_becomes_the_output_and_its_tokens_are_counted(server, fallback):
    server.enqueue(Answer(DECOMPOSITION, prompt_tokens=321, completion_tokens=45))
    context = RunContext()

    output = reasoner(server, fallback).run(decompose(), context)

    assert output == Decomposition.model_validate(DECOMPOSITION)
    (request,) = server.requests
    assert request["model"] == "fake-model"
    assert request["response_format"]["type"] == "json_schema"
    assert request["response_format"]["json_schema"]["schema"] == answer_schema(decompose())
    assert context.cost.tokens.input == 321 and context.cost.tokens.output == 45
    assert context.cost.tokens_by_role["manager"].input == 321
    assert context.cost.tokens_by_step == {"manager.decompose": context.cost.tokens}
    assert context.cost.llm_calls == 1 and context.cost.fallbacks == 0
    assert context.notes == [] and fallback.asked == []


def test_a_server_that_turns_down_json_schema_is_asked_in_json_mode_with_the_schema(fallback):
    with FakeLLMServer(rejects_json_schema=True) as server:
        server.enqueue(Answer(DECOMPOSITION), Answer(DECOMPOSITION))
        llm = reasoner(server, fallback)
        context = RunContext()

        first = llm.run(decompose(), context)
        second = llm.run(decompose(), context)

    assert first == second == Decomposition.model_validate(DECOMPOSITION)
    formats = [r["response_format"] for r in server.requests]
    assert [f["type"] for f in formats] == ["json_schema", "json_object", "json_object"]  # asked once, then remembered
    assert formats[1]["schema"] == answer_schema(decompose())
    assert context.notes == [
        "The LLM server turned down response_format json_schema (HTTP 500); "
        "asking in JSON mode with the schema from now on."
    ]
    assert context.cost.llm_calls == 2 and fallback.asked == []


def test_malformed_json_is_sent_back_once_and_the_repair_is_used(server, fallback):
    server.enqueue(Answer("Sure! Here are the functions: f1, f2"), Answer(DECOMPOSITION))
    context = RunContext()

    output = reasoner(server, fallback).run(decompose(), context)

    assert output == Decomposition.model_validate(DECOMPOSITION)
    first, repair = server.requests
    assert repair["messages"][:2] == first["messages"]
    assert repair["messages"][2] == {"role": "assistant", "content": "Sure! Here are the functions: f1, f2"}
    assert "not valid JSON" in repair["messages"][3]["content"]
    assert context.notes == [
        "manager, decompose: the LLM's answer was invalid (not valid JSON: Expecting value (line 1, column 1)); "
        "sent it back once to be repaired.",
        "manager, decompose: the repaired answer is valid.",
    ]
    assert context.cost.llm_calls == 2 and context.cost.tokens.input == 200 and fallback.asked == []
    assert context.cost.repairs == 1 and context.cost.tokens_by_step["repairs"].input == 100
    assert '{"functions": [{"id": "f1"' in repair["messages"][3]["content"]  # the answer's shape, and no more
    assert len(repair["messages"][3]["content"]) < 400


def test_a_score_out_of_range_is_invalid_twice_then_the_fallback_answers(server, fallback):
    wild = {"proposals": [{"api_id": 3, "score": 1234567890, "rationale": "it has reviews"}]}
    server.enqueue(Answer(wild), Answer(wild))
    context = RunContext()
    task = bid()

    output = reasoner(server, fallback).run(task, context)

    assert output == BidDecision(refusal="fallback")  # not a clamped score of 1
    assert fallback.asked == [task]
    assert "proposals.0.score: Input should be less than or equal to 1" in server.requests[1]["messages"][-1]["content"]
    assert context.notes[0].startswith(
        "contractor api:3, bid on t1: the LLM's answer was invalid (does not match "
        "the schema: proposals.0.score: Input should be less than or equal to 1 "
        "(got 1234567890))"
    )
    assert context.notes[1].startswith("contractor api:3, bid on t1: the repaired answer was still invalid")
    assert context.notes[1].endswith("the test-scripted-fallback reasoner answered this step.")
    assert context.cost.fallbacks == 1 and context.cost.llm_calls == 2
    assert context.cost.tokens_by_role["contractor"].input == 200


def test_a_raw_control_character_inside_a_string_is_still_json(server, fallback):
    server.enqueue(Answer('{"functions": [{"id": "f1", "name": "map\tview", "description": "a map\nof cafés"}]}'))

    output = reasoner(server, fallback).run(decompose(), RunContext())

    assert output.functions[0].description == "a map\nof cafés"


def test_malformed_json_twice_falls_back(server, fallback):
    server.enqueue(Answer('{"functions": [ {"id": "f1"'), Answer('```json\n{"functions": \n```'))
    context = RunContext()

    output = reasoner(server, fallback).run(decompose(), context)

    assert output == fallback.outputs[DecomposeTask]
    assert "not valid JSON" in context.notes[0] and "not valid JSON" in context.notes[1]
    assert context.cost.fallbacks == 1


def test_a_bid_for_an_api_the_contractor_does_not_hold_is_invalid(server, fallback):
    foreign = {"proposals": [{"api_id": 0, "score": 0.9, "rationale": "Google Maps is best"}]}
    own = {"proposals": [{"api_id": 3, "score": 0.8, "rationale": "restaurant reviews"}]}
    server.enqueue(Answer(foreign), Answer(own))
    context = RunContext()

    output = reasoner(server, fallback).run(bid(), context)

    assert [p.api_id for p in output.proposals] == [3]
    assert "api_id 0 is not one of your APIs [3]" in context.notes[0]


def reviews_tasks(candidates, max_categories):
    """Mapping the reviews function to some of `candidates`, and selecting among one proposal (Yelp, id 3)."""
    function = FunctionSpec(id="f1", name="x", description="reviews")
    mapping = MapCategoriesTask(
        requirement=REQUIREMENT, function=function, candidates=candidates, max_categories=max_categories
    )
    proposal = Propose(
        sender="api:3", receiver="manager", task_id="t1", api_id=3, api_name="Yelp", score=0.8, rationale="r"
    )
    return mapping, SelectTask(requirement=REQUIREMENT, functions=[function], proposals=[proposal], max_apis=1)


def test_categories_and_selections_must_come_from_what_was_offered(server, fallback):
    candidates = [CategoryCandidate(name="Reviews", similarity=0.6), CategoryCandidate(name="Food", similarity=0.5)]
    mapping, selection = reviews_tasks(candidates, max_categories=1)
    server.enqueue(
        Answer({"categories": ["Mapping"]}),
        Answer({"categories": ["Reviews"]}),
        Answer({"api_ids": [7]}),
        Answer({"api_ids": [3]}),
    )
    context = RunContext()
    llm = reasoner(server, fallback)

    assert llm.run(mapping, context) == CategoryMapping(categories=["Reviews"])
    assert llm.run(selection, context) == Selection(api_ids=[3])
    assert "'Mapping' is not a candidate; choose from ['Reviews', 'Food']" in context.notes[0]
    assert "api_id 7 was not proposed" in context.notes[2]
    # What the server is asked to follow offers only what was offered.
    assert server.requests[0]["response_format"]["json_schema"]["schema"]["properties"]["categories"]["items"] == {
        "enum": ["Reviews", "Food"]
    }
    assert server.requests[2]["response_format"]["json_schema"]["schema"]["properties"]["api_ids"]["items"] == {
        "enum": [3]
    }


def test_harmless_faults_are_tidied_with_a_note_instead_of_a_round_trip(server, fallback):
    candidates = [CategoryCandidate(name=n, similarity=0.5) for n in ("Reviews", "Food", "Mapping")]
    mapping, selection = reviews_tasks(candidates, max_categories=2)
    dangling = {
        "functions": [
            {"id": "f1", "name": "a", "description": "b", "depends_on": []},
            {"id": "f2", "name": "c", "description": "d", "depends_on": ["f3", "f1", "f2"]},
        ]
    }
    server.enqueue(
        Answer(dangling),
        Answer({"categories": ["Food", "Reviews", "Food", "Mapping"]}),
        Answer({"proposals": []}),
        Answer({"api_ids": [3, 3]}),
    )
    context = RunContext()
    llm = reasoner(server, fallback)

    assert [f.depends_on for f in llm.run(decompose(), context).functions] == [[], ["f1"]]
    assert llm.run(mapping, context) == CategoryMapping(categories=["Food", "Reviews"])
    assert llm.run(bid(), context) == BidDecision(refusal="none of my APIs fits the call")
    assert llm.run(selection, context) == Selection(api_ids=[3])

    assert len(server.requests) == 4 and fallback.asked == []
    assert context.cost.tidied == 4 and context.cost.repairs == 0 and context.cost.fallbacks == 0
    assert context.notes == [
        "manager, decompose: tidied the LLM's answer (f2 depended on 'f3', 'f2', no other function: dropped) "
        "instead of asking again.",
        "manager, map f1: tidied the LLM's answer (repeated categories dropped; 3 categories, kept the first 2) "
        "instead of asking again.",
        "contractor api:3, bid on t1: tidied the LLM's answer (no proposal and no refusal: read as a refusal) "
        "instead of asking again.",
        "manager, select: tidied the LLM's answer (repeated api_ids dropped) instead of asking again.",
    ]


@pytest.mark.parametrize("answer", [{}, {"nonsense": 1}])
def test_an_object_of_none_of_the_answers_fields_is_invalid_not_a_refusal(server, fallback, answer):
    server.enqueue(Answer(answer), Answer(answer))
    context = RunContext()

    reasoner(server, fallback).run(bid(), context)

    assert fallback.asked and context.cost.fallbacks == 1 and context.cost.tidied == 0
    assert "the object has none of the answer's fields (proposals, refusal)" in context.notes[0]


def test_every_function_is_mapped_in_one_call(server, fallback):
    def task(fid: str, names: list[str]) -> MapCategoriesTask:
        return MapCategoriesTask(
            requirement=REQUIREMENT,
            function=FunctionSpec(id=fid, name=fid, description=fid),
            candidates=[CategoryCandidate(name=n, similarity=0.5) for n in names],
            max_categories=2,
        )

    tasks = [task("f1", ["Reviews", "Food"]), task("f2", ["Mapping", "Travel"])]
    server.enqueue(
        Answer({"f1": ["Food"], "f2": ["Mapping", "Travel"]}),
        Answer({"f1": ["Mapping"], "f2": ["Travel"]}),
        Answer({"f2": ["Mapping"]}),
    )
    context = RunContext()
    llm = reasoner(server, fallback)

    assert llm.run_batch(tasks, context) == [
        CategoryMapping(categories=["Food"]),
        CategoryMapping(categories=["Mapping", "Travel"]),
    ]
    schema = server.requests[0]["response_format"]["json_schema"]["schema"]
    assert schema["required"] == ["f1", "f2"] and schema["properties"]["f2"]["items"] == {"enum": ["Mapping", "Travel"]}
    assert "<function>\nf2: f2\n</function>" in server.requests[0]["messages"][1]["content"]
    assert context.cost.tokens_by_step["manager.map_all"].input == 100

    # Invalid twice: the fallback maps each function, and the step counts as one fallback.
    assert llm.run_batch(tasks, context) == [fallback.outputs[MapCategoriesTask]] * 2
    assert "f1: 'Mapping' is not a candidate" in context.notes[0] and "no categories for f1" in context.notes[1]
    assert context.cost.fallbacks == 1 and fallback.asked == tasks


def test_a_rate_limit_is_retried_and_the_answer_used(server, fallback):
    server.enqueue(Status(429, "slow down"), Answer(DECOMPOSITION))
    context = RunContext()

    output = reasoner(server, fallback).run(decompose(), context)

    assert output == Decomposition.model_validate(DECOMPOSITION)
    assert len(server.requests) == 2
    assert context.notes == ["manager, decompose: answered after 1 retry."]
    assert context.cost.llm_calls == 1 and context.cost.fallbacks == 0


def test_server_errors_are_retried_then_the_fallback_answers(server, fallback):
    server.enqueue(*[Status(500, "model crashed")] * 4)
    context = RunContext()

    output = reasoner(server, fallback, max_retries=2).run(decompose(), context)

    assert output == fallback.outputs[DecomposeTask]
    # One request asks whether the server takes json_schema; then JSON mode, tried 1 + 2 times.
    assert len(server.requests) == 4 and server.unused == 0
    assert context.notes == [
        "manager, decompose: the LLM endpoint failed (HTTP 500, 3 attempts: model crashed); "
        "the test-scripted-fallback reasoner answered this step."
    ]
    assert context.cost.fallbacks == 1 and context.cost.llm_calls == 0


def test_a_hanging_server_times_out_and_later_steps_do_not_wait_for_it(server, fallback):
    server.enqueue(Hang(5), Hang(5))
    context = RunContext()
    llm = reasoner(server, fallback, timeout_s=0.3, max_retries=1)

    first = llm.run(decompose(), context)
    second = llm.run(bid(), context)

    assert first == fallback.outputs[DecomposeTask] and second == fallback.outputs[BidTask]
    assert len(server.requests) == 2  # one call, tried twice; the second step did not ask the failing endpoint
    assert server.settled() and (server.abandoned, server.outlasted) == (2, 0)  # each attempt hung up at 0.3 s
    assert context.notes[0] == (
        "manager, decompose: the LLM endpoint failed (no answer within 0.3 s, 2 attempts); "
        "the test-scripted-fallback reasoner answered this step."
    )
    assert context.notes[1].startswith(
        "The LLM endpoint failed (no answer within 0.3 s, 2 attempts); steps in the 30 s"
    )
    assert context.cost.fallbacks == 2


def test_an_unreachable_server_is_named_in_the_note(fallback):
    llm = LLMReasoner(base_url="http://127.0.0.1:9/v1", model="m", fallback=fallback, timeout_s=0.5, max_retries=0)
    context = RunContext()

    assert llm.run(decompose(), context) == fallback.outputs[DecomposeTask]
    assert (
        "cannot reach http://127.0.0.1:9/v1, 1 attempt; is the server running? Check TENDER_LLM_BASE_URL"
        in context.notes[0]
    )


def test_an_unknown_model_says_which_setting_to_check(server, fallback):
    server.enqueue(Status(404, "model 'fake-model' not found"))
    context = RunContext()

    reasoner(server, fallback).run(decompose(), context)

    assert "HTTP 404, no model 'fake-model'" in context.notes[0] and "TENDER_LLM_MODEL" in context.notes[0]


def test_past_the_token_budget_the_remaining_steps_use_the_fallback(server, fallback):
    server.enqueue(Answer(DECOMPOSITION, prompt_tokens=900, completion_tokens=150))
    context = RunContext(max_tokens=1000)
    llm = reasoner(server, fallback)

    assert llm.run(decompose(), context) == Decomposition.model_validate(DECOMPOSITION)
    assert llm.run(bid(), context) == fallback.outputs[BidTask]
    assert llm.run(bid(), context) == fallback.outputs[BidTask]

    assert len(server.requests) == 1
    assert context.notes == [
        "Token budget of 1,000 per request reached: the remaining steps use the test-scripted-fallback reasoner."
    ]
    assert context.cost.fallbacks == 2 and context.cost.tokens.input + context.cost.tokens.output == 1050


def test_no_repair_past_the_budget(server, fallback):
    server.enqueue(Answer("not json", prompt_tokens=1000))
    context = RunContext(max_tokens=1000)

    assert reasoner(server, fallback).run(decompose(), context) == fallback.outputs[DecomposeTask]
    assert len(server.requests) == 1
    assert context.notes[-1] == (
        "manager, decompose: no token budget left to repair the answer; "
        "the test-scripted-fallback reasoner answered this step."
    )


def test_a_cancelled_request_asks_nothing(server, fallback):
    context = RunContext()
    context.cancel.set()

    with pytest.raises(Cancelled):
        reasoner(server, fallback).run(decompose(), context)
    assert server.requests == [] and fallback.asked == []


def test_parallel_bids_stay_within_the_limit_of_calls_in_flight(server, fallback):
    answer = {"proposals": [], "refusal": "no fit"}
    server.enqueue(*[Answer(answer, delay_s=0.1) for _ in range(9)])
    llm = reasoner(server, fallback, max_in_flight=2)
    context = RunContext()
    llm.run(bid(), context)  # the first request settles the response format; then eight race

    threads = [threading.Thread(target=llm.run, args=(bid(), context)) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    assert llm.max_in_flight == 2
    assert len(server.requests) == 9 and server.peak_in_flight == 2
    assert context.cost.llm_calls == 9 and context.cost.fallbacks == 0
