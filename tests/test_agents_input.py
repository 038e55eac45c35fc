"""Bad input gets a clear error or a sensible result, never a crash."""

import pytest

from tender.agents.request import InvalidRequest, Request
from tender.agents.service import Tender
from tender.catalog import Catalog


@pytest.fixture
def tender(catalog_path, embedder):
    return Tender(Catalog(catalog_path, embedder=embedder))


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "empty"),
        ("   \n\t ", "empty"),
        ("x" * 20_001, "over 20,000 characters"),
        ("\x00\x01\x02binary\xff\xfe" * 10, "binary"),
        ("12345 !!! ???", "no words"),
    ],
)
def test_unusable_requirements_are_clear_errors(text, message):
    with pytest.raises(InvalidRequest, match=message):
        Request.create(text)


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("protocol", "boss-led", "boss-led"),
        ("organisation", "team", "team"),
    ],
)
def test_unknown_protocol_or_organisation_names_the_choices(field, value, message):
    with pytest.raises(InvalidRequest, match="manager-led|api") as caught:
        Request.create("a map", **{field: value})
    assert message in str(caught.value)


@pytest.mark.parametrize(
    "text",
    [
        "Zeige Restaurants in der Nähe auf einer Karte mit Bewertungen.",
        "地図上で近くのレストランとレビューを表示する",
        "a",
        "map " * 4000,
    ],
)
def test_odd_but_readable_requirements_give_a_plan(tender, text):
    plan = tender.recommend(Request.create(text)).plan
    assert plan.requirement == text.strip()
    assert all(0 <= a.score <= 1 for a in plan.apis)
