"""Credentials written into the LLM endpoint's URL (http://user:password@host/v1) are used, never shown or kept:
not in a plan's notes, the runs database, the LLM cache, the server's log or an error message."""

import json
import logging
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from mcp import Client

from tender.agents.context import RunContext
from tender.agents.reasoners.cache import ResponseCache
from tender.agents.reasoners.llm import LLMReasoner
from tender.agents.tasks import DecomposeTask
from tender.cli import main
from tender.safety import redact
from tender.server.app import build_server
from tender.settings import BadSetting, Settings
from tests.llm_fake_server import Answer, FakeLLMServer, Status, fallback  # noqa: F401 (fixture)
from tests.server_support import TENDER, REQUIREMENT, free_port, http_server, ok, server_env  # noqa: F401 (fixture)

SECRET = "hunter2-s3cret"
DECOMPOSITION = {"functions": [{"id": "f1", "name": "map", "description": "show restaurants on a map"}]}


def with_credentials(url: str) -> str:
    return url.replace("http://", f"http://tender:{SECRET}@")


def files_under(folder: Path) -> bytes:
    return b"".join(path.read_bytes() for path in folder.rglob("*") if path.is_file())


def test_redact_masks_the_user_and_password_and_secret_query_values():
    assert (
        redact(f"cannot reach http://tender:{SECRET}@h:8/v1, 4 attempts")
        == "cannot reach http://***@h:8/v1, 4 attempts"
    )
    assert redact(f"https://h/v1?api_key={SECRET}&model=m") == "https://h/v1?api_key=***&model=m"
    assert redact("write to ops@example.org at http://h/v1") == "write to ops@example.org at http://h/v1"


def test_the_cli_prints_stores_and_caches_no_credentials(catalog_path, tmp_path):
    # HTTP 404: the note names the endpoint ("no model 'm' at <url>"), as an unreachable one does.
    with FakeLLMServer(respond=lambda body: Status(404, "no such model")) as server:
        result = CliRunner().invoke(
            main,
            ["recommend", REQUIREMENT, "--manager-backend", "llm", "--llm-model", "m"]
            + ["--llm-base-url", with_credentials(server.url), "--llm-timeout", "5"],
            env={
                "TENDER_CATALOG": str(catalog_path),
                "TENDER_RUNS": str(tmp_path / "runs.db"),
                "TENDER_HOME": str(tmp_path),
                "TENDER_EMBEDDING_MODEL": "hashing",
            },
        )

    assert result.exit_code == 0, result.output
    assert "at http://***@127.0.0.1:" in result.stdout  # the note is there, masked
    assert SECRET not in result.output
    assert SECRET.encode() not in files_under(tmp_path)  # runs.db, its WAL, the LLM cache


def test_the_llm_cache_keeps_no_credentials(tmp_path, fallback):  # noqa: F811 (fixture)
    cache = ResponseCache(tmp_path / "llm-cache.db")
    with FakeLLMServer() as server:
        server.enqueue(Answer(DECOMPOSITION))
        reasoner = LLMReasoner(base_url=with_credentials(server.url), model="m", fallback=fallback, cache=cache)
        reasoner.run(DecomposeTask(requirement="A map of nearby restaurants"), RunContext())
    cache.close()

    assert len(server.requests) == 1  # the endpoint was reached with the URL as given
    assert SECRET.encode() not in files_under(tmp_path) and b"***@127.0.0.1" in files_under(tmp_path)


async def test_the_server_returns_stores_and_logs_no_credentials(server_env, tmp_path):  # noqa: F811 (fixture)
    with FakeLLMServer(respond=lambda body: Status(404, "no such model")) as llm:
        env = server_env | {
            "TENDER_LLM_BASE_URL": with_credentials(llm.url),
            "TENDER_LLM_MODEL": "m",
            "TENDER_MANAGER_BACKEND": "llm",
        }
        with http_server(env, tmp_path / "http.log") as server:
            async with Client(server.url) as client:
                result = await client.call_tool("recommend_apis", {"requirement": REQUIREMENT})
        assert llm.requests  # the endpoint was asked

    plan = ok(result)
    assert any("***@127.0.0.1" in note for note in plan["notes"])
    assert SECRET not in result.content[0].text
    assert SECRET.encode() not in files_under(tmp_path)  # the log, runs.db and its WAL


# -- Credentials in any characters (the fault probe of 2026-11-27) -------------------------------------------------
# Each secret holds a Q, which nothing else here does: no three characters of one may survive masking.
HOSTILE = [
    ("postgresql://tender:Qp@ss/w%rdQ@/postgres?host=/tmp/pg", ["Qp@ss/w%rdQ"]),
    ("postgresql://u:Qa@bQ@host/db", ["Qa@bQ"]),
    ("postgresql://u:%40%2FQz@host/db", ["%40%2FQz"]),
    ("postgresql://u:Qp/wQ@host/db", ["Qp/wQ"]),
    ("postgresql://u:Qp?x#yQ@h:5432/db", ["Qp?x#yQ"]),
    ("http://u:QpwQ@h/v1#token=QabcQ", ["QpwQ", "QabcQ"]),
    ("http://u:QpQ@h/v1?api-key=QkkQ&model=m#access_token=QatQ", ["QpQ", "QkkQ", "QatQ"]),
    ("https://QghpTokenQ@h/v1", ["QghpTokenQ"]),
    ("postgresql:///db?password=QsecretQ", ["QsecretQ"]),
    ("postgresql:///db?host=/tmp&password=Qx%26yQ", ["Qx%26yQ"]),
    ("postgresql:///db?host=/tmp&sslpassword=QzzQ&port=5432", ["QzzQ"]),
    ("POSTGRESQL://U:QUPPERQ@H/DB", ["QUPPERQ"]),
]


def shows(text: str, secrets: list[str]) -> list[str]:
    """The pieces of three characters of `secrets` that `text` shows."""
    return [s[i : i + 3] for s in secrets for i in range(len(s) - 2) if s[i : i + 3] in text]


@pytest.mark.parametrize("url, secrets", HOSTILE)
def test_no_credential_of_a_hostile_url_survives_masking(url, secrets):
    for text in (url, f"cannot reach {url}: connection refused", f"({url}).", f"url={url},other=ops@example.org"):
        assert shows(redact(text), secrets) == [], redact(text)


def test_masking_keeps_where_a_url_points():
    assert redact("postgresql://u:%40%2F@db.example:5432/tender") == "postgresql://***@db.example:5432/tender"
    assert redact("postgresql:///db?host=/tmp&password=x%26y") == "postgresql:///db?host=/tmp&password=***"
    assert redact("http://u:p@h/v1#token=abc") == "http://***@h/v1#token=***"
    assert redact("see http://h/docs#usage and ops@example.org") == "see http://h/docs#usage and ops@example.org"


@pytest.mark.parametrize("url, secrets", [(u, s) for u, s in HOSTILE if u.lower().startswith("postgres")])
def test_a_runs_url_is_shown_without_its_credentials_or_refused_without_echoing_it(url, secrets):
    try:
        shown = Settings.from_env({"TENDER_RUNS": url, "TENDER_HOME": "/tmp/tender-test-home"}).runs_shown
    except BadSetting as error:  # one it cannot read as given (or, in capitals, no scheme it reads)
        assert shows(str(error), secrets) == [] and len(str(error).splitlines()) == 1, str(error)
    else:
        assert shows(shown, secrets) == [], shown


UNREADABLE = [  # what libpq would read otherwise than written: its errors then quote the pieces
    "postgresql://tender:Qp@ss/w%rdQ@/postgres?host=/tmp/pg",  # the probe's: '@', '/' and '%' unencoded
    "postgresql://u:Qa@bQ@host/db",  # libpq: password 'Qa', host 'bQ@host'
    "postgresql://u:Qp/wQ@host/db",  # libpq: host 'u', port 'Qp'
    "postgresql://u:Q%zzQ@host/db",  # an invalid percent-encoding
    "postgresql://u:Q pQ@host/db",  # a space
]


@pytest.mark.parametrize("url", UNREADABLE)
def test_a_runs_url_that_cannot_be_read_as_given_is_refused_at_start_without_echoing_it(url):
    secret = url.split(":", 2)[2].rsplit("@", 1)[0]
    with pytest.raises(BadSetting, match="percent-encode") as refused:
        Settings.from_env({"TENDER_RUNS": url, "TENDER_HOME": "/tmp/tender-test-home"})
    assert shows(str(refused.value), [secret]) == [] and len(str(refused.value).splitlines()) == 1


def test_the_server_refuses_to_start_on_the_probes_runs_url_in_one_line(server_env, tmp_path):  # noqa: F811
    url = UNREADABLE[0].replace("/tmp/pg", str(tmp_path))
    done = subprocess.run(
        [TENDER, "serve", "--transport", "http", "--port", str(free_port())],
        env=server_env | {"TENDER_RUNS": url},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 2 and done.stdout == ""  # a setting to fix
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("Error: TENDER_RUNS") and "percent-encode" in line
    assert shows(line, ["Qp@ss/w%rdQ"]) == []


async def test_a_server_given_an_unreadable_runs_url_shows_it_nowhere(catalog_path, caplog):
    """Settings made in code (as a test or an embedding program does) skip from_env's check: the store refuses the
    URL itself, and the server serves without history, saying so without the URL's password."""
    secret = "Qp@ss/w%rdQ"
    settings = Settings(catalog_path=catalog_path, runs_url=UNREADABLE[0], embedding_model="hashing")
    with caplog.at_level(logging.INFO):
        async with Client(build_server(settings)) as client:
            result = await client.call_tool("recommend_apis", {"requirement": REQUIREMENT})
            explained = await client.call_tool("explain_bids", {"run_id": ok(result)["run_id"]})
    plan = ok(result)
    assert any("could not be stored" in note for note in plan["notes"])
    assert shows(result.content[0].text, [secret]) == [] and shows(json.dumps(plan), [secret]) == []
    assert shows(explained.content[0].text, [secret]) == []
    assert shows(caplog.text, [secret]) == [], caplog.text


def test_the_llm_urls_credentials_are_refused_or_masked_in_settings_and_the_doctor(catalog_path, tmp_path):
    unreadable = "http://u:Qp/wQ@127.0.0.1:9/v1"  # httpx: "Invalid port: 'Qp'"
    with pytest.raises(BadSetting, match="percent-encode") as refused:
        Settings.from_env({"TENDER_LLM_BASE_URL": unreadable, "TENDER_HOME": str(tmp_path)})
    assert shows(str(refused.value), ["Qp/wQ"]) == []

    url = "http://u:Qp@ssQ@127.0.0.1:9/v1#token=QabcQ"  # read as written (the last @ ends the user's part)
    env = {
        "TENDER_HOME": str(tmp_path / "home"),
        "TENDER_CATALOG": str(catalog_path),
        "TENDER_RUNS": str(tmp_path / "runs.db"),
        "TENDER_EMBEDDING_MODEL": "hashing",
        "TENDER_LLM_BASE_URL": url,
        "TENDER_LLM_MODEL": "m",
    }
    for args in (["doctor"], ["doctor", "--json"]):
        result = CliRunner().invoke(main, args, env=env)
        assert result.exit_code == 1  # the endpoint is not reachable
        assert shows(result.output, ["Qp@ssQ", "QabcQ"]) == [], result.output
    assert "TENDER_LLM_BASE_URL=<your TENDER_LLM_BASE_URL>" in CliRunner().invoke(main, ["doctor"], env=env).output
