"""Whole runs with an LLM role: the plan is valid whatever the endpoint does, and says what happened."""

import html
import re

import pytest

from tender.agents.context import RunContext
from tender.agents.reasoners.embedded import EmbeddedReasoner
from tender.agents.reasoners.llm import LLMReasoner
from tender.agents.request import Request
from tender.agents.service import Tender
from tests.llm_fake_server import Answer, FakeLLMServer, Hang

REQUIREMENT = "A site that shows nearby restaurants on a map with their reviews"


def element(body: dict, tag: str) -> list[str]:
    """The lines of one data element of the request's prompt."""
    user = body["messages"][1]["content"]
    inside = re.search(rf"<{tag}>\n(.*?)\n</{tag}>", user, re.S).group(1)
    return [html.unescape(line) for line in inside.splitlines() if line.strip()]


def a_sensible_manager(body: dict) -> Answer:
    """Answers as a competent manager model would, from what the prompt offers (best first)."""
    format_ = body["response_format"]
    schema = format_.get("schema") or format_["json_schema"]["schema"]
    fields = schema["properties"]
    if "functions" in fields:
        return Answer(
            {
                "functions": [
                    {"id": "f1", "name": "restaurant reviews", "description": "nearby restaurants with their reviews"},
                    {"id": "f2", "name": "map", "description": "shows them on a map", "depends_on": ["f1"]},
                ]
            }
        )
    if "categories" in fields:
        return Answer({"categories": [element(body, "candidate_categories")[0].split(" (")[0]]})
    if "api_ids" in fields:
        proposed = [int(re.search(r"api_id (\d+)", line).group(1)) for line in element(body, "proposals")]
        return Answer({"api_ids": list(dict.fromkeys(proposed))[:2]})
    if all(re.fullmatch(r"f\d+", key) for key in fields):  # every function mapped in one call
        return Answer({key: [field["items"]["enum"][0]] for key, field in fields.items()})
    raise AssertionError(f"the manager was not expected to be asked for {sorted(fields)}")


def tender(catalog, embedder, server, *, manager=False, contractors=False, **options) -> Tender:
    offline = EmbeddedReasoner()
    llm = LLMReasoner(base_url=server.url, model="fake", fallback=offline, timeout_s=1, max_retries=0, **options)
    return Tender(catalog, manager=llm if manager else offline, contractors=llm if contractors else offline)


def test_an_llm_manager_with_offline_contractors(catalog, embedder):
    with FakeLLMServer(respond=a_sensible_manager) as server:
        run = tender(catalog, embedder, server, manager=True).recommend(Request.create(REQUIREMENT))

    plan = run.plan
    assert plan.backends == {"manager": "llm", "contractors": "offline"}
    assert [s.function for s in plan.steps] == ["nearby restaurants with their reviews", "shows them on a map"]
    assert plan.apis and {a.name for a in plan.apis} <= {"Yelp", "Zomato", "Google Maps", "Bing Maps", "OpenStreetMap"}
    assert plan.cost.fallbacks == 0 and plan.notes == []
    asked = [r["response_format"]["json_schema"]["name"] for r in server.requests]
    # Both functions mapped in one call; backtracking maps one function again.
    assert asked[:2] == ["Decomposition", "MappingBatch"] and asked[-1] == "Selection"
    assert set(asked[2:-1]) <= {"CategoryMapping"}
    assert plan.cost.llm_calls == len(server.requests)
    assert plan.cost.tokens_by_role["manager"].input == 100 * len(server.requests)
    assert "contractor" not in plan.cost.tokens_by_role
    assert {"manager.decompose", "manager.map_all", "manager.select"} <= set(plan.cost.tokens_by_step)


@pytest.mark.parametrize("protocol", ["manager-led", "contractor-led", "collaborative", "single-agent"])
def test_an_llm_that_never_answers_well_gives_the_offline_plan(catalog, embedder, protocol):
    request = Request.create(REQUIREMENT, protocol=protocol)
    offline = Tender(catalog, manager=EmbeddedReasoner(), contractors=EmbeddedReasoner()).recommend(request)
    with FakeLLMServer(respond=lambda body: Answer("I would suggest Google Maps.")) as server:
        run = tender(catalog, embedder, server, manager=True, contractors=True).recommend(request)

    plan = run.plan
    assert [a.api_id for a in plan.apis] == [a.api_id for a in offline.plan.apis]
    assert plan.cost.fallbacks > 0 and plan.cost.llm_calls == len(server.requests) == 2 * plan.cost.fallbacks
    assert all("not valid JSON" in note for note in plan.notes)
    assert sum("reasoner answered this step" in note for note in plan.notes) == plan.cost.fallbacks
    assert run.transcript.notes == plan.notes


def test_a_hanging_endpoint_costs_one_timeout_not_one_per_contractor(catalog, embedder):
    with FakeLLMServer(respond=lambda body: Hang(5)) as server:
        run = tender(catalog, embedder, server, contractors=True, max_in_flight=1).recommend(
            Request.create(REQUIREMENT)
        )
        assert server.settled()

    assert run.plan.apis
    assert len(server.requests) == 1  # one call waited for its timeout; every other bid fell back without asking
    assert (server.abandoned, server.outlasted) == (1, 0)  # ...and hung up at it
    assert "no answer within 1 s" in run.plan.notes[0]
    assert any(note.startswith("The LLM endpoint failed (no answer within 1 s") for note in run.plan.notes)
    # Every bid fell back (a contractor reached by several calls falls back once per call), none waited again.
    assert run.plan.cost.fallbacks >= run.plan.cost.contractors_contacted > 1


def test_the_token_budget_of_a_request(catalog, embedder):
    with FakeLLMServer(respond=a_sensible_manager) as server:
        llm_tender = tender(catalog, embedder, server, manager=True)
        run = llm_tender.recommend(Request.create(REQUIREMENT), RunContext(max_tokens=130))

    assert len(server.requests) == 2  # 120 tokens each: the second (every function mapped) crosses the budget
    assert run.plan.cost.tokens.input + run.plan.cost.tokens.output == 240
    assert "Token budget of 130 per request reached: the remaining steps use the offline reasoner." in run.plan.notes
    assert run.plan.apis


def test_a_comparison_asks_the_shared_decomposition_once_and_says_what_came_from_the_cache(catalog, embedder, tmp_path):
    from tender.agents.reasoners.cache import ResponseCache

    with FakeLLMServer(respond=a_sensible_manager) as server:
        llm_tender = tender(catalog, embedder, server, manager=True, cache=ResponseCache(tmp_path / "cache.db"))
        first = llm_tender.recommend(Request.create(REQUIREMENT, protocol="manager-led")).plan
        asked = len(server.requests)
        second = llm_tender.recommend(Request.create(REQUIREMENT, protocol="collaborative")).plan

    decompositions = [
        r for r in server.requests if "functions" in r["response_format"]["json_schema"]["schema"]["properties"]
    ]
    assert len(decompositions) == 1 and len(server.requests) == asked  # collaborative's one manager step: replayed
    assert first.cost.cache_hits == 0 and first.cost.tokens_from_cache.input == 0
    assert second.cost.cache_hits == second.cost.llm_calls == 1 and second.cost.fallbacks == 0
    assert second.cost.tokens_from_cache == second.cost.tokens_by_step["manager.decompose"]
    assert second.cost.tokens.input == 100  # replayed tokens still count as the step's: the totals stay comparable
