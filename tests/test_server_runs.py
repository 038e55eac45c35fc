"""The runs database: migrations, round trips, unknown ids, and concurrent writers."""

import multiprocessing
import sqlite3

import pytest
import sqlite_utils

from tender.agents.messages import CallForProposals, Propose, Transcript
from tender.agents.plan import Cost, Plan, Run, Stages
from tender.agents.request import Constraints
from tender.answers.runs import RunStore, UnknownRun, migrate, migrations


def make_run(run_id: str, requirement: str = "restaurants on a map") -> Run:
    plan = Plan(
        run_id=run_id,
        requirement=requirement,
        protocol="manager-led",
        organisation="api",
        steps=[],
        apis=[],
        stages=Stages(category=[0, 1], bidding=[0], final=[0]),
        cost=Cost(messages=2),
        latency_ms=1.5,
        constraints=Constraints(max_apis=3),
    )
    transcript = Transcript(
        messages=[
            CallForProposals(sender="manager", receiver="*", task_id="t1", requirement=requirement, function_id="f1"),
            Propose(
                sender="api:0",
                receiver="manager",
                task_id="t1",
                api_id=0,
                api_name="Google Maps",
                score=0.9,
                rationale="maps",
            ),
        ]
    )
    return Run(plan=plan, transcript=transcript)


def test_migrates_an_empty_database(tmp_path):
    db = sqlite_utils.Database(tmp_path / "runs.db")
    migrate(db)
    assert {"runs", "_sqlite_migrations"} <= set(db.table_names())
    assert [m.name for m in migrations.applied(db)] == ["m001_runs", "m002_catalog"]
    assert db["runs"].pks == ["run_id"]
    migrate(db)  # a second time changes nothing
    assert len(migrations.applied(db)) == 2


def test_opens_in_wal_mode(tmp_path):
    store = RunStore(tmp_path / "runs.db")
    assert store.db.execute("pragma journal_mode").fetchone()[0] == "wal"


def test_a_run_round_trips(tmp_path):
    store = RunStore(tmp_path / "runs.db")
    run = make_run("abc")
    assert store.save(run) == "abc"
    assert store.get("abc") == run
    assert store.get("  abc ") == run
    assert store.count() == 1
    assert store.recent()[0]["api_ids"] == []


def test_a_run_survives_reopening(tmp_path):
    RunStore(tmp_path / "runs.db").save(make_run("kept"))
    assert RunStore(tmp_path / "runs.db").get("kept").plan.requirement == "restaurants on a map"


def test_unknown_run_says_where_run_ids_come_from(tmp_path):
    store = RunStore(tmp_path / "runs.db")
    with pytest.raises(UnknownRun, match="recommend_apis"):
        store.get("nope")


def _write_from_process(path: str, worker: int, count: int) -> None:
    store = RunStore(path)
    for i in range(count):
        store.save(make_run(f"p{worker}-{i}"))


def test_concurrent_processes_lose_nothing(tmp_path):
    """Several server processes sharing one runs.db, all opening it (and migrating) at once."""
    path = str(tmp_path / "shared-runs.db")
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_write_from_process, args=(path, w, 40)) for w in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    assert [w.exitcode for w in workers] == [0, 0, 0, 0]
    assert sqlite3.connect(path).execute("select count(*) from runs").fetchone()[0] == 160
