"""The runs store on PostgreSQL (TENDER_RUNS=postgresql://...): what to install without the extra, a password
never shown, a server that is down or restarted costing a note and never a plan, and replicas over one store
each explaining the other's runs."""

import sys
import time

import pytest
from click.testing import CliRunner
from mcp import Client

from tender.answers.runs import NoHistory, RunsUnavailable, keep
from tender.answers.stores import open_runs, open_store
from tender.answers.runs_postgres import PostgresRunStore
from tender.cli import main
from tender.server.app import build_server
from tender.settings import BadSetting, Settings
from tests.postgres import NoCluster, start, stop
from tests.server_support import REQUIREMENT, ok, server_env  # noqa: F401 (fixture)
from tests.test_server_runs import make_run


@pytest.fixture
def without_driver(monkeypatch):
    """As an install without the `postgres` extra: psycopg cannot be imported."""
    monkeypatch.setitem(sys.modules, "psycopg", None)
    monkeypatch.setitem(sys.modules, "psycopg_pool", None)


def test_a_postgresql_url_without_the_extra_says_what_to_install(without_driver):
    with pytest.raises(
        RunsUnavailable, match=r"needs psycopg 3 and psycopg_pool: pip install 'tender-mcp\[postgres\]'"
    ):
        open_store("postgresql://tender:secret@db.example/tender")


def test_a_server_without_the_extra_serves_without_history_and_says_why(without_driver):
    store = open_runs("postgresql://tender:secret@db.example/tender")
    assert isinstance(store, NoHistory)
    run = make_run("x")
    keep(store, run)
    assert "tender-mcp[postgres]" in run.plan.notes[0] and "secret" not in run.plan.notes[0]


def test_the_cli_without_the_extra_fails_in_one_line(without_driver, catalog_path, monkeypatch):
    monkeypatch.setenv("TENDER_CATALOG", str(catalog_path))
    monkeypatch.setenv("TENDER_RUNS", "postgresql://tender:secret@db.example/tender")
    result = CliRunner().invoke(main, ["runs", "list"])
    assert result.exit_code == 1
    assert "pip install 'tender-mcp[postgres]'" in result.output and "secret" not in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_tender_runs_takes_a_file_or_a_postgresql_url_and_nothing_else():
    settings = Settings.from_env({"TENDER_RUNS": "postgresql://tender:secret@db.example:5432/tender"})
    assert settings.runs_location == "postgresql://tender:secret@db.example:5432/tender"
    assert settings.runs_shown == "postgresql://***@db.example:5432/tender" and "secret" not in repr(settings)
    assert str(Settings.from_env({"TENDER_RUNS": "/srv/runs.db"}).runs_location) == "/srv/runs.db"
    with pytest.raises(BadSetting, match="a mysql:// URL; runs are kept in a file .* or in PostgreSQL"):
        Settings.from_env({"TENDER_RUNS": "mysql://tender:secret@db.example/tender"})


@pytest.mark.postgres  # the postgres extra, with no server
def test_a_server_that_is_down_costs_a_note_not_a_plan_and_no_password_is_shown(tmp_path):
    store = PostgresRunStore(f"postgresql://tender:secret@/tender?host={tmp_path}&port=5432", timeout_s=1)
    run = make_run("x")
    keep(store, run)
    (note,) = run.plan.notes
    assert "could not be stored in postgresql://***@/tender" in note and "No such file" in note
    assert "secret" not in note
    with pytest.raises(RunsUnavailable, match="Check TENDER_RUNS"):
        store.get("x")
    store.close()


@pytest.mark.postgres
def test_a_restarted_server_costs_only_the_runs_made_while_it_was_down(monkeypatch):
    import tender.answers.runs_postgres as runs_postgres

    monkeypatch.setattr(runs_postgres, "RETRY_S", 1.0)  # after a failure the store is asked again after this
    try:
        cluster = start()
    except NoCluster as error:
        pytest.skip(f"PostgreSQL could not start: {error}")
    from tests.postgres import _run, binaries

    pg_ctl = str(binaries() / "pg_ctl")
    data = str(cluster.folder / "data")
    try:
        store = PostgresRunStore(cluster.url, timeout_s=1)
        store.save(make_run("before"))
        _run([pg_ctl, "-D", data, "-m", "fast", "-w", "stop"], "pg_ctl stop")
        down = make_run("while down")
        keep(store, down)
        assert "could not be stored" in down.plan.notes[0]
        options = f"-k {cluster.folder} -p 5432 -c listen_addresses=''"
        _run([pg_ctl, "-D", data, "-l", str(cluster.folder / "log"), "-o", options, "-w", "start"], "pg_ctl start")
        time.sleep(runs_postgres.RETRY_S)
        after = make_run("after")
        keep(store, after)  # the pool's connection died with the server: it is checked and replaced
        assert after.plan.notes == []
        assert [r["run_id"] for r in store.recent()] == ["after", "before"]
        store.close()
    finally:
        stop(cluster.folder)


async def test_replicas_over_one_store_explain_each_others_runs(catalog_path, postgres_url):
    """Two servers (as two `tender serve` processes would be) on one catalogue and one PostgreSQL store."""
    settings = Settings(catalog_path=catalog_path, runs_url=postgres_url, embedding_model="hashing")
    async with Client(build_server(settings)) as first, Client(build_server(settings)) as second:
        plan = ok(await first.call_tool("recommend_apis", {"requirement": REQUIREMENT}))
        told = ok(await second.call_tool("explain_bids", {"run_id": plan["run_id"]}))
        record = await second.read_resource(f"runs://{plan['run_id']}")

    assert plan["apis"] and not any("could not be stored" in n for n in plan.get("notes", []))
    assert told["run_id"] == plan["run_id"] and told["functions"]
    assert f'"run_id":"{plan["run_id"]}"' in record.contents[0].text


def test_doctor_checks_a_postgresql_store_without_showing_its_password(catalog_path, postgres_url):
    from tender.server.doctor import diagnose

    diagnosis = diagnose(Settings(catalog_path=catalog_path, runs_url=postgres_url, embedding_model="hashing"))
    runs = next(check for check in diagnosis.checks if check.name == "runs")
    assert runs.ok and runs.found.endswith(": 0 runs")
    # its URL names a user: the configurations carry a placeholder, never the URL masked (it would log in wrongly)
    assert diagnosis.settings["TENDER_RUNS"] == "<your TENDER_RUNS>"
    assert diagnosis.placeholders == {"<your TENDER_RUNS>": "TENDER_RUNS"}


async def test_two_http_replicas_explain_each_others_runs(server_env, postgres_url, tmp_path):
    """Two `tender serve --transport http` processes over one PostgreSQL store and one catalogue file."""
    from tests.server_support import http_server

    env = server_env | {"TENDER_RUNS": postgres_url}
    with http_server(env, tmp_path / "a.log") as a, http_server(env, tmp_path / "b.log") as b:
        async with Client(a.url) as first, Client(b.url) as second:
            plan = ok(await first.call_tool("recommend_apis", {"requirement": REQUIREMENT}))
            told = ok(await second.call_tool("explain_bids", {"run_id": plan["run_id"]}))
    assert told["run_id"] == plan["run_id"] and told["functions"]
