"""The HTTP server's MCP sessions are bounded per client address and in total: a client that opens sessions
without end closes its own unused ones, never shuts other clients out (the SDK answered 503 to every new
`initialize` for 30 minutes), and does not close a session another client is using; idle sessions close
sooner than the SDK's 30 minutes."""

import time

import httpx
from mcp import Client

from tests.server_support import REQUIREMENT, http_server, ok, server_env  # noqa: F401 (fixture)
from tests.test_server_transports import INITIALIZE, MCP_HEADERS

SESSION = "mcp-session-id"


def open_session(client: httpx.Client, url: str) -> str:
    """Initialize a session and leave it, as the probe's client did 10,000 times."""
    response = client.post(url, json=INITIALIZE, headers=MCP_HEADERS)
    assert response.status_code == 200, response.text
    return response.headers[SESSION]


def alive(client: httpx.Client, url: str, session: str) -> bool:
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    response = client.post(
        url, json=ping, headers=MCP_HEADERS | {SESSION: session, "mcp-protocol-version": "2025-06-18"}
    )
    assert response.status_code in (200, 404), response.text
    return response.status_code == 200


async def test_a_client_flooding_sessions_closes_its_unused_ones_and_others_are_served(server_env, tmp_path):
    # Bounds of 40 sessions, 10 per client address (every local client is 127.0.0.1), the same mechanism as the
    # default 1,000 and 250 at a twenty-fifth of the work: floods of 12 sessions, past the address's share.
    with (
        http_server(server_env, tmp_path / "http.log", "--max-sessions", "40") as server,
        httpx.Client(timeout=30) as http,
    ):
        flood = [open_session(http, server.url) for _ in range(12)]
        async with Client(server.url) as client:
            assert (await client.list_tools()).tools
            flood += [open_session(http, server.url) for _ in range(12)]  # while this client holds its session
            plan = ok(await client.call_tool("recommend_apis", {"requirement": REQUIREMENT}))
        assert plan["apis"]
        assert not alive(http, server.url, flood[0])  # the oldest unused session made room
        assert alive(http, server.url, flood[-1])
    log = (tmp_path / "http.log").read_text()
    assert "Too many open sessions" not in log and len(log) < 200_000


def test_an_idle_session_is_closed_at_the_session_idle_timeout(server_env, tmp_path):
    with (
        http_server(server_env, tmp_path / "http.log", "--session-idle-timeout", "1") as server,
        httpx.Client(timeout=30) as http,
    ):
        session = open_session(http, server.url)
        assert alive(http, server.url, session)
        deadline = time.monotonic() + 30  # a guard: without the timeout, it stays for the SDK's 30 minutes
        while alive(http, server.url, session):  # each ping is a request: the next one comes after the timeout
            assert time.monotonic() < deadline, "the idle session was never closed"
            time.sleep(1.5)


def test_a_request_cut_before_its_body_was_complete_closes_no_session(server_env, tmp_path):
    """A slow body cut at --idle-timeout used to go on to session admission, which closed an idle session of the
    same client address to make room for a client already gone. Here an address's share is one session."""
    from tests.test_faults_http import closed_by_server, slow_body

    with (
        http_server(server_env, tmp_path / "http.log", "--max-sessions", "4", "--idle-timeout", "1") as server,
        httpx.Client(timeout=30) as http,
    ):
        session = open_session(http, server.url)  # idle meanwhile: nothing else keeps it
        trickling = slow_body(server.port)
        try:
            assert closed_by_server(trickling, within_s=10)  # its body incomplete at the deadline
        finally:
            trickling.close()
        time.sleep(0.5)
        assert alive(http, server.url, session)
