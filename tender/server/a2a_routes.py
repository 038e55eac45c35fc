"""A2A beside MCP on one HTTP port: the SDK's JSON-RPC route and agent-card route added to the streamable HTTP app.

One process then holds the catalogue, the agents and the runs store once for both protocols, behind the same
connection limits (limits.py) and the same bearer token (TENDER_HTTP_TOKEN, checked by the MCP SDK's middleware).
The JSON-RPC route (/a2a) takes what /mcp takes: the token where one is set, a Host and Origin naming this server
(DNS-rebinding protection), a JSON body, and a body of at most MAX_BODY bytes, past which it answers with a JSON-RPC
error at once, unread. The card (/.well-known/agent-card.json) is public: an agent reads it to learn that it needs
the token."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from a2a.server.agent_execution import SimpleRequestContextBuilder
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from mcp.server.auth.middleware.bearer_auth import RequireAuthMiddleware
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .a2a_agent import RunIds, TenderAgent
from .a2a_card import A2A_PATH, Cards, agent_card
from .a2a_tasks import RecentTasks
from .context import SharedApp

# The largest request Tender can read is a requirement of 20,000 characters and 12 needs of 300: 1 MiB holds it
# escaped character by character, with room for the rest. A body past it is refused unread.
MAX_BODY = 1024 * 1024
INVALID_REQUEST = -32600


def mount_a2a(
    app: Starlette,
    shared: SharedApp,
    *,
    base_url: str,
    secured: bool,
    version: str,
    security: TransportSecuritySettings,
    max_body: int = MAX_BODY,
) -> None:
    """Serve A2A on `app` (the MCP streamable HTTP app): the JSON-RPC endpoint at A2A_PATH, the agent card at the
    well-known path, and the AppContext opened with the app, held until it stops (MCP sessions share it)."""
    cards = Cards(shared, base_url, secured, version)
    handler = DefaultRequestHandler(
        agent_executor=TenderAgent(shared),
        task_store=RecentTasks(shared),
        agent_card=agent_card(None, base_url, secured, version),  # what the handler reads of it: the capabilities
        request_context_builder=SimpleRequestContextBuilder(task_id_generator=RunIds()),
    )
    (rpc,) = create_jsonrpc_routes(handler, A2A_PATH)
    endpoint: ASGIApp = Guard(rpc.app, security, max_body)
    if secured:
        endpoint = RequireAuthMiddleware(endpoint, required_scopes=[])
    app.router.routes.append(Route(A2A_PATH, endpoint=endpoint, methods=["POST"]))
    app.router.routes.extend(create_agent_card_routes(agent_card(None, base_url, secured, version), cards.current))

    served = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(starlette: Starlette) -> AsyncIterator[None]:
        async with served(starlette), shared.lifespan(None):
            try:
                yield
            finally:
                await handler.aclose()  # tasks still running are stopped, not left pending at exit

    app.router.lifespan_context = lifespan


class Guard:
    """What the MCP transport checks of a request, for the A2A route: Host and Origin (DNS rebinding), a JSON content
    type, and the size of the body, read up to `max_body` bytes (beyond: a JSON-RPC error, the rest left unread)."""

    def __init__(self, app: ASGIApp, security: TransportSecuritySettings, max_body: int):
        self.app, self.max_body = app, max_body
        self.checks = TransportSecurityMiddleware(security)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        refused = await self.checks.validate_request(Request(scope, receive), is_post=True)
        if refused is not None:
            await refused(scope, receive, send)
            return
        declared = Headers(scope=scope).get("content-length", "")
        if declared.isdigit() and int(declared) > self.max_body:
            await self._too_large(scope, receive, send)
            return
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            body += message.get("body", b"")
            if len(body) > self.max_body:
                await self._too_large(scope, receive, send)
                return
            if not message.get("more_body", False):
                break
        whole: Message = {"type": "http.request", "body": bytes(body), "more_body": False}
        delivered = False

        async def replay() -> Message:
            nonlocal delivered
            if not delivered:
                delivered = True
                return whole
            return await receive()

        await self.app(scope, replay, send)

    async def _too_large(self, scope: Scope, receive: Receive, send: Send) -> None:
        error = {
            "code": INVALID_REQUEST,
            "message": (
                f"The request is over {self.max_body:,} bytes, more than any request Tender can read (a requirement of "
                "up to 20,000 characters and up to 12 needs): send the requirement and its needs, not documents."
            ),
        }
        await JSONResponse({"jsonrpc": "2.0", "id": None, "error": error})(scope, receive, send)
