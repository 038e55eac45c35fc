"""Bounds on what HTTP clients can hold without sending a request, and on how much a fault can write to the log.

uvicorn closes an idle connection only after it has answered a request on it: a connection that never sends
one (or sends its headers a byte at a time) stays open for ever, before authentication can run. 20,400 of them
exhausted the file limit, and every accept after that logged "Too many open files". And once a request's headers
are in, uvicorn waits for its body as long as it trickles: 1,000 connections each sending a byte of body every 3 s
were never closed, and took every connection from everyone else. Here:

- a connection must complete a request, headers and body, within `idle_s` of opening (or of its last response),
  or it is closed;
- at most `max_connections` are open, and at most a quarter of them from one client address;
- past either bound, a connection still waiting for its request is closed to make room: the newcomer's own
  address's oldest one, else (at `max_connections`) the oldest of the address holding the most, else the oldest.
  A client with a real request still gets in; a flood from one address closes its own connections, not others'.
  Only when every connection it could close is busy with a request is the newcomer refused (said in the log).

Clients behind one proxy are one address. This subclasses uvicorn's h11 protocol (private API of uvicorn 0.54);
tests/test_private_api.py checks its hooks and tests/test_faults_http.py holds it to what is promised here."""

import asyncio
import logging
import resource
import threading
import time
from collections import Counter

from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger("tender.server")

DEFAULT_IDLE_S = 10.0


def default_max_connections() -> int:
    """Half the process's file limit, at most 1,000: the rest is for the catalogue, models and logs."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return max(16, min(1000, soft // 2)) if soft != resource.RLIM_INFINITY else 1000


def per_client(max_connections: int) -> int:
    """Connections one client address may hold: a quarter of them, so three quarters are always left to others."""
    return max(1, max_connections // 4)


def bounded_protocol(max_connections: int, idle_s: float = DEFAULT_IDLE_S) -> type[H11Protocol]:
    """uvicorn's h11 protocol with these bounds, as a class for `uvicorn.run(http=...)`; one per server."""
    waiting: dict[int, "BoundedH11Protocol"] = {}  # noqa: UP037 (defined below)  connections with no complete request, oldest first
    addresses: Counter[str] = Counter()  # client address -> connections open
    share = per_client(max_connections)

    def room(address: str | None) -> "BoundedH11Protocol | None":  # noqa: UP037
        """The waiting connection to close: the oldest of `address` (None: of the address holding the most, else
        of any)."""
        if address is None:
            address = max(addresses, key=addresses.__getitem__, default=None)
            fallback = next(iter(waiting.values()), None)
        else:
            fallback = None
        return next((c for c in waiting.values() if c._address == address), fallback)

    class BoundedH11Protocol(H11Protocol):
        def connection_made(self, transport) -> None:
            super().connection_made(transport)
            self._idle_timer: asyncio.TimerHandle | None = None
            self._address = self.client[0] if self.client else "unknown"
            addresses[self._address] += 1
            if addresses[self._address] > share:
                if not self._make_room(self._address, f"it holds {share} connections, its share, all busy"):
                    return
            elif len(self.connections) > max_connections:
                if not self._make_room(None, f"all {max_connections} connections are open and busy"):
                    return
            self._wait()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            # Only a complete request stops the clock: headers, or a body, sent a byte at a time do not.
            if self.cycle is not None and not self.cycle.response_complete and not self.cycle.more_body:
                self._stop_waiting()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._wait()

        def connection_lost(self, exc) -> None:
            self._stop_waiting()
            addresses[self._address] -= 1
            if not addresses[self._address]:
                del addresses[self._address]
            super().connection_lost(exc)

        def _make_room(self, address: str | None, why: str) -> bool:
            """Close a waiting connection (see the module) for this one; False, and this one closed, if none is."""
            victim = room(address)
            if victim is None:
                log.warning("Refused a connection from %s: %s with requests", self._address, why)
                self.transport.close()
                return False
            victim._close_idle()
            return True

        def _wait(self) -> None:
            self._stop_waiting()
            waiting[id(self)] = self
            self._idle_timer = self.loop.call_later(idle_s, self._close_idle)

        def _stop_waiting(self) -> None:
            waiting.pop(id(self), None)
            timer = getattr(self, "_idle_timer", None)
            if timer is not None:
                timer.cancel()
                self._idle_timer = None

        def _close_idle(self) -> None:
            self._stop_waiting()
            if not self.transport.is_closing():
                self.transport.close()

    return BoundedH11Protocol


class RepeatFilter(logging.Filter):
    """Lets the same line (logger, level, message) through at most `burst` times per `window_s`; the first
    one after a quiet spell says how many were held back. A fault that repeats every millisecond (an accept
    loop out of file descriptors) then writes a few lines a window, not 126 MB in 30 s."""

    def __init__(self, burst: int = 5, window_s: float = 10.0):
        super().__init__()
        self.burst, self.window_s = burst, window_s
        self._seen: dict[tuple, list] = {}  # key -> [window start, count in window, held back]
        self._lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        key = (record.name, record.levelno, record.getMessage()[:300])
        now = time.monotonic()
        with self._lock:
            if len(self._seen) > 10_000:  # distinct lines are not what this bounds
                self._seen.clear()
            start, count, held = self._seen.get(key, (now, 0, 0))
            if now - start >= self.window_s:
                start, count = now, 0
            count += 1
            if count > self.burst:
                self._seen[key] = [start, count, held + 1]
                return False
            self._seen[key] = [start, count, 0]
        if held:
            record.msg = f"{record.msg} ({held} more like this held back)"
        return True
