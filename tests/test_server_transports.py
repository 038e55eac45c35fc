"""`tender serve` as a subprocess, over stdio and over streamable HTTP, called with the SDK's client;
and the MCP Inspector CLI against the stdio server."""

import json
import shutil
import subprocess

import httpx
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from tests.server_support import REQUIREMENT, TENDER, http_server, ok, server_env  # noqa: F401 (fixture)

INSPECTOR = "@modelcontextprotocol/inspector@2.12.0"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "probe", "version": "0"}},
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


async def test_stdio(server_env):
    params = StdioServerParameters(command=TENDER, args=["serve"], env=server_env)
    async with Client(params) as client:
        assert client.server_info.name == "tender"
        assert {t.name for t in (await client.list_tools()).tools} >= {"recommend_apis", "explain_bids"}
        progress = []

        async def on_progress(done, total, message):
            progress.append(message)

        plan = ok(await client.call_tool("recommend_apis", {"requirement": REQUIREMENT}, progress_callback=on_progress))
        explanation = ok(await client.call_tool("explain_bids", {"run_id": plan["run_id"]}))
        assert "is_error" not in explanation and explanation["functions"]
        assert progress and progress[-1] == "plan ready"
        failed = await client.call_tool("recommend_apis", {"requirement": ""})
        assert failed.is_error and "requirement" in failed.content[0].text


async def test_http(server_env, tmp_path):
    with http_server(server_env, tmp_path / "http.log", "--allow-host", "tender.test") as server:
        url = server.url
        async with Client(url) as client:
            plan = ok(await client.call_tool("recommend_apis", {"requirement": REQUIREMENT}))
        # A second client, a new session: the run is there.
        async with Client(url) as client:
            explanation = ok(await client.call_tool("explain_bids", {"run_id": plan["run_id"]}))
            assert explanation["apis"] == plan["apis"]
        # DNS-rebinding protection: a foreign Host or a browser Origin from elsewhere is refused.
        assert httpx.post(url, json=INITIALIZE, headers=MCP_HEADERS | {"Host": "evil.example:80"}).status_code == 421
        assert (
            httpx.post(url, json=INITIALIZE, headers=MCP_HEADERS | {"Origin": "http://evil.example"}).status_code == 403
        )
        assert (
            httpx.post(url, json=INITIALIZE, headers=MCP_HEADERS | {"Origin": url.rsplit("/", 1)[0]}).status_code == 200
        )
        # --allow-host adds a name, with or without a port (behind a proxy).
        for name in ("tender.test:443", "tender.test"):
            assert httpx.post(url, json=INITIALIZE, headers=MCP_HEADERS | {"Host": name}).status_code == 200
    assert "Streamable HTTP on" in (tmp_path / "http.log").read_text()


async def test_http_bearer_token(server_env, tmp_path):
    env = server_env | {"TENDER_HTTP_TOKEN": "s3cret-token"}
    with http_server(env, tmp_path / "http.log") as server:
        url = server.url
        assert httpx.post(url, json=INITIALIZE, headers=MCP_HEADERS).status_code == 401
        wrong = MCP_HEADERS | {"Authorization": "Bearer guess"}
        assert httpx.post(url, json=INITIALIZE, headers=wrong).status_code == 401
        async with httpx2.AsyncClient(headers={"Authorization": "Bearer s3cret-token"}, timeout=60) as http:
            async with Client(streamable_http_client(url, http_client=http)) as client:
                plan = ok(await client.call_tool("recommend_apis", {"requirement": REQUIREMENT}))
                assert plan["apis"]


@pytest.fixture(scope="module")
def npx():
    path = shutil.which("npx")
    if path is None:
        pytest.skip("npx is not installed, so the MCP Inspector CLI cannot run (install Node.js 22+ to run this test)")
    return path


def inspector(npx: str, env: dict, *args: str, exit_code: int = 0) -> dict:
    """Run the Inspector CLI against `tender serve` over stdio; its stdout is the JSON result. It exits 5
    when a tool call returns isError."""
    command = [
        npx,
        "-y",
        INSPECTOR,
        "--cli",
        TENDER,
        "serve",
        *[a for k, v in env.items() if k.startswith("TENDER_") for a in ("-e", f"{k}={v}")],
        *args,
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=240, env=env)
    assert done.returncode == exit_code, f"{' '.join(command)}\nstdout:\n{done.stdout}\nstderr:\n{done.stderr}"
    return json.loads(done.stdout)


def test_inspector_cli_lists_and_calls_the_tools(npx, server_env):
    listed = inspector(npx, server_env, "--method", "tools/list")
    tools = {tool["name"]: tool for tool in listed["tools"]}
    assert {"recommend_apis", "explain_bids", "compare_protocols", "search_apis", "get_api", "list_categories"} == set(
        tools
    )
    assert tools["recommend_apis"]["annotations"]["idempotentHint"] is False  # each call stores a new run
    assert "outputSchema" in tools["recommend_apis"]

    called = inspector(
        npx,
        server_env,
        "--method",
        "tools/call",
        "--tool-name",
        "recommend_apis",
        "--tool-arg",
        f"requirement={REQUIREMENT}",
        "--tool-arg",
        "max_apis=2",
    )
    assert called.get("isError") is not True
    plan = called["structuredContent"]
    # The Inspector's key=value argument arrived as a number (a string would fail validation).
    assert 1 <= len(plan["apis"]) <= 2 and plan["run_id"]

    failed = inspector(
        npx,
        server_env,
        "--method",
        "tools/call",
        "--tool-name",
        "recommend_apis",
        "--tool-arg",
        "requirement=maps",
        "--tool-arg",
        "kind=auction",
        exit_code=5,
    )
    assert failed["isError"] is True and "mcp_server" in failed["content"][0]["text"]


@pytest.mark.real_model
@pytest.mark.parametrize(
    "runtime, loading",
    [
        ("onnx", "model all-MiniLM-L6-v2"),
        ("torch", "Loading SentenceTransformer model"),  # the noisiest start: torch and its logs
    ],
)
def test_stdout_carries_only_the_protocol(server_env, sources, tmp_path, runtime, loading):
    """With the real embedding model loading (its progress bars and logs), every stdout line is JSON-RPC."""
    from tender.catalog import build_catalog, get_embedder

    catalog = tmp_path / "stock.db"  # embedded by the stock encoder, which both runtimes run
    build_catalog(*sources, catalog, get_embedder())
    env = {k: v for k, v in server_env.items() if k != "TENDER_EMBEDDING_MODEL"}
    env |= {"TENDER_EMBEDDING_RUNTIME": runtime, "TENDER_HOME": str(tmp_path / "home"), "TENDER_CATALOG": str(catalog)}
    process = subprocess.Popen(
        [TENDER, "serve"], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    requests = [
        INITIALIZE,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "get_api", "arguments": {"api": 0}}},
    ]
    for request in requests:
        process.stdin.write(json.dumps(request) + "\n")
    process.stdin.flush()
    lines = []
    while not any(json.loads(line).get("id") == 2 for line in lines):
        line = process.stdout.readline()
        assert line, f"the server closed stdout:\n{process.stderr.read()}"
        lines.append(line)
    rest, errors = process.communicate(timeout=30)
    assert all(json.loads(line)["jsonrpc"] == "2.0" for line in lines + rest.splitlines())
    assert json.loads(lines[-1])["result"]["structuredContent"]["name"] == "Google Maps"
    assert loading in errors  # the model did load, and said so on stderr


def test_serving_a2a_without_its_extra_says_what_to_install(monkeypatch, catalog_path, tmp_path):
    import sys

    from tender.errors import InputToFix
    from tender.server.app import http_app
    from tender.settings import Settings

    for name in [m for m in sys.modules if m == "a2a" or m.startswith(("a2a.", "tender.server.a2a_"))]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "a2a", None)  # as if the a2a extra were not installed
    settings = Settings(catalog_path=catalog_path, runs_path=tmp_path / "runs.db", embedding_model="hashing")
    with pytest.raises(InputToFix, match=r"A2A needs the official A2A SDK .*pip install 'tender-mcp\[a2a\]'"):
        http_app(settings, a2a_url="http://127.0.0.1:8765")
