"""The runs store's contract, the same on SQLite (a file, the default) and on PostgreSQL (a URL, for replicas):
migrations, round trips, listing, deleting, pruning, and writers at once, in threads and in processes."""

import datetime
import multiprocessing
import threading

import pytest
import sqlite_utils

from tender.answers.runs import CatalogRef, RunsUnavailable, UnknownRun, is_url, migrations
from tender.answers.stores import keep_at, open_store
from tender.answers.runs_postgres import MIGRATIONS
from tests.test_server_runs import make_run

REF = CatalogRef(path="/srv/tender/catalog.db", fingerprint="0123456789abcdef")


@pytest.fixture
def store(runs_location):
    store = open_store(runs_location)
    yield store
    store.close()


def test_both_stores_have_the_same_migrations():
    pending = migrations.pending(sqlite_utils.Database(memory=True))
    assert [m.name for m in pending] == list(MIGRATIONS) == ["m001_runs", "m002_catalog"]


def test_a_new_database_is_migrated_once(runs_location):
    first, second = open_store(runs_location), open_store(runs_location)
    try:
        first.save(make_run("a"))
        second.save(make_run("b"))  # opened before the first wrote: migrated once all the same
        assert first.count() == second.count() == 2
        if is_url(runs_location):
            assert first.applied() == ["m001_runs", "m002_catalog"]
    finally:
        first.close()
        second.close()


def test_a_run_round_trips_with_its_catalogue(store):
    run = make_run("abc")
    assert store.save(run, REF) == "abc"
    entry = store.entry("  abc ")
    assert entry.run == run and entry.catalog == REF and entry.created_at
    assert store.get("abc") == run


def test_a_run_saved_again_is_replaced_not_doubled(store):
    store.save(make_run("abc", requirement="first"))
    store.save(make_run("abc", requirement="second"))
    assert store.count() == 1 and store.get("abc").plan.requirement == "second"


def test_a_run_survives_reopening(runs_location):
    writer = open_store(runs_location)
    writer.save(make_run("kept"))
    writer.close()
    reader = open_store(runs_location)
    assert reader.get("kept").plan.requirement == "restaurants on a map"
    reader.close()


def test_an_unknown_run_says_where_run_ids_come_from(store):
    with pytest.raises(UnknownRun, match="recommend_apis"):
        store.get("nope")


def test_recent_runs_come_newest_first_with_their_catalogue(store):
    store.save(make_run("old", requirement="a map of bike shops"), REF)
    store.save(make_run("new", requirement="send SMS reminders"))
    rows = store.recent(limit=5)
    assert [r["run_id"] for r in rows] == ["new", "old"]
    assert rows[1]["catalog"] == REF.model_dump() and rows[0]["catalog"] is None
    assert rows[1]["requirement"] == "a map of bike shops" and rows[1]["api_ids"] == []
    assert [r["run_id"] for r in store.recent(limit=1)] == ["new"]


def test_delete_removes_all_or_nothing(store):
    for run_id in ("a", "b", "c"):
        store.save(make_run(run_id))
    with pytest.raises(UnknownRun):
        store.delete(["a", "missing"])
    assert store.count() == 3
    assert store.delete(["a", "b", "a"]) == 2
    assert [r["run_id"] for r in store.recent()] == ["c"]


def test_prune_removes_only_older_runs_and_dry_run_only_counts(store):
    store.save(make_run("a"))
    store.save(make_run("b"))
    assert store.prune(datetime.timedelta(days=1)) == 0
    assert store.prune(datetime.timedelta(0), dry_run=True) == 2 and store.count() == 2
    assert store.prune(datetime.timedelta(0)) == 2 and store.count() == 0


def test_concurrent_threads_lose_nothing(store):
    errors = []

    def write(worker: int):
        try:
            for i in range(25):
                store.save(make_run(f"{worker}-{i}"))
        except Exception as error:  # pragma: no cover - the assertion below reports it
            errors.append(error)

    threads = [threading.Thread(target=write, args=(w,)) for w in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and store.count() == 200


def _write_from_process(location, worker: int, count: int) -> None:
    store = open_store(location)
    for i in range(count):
        store.save(make_run(f"p{worker}-{i}"))
    store.close()


def test_processes_opening_a_new_store_at_once_lose_nothing(runs_location):
    """Several server replicas sharing one store, all opening it (and migrating) at once."""
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_write_from_process, args=(runs_location, w, 30)) for w in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(90)
    assert [w.exitcode for w in workers] == [0, 0, 0, 0]
    store = open_store(runs_location)
    assert store.count() == 120
    store.close()


def test_the_cli_way_stores_one_run_and_closes(runs_location):
    run = make_run("cli")
    assert keep_at(runs_location, run) is None and run.plan.notes == []
    store = open_store(runs_location)
    assert store.get("cli") == run
    store.close()


def test_a_store_that_cannot_be_opened_says_what_to_fix(tmp_path, postgres_server):
    (tmp_path / "a-file").write_text("not a folder")
    with pytest.raises(RunsUnavailable, match="Set TENDER_RUNS to a writable file"):
        open_store(tmp_path / "a-file" / "runs.db")
    nowhere = postgres_server.replace("/postgres?", "/no_such_database?")
    store = open_store(nowhere)
    with pytest.raises(RunsUnavailable, match='database "no_such_database" does not exist.*Check TENDER_RUNS'):
        store.count()
    store.close()
