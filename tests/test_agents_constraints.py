"""Constraints always hold in the result; backtracking when a function's categories yield nothing."""

import pytest

from tender.agents.plan import StepStatus
from tender.agents.protocols import PROTOCOLS
from tender.agents.request import Constraints, Request
from tender.agents.service import Tender
from tender.agents.tasks import BidTask
from tender.catalog import Catalog
from tests.fixture_data import api_rows
from tests.scripted import ScriptedReasoner, keep_everything

MAP_AND_REVIEWS = "Show nearby restaurants on a map with their reviews and photos."


# Constraints are mechanics, not accuracy: every contractor reached bids, each API at its own fixed score (best
# first in catalogue order), and the manager keeps every bid (it expects many right APIs that nobody bid for).
EVERY_API_BIDS = {row["name"]: round(0.9 - 0.02 * row["id"], 2) for row in api_rows()}


@pytest.fixture
def tender(catalog_path, embedder):
    reasoner = ScriptedReasoner(bids=EVERY_API_BIDS)
    return Tender(
        Catalog(catalog_path, embedder=embedder), manager=reasoner, contractors=reasoner, scorer=keep_everything()
    )


def plan(tender, text=MAP_AND_REVIEWS, protocol="manager-led", **constraints):
    return tender.recommend(Request.create(text, protocol=protocol, constraints=Constraints(**constraints))).plan


@pytest.mark.parametrize("protocol", list(PROTOCOLS))
def test_max_apis_caps_the_final_set(tender, protocol):
    text = "Show nearby restaurants on a Google Maps map with Yelp reviews and Flickr photos."  # three APIs named
    free = plan(tender, text, protocol=protocol)
    assert len(free.apis) > 2
    capped = plan(tender, text, protocol=protocol, max_apis=2)
    assert [a.api_id for a in capped.apis] == [a.api_id for a in free.apis][:2]


@pytest.mark.parametrize("protocol", list(PROTOCOLS))
def test_excluded_apis_never_appear(tender, protocol):
    result = plan(tender, protocol=protocol, excluded_apis=["Google Maps", 3])
    assert not {0, 3} & {a.api_id for a in result.apis}
    assert not {0, 3} & set(result.stages.final)


@pytest.mark.parametrize("protocol", list(PROTOCOLS))
def test_excluded_categories_never_appear(tender, protocol):
    result = plan(tender, protocol=protocol, excluded_categories=["Mapping"])
    assert result.apis
    assert all("Mapping" not in a.categories for a in result.apis)


@pytest.mark.parametrize("protocol", list(PROTOCOLS))
def test_required_categories_are_covered(tender, protocol):
    result = plan(tender, protocol=protocol, required_categories=["weather"], max_apis=2)
    assert any("Weather" in a.categories for a in result.apis)
    assert len(result.apis) <= 2


def test_a_required_category_the_selection_missed_is_announced_again(tender):
    result = tender.recommend(
        Request.create(MAP_AND_REVIEWS, constraints=Constraints(required_categories=["Payments"]))
    )
    assert any("Payments" in a.categories for a in result.plan.apis)
    assert any("required category Payments" in b.reason for b in result.transcript.backtracking)
    assert any(cfp.categories == ["Payments"] for cfp in result.transcript.of_kind("cfp"))


@pytest.fixture
def maps_only(embedder):
    # Only the map APIs can do a map, so that a category without them has nothing to offer.
    return ScriptedReasoner(embedder, bids={"Google Maps": 0.9, "OpenStreetMap": 0.8, "Bing Maps": 0.7})


def test_backtracking_fires_when_the_mapped_categories_have_no_match(catalog_path, embedder, maps_only):
    # Every Mapping API is excluded: the map function must be re-announced under other categories.
    strict = Tender(Catalog(catalog_path, embedder=embedder), manager=maps_only, contractors=maps_only)
    result = strict.recommend(
        Request.create(
            "Plot places on an interactive map.",
            constraints=Constraints(excluded_apis=["Google Maps", "OpenStreetMap", "Bing Maps"]),
        )
    )
    transcript = result.transcript
    # No contractor of an excluded API was even asked.
    assert not {api.name for task in maps_only.asked_for(BidTask) for api in task.knowledge.apis} & set(maps_only.bids)
    assert transcript.backtracking, "no feedback was recorded"
    first = transcript.backtracking[0]
    assert first.from_categories and set(first.to_categories).isdisjoint(first.from_categories)
    assert any(cfp.round > 1 for cfp in transcript.of_kind("cfp"))
    assert result.plan.steps[0].rounds > 1
    assert not {0, 1, 2} & set(result.plan.stages.final)


def test_a_function_nobody_can_do_fails_after_bounded_rounds(tender, catalog_path, embedder):
    everything = [a.id for a in Catalog(catalog_path).apis()]
    result = tender.recommend(
        Request.create("Plot places on an interactive map.", constraints=Constraints(excluded_apis=everything))
    )
    step = result.plan.steps[0]
    assert step.status == StepStatus.failed and 1 <= step.rounds <= 3
    assert result.plan.apis == []
    assert result.transcript.of_kind("failure")


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"constraints": Constraints(required_categories=["Nope"])}, "No category 'Nope'"),
        ({"constraints": Constraints(excluded_apis=["Nope"])}, "excluded_apis"),
        (
            {"constraints": Constraints(required_categories=["Weather"], excluded_categories=["weather"])},
            "both required and excluded",
        ),
    ],
)
def test_unknown_or_contradictory_constraints_are_clear_errors(tender, fields, message):
    with pytest.raises(Exception, match=message):
        tender.recommend(Request(requirement=MAP_AND_REVIEWS, **fields))
