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
  address's, else (at `max_connections`) the fullest address's, else any; among them the one silent longest
  (since it opened, its last response, or the last byte of its request). A client with a real request still gets
  in, and a flood from one address closes its own connections, not others'. Only when every connection it could
  close is busy with a request is the newcomer refused (said in the log).

Clients behind one proxy are one address. This subclasses uvicorn's h11 protocol (private API of uvicorn 0.54);
tests/test_private_api.py checks its hooks and tests/test_faults_http.py holds it to what is promised here."""

import asyncio
import logging
import resource
import threading
import time
from collections import Counter
from typing import Any

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


class Waiting:
    """The connections waiting for a complete request, by client address, the one silent longest first: a request
    sent a byte every few seconds ages between its bytes, while a client's own request arrives at once."""

    def __init__(self) -> None:
        # address -> {id: (silent since, connection)}, oldest first; an address with none is removed
        self._by_address: dict[str, dict[int, tuple[float, Any]]] = {}

    def touch(self, address: str, connection: Any) -> None:
        """`connection` waits, or has just sent part of its request: it is the youngest."""
        self.discard(address, connection)
        self._by_address.setdefault(address, {})[id(connection)] = (time.monotonic(), connection)

    def discard(self, address: str, connection: Any) -> None:
        connections = self._by_address.get(address)
        if connections is not None and connections.pop(id(connection), None) is not None and not connections:
            del self._by_address[address]

    def oldest(self, address: str | None = None) -> Any | None:
        """The connection to close first: of `address`, or of any (None)."""
        if address is not None:
            connections = self._by_address.get(address)
            return next(iter(connections.values()))[1] if connections else None
        firsts = (next(iter(connections.values())) for connections in self._by_address.values())
        return min(firsts, key=lambda entry: entry[0], default=(0.0, None))[1]


def bounded_protocol(max_connections: int, idle_s: float = DEFAULT_IDLE_S) -> type[H11Protocol]:
    """uvicorn's h11 protocol with these bounds, as a class for `uvicorn.run(http=...)`; one per server."""
    waiting = Waiting()
    addresses: Counter[str] = Counter()  # client address -> connections open
    share = per_client(max_connections)

    class BoundedH11Protocol(H11Protocol):
        def connection_made(self, transport) -> None:
            super().connection_made(transport)
            self._idle_timer: asyncio.TimerHandle | None = None
            self._address = self.client[0] if self.client else "unknown"
            addresses[self._address] += 1
            if addresses[self._address] > share:  # its own address's waiting connection, or none
                if not self._make_room(waiting.oldest(self._address), f"it holds {share} connections, its share"):
                    return
            elif len(self.connections) > max_connections:  # the fullest address's, else any
                fullest = addresses.most_common(1)[0][0]
                if not self._make_room(waiting.oldest(fullest) or waiting.oldest(), f"all {max_connections} are open"):
                    return
            self._wait()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            # Only a complete request stops the clock: headers, or a body, sent a byte at a time do not.
            if self.cycle is not None and not self.cycle.response_complete and not self.cycle.more_body:
                self._stop_waiting()
            elif self._idle_timer is not None:  # part of a request: the youngest to close, the clock still running
                waiting.touch(self._address, self)

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

        def _make_room(self, victim: "BoundedH11Protocol | None", why: str) -> bool:  # noqa: UP037
            """Close `victim` for this one; if there is none, close this one, say so and return False."""
            if victim is None:
                log.warning("Refused a connection from %s: %s, all busy with requests", self._address, why)
                self.transport.close()
                return False
            victim._close_idle()
            return True

        def _wait(self) -> None:
            self._stop_waiting()
            waiting.touch(self._address, self)
            self._idle_timer = self.loop.call_later(idle_s, self._close_idle)

        def _stop_waiting(self) -> None:
            waiting.discard(self._address, self)
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
