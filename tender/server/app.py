"""The MCP server: `build_server(settings)` returns an MCPServer whose lifespan opens the catalogue, the
embedding model, the agents and the runs database once; the tools, resources and prompt read them.

Transports: stdio (Claude Desktop, IDEs) and streamable HTTP (agents), the latter on loopback by
default, with the SDK's DNS-rebinding and Origin checks, and an optional static bearer token."""

import copy
import hmac
import logging
import os
import signal
import socket
import sys
from collections.abc import Callable, Sequence
from typing import Any

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import (
    ResourceError,
    ResourceNotFoundError,
    ToolError,
    UnexpectedResourceError,
    UnexpectedToolError,
)
from mcp.shared.exceptions import MCPError
from mcp.types import INTERNAL_ERROR, INVALID_PARAMS
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import Tool as MCPTool
from pydantic import ValidationError

from tender.agents.request import describe_validation_error
from tender.errors import InputToFix
from tender.safety import Redacting, echo
from tender.settings import Settings

from . import resources, tools
from .instructions import instructions
from .context import AppContext, SharedApp

log = logging.getLogger("tender.server")

LOOPBACK = ("127.0.0.1", "localhost", "::1")


class StaticTokenVerifier:
    """Accepts exactly one bearer token (TENDER_HTTP_TOKEN), compared in constant time."""

    def __init__(self, token: str):
        self._token = token.encode()

    async def verify_token(self, token: str) -> AccessToken | None:
        if hmac.compare_digest(token.encode(), self._token):
            return AccessToken(token=token, client_id="tender-http", scopes=[])
        return None


class TenderServer(MCPServer):
    """The SDK's server, with tools/list as an assistant should read it: pydantic titles every argument with its
    own name respelt ("Max Apis") and the arguments with the function's ("recommend_apisArguments"). tools/list is
    read before every conversation; those titles were a twentieth of it and said nothing."""

    shared: SharedApp  # the AppContext behind it, which the A2A routes share (a2a_routes.py)

    async def list_tools(self) -> list[MCPTool]:
        return [
            tool.model_copy(update={"input_schema": _untitled(tool.input_schema)})
            for tool in await super().list_tools()
        ]

    async def call_tool(self, name: str, arguments: dict[str, Any], context=None):
        """Arguments that fail the tool's schema are told as Tender tells a request's faults (which argument, what
        to do, the value quoted short), not as pydantic's report with its type names and a link."""
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as error:
            cause = error.__cause__
            if isinstance(cause, ValidationError) and not isinstance(error, UnexpectedToolError):
                said = describe_validation_error(cause).removeprefix("Invalid request: ")
                raise ToolError(f"Error executing tool {name}: invalid arguments: {said}") from cause
            raise

    async def read_resource(self, uri, context=None):
        """A resource that cannot be read is told with its URI quoted short: the SDK quotes it whole, in the message
        and its data (a 100 KB URI came back twice)."""
        try:
            return await super().read_resource(uri, context)
        except ResourceError as error:
            text = str(uri)
            if len(text) <= URI_SHOWN:
                raise
            if isinstance(error, UnexpectedResourceError):
                log.error("Reading the resource %s failed", echo(text), exc_info=error.__cause__)
            code = INVALID_PARAMS if isinstance(error, ResourceNotFoundError) else INTERNAL_ERROR
            raise MCPError(code, str(error).replace(text, echo(text)), data={"uri": echo(text)}) from None


URI_SHOWN = 200  # a resource URI longer than this is quoted short in errors (a run's is under 100)


def _untitled(schema: dict) -> dict:
    """An input schema without titles, and an optional argument as its type alone: "omit" says the rest."""
    properties = {}
    for name, prop in schema.get("properties", {}).items():
        prop = {k: v for k, v in prop.items() if k != "title"}
        branches = prop.get("anyOf", [])
        if prop.get("default", 0) is None and len(branches) == 2 and {"type": "null"} in branches:
            prop = {k: v for k, v in prop.items() if k not in ("anyOf", "default")}
            prop |= next(b for b in branches if b != {"type": "null"})
        properties[name] = prop
    return {k: v for k, v in schema.items() if k != "title"} | {"properties": properties}


def build_server(
    settings: Settings | None = None,
    *,
    open_app: Callable[[], AppContext] | None = None,
    bearer_token: str | None = None,
) -> TenderServer:
    """The Tender MCP server. `open_app` replaces how the AppContext is opened (tests pass one with
    their own agents); `bearer_token` makes the HTTP transport require `Authorization: Bearer <token>`."""
    settings = settings or Settings()
    shared = SharedApp(open_app or (lambda: AppContext.open(settings)))
    # Resource-server settings without an authorization server: the token is checked, nothing else.
    auth = AuthSettings(issuer_url="http://127.0.0.1", resource_server_url=None) if bearer_token else None
    verifier = StaticTokenVerifier(bearer_token) if bearer_token else None
    server = TenderServer(
        "tender",
        title="Tender: Web API recommendations by contract net",
        instructions=instructions(settings.catalog_path),  # the catalogue it will serve, described
        version=_version(),
        lifespan=shared.lifespan,
        log_level="INFO",
        auth=auth,
        token_verifier=verifier,
    )
    server.shared = shared
    tools.register(server)
    resources.register(server, shared)
    return server


def transport_security(host: str, allowed_hosts: Sequence[str] = ()) -> TransportSecuritySettings:
    """DNS-rebinding protection, always on: the Host header must name this server (loopback, the --host
    address, or an allowed name), and a browser's Origin must be one of those too."""
    names = ["127.0.0.1", "localhost", "[::1]"]
    if host not in LOOPBACK and host not in ("0.0.0.0", "::"):
        names.append(host)
    names += [name for name in allowed_hosts if name not in names]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{name}:*" for name in names] + list(allowed_hosts),  # a proxy may drop the port
        allowed_origins=[
            f"{scheme}://{name}{port}" for name in names for scheme in ("http", "https") for port in (":*", "")
        ],
    )


class Unprotected(InputToFix):
    def __init__(self, host: str):
        super().__init__(
            f"Refusing to serve on {host} without a bearer token: anyone who can reach it could call "
            "the tools. Set TENDER_HTTP_TOKEN, or pass --allow-unauthenticated if something in front of "
            "Tender checks who calls."
        )


def serve(
    settings: Settings,
    transport: str = "stdio",
    host: str = "127.0.0.1",
    port: int = 8765,
    allowed_hosts: Sequence[str] = (),
    *,
    allow_unauthenticated: bool = False,
    max_connections: int | None = None,
    idle_s: float | None = None,
    max_sessions: int | None = None,
    session_idle_s: float | None = None,
    a2a: bool = False,
    public_url: str | None = None,
) -> None:
    """Run until interrupted. Logs go to stderr: under stdio, stdout carries only the protocol. Over HTTP,
    at most `max_connections` are open, a quarter of them per client address, and one that has not sent a whole
    request (headers and body) within `idle_s` is closed (see limits.py);
    at most `max_sessions` MCP sessions are open, a quarter of them per client address, and one with no
    request for `session_idle_s` is closed (see sessions.py); beyond loopback a bearer token is required
    unless `allow_unauthenticated`. With `a2a`, the same port serves A2A beside MCP (a2a_routes.py), its agent card
    naming `public_url` (default: http://host:port)."""
    from .limits import DEFAULT_IDLE_S, RepeatFilter, bounded_protocol, default_max_connections, per_client
    from .sessions import DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE_S, per_peer

    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    for handler in logging.getLogger().handlers:
        handler.addFilter(Redacting())  # the HTTP client logs the LLM endpoint's URL, credentials and all
        handler.addFilter(RepeatFilter())
    if transport == "stdio":
        if a2a:
            raise InputToFix("A2A is served over HTTP, beside MCP: add --transport http.")
        serve_stdio(settings)
        return
    if host not in LOOPBACK and not settings.http_token:
        if not allow_unauthenticated:
            raise Unprotected(host)
        log.warning("Serving on %s without a bearer token (--allow-unauthenticated).", host)
    import uvicorn
    from uvicorn.config import LOGGING_CONFIG

    max_sessions = max_sessions or DEFAULT_MAX_SESSIONS
    session_idle_s = session_idle_s or DEFAULT_SESSION_IDLE_S
    base_url = (public_url or default_public_url(host, port)).rstrip("/") if a2a else None
    app = http_app(settings, host, allowed_hosts, max_sessions, session_idle_s, a2a_url=base_url)
    log_config = copy.deepcopy(LOGGING_CONFIG)
    log_config["handlers"]["access"]["stream"] = "ext://sys.stderr"  # uvicorn's default is stdout
    log_config["filters"] = {"redacting": {"()": Redacting}, "repeats": {"()": RepeatFilter}}
    for handler in log_config["handlers"].values():
        handler["filters"] = ["redacting", "repeats"]
    max_connections = max_connections or default_max_connections()
    idle_s = idle_s or DEFAULT_IDLE_S
    log.info(
        "Streamable HTTP on http://%s:%s/mcp%s%s; at most %d connections, %d per client address, closed without a "
        "whole request after %g s; at most %d sessions, %d per client address, idle ones closed after %g s",
        host,
        port,
        f", A2A at {base_url}/a2a (agent card at {base_url}/.well-known/agent-card.json)" if base_url else "",
        " (bearer token required)" if settings.http_token else "",
        max_connections,
        per_client(max_connections),
        idle_s,
        max_sessions,
        per_peer(max_sessions),
        session_idle_s,
    )
    uvicorn.run(
        app,
        host=host,
        port=port,
        log_config=log_config,
        http=bounded_protocol(max_connections, idle_s),
        ws="none",  # MCP has no use for WebSocket, and an upgraded connection would leave the bounds above
        timeout_keep_alive=max(1, int(min(5, idle_s))),  # whole seconds, as uvicorn takes them
    )


def http_app(
    settings: Settings,
    host: str = "127.0.0.1",
    allowed_hosts: Sequence[str] = (),
    max_sessions: int | None = None,
    session_idle_s: float | None = None,
    *,
    a2a_url: str | None = None,
    open_app: Callable[[], AppContext] | None = None,
):
    """The ASGI app `serve` runs over HTTP: MCP's streamable HTTP at /mcp and, given `a2a_url` (the address agents
    reach it at), A2A beside it. `open_app` as build_server's (tests pass their own agents)."""
    from .sessions import DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE_S, BoundedSessions, per_peer

    max_sessions = max_sessions or DEFAULT_MAX_SESSIONS
    server = build_server(settings, bearer_token=settings.http_token, open_app=open_app)
    security = transport_security(host, allowed_hosts)
    app = server.streamable_http_app(
        transport_security=security,
        host=host,
        max_sessions=max_sessions,
        session_idle_timeout=session_idle_s or DEFAULT_SESSION_IDLE_S,
    )
    BoundedSessions.bound(server.session_manager, per_peer(max_sessions))
    for name in ("mcp.server.streamable_http_manager", "mcp.server.streamable_http"):
        logging.getLogger(name).setLevel(logging.WARNING)  # two lines a session: a flood of them fills the log
    if a2a_url is not None:
        try:
            from .a2a_routes import mount_a2a
        except ImportError as error:
            raise InputToFix(f"A2A needs the official A2A SDK ({error.name}): {A2A_EXTRA}.") from None
        mount_a2a(
            app,
            server.shared,
            base_url=a2a_url,
            secured=bool(settings.http_token),
            version=_version(),
            security=security,
        )
        logging.getLogger("a2a").setLevel(logging.WARNING)  # its request handler logs each task at INFO
    return app


A2A_EXTRA = "pip install 'tender-mcp[a2a]'"


def default_public_url(host: str, port: int) -> str:
    """Where agents reach a server listening on `host`, as its agent card says when --public-url is not given: the
    machine's name for a wildcard address (a card must name a place to call, and 0.0.0.0 names none)."""
    if host in ("0.0.0.0", "::"):
        host = socket.gethostname()
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


DISTRIBUTION = "tender-mcp"  # pyproject's name; the package and the command are `tender`


WAITING = (
    "Tender is an MCP server: it is waiting for an MCP client on stdin and stdout, and has nothing to say to a "
    "terminal. An MCP client (Claude Desktop, an IDE, the MCP Inspector) starts it itself; `tender doctor` prints "
    'their configuration. To try Tender here: tender recommend "an app that ...". Press Ctrl-C to stop.'
)


def serve_stdio(settings: Settings) -> None:
    """The server on stdin and stdout. Started by hand in a terminal, it says what it is waiting for. Ctrl-C
    ends it at once: the SDK reads stdin on a worker thread that an interrupt cannot wake, and asyncio waits
    for that thread at shutdown, so an interrupted server used to hang until a key was pressed. Runs are
    written in single transactions, so stopping between them loses nothing."""
    if sys.stdin.isatty():
        print(WAITING, file=sys.stderr, flush=True)

    def stop(signum, frame):
        print("Interrupted.", file=sys.stderr, flush=True)
        os._exit(130)

    signal.signal(signal.SIGINT, stop)
    import anyio

    from .stdio import serve_stdio as run_stdio  # stdin read on a daemon thread: an interrupt never waits on it

    anyio.run(run_stdio, build_server(settings))


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:  # run from a tree that was never installed
        return "0+unknown"
