"""The MCP 2026-07-28 revision (stateless: no initialize, per-request metadata, server/discover): a client speaking it
is served over stdio and over HTTP, and over HTTP its requests may land on any replica, round-robin with no
affinity, and get the same answers (replicas share the catalogue file and the runs store)."""

import itertools
import socket
import sys
import threading
import time

import anyio
import httpx2
import pytest
import uvicorn
from mcp import Client, StdioServerParameters
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Route

from tests.server_support import REQUIREMENT, TENDER, free_port, http_server, ok, server_env  # noqa: F401

MODERN = "2026-07-28"


def round_robin_proxy(backends: list[str]) -> tuple[str, uvicorn.Server, list[str]]:
    """An HTTP proxy on a free port sending each request to the next backend in turn, streaming the answer back;
    the list it returns records which backend took each request."""
    turns = itertools.cycle(backends)
    taken: list[str] = []
    client = httpx2.AsyncClient(timeout=60)

    async def forward(request: Request):
        backend = next(turns)
        taken.append(backend)
        headers = {k: v for k, v in request.headers.items() if k.lower() not in ("host", "content-length")}
        upstream = client.build_request(
            request.method, backend + request.url.path, headers=headers, content=await request.body()
        )
        response = await client.send(upstream, stream=True)
        kept = {k: v for k, v in response.headers.items() if k.lower() not in ("content-length", "transfer-encoding")}
        return StreamingResponse(response.aiter_raw(), status_code=response.status_code, headers=kept)

    app = Starlette(routes=[Route("/{path:path}", forward, methods=["GET", "POST", "DELETE"])])
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.1)
    return f"http://127.0.0.1:{port}/mcp", server, taken


async def test_a_modern_client_over_stdio_gets_a_plan_and_its_explanation(server_env):  # noqa: F811
    params = StdioServerParameters(command=TENDER, args=["serve"], env=server_env)
    async with Client(params, mode=MODERN) as client:
        plan = ok(await client.call_tool("recommend_apis", {"requirement": REQUIREMENT}))
        told = ok(await client.call_tool("explain_bids", {"run_id": plan["run_id"]}))
    assert plan["functions"] and told["run_id"] == plan["run_id"]


async def test_a_modern_client_round_robin_over_two_replicas_gets_the_same_answers(server_env, tmp_path):  # noqa: F811
    with http_server(server_env, tmp_path / "a.log") as a, http_server(server_env, tmp_path / "b.log") as b:
        backends = [f"http://127.0.0.1:{a.port}", f"http://127.0.0.1:{b.port}"]
        url, proxy, taken = round_robin_proxy(backends)
        try:
            async with Client(url, mode=MODERN) as client:
                with anyio.fail_after(120):
                    listings = [sorted(t.name for t in (await client.list_tools()).tools) for _ in range(2)]
                    plans = [
                        ok(await client.call_tool("recommend_apis", {"requirement": REQUIREMENT})) for _ in range(2)
                    ]
                    # Each run is explained by whichever replica the request lands on, its own or the other.
                    told = [ok(await client.call_tool("explain_bids", {"run_id": p["run_id"]})) for p in plans]
        finally:
            proxy.should_exit = True
    assert set(taken) == set(backends), "the proxy never reached one of the replicas"
    assert listings[0] == listings[1]
    assert [f["apis"] for f in plans[0]["functions"] if "apis" in f] == [
        f["apis"] for f in plans[1]["functions"] if "apis" in f
    ]
    assert [t["run_id"] for t in told] == [p["run_id"] for p in plans]


@pytest.mark.skipif(sys.platform == "win32", reason="stdio servers as subprocesses")
async def test_a_modern_client_is_never_asked_for_sampling_and_is_told_to_pass_the_needs(server_env):  # noqa: F811
    asked = []

    async def sampling(context, params):
        asked.append(params)

    env = {**server_env, "TENDER_MANAGER_BACKEND": "client"}  # a deployment that would ask clients that can answer
    params = StdioServerParameters(command=TENDER, args=["serve"], env=env)
    async with Client(params, mode=MODERN, sampling_callback=sampling) as client:
        plan = ok(await client.call_tool("recommend_apis", {"requirement": REQUIREMENT}))
    assert not asked and any("lets no server ask its model" in n for n in plan["notes"])
