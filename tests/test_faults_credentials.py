"""Credentials written into the LLM endpoint's URL (http://user:password@host/v1) are used, never shown or kept:
not in a plan's notes, the runs database, the LLM cache, the server's log or an error message."""

from pathlib import Path

from click.testing import CliRunner
from mcp import Client

from tender.agents.context import RunContext
from tender.agents.reasoners.cache import ResponseCache
from tender.agents.reasoners.llm import LLMReasoner
from tender.agents.tasks import DecomposeTask
from tender.cli import main
from tender.safety import redact
from tests.llm_fake_server import Answer, FakeLLMServer, Status, fallback  # noqa: F401 (fixture)
from tests.server_support import REQUIREMENT, http_server, ok, server_env  # noqa: F401 (fixture)

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
        env = server_env | {"TENDER_LLM_BASE_URL": with_credentials(llm.url), "TENDER_LLM_MODEL": "m"}
        with http_server(env, tmp_path / "http.log") as server:
            async with Client(server.url) as client:
                result = await client.call_tool(
                    "recommend_apis", {"requirement": REQUIREMENT, "manager_backend": "llm"}
                )
        assert llm.requests  # the endpoint was asked

    plan = ok(result)
    assert any("***@127.0.0.1" in note for note in plan["notes"])
    assert SECRET not in result.content[0].text
    assert SECRET.encode() not in files_under(tmp_path)  # the log, runs.db and its WAL
