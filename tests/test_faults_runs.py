"""An unusable runs database loses no plan: the plan is returned with a note saying why it was not stored,
a runs.db deleted while open is opened anew, and a runs path that cannot be opened means no history, not
a server that never starts."""

import os

import pytest
from mcp import Client

from tender.answers.runs import NoHistory, RunNotStored, RunsUnavailable, RunStore, keep
from tender.answers.stores import open_runs
from tender.server.app import AppContext, build_server
from tender.settings import Settings
from tests.server_support import REQUIREMENT, error_text, ok, settings  # noqa: F401 (fixture)
from tests.test_server_runs import make_run


def unwritable_path(tmp_path):
    """A runs path no one can create, whoever runs the tests (root included): its folder is a file."""
    (tmp_path / "a-file").write_text("not a folder")
    return tmp_path / "a-file" / "runs.db"


def test_a_runs_db_deleted_while_open_is_opened_anew_and_nothing_written_after_is_lost(tmp_path):
    path = tmp_path / "runs.db"
    store = RunStore(path)
    store.save(make_run("before"))

    os.remove(path)
    store.save(make_run("after"))

    assert RunStore(path).get("after") == make_run("after")  # a restart finds it


def test_a_runs_db_replaced_while_open_is_read_anew(tmp_path):
    path = tmp_path / "runs.db"
    store = RunStore(path)
    store.save(make_run("old"))
    os.remove(path)
    RunStore(path).save(make_run("written by another server"))

    assert store.get("written by another server").plan.run_id == "written by another server"


def test_a_run_that_cannot_be_written_raises_run_not_stored_saying_why(tmp_path):
    store = RunStore(tmp_path / "runs.db")
    store.db.execute("pragma query_only = 1")  # as a read-only file or file system answers a write

    with pytest.raises(
        RunNotStored, match=r"could not be stored in .*runs.db \(attempt to write a readonly database\)"
    ):
        store.save(make_run("x"))


def test_keep_returns_the_plan_with_a_note_when_the_disk_is_full(tmp_path):
    store = RunStore(tmp_path / "runs.db")
    pages = store.db.execute("pragma page_count").fetchone()[0]
    store.db.execute(f"pragma max_page_count = {pages}")  # no page more: what a full disk answers
    run = make_run("x", requirement="restaurants on a map " * 400)

    keep(store, run)

    (note,) = run.plan.notes
    assert "could not be stored" in note and "full" in note and "will not find its run_id" in note


def test_a_runs_path_that_cannot_be_opened_means_no_history(tmp_path):
    path = unwritable_path(tmp_path)
    with pytest.raises(RunsUnavailable, match="Cannot open the runs database .* Set TENDER_RUNS"):
        RunStore(path)

    store = open_runs(path)

    assert isinstance(store, NoHistory) and not store.keeps_history and store.count() == 0
    run = make_run("x")
    keep(store, run)
    assert "this server runs without history" in run.plan.notes[0]


async def test_the_server_starts_without_history_and_still_returns_plans(settings, tmp_path):
    unusable = Settings(
        catalog_path=settings.catalog_path, runs_path=unwritable_path(tmp_path), embedding_model="hashing"
    )
    async with Client(build_server(unusable)) as client:
        plan = ok(await client.call_tool("recommend_apis", {"requirement": REQUIREMENT}))
        explained = await client.call_tool("explain_bids", {"run_id": plan["run_id"]})

    assert plan["apis"] and any("could not be stored" in note for note in plan["notes"])
    assert "keeps no history" in error_text(explained)


async def test_a_full_runs_db_while_serving_returns_the_plan_with_a_warning(settings):
    def open_app() -> AppContext:
        app = AppContext.open(settings)
        pages = app.runs.db.execute("pragma page_count").fetchone()[0]
        app.runs.db.execute(f"pragma max_page_count = {pages}")
        return app

    async with Client(build_server(settings, open_app=open_app)) as client:
        result = await client.call_tool("recommend_apis", {"requirement": REQUIREMENT})

    plan = ok(result)
    assert plan["apis"]
    assert any("could not be stored" in note and "full" in note for note in plan["notes"])


@pytest.mark.parametrize("age", ["nand", "nan", "infd", "1e400d", "1e20w", "999999w"])
def test_an_age_that_is_no_span_of_time_is_one_line_exit_2(age, tmp_path):
    """nan, inf and spans before the year 1 are no age (the fault probe of 2026-11-27: a bare ValueError, exit 1)."""
    from click.testing import CliRunner

    from tender.cli import main

    result = CliRunner().invoke(
        main, ["runs", "prune", "--older-than", age], env={"TENDER_RUNS": str(tmp_path / "runs.db")}
    )

    assert result.exit_code == 2, result.output
    (line,) = [line for line in result.stderr.strip().splitlines() if line.startswith("Error")]
    assert "is not an age" in line and "Traceback" not in result.output
