"""`tender catalog search`: look up an API's id or exact name by what it does."""

import json

import pytest
from click.testing import CliRunner

from tender.cli import main


@pytest.fixture
def tender(catalog_path, monkeypatch):
    monkeypatch.setenv("TENDER_CATALOG", str(catalog_path))
    monkeypatch.setenv("TENDER_EMBEDDING_MODEL", "hashing")
    return lambda *args: CliRunner().invoke(main, list(args))


def test_search_lists_the_best_matches_first_with_ids(tender):
    result = tender("catalog", "search", "send SMS text messages", "--limit", "3")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert len(lines) == 3
    assert lines[0].split()[0] == "18" and "Twilio" in lines[0]


def test_search_within_a_category_as_json(tender):
    result = tender("catalog", "search", "photos shared by users", "--category", "photos", "--json")
    assert result.exit_code == 0, result.output
    found = json.loads(result.output)
    assert found["categories"] == ["Photos"]  # spelled as the catalogue spells it
    hits = found["results"]
    assert {h["name"] for h in hits} == {"Flickr", "Instagram"}  # the fixture's Photos category, and nothing else
    assert hits == sorted(hits, key=lambda h: -h["score"])


@pytest.mark.parametrize(
    "args, message, code",
    [
        (["  "], "The query is empty", 1),
        (["maps", "--category", "Nope"], "Invalid value for --category: no category 'Nope'", 2),  # an option to fix
    ],
)
def test_bad_search_input_is_a_one_line_error(tender, args, message, code):
    result = tender("catalog", "search", *args)
    assert result.exit_code == code
    assert message in result.output
