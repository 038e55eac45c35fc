"""A PostgreSQL runs store that cannot take a run in time costs a plan at most its save budget (2 s), never the plan:
a lock held on the runs table, a server that is down (then back), and the CLI's one line when it cannot be
reached, and a server that stops answering (SIGSTOP). Against a real PostgreSQL (tests/postgres.py); the fault
probes of 2026-11-27 and 2026-11-28.

No clock: what is asserted is the store's own report (each plan notes that its run was not stored, and why: the
server did not answer within the budget), that after a failure the next plans do not ask the server again (a count
of the transactions the store let through), and that a fault outlasting the budget (a lock held for 20 s, a server
frozen until the test thaws it) still costs no plan. Guards against hanging are generous."""

import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import anyio
import pytest
from mcp import Client

from tender.answers.runs_postgres import RETRY_S, SAVE_BUDGET_S
from tender.server.app import build_server
from tender.settings import Settings
from tests.postgres import NoCluster, _run, binaries, start, stop
from tests.server_support import REQUIREMENT, TENDER, ok

pytestmark = pytest.mark.postgres
NOT_STORED = "could not be stored"
NO_ANSWER = f"did not answer within {SAVE_BUDGET_S:g} s"


def stored(url: str) -> set[str]:
    import psycopg

    with psycopg.connect(url) as conn:
        return {row[0] for row in conn.execute("select run_id from runs")}


async def a_plan(client) -> dict:
    with anyio.fail_after(60):  # a guard: the fault outlasts the save budget, and a plan that waited it out hangs
        return ok(await client.call_tool("recommend_apis", {"requirement": REQUIREMENT}))


def not_stored(plan: dict) -> bool:
    return any(NOT_STORED in note for note in plan.get("notes", []))


def milliseconds(setting: str) -> float:
    """A PostgreSQL duration as SHOW gives it ('1950ms', '2s') in milliseconds."""
    number = setting.rstrip("mins")
    return float(number) * (1000 if setting.endswith("s") and not setting.endswith("ms") else 1)


def why_not_stored(plan: dict) -> str:
    return next(note for note in plan["notes"] if NOT_STORED in note)


class Asked(list):
    """The transactions the store let through to the server, one entry each (a store failing at once, after a
    failure, asks nothing); with `lock_timeouts`, the lock_timeout in force in each (read in its transaction)."""

    lock_timeouts: list[str] | None = None


@pytest.fixture
def asked(monkeypatch) -> Asked:
    from tender.answers.runs_postgres import PostgresRunStore

    through = Asked()
    connection = PostgresRunStore._connection

    @contextmanager
    def counted(self, *args, **kwargs):
        through.append(1)
        with connection(self, *args, **kwargs) as conn:
            if through.lock_timeouts is not None:
                through.lock_timeouts.append(conn.execute("show lock_timeout").fetchone()[0])
            yield conn

    monkeypatch.setattr(PostgresRunStore, "_connection", counted)
    return through


async def saved_again(client, within_s: float) -> list[dict]:
    """Plans until one is stored (the store tries again RETRY_S after a failure), at most `within_s` seconds."""
    plans = []
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        plan = await a_plan(client)
        plans.append(plan)
        if not not_stored(plan):
            return plans
        time.sleep(0.5)
    raise AssertionError(f"no plan stored within {within_s} s of the store's return: {plans[-1]['notes']}")


async def test_a_lock_on_the_runs_table_costs_each_plan_at_most_the_save_budget(catalog_path, postgres_url, asked):
    import psycopg

    settings = Settings(catalog_path=catalog_path, runs_url=postgres_url, embedding_model="hashing")
    holding, released = threading.Event(), threading.Event()

    def hold_the_lock():  # another session: a transaction holding the table, released after 20 s at most
        with psycopg.connect(postgres_url) as conn:
            conn.execute("lock table runs in access exclusive mode")
            holding.set()
            released.wait(20)

    async with Client(build_server(settings)) as client:
        first = await a_plan(client)  # the table made, a run stored, the agents warm
        holder = threading.Thread(target=hold_the_lock)
        holder.start()
        assert holding.wait(10)
        try:
            asked.clear()
            asked.lock_timeouts = []
            during = [await a_plan(client) for _ in range(4)]
            through, waited_for = len(asked), asked.lock_timeouts
            asked.lock_timeouts = None
        finally:
            released.set()
            holder.join()
        after = await saved_again(client, within_s=RETRY_S + 10)

    # Returned all the same, saying so: the server's lock timeout, set within the save budget, ended the wait (a
    # plan that waited for the lock to be released, 20 s later, would have been stored); the next plans were told
    # at once, the store not asked again.
    assert all(not_stored(plan) and "lock timeout" in why_not_stored(plan) for plan in during)
    assert waited_for and all(0 < milliseconds(t) <= SAVE_BUDGET_S * 1000 for t in waited_for), waited_for
    assert 1 <= through < len(during)
    reported = {p["run_id"] for p in [first, *during, *after] if not not_stored(p)}
    assert reported and reported <= stored(postgres_url)  # nothing reported saved is lost


@pytest.fixture
def cluster():
    """A cluster of this test's own, which it may stop and start."""
    try:
        cluster = start()
    except NoCluster as error:
        pytest.skip(f"PostgreSQL could not start: {error}")
    yield cluster
    stop(cluster.folder)


def pg_ctl(cluster, *args: str) -> None:
    data = str(cluster.folder / "data")
    if args[0] == "start":
        options = f"-k {cluster.folder} -p 5432 -c listen_addresses='' -c fsync=off"
        _run(
            [str(binaries() / "pg_ctl"), "-D", data, "-l", str(cluster.folder / "log"), "-o", options, "-w", "start"],
            "start",
        )
    else:
        _run([str(binaries() / "pg_ctl"), "-D", data, *args], "stop")


async def test_a_server_that_goes_down_costs_each_plan_at_most_the_save_budget_and_saving_resumes(
    catalog_path, cluster, asked
):
    settings = Settings(catalog_path=catalog_path, runs_url=cluster.url, embedding_model="hashing")
    async with Client(build_server(settings)) as client:
        first = await a_plan(client)
        pg_ctl(cluster, "-m", "fast", "-w", "stop")
        asked.clear()
        down = [await a_plan(client) for _ in range(8)]
        through = len(asked)
        pg_ctl(cluster, "start")
        after = await saved_again(client, within_s=RETRY_S + 10)

    assert all(not_stored(plan) for plan in down)
    # After the first failure the store is not asked again for RETRY_S: the other plans are told at once, the
    # same reason (each waited 5 s before). One more try is let through each RETRY_S, on a slow machine.
    assert 1 <= through < len(down) / 2, through
    assert len({why_not_stored(plan) for plan in down}) == 1
    reported = {p["run_id"] for p in [first, *down, *after] if not not_stored(p)}
    assert first["run_id"] in reported and after[-1]["run_id"] in reported
    assert reported <= stored(cluster.url)  # nothing reported saved is lost


def test_the_cli_says_in_one_line_that_the_store_cannot_be_reached(tmp_path, catalog_path):
    """No PostgreSQL at the URL: the pool's own warnings stay quiet; one line, and soon."""
    env = {
        "TENDER_CATALOG": str(catalog_path),
        "TENDER_HOME": str(tmp_path),
        "TENDER_RUNS": f"postgresql://tender@/postgres?host={tmp_path}&port=5432",
        "PATH": "/usr/bin:/bin",
    }
    done = subprocess.run([TENDER, "runs", "list"], env=env, capture_output=True, text=True, timeout=60)

    assert done.returncode == 1 and done.stdout == ""
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("Error: Cannot open the runs database postgresql://***@/postgres") and "No such file" in line


def cluster_processes(cluster) -> list[int]:
    """The postmaster and every process it forked (backends, checkpointer, writers): the whole server."""
    postmaster = int((cluster.folder / "data" / "postmaster.pid").read_text().split()[0])
    children = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = (Path("/proc") / entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == postmaster:  # the field after the state: its parent
                children.append(int(entry))
    return [postmaster, *children]


@contextmanager
def frozen(cluster) -> Iterator[None]:
    """The server stopped with SIGSTOP: it accepts nothing, answers nothing and refuses nothing, as a server does
    that hangs or a link that goes silent. Always thawed afterwards."""
    processes = cluster_processes(cluster)
    try:
        for pid in processes:
            os.kill(pid, signal.SIGSTOP)
        yield
    finally:
        for pid in processes:
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)


async def test_a_frozen_postgresql_costs_a_plan_at_most_two_seconds_and_saving_resumes_when_it_answers(
    catalog_path, cluster, asked
):
    settings = Settings(catalog_path=catalog_path, runs_url=cluster.url, embedding_model="hashing")
    async with Client(build_server(settings)) as client:
        first = await a_plan(client)  # pooled connections open: the frozen server holds them
        with frozen(cluster):  # until the test thaws it: before the fix, each plan waited as long (the guard fails)
            asked.clear()
            during = [await a_plan(client) for _ in range(4)]
            through = len(asked)
        after = await saved_again(client, within_s=RETRY_S + 10)

    # Returned all the same, saying so: the client's own deadline cut the silent connection at the budget; the
    # first plan asked the frozen server, the others were told at once (or one more asked, RETRY_S later).
    assert all(not_stored(plan) and NO_ANSWER in why_not_stored(plan) for plan in during)
    assert 1 <= through < len(during)
    reported = {p["run_id"] for p in [first, *during, *after] if not not_stored(p)}
    assert first["run_id"] in reported and after[-1]["run_id"] in reported
    assert reported <= stored(cluster.url)  # nothing reported saved is lost


def test_the_stores_connections_probe_a_silent_tcp_peer_unless_the_url_says_otherwise(postgres_url):
    from tender.answers.runs_postgres import PostgresRunStore

    store = PostgresRunStore(f"{postgres_url}&keepalives_idle=30")
    try:
        with store._transaction() as conn:  # one of the pool's connections, as a save gets it
            dsn = dict(option.split("=", 1) for option in conn.info.dsn.split())
    finally:
        store.close()

    assert dsn["keepalives"] == "1" and dsn["tcp_user_timeout"] == "10000"
    assert dsn["keepalives_idle"] == "30"  # the URL's own
