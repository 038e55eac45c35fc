"""Bounds on what HTTP clients can hold without sending a request, and on how much a fault can write to the log.

uvicorn closes an idle connection only after it has answered a request on it: a connection that never sends
one (or sends its headers a byte at a time) stays open for ever, before authentication can run. 20,400 of them
exhausted the file limit, and every accept after that logged "Too many open files". Here a connection must
complete a request's headers within `idle_s` of opening (or of its last response), and at most
`max_connections` are open: past that, the oldest connection waiting for a request is closed to make room, so
a client with a real request still gets in."""

import asyncio
import logging
import resource
import threading
import time

from uvicorn.protocols.http.h11_impl import H11Protocol

DEFAULT_IDLE_S = 10.0


def default_max_connections() -> int:
    """Half the process's file limit, at most 1,000: the rest is for the catalogue, models and logs."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return max(16, min(1000, soft // 2)) if soft != resource.RLIM_INFINITY else 1000


def bounded_protocol(max_connections: int, idle_s: float = DEFAULT_IDLE_S) -> type[H11Protocol]:
    """uvicorn's h11 protocol with both bounds, as a class for `uvicorn.run(http=...)`; one per server."""
    waiting: dict[int, "BoundedH11Protocol"] = {}  # noqa: UP037 (defined below)  connections with no request in progress, oldest first

    class BoundedH11Protocol(H11Protocol):
        def connection_made(self, transport) -> None:
            super().connection_made(transport)
            self._idle_timer: asyncio.TimerHandle | None = None
            if len(self.connections) > max_connections:
                oldest = next(iter(waiting.values()), None)
                if oldest is None:  # every connection is busy with a request: refuse this one
                    transport.close()
                    return
                oldest._close_idle()
            self._wait()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            # Only a complete request stops the clock: headers sent a byte at a time do not.
            if self.cycle is not None and not self.cycle.response_complete:
                self._stop_waiting()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._wait()

        def connection_lost(self, exc) -> None:
            self._stop_waiting()
            super().connection_lost(exc)

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
