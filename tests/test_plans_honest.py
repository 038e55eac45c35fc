"""Honest plans (issue 47): an item its source marks gone never takes a need unless the request includes such items;
a need only gone items could serve is unserved, and the plan names them. Real encoder, small catalogues made here.
The assertions name the item that must serve a need and the items that must not, never the ranking model's exact
list, so that they hold for a refit model."""

import json

import pytest

from tender.agents.request import InvalidRequest, Request
from tender.agents.service import Tender
from tender.catalog import Catalog, get_embedder
from tender.catalog.build import build_from_sources
from tender.catalog.sources.gather import gather

pytestmark = pytest.mark.real_model

GONE = "[This API has been deprecated and is no longer available.] "
MAPS = [
    ("Google Maps", ["Mapping"], GONE + "Google Maps lets developers embed interactive maps, markers and directions."),
    (
        "OpenStreetMap",
        ["Mapping"],
        "Embed interactive maps with markers and directions, from OpenStreetMap's free data.",
    ),
]
REVIEWS = [
    ("Yelp Fusion", ["Reviews"], "Local business listings with restaurant reviews, ratings and photos."),
    ("Twilio SMS", ["Messaging"], "Send and receive SMS text messages to phones worldwide."),
    ("Dark Sky", ["Weather"], GONE + "Hyperlocal weather forecasts: current conditions and the forecast for a place."),
]


def tender_over(tmp_path, rows, mashups=()) -> Tender:
    apis = tmp_path / "apis.jsonl"
    apis.write_text(
        "".join(
            json.dumps({"id": i, "name": n, "categories": c, "description": d, "url": f"/api/{i}", "source": "test"})
            + "\n"
            for i, (n, c, d) in enumerate(rows)
        )
    )
    used = tmp_path / "mashups.jsonl"
    used.write_text(
        "".join(
            json.dumps({"id": i, "name": f"app {i}", "url": "", "categories": [], "description": d, "api_ids": ids})
            + "\n"
            for i, (d, ids) in enumerate(mashups)
        )
    )
    embedder = get_embedder()
    build_from_sources(gather(apis=apis, mashups=used if mashups else None), tmp_path / "c.db", embedder)
    return Tender(Catalog(tmp_path / "c.db", embedder=embedder))


def plan_for(tender: Tender, needs: list[str], **constraints):
    return tender.recommend(Request.create("An app: " + ", ".join(needs), needs=needs, constraints=constraints)).plan


@pytest.fixture(scope="module")
def catalogue(tmp_path_factory):
    return tender_over(tmp_path_factory.mktemp("honest"), MAPS + REVIEWS)


def test_a_gone_item_never_takes_a_need_beside_a_live_one(catalogue):
    plan = plan_for(catalogue, ["show places on an interactive map"])
    names = {a.name for a in plan.apis}
    assert "OpenStreetMap" in names and "Google Maps" not in names  # the one live map, never the gone one
    assert all(a.status != "deprecated" for a in plan.apis)


def test_a_need_only_gone_items_serve_is_unserved_and_names_them(catalogue):
    plan = plan_for(catalogue, ["weather forecast for a city", "send an SMS text message"])
    weather, sms = plan.steps
    assert not weather.awarded and "no longer available: Dark Sky" in weather.reason
    assert "Twilio SMS" in {a.api_name for a in sms.awarded} and "Dark Sky" not in {a.api_name for a in sms.awarded}


def test_the_request_may_include_gone_items_and_the_plan_then_warns(catalogue):
    plan = plan_for(catalogue, ["weather forecast for a city"], include_deprecated=True)
    assert "Dark Sky" in {a.name for a in plan.apis}  # the only weather item, gone
    assert any("Dark Sky is deprecated" in note for note in plan.notes)


def test_including_and_excluding_gone_items_at_once_is_refused():
    with pytest.raises(InvalidRequest, match="contradict"):
        Request.create("maps", constraints={"include_deprecated": True, "exclude_deprecated": True})


def test_usage_history_never_hands_a_need_to_an_item_whose_description_does_not_serve_it(tmp_path):
    """Every past earthquake app drew its quakes on the same map: that makes the map API popular with such apps, not
    a source of earthquakes. With no earthquake feed in the catalogue, the need is unserved."""
    rows = [
        ("MapCo", ["Mapping"], "Embed interactive maps with markers, layers and directions in web pages."),
        ("Yelp Fusion", ["Reviews"], "Local business listings with restaurant reviews, ratings and photos."),
    ]
    quakes = [(f"Earthquake map {i}: the latest earthquakes around the world shown on a map", [0]) for i in range(12)]
    food = [(f"Restaurant finder {i}: nearby restaurants with their reviews on a map", [0, 1]) for i in range(6)]
    tender = tender_over(tmp_path, rows, quakes + food)
    plan = plan_for(tender, ["list the earthquakes of the last week", "show them on a map"])
    quake, shown = plan.steps
    assert not quake.awarded, quake.awarded
    assert "MapCo" in {a.api_name for a in shown.awarded}


def test_each_awarded_need_lists_its_runners_up_and_says_when_it_was_a_close_call(tmp_path):
    from tender.answers.brief import recommendation

    rows = MAPS + [
        ("Mapbox", ["Mapping"], "Maps for web and mobile apps: styled map tiles, markers, geocoding and directions."),
        ("Leaflet Tiles", ["Mapping"], "Map tiles and interactive map widgets with markers and popups."),
        ("HERE Maps", ["Mapping"], "Interactive maps, routing and geocoding for web pages and apps."),
    ]
    tender = tender_over(tmp_path, rows)
    run = tender.recommend(Request.create("A map of places", needs=["show places on an interactive map"]))
    [function] = recommendation(run, tender.catalog).functions
    awarded = {a.name for a in function.apis}
    others = function.runners_up
    assert awarded and others and len(others) <= 3 and not awarded & {o.name for o in others}
    assert "Google Maps" not in awarded | {o.name for o in others}  # gone: never offered as an alternative
    assert [o.confidence for o in others] == sorted((o.confidence for o in others), reverse=True)
    assert function.close_call == (others[0].confidence >= min(a.confidence for a in function.apis) - 0.1)


def test_the_words_say_what_the_score_means_and_only_facts_besides():
    from tender.ranking.evidence import Evidence, level

    # A Swedish tax-expenditure search as the catalogue's nearest item to "compute sales tax", at a low score.
    nearest = Evidence(
        dense=0.32, dense_gap=0.0, dense_rank=1, dense_requirement=0.3, name=0.2, name_gap=-0.1, lexical=0.4,
        lexical_rank=2,
    )  # fmt: skip
    weak, strong = nearest.describe(0.2), nearest.describe(0.9)
    assert weak[0].startswith("a weak match") and strong[0].startswith("likely serves")
    assert (
        weak[1:]
        == strong[1:]
        == ["the catalogue's nearest description to the need", "it shares some of the need's words"]
    )
    assert not any(word in " ".join(weak) for word in ("closely", "best", "fits"))
    assert [level(s) for s in (0.2, 0.45, 0.9)] == ["low", "medium", "high"]
