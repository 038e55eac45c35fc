"""Deprecated items: marked in the plan, excluded on request, and giving way to an active item that bid nearly
as well. Provider contractors: one per API or MCP server, bidding its own items."""

import pytest

from tender.agents.messages import Propose
from tender.agents.plan import StepStatus
from tender.agents.reasoners.embedded import EmbeddedReasoner, Policy
from tender.agents.request import Constraints, Request
from tender.agents.service import Tender
from tender.agents.status import prefer_active
from tender.catalog import Api, Catalog, build_catalog
from tender.catalog.build import build_from_sources
from tender.catalog.sources import Loaded, SourceInfo
from tests.conftest import write_jsonl
from tests.fixture_data import api_rows, mashup_rows

GONE = "[This API is no longer available. Its functions have been split among other APIs.] "


def bid(api_id, score, function="f1"):
    return Propose(
        sender=f"api:{api_id}",
        receiver="manager",
        task_id="t1",
        api_id=api_id,
        api_name=f"api {api_id}",
        score=score,
        rationale="",
        function_id=function,
    )


def items(*specs):
    return {i: Api(id=i, name=f"api {i}", status=status, categories=cats) for i, status, cats in specs}


def test_a_deprecated_item_gives_way_to_an_active_one_that_bid_nearly_as_well():
    apis = items((1, "deprecated", []), (2, "unknown", []), (3, "active", []))
    final, notes = prefer_active([1], [bid(1, 0.80), bid(2, 0.70), bid(3, 0.77)], apis.__getitem__)
    assert final == [3]
    assert len(notes) == 1 and "api 1 is deprecated" in notes[0] and "api 3" in notes[0]


def test_it_stays_when_no_live_item_bid_close_enough_or_for_the_same_step():
    apis = items((1, "deprecated", []), (2, "active", []), (3, "active", []), (4, "deprecated", []))
    proposals = [bid(1, 0.80), bid(2, 0.60), bid(3, 0.79, function="f2"), bid(4, 0.80)]
    assert prefer_active([1], proposals, apis.__getitem__) == ([1], [])


def test_a_replacement_keeps_a_required_category_covered_and_never_duplicates_a_chosen_item():
    apis = items(
        (1, "deprecated", ["Mapping"]), (2, "active", ["Photos"]), (3, "active", ["Mapping"]), (5, "active", [])
    )
    proposals = [bid(1, 0.80), bid(2, 0.80), bid(3, 0.76), bid(5, 0.79)]
    final, _ = prefer_active([1, 5], proposals, apis.__getitem__, required_categories=["Mapping"])
    assert final == [3, 5]


@pytest.fixture(scope="module")
def dead_twitter_catalog(tmp_path_factory, embedder):
    """The fixture world with Twitter and Facebook gone, as ProgrammableWeb's editors wrote it."""
    folder = tmp_path_factory.mktemp("dead")
    rows = [
        {**row, "description": GONE + row["description"]} if row["name"] in ("Twitter", "Facebook") else row
        for row in api_rows()
    ]
    path = folder / "catalog.db"
    build_catalog(
        write_jsonl(folder / "apis.jsonl", rows), write_jsonl(folder / "mashups.jsonl", mashup_rows()), path, embedder
    )
    return path


def tender_on(path, embedder):
    reasoner = EmbeddedReasoner(
        embedder, policy=Policy(propose_at=0.001, self_select_at=0.001, expected_missing=100.0, nothing_below=0.0)
    )
    return Tender(Catalog(path, embedder=embedder), manager=reasoner, contractors=reasoner)


def test_deprecated_items_are_marked_in_the_plan_and_excluded_on_request(dead_twitter_catalog, embedder):
    tender = tender_on(dead_twitter_catalog, embedder)
    text = "Aggregate tweets from Twitter and Facebook posts about a topic."
    plan = tender.recommend(Request.create(text)).plan
    dead = [a for a in plan.apis if a.status == "deprecated"]
    assert dead and {a.name for a in dead} <= {"Twitter", "Facebook"}
    assert all(a.status_source.startswith("description: 'This API is no longer available") for a in dead)
    assert all(w.status == "deprecated" for s in plan.steps for w in s.awarded if w.api_name in ("Twitter", "Facebook"))
    assert not any(a.link for a in plan.apis)  # ProgrammableWeb paths are not links
    strict = tender.recommend(Request.create(text, constraints=Constraints(exclude_deprecated=True))).plan
    assert strict.apis and not {"Twitter", "Facebook"} & {a.name for a in strict.apis}


@pytest.fixture(scope="module")
def tools_catalog(tmp_path_factory, embedder):
    """Two MCP-like servers' tools and nothing else: no categories, no usage history."""

    def tool(server, name, description):
        return Api(
            id=0,
            name=f"{name} ({server})",
            kind="tool",
            provider=server,
            server=server,
            tool=name,
            description=description,
            status="active",
            status_source="listed by the server",
        )

    loaded = [
        Loaded(
            info=SourceInfo(kind="mcp-listing", name="weather", items=2),
            apis=[
                tool("weather", "get_forecast", "Weather forecast for a city for the next days."),
                tool("weather", "get_alerts", "Severe weather alerts for a region."),
            ],
        ),
        Loaded(
            info=SourceInfo(kind="mcp-listing", name="mail", items=2),
            apis=[
                tool("mail", "send_email", "Send an email message to a recipient."),
                tool("mail", "search_inbox", "Search the inbox for email messages."),
            ],
        ),
    ]
    path = tmp_path_factory.mktemp("tools") / "catalog.db"
    build_from_sources(loaded, path, embedder)
    return path


def test_a_catalogue_of_tools_has_providers_and_no_categories(tools_catalog, embedder):
    catalog = Catalog(tools_catalog, embedder=embedder)
    assert catalog.providers() == ["mail", "weather"]
    assert [catalog.get_api(i).tool for i in catalog.apis_of_provider("mail")] == ["send_email", "search_inbox"]
    assert catalog.categories() == [] and catalog.apis_in_categories(["Weather"]) == []
    assert catalog.mashups() == [] and catalog.vectors("category").matrix.shape[0] == 0


@pytest.mark.parametrize("protocol", ["manager-led", "contractor-led", "collaborative"])
def test_provider_contractors_bid_their_own_tools_and_the_plan_names_server_and_tool(tools_catalog, embedder, protocol):
    tender = tender_on(tools_catalog, embedder)
    run = tender.recommend(Request.create("Email me the weather forecast", organisation="provider", protocol=protocol))
    contacted = {c.contractor for r in run.transcript.routing for c in r.contacted}
    assert contacted and contacted <= {"provider:weather", "provider:mail"}
    assert run.plan.apis
    for api in run.plan.apis:
        assert api.server in ("weather", "mail") and api.tool and api.name == f"{api.tool} ({api.server})"
        assert api.status == "active"
    assert any(s.status == StepStatus.awarded for s in run.plan.steps)
