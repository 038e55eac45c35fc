"""The judge (ranking/judge.py): before a plan awards a service, a second model judges whether it serves the need; one
it finds does not loses that bid, the selection runs again without it, and the plan says why. Here the judge reads
with the hashing embedder (shared words), so what it decides is visible in the texts."""

import pytest

from tender.agents.request import Request
from tender.agents.service import Tender
from tender.catalog import Catalog
from tender.catalog.build import build_from_sources
from tender.catalog.records import Api
from tender.catalog.embeddings import HashingEmbedder
from tender.catalog.install import package
from tender.catalog.servers import Server, items_of
from tender.catalog.sources.base import Loaded, SourceInfo
from tender.ranking.judge import Judge
from tender.ranking.scorer import Objective, untrained
from tender.assembly import judge_for
from tender.settings import Settings


# A scorer by the similarity alone that awards whatever it scores at all: every award doubtful.
BY_SIMILARITY = untrained().model_copy(update={"objective": Objective(cost=0.05, cost_cold=0.05)})


def web_api(name: str, description: str) -> Api:
    return Api(id=0, name=name, kind="api", provider=name, categories=["Misc"], description=description)


WEB_APIS = [
    web_api("ParkInfo", "National parks: opening hours, alerts and campgrounds of national parks"),
    web_api("RideTimes", "Live ride wait times at theme parks around the world"),
    web_api("Zoo", "Animals of the city zoo"),
]
SERVER = Server(
    ref="toolsdk:notes",
    namespace="notes",
    title="Notes",
    description="Keep notes for your assistant",
    source="fixture",
    routes=[package("npm", "notes-mcp", "1.0.0")],
    status="active",
)


def build(folder, items, embedder) -> Catalog:
    path = folder / "judged.db"
    build_from_sources([Loaded(info=SourceInfo(kind="fixture", name="fixture"), apis=items)], path, embedder)
    return Catalog(path, embedder=embedder)


@pytest.fixture(scope="module")
def catalog(tmp_path_factory, embedder):
    """Today's kind of catalogue: web APIs beside MCP servers."""
    return build(tmp_path_factory.mktemp("judged"), [*WEB_APIS, *items_of(SERVER)], embedder)


def plan_for(catalog: Catalog, judge: Judge | None, need: str):
    return Tender(catalog, judge=judge).recommend(Request.create(need, needs=[need])).plan


def names(catalog: Catalog, plan) -> list[str]:
    return [catalog.get_api(a.api_id).name for a in plan.apis]


def test_a_doubtful_award_the_judge_finds_does_not_serve_the_need_is_not_made_and_the_plan_says_why(catalog):
    need = "park alerts"
    unjudged = plan_for(catalog, None, need)
    assert names(catalog, unjudged) == ["ParkInfo"] and unjudged.apis[0].score < 0.6  # "may serve", not "likely"
    judged = plan_for(catalog, Judge(HashingEmbedder(), floor=0.99), need)
    assert names(catalog, judged) == []
    assert any("ParkInfo was not awarded" in n and "below 0.99" in n for n in judged.notes)


def test_a_doubtful_award_the_judge_agrees_with_is_made(catalog):
    assert names(catalog, plan_for(catalog, Judge(HashingEmbedder(), floor=0.1), "park alerts")) == ["ParkInfo"]


def test_an_award_the_ranking_calls_likely_is_not_put_to_the_judge(catalog):
    plan = plan_for(catalog, Judge(HashingEmbedder(), floor=0.99), "national parks opening hours")
    assert names(catalog, plan) == ["ParkInfo"] and plan.apis[0].score >= 0.6


def test_an_item_the_need_names_is_never_put_to_the_judge(catalog):
    # a scorer that gives the name no weight: the named item's award is doubtful
    by_similarity = BY_SIMILARITY
    request = Request.create("ParkInfo alerts", needs=["ParkInfo alerts"])
    plan = Tender(catalog, scorer=by_similarity, judge=Judge(HashingEmbedder(), floor=0.99)).recommend(request).plan
    assert names(catalog, plan) == ["ParkInfo"] and plan.apis[0].score < 0.6


def test_no_judge_without_a_model_or_when_turned_off(catalog):
    assert judge_for(Settings.from_env({"TENDER_JUDGE": "off"}), catalog) is None
    assert judge_for(Settings.from_env({}), catalog) is None  # the test embedder: no model to judge with


def test_a_need_whose_doubtful_award_is_refused_is_not_handed_a_nearer_miss(catalog):
    def plan(judge):
        request = Request.create("theme parks alerts", needs=["theme parks alerts"])
        return Tender(catalog, scorer=BY_SIMILARITY, judge=judge).recommend(request).plan

    class RefusesTheBest(Judge):  # finds only the best bid wanting; a nearer miss would pass it
        def similarities(self, pairs):
            return [0.0 if i == best else 1.0 for _, i, _ in pairs]

    unjudged = plan(None)
    best = unjudged.apis[0].api_id
    assert len(unjudged.stages.bidding) > 1 and all(a.score < 0.6 for a in unjudged.apis)  # near misses bid
    judged = plan(RefusesTheBest(HashingEmbedder(), floor=0.5))
    assert judged.apis == [] and judged.steps[0].status == "unserved"


def test_a_catalogue_of_web_apis_alone_is_not_judged(tmp_path, embedder):
    apis_only = build(tmp_path, WEB_APIS, embedder)
    assert names(apis_only, plan_for(apis_only, Judge(HashingEmbedder(), floor=0.99), "park alerts")) == ["ParkInfo"]


def test_an_unserved_need_names_no_near_miss_of_the_other_form(catalog):
    def plan(judge):
        request = Request.create("park alerts", needs=["park alerts"], kind="mcp_server")
        return Tender(catalog, judge=judge).recommend(request).plan

    named = plan(None).steps[0].other_form  # "no MCP server for this in the catalogue; ParkInfo is its web API"
    assert named is not None and named.score < 0.6
    assert plan(Judge(HashingEmbedder(), floor=0.99)).steps[0].other_form is None


def test_the_judge_reads_what_a_need_asks_not_the_form_it_asks_in():
    judge = Judge(HashingEmbedder())
    text = "ZooInfo API: animals of the city zoo, through an MCP server"
    asked = [("zoo animals API", 1, text), ("zoo animals MCP server", 1, text), ("zoo animals", 1, text)]
    api, server, plain = judge.similarities(asked)
    assert api == pytest.approx(plain) and server == pytest.approx(plain) and plain > 0
    assert judge.similarities([("API", 1, text)])[0] > 0  # a need of form words alone is read as it is
