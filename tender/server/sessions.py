"""Bounds on the MCP sessions HTTP clients hold, so that one client cannot take the session table from the others.

The SDK keeps up to 10,000 sessions, each until 30 minutes without a request, and answers 503 to every new
`initialize` while the table is full: one local client opened 10,000 sessions in 27 s and shut every other
client out for half an hour. Here:

- a peer (a client address) holds at most `per_peer` sessions and the server `max_sessions` (a quarter of
  them, by default, so three quarters are always left to others);
- a new session that finds its peer's share, or the table, full closes an idle session (no request in flight)
  to make room: the peer's own first, else the fullest peer's; among them, one never used past its
  `initialize` first, then the least recently used. A client that uses its session keeps it while another
  floods the table with sessions it never uses; a closed session's client gets 404 and, as the MCP
  specification says, initializes anew;
- a session idle for `idle_s` (10 minutes, not the SDK's 30) is closed;
- a request whose client went before its body was complete opens no session: the SDK's body limit hands such a
  request on, with what came of its body, and its admission closed an idle session of the peer's to make room for
  nobody (a slow body cut at its deadline, limits.py, closed the session of a client using it).

Clients behind one proxy are one peer. This works on the SDK's session manager from inside (its admission and
discard steps, private API of mcp 2.3); tests/test_faults_sessions.py holds it to what is promised here."""

import contextvars
import logging
import time
from collections import Counter

from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.datastructures import Headers
from starlette.types import Message, Receive

log = logging.getLogger("tender.server")

DEFAULT_MAX_SESSIONS = 1_000
DEFAULT_SESSION_IDLE_S = 600.0
UNUSED = 1  # requests after `initialize` (its `initialized` notification) that still count as never used

_peer: contextvars.ContextVar[str] = contextvars.ContextVar("tender_session_peer")


def per_peer(max_sessions: int) -> int:
    return max(1, max_sessions // 4)


class BoundedSessions(StreamableHTTPSessionManager):
    """The SDK's session manager with a share per peer and room made by closing idle sessions (see the module)."""

    per_peer: int
    _peers: dict[str, str]  # session id -> peer
    _counts: Counter[str]  # peer -> sessions
    _used: dict[str, tuple[int, float]]  # session id -> (requests after initialize, when last used)

    @classmethod
    def bound(cls, manager: StreamableHTTPSessionManager, sessions_per_peer: int) -> None:
        """Turn the manager a server app made into a BoundedSessions (the app holds it; it cannot be swapped)."""
        manager.__class__ = cls
        assert isinstance(manager, BoundedSessions)
        manager.per_peer = sessions_per_peer
        manager._peers, manager._counts, manager._used = {}, Counter(), {}

    async def _handle_stateful_request(self, scope, receive, send) -> None:
        session_id = Headers(scope=scope).get(MCP_SESSION_ID_HEADER)
        if session_id is None:  # a new session: admitted (below) by the SDK, which knows nothing of peers
            receive = await _whole(receive)
            if receive is None:  # the client went before its request was complete: no session for nobody
                return
            token = _peer.set((scope.get("client") or ("unknown",))[0])
            try:
                await super()._handle_stateful_request(scope, receive, send)
            finally:
                _peer.reset(token)
            return
        self._touch(session_id, request=True)
        try:
            await super()._handle_stateful_request(scope, receive, send)
        finally:
            self._touch(session_id)

    def _admit_session(self, requestor):
        """Called under the SDK's lock for new sessions, with no await: room made here is this session's."""
        peer = _peer.get("unknown")
        self._make_room(peer)
        if self._counts[peer] >= self.per_peer:  # every session of the peer's is serving a request
            log.warning("Refusing a new session: %s holds %d sessions, its share, all busy", peer, self._counts[peer])
            return None
        transport = super()._admit_session(requestor)
        if transport is not None and transport.mcp_session_id is not None:  # stateful: the SDK always sets one
            self._peers[transport.mcp_session_id] = peer
            self._counts[peer] += 1
            self._used[transport.mcp_session_id] = (0, time.monotonic())
        return transport

    async def _discard_session(self, session_id: str, transport) -> None:
        self._forget(session_id)
        await super()._discard_session(session_id, transport)

    def _forget(self, session_id: str) -> None:
        peer = self._peers.pop(session_id, None)
        if peer is not None:
            self._counts[peer] -= 1
            if not self._counts[peer]:
                del self._counts[peer]
        self._used.pop(session_id, None)

    def _touch(self, session_id: str, request: bool = False) -> None:
        if session_id in self._used:
            uses, _ = self._used[session_id]
            self._used[session_id] = (uses + request, time.monotonic())

    def _make_room(self, peer: str) -> None:
        if self._counts[peer] >= self.per_peer:
            owner = peer
        elif self.max_sessions is not None and len(self._server_instances) >= self.max_sessions:
            owner = max(self._counts, key=self._counts.__getitem__)
        else:
            return
        victim = self._idlest(owner)
        if victim is None:
            return
        log.info("Closed an idle session of %s to make room for a new session of %s", owner, peer)
        # Forgotten now, so the new session takes its place; its transport is terminated in the background.
        transport = self._server_instances.pop(victim)
        self._session_owners.pop(victim, None)
        self._forget(victim)
        assert self._task_group is not None
        self._task_group.start_soon(self._discard_session, victim, transport)

    def _idlest(self, owner: str) -> str | None:
        """The owner's idle session to close first: never used past `initialize`, then the least recently used."""
        idle = [
            session_id
            for session_id, transport in self._server_instances.items()
            if self._peers.get(session_id) == owner and not getattr(transport, "_requests_in_flight", 0)
        ]
        return min(idle, key=lambda s: (self._used[s][0] > UNUSED, self._used[s][1]), default=None)


async def _whole(receive: Receive) -> Receive | None:
    """Read a request's body to its end (the SDK has buffered it) and return a `receive` that gives it again, whole,
    then the connection's own messages; None if the client disconnected first."""
    chunks = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    whole: Message | None = {"type": "http.request", "body": b"".join(chunks), "more_body": False}

    async def again() -> Message:
        nonlocal whole
        if whole is None:
            return await receive()
        message, whole = whole, None
        return message

    return again
