"""A run is told with the catalogue it was made on (issue 37, item 1): `tender explain`, explain_bids, runs:// and
`tender runs list` read the catalogue the run recorded, and refuse in one line when it is gone or changed."""

import json

import pytest
from click.testing import CliRunner
from mcp import Client

from tender.answers.runs import RunStore
from tender.catalog import build_catalog
from tender.cli import main
from tender.server.app import build_server
from tests.server_support import error_text, ok, settings  # noqa: F401 (fixture)

REQUIREMENT = "Show nearby restaurants on a map with their reviews"


@pytest.fixture
def no_history(sources, embedder, tmp_path):
    """The fixture's APIs again, under the same ids, without usage history: another catalogue whose ids clash."""
    path = tmp_path / "tools.db"
    build_catalog(sources[0], None, path, embedder)
    return path


@pytest.fixture
def tender(catalog_path, tmp_path):
    env = {
        "TENDER_CATALOG": str(catalog_path),  # the default catalogue has usage history
        "TENDER_RUNS": str(tmp_path / "runs.db"),
        "TENDER_EMBEDDING_MODEL": "hashing",
        "TENDER_HOME": str(tmp_path / "home"),
    }
    return lambda *args: CliRunner().invoke(main, list(args), env=env)


def made_on(tender, db) -> str:
    result = tender("recommend", REQUIREMENT, "--db", str(db), "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)["plan"]["run_id"]


def test_explain_reads_the_runs_own_catalogue_not_the_default_one(tender, catalog_path, no_history):
    on_default = tender("explain", made_on(tender, catalog_path), "--json")
    assert "past mashup" in on_default.stdout  # the default catalogue reports usage history...

    told = tender("explain", made_on(tender, no_history), "--json")

    assert told.exit_code == 0, told.output
    assert "past mashup" not in told.stdout  # ...which belongs to its own items, not to this run's


def test_explain_refuses_in_one_line_when_the_runs_catalogue_is_gone(tender, no_history):
    run_id = made_on(tender, no_history)
    no_history.unlink()

    told = tender("explain", run_id)

    assert told.exit_code == 2
    [line] = told.stderr.strip().splitlines()
    assert str(no_history) in line and "gone" in line and "--db" in line


def test_explain_follows_a_catalogue_that_moved_with_db(tender, no_history, tmp_path):
    run_id = made_on(tender, no_history)
    moved = no_history.rename(tmp_path / "moved.db")

    told = tender("explain", run_id, "--db", str(moved))

    assert told.exit_code == 0, told.output


def test_explain_refuses_when_the_runs_catalogue_was_rebuilt_with_other_items(
    tender, no_history, catalog_path, embedder, sources
):
    run_id = made_on(tender, no_history)
    build_catalog(*sources, no_history, embedder)  # the same path, now with usage history

    told = tender("explain", run_id)

    assert told.exit_code == 2
    [line] = told.stderr.strip().splitlines()
    assert str(no_history) in line and "rebuilt" in line
    # --db naming another catalogue is no way around it
    assert tender("explain", run_id, "--db", str(catalog_path)).exit_code == 2


def test_a_rebuild_from_the_same_sources_keeps_the_runs_explainable(tender, catalog_path, embedder, sources, tmp_path):
    path = tmp_path / "same.db"
    build_catalog(*sources, path, embedder)
    run_id = made_on(tender, path)
    build_catalog(*sources, path, embedder)

    assert tender("explain", run_id).exit_code == 0


def test_runs_list_shows_each_runs_catalogue_and_whether_it_is_still_there(tender, catalog_path, no_history):
    first = made_on(tender, catalog_path)
    second = made_on(tender, no_history)
    no_history.unlink()

    rows = {r["run_id"]: r for r in json.loads(tender("runs", "list", "--json").stdout)}
    assert rows[first]["catalog"]["path"] == str(catalog_path.resolve())
    assert rows[first]["catalog_state"] == "as recorded"
    assert rows[second]["catalog_state"] == "gone"

    lines = {line.split()[0]: line for line in tender("runs", "list").stdout.splitlines()}
    assert catalog_path.name in lines[first] and "(gone)" not in lines[first]
    assert no_history.name in lines[second] and "(gone)" in lines[second]


def test_a_run_stored_before_catalogues_were_recorded_is_told_from_its_transcript(tender, tmp_path, catalog_path):
    run_id = made_on(tender, catalog_path)
    store = RunStore(tmp_path / "runs.db")
    store.db.execute("update runs set catalog_path = null, catalog_fingerprint = null")
    store.db.conn.commit()
    store.close()

    told = json.loads(tender("explain", run_id, "--json").stdout)

    assert any("transcript alone" in note for note in told["notes"])


# -- the MCP server -------------------------------------------------------------------------------
async def test_explain_bids_uses_the_runs_catalogue_and_refuses_when_it_changed(
    settings, no_history, embedder, sources, tmp_path
):
    from dataclasses import replace

    on_tools = replace(settings, catalog_path=no_history)
    async with Client(build_server(on_tools)) as client:
        run_id = ok(await client.call_tool("recommend_apis", {"requirement": REQUIREMENT}))["run_id"]

    # A server on the default catalogue (with usage history) explains the run with the run's own catalogue.
    async with Client(build_server(settings)) as client:
        told = ok(await client.call_tool("explain_bids", {"run_id": run_id}))
        assert "past mashup" not in json.dumps(told)
        resource = json.loads((await client.read_resource(f"runs://{run_id}")).contents[0].text)
        assert resource["catalog"] == {
            "path": str(no_history.resolve()),
            "fingerprint": resource["catalog"]["fingerprint"],
            "state": "as recorded",
        }

        build_catalog(*sources, no_history, embedder)  # rebuilt with usage history: other facts for its ids
        refused = error_text(await client.call_tool("explain_bids", {"run_id": run_id}))
        assert str(no_history.resolve()) in refused and "rebuilt" in refused and "\n" not in refused
        resource = json.loads((await client.read_resource(f"runs://{run_id}")).contents[0].text)
        assert resource["catalog"]["state"] == "changed"
