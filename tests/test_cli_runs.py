"""The CLI's run log: `tender recommend` keeps every run, `tender runs list` and `tender explain` read them, in a
runs.db file or in PostgreSQL (TENDER_RUNS=postgresql://...) alike."""

import json

import pytest
from click.testing import CliRunner

from tender.cli import main

TWO_FUNCTIONS = "Weather forecasts on a map. Send an SMS alert when a storm comes."


@pytest.fixture
def tender(catalog_path, runs_location, monkeypatch):
    monkeypatch.setenv("TENDER_CATALOG", str(catalog_path))
    monkeypatch.setenv("TENDER_RUNS", str(runs_location))
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


# -- removing runs (issue 37, item 11) ------------------------------------------------------------
def run_ids(tender) -> list[str]:
    return [r["run_id"] for r in latest_runs(tender)]


def test_runs_delete_removes_the_runs_named(tender):
    for requirement in ("a map of bike shops", "send SMS reminders", "share photos"):
        assert tender("recommend", requirement).exit_code == 0
    photos, sms, bikes = run_ids(tender)

    result = tender("runs", "delete", photos, bikes)

    assert result.exit_code == 0 and "Removed 2 runs" in result.output
    assert run_ids(tender) == [sms]
    assert tender("explain", photos).exit_code == 2


def test_runs_delete_of_an_unknown_id_removes_nothing_and_exits_2(tender):
    assert tender("recommend", "a map of bike shops").exit_code == 0
    [kept] = run_ids(tender)

    result = tender("runs", "delete", kept, "0123abc")

    assert result.exit_code == 2 and "no run '0123abc'" in result.output and "nothing was removed" in result.output
    assert run_ids(tender) == [kept]


def make_old(location, run_id: str) -> None:
    """Date a stored run back to 2020, in whichever store holds it."""
    sql = "update runs set created_at = '2020-01-01T00:00:00.000000+00:00' where run_id = ?"
    if isinstance(location, str):
        import psycopg

        with psycopg.connect(location) as conn:
            conn.execute(sql.replace("?", "%s"), [run_id])
        return
    from tender.answers.runs import RunStore

    store = RunStore(location)
    store.db.execute(sql, [run_id])
    store.db.conn.commit()
    store.close()


def test_runs_prune_removes_runs_older_than_an_age(tender, runs_location):
    for requirement in ("a map of bike shops", "send SMS reminders"):
        assert tender("recommend", requirement).exit_code == 0
    old, new = run_ids(tender)[1], run_ids(tender)[0]
    make_old(runs_location, old)

    dry = tender("runs", "prune", "--older-than", "30d", "--dry-run")
    assert dry.exit_code == 0 and "Would remove 1 run " in dry.output and len(run_ids(tender)) == 2

    result = tender("runs", "prune", "--older-than", "30d")
    assert result.exit_code == 0 and "Removed 1 run " in result.output
    assert run_ids(tender) == [new]


@pytest.mark.parametrize("age", ["soon", "30", "-1d", "3y"])
def test_runs_prune_wants_an_age_with_a_unit(tender, age):
    result = tender("runs", "prune", "--older-than", age)

    assert result.exit_code == 2 and "e.g. 30d" in result.output
