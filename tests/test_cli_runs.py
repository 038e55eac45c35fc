"""The CLI's run log: `tender recommend` keeps every run, `tender runs list` and `tender explain` read them."""

import json

import pytest
from click.testing import CliRunner

from tender.cli import main

TWO_FUNCTIONS = "Weather forecasts on a map. Send an SMS alert when a storm comes."


@pytest.fixture
def tender(catalog_path, tmp_path, monkeypatch):
    monkeypatch.setenv("TENDER_CATALOG", str(catalog_path))
    monkeypatch.setenv("TENDER_RUNS", str(tmp_path / "runs.db"))
    monkeypatch.setenv("TENDER_EMBEDDING_MODEL", "hashing")
    return lambda *args, input=None: CliRunner().invoke(main, list(args), input=input)


def latest_runs(tender) -> list[dict]:
    result = tender("runs", "list", "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_a_recommendation_read_from_stdin_is_kept_and_explained(tender):
    made = tender("recommend", "-", input=TWO_FUNCTIONS)
    assert made.exit_code == 0, made.output
    [run] = latest_runs(tender)
    assert run["requirement"] == TWO_FUNCTIONS and run["protocol"] == "manager-led"
    assert f"tender explain {run['run_id']}" in made.output

    told = tender("explain", run["run_id"])
    assert told.exit_code == 0, told.output
    assert "f1 Weather forecasts" in told.output and "won:" in told.output and "sent to" in told.output

    one = json.loads(tender("explain", run["run_id"], "--function", "f2", "--json").output)
    assert one["function"] == "f2" and [f["id"] for f in one["functions"]] == ["f2"]
    diagram = tender("explain", run["run_id"], "--diagram").output
    assert diagram.startswith("sequenceDiagram\n") and "participant" in diagram
    full = json.loads(tender("explain", run["run_id"], "--full", "--json").output)
    assert full["detail"] == "full" and full["calls"]


def test_runs_are_listed_newest_first(tender):
    for requirement in ("a map of bike shops", "send SMS reminders"):
        assert tender("recommend", requirement).exit_code == 0
    assert [r["requirement"] for r in latest_runs(tender)] == ["send SMS reminders", "a map of bike shops"]
    lines = tender("runs", "list", "--limit", "1").output.splitlines()
    assert len(lines) == 1 and "send SMS reminders" in lines[0]


def test_an_empty_stdin_is_refused(tender):
    result = tender("recommend", "-", input="  \n")
    assert result.exit_code == 2 and "standard input was empty" in result.output


@pytest.mark.parametrize(
    "args, words",
    [
        (
            ["recommend", "maps", "--exclude-api", "Gogle Maps"],
            ["--exclude-api", "Did you mean 'Google Maps'", "tender catalog search"],
        ),
        (
            ["recommend", "maps", "--require-category", "Mappng"],
            ["--require-category", "Did you mean 'Mapping'", "tender catalog categories"],
        ),
        (["recommend", "maps", "--exclude-category", "Weathr"], ["--exclude-category", "Did you mean 'Weather'"]),
        (["catalog", "search", "maps", "--category", "Mapin"], ["--category", "Did you mean 'Mapping'"]),
        (["explain", "0123abc"], ["no run '0123abc'", "tender runs list"]),
    ],
)
def test_errors_speak_in_cli_terms(tender, args, words):
    result = tender(*args)
    assert result.exit_code == 2, result.output
    for word in words:
        assert word in result.output
    for mcp_word in ("excluded_apis", "list_categories", "search_apis", "recommend_apis"):
        assert mcp_word not in result.output


def test_categories_are_listed_largest_first(tender):
    result = tender("catalog", "categories", "--json")
    counts = [c["api_count"] for c in json.loads(result.output)]
    assert counts == sorted(counts, reverse=True) and len(counts) > 5


def test_db_points_recommend_at_another_catalogue(tender, tmp_path):
    result = tender("recommend", "maps", "--db", str(tmp_path / "missing.db"))
    assert result.exit_code != 0 and "missing.db" in result.output
