"""Serving over stdio so that the first Ctrl-C (SIGINT) stops the server, whether or not its client has closed stdin.

The SDK reads stdin in an anyio worker thread, and cancelling a worker thread waits for it: a SIGINT cancelled
the server, which then waited for the client's next line or for stdin to close; a second SIGINT got as far as
interpreter shutdown, which waited for the same thread. Here stdin is read by a daemon thread, with os.read on
a duplicate of its descriptor (no buffer lock for shutdown to trip over), and its lines are handed over through
a memory stream, which cancellation does not wait for."""

import os
import threading
from collections.abc import AsyncIterator

import anyio
import anyio.from_thread
import anyio.lowlevel
from mcp.server import MCPServer
from mcp.server.stdio import stdio_server

CHUNK = 65_536


class DaemonStdin:
    """The lines of file descriptor `fd`, as `stdio_server(stdin=...)` iterates them."""

    def __init__(self, fd: int):
        self._fd = fd

    async def __aiter__(self) -> AsyncIterator[str]:
        send, receive = anyio.create_memory_object_stream[str](0)
        token = anyio.lowlevel.current_token()

        def pump() -> None:
            try:
                for line in _lines(self._fd):
                    anyio.from_thread.run(send.send, line, token=token)  # waits until taken: no backlog
                anyio.from_thread.run_sync(send.close, token=token)  # end of input: the server stops
            except (RuntimeError, anyio.ClosedResourceError, anyio.BrokenResourceError):
                pass  # the server stopped first (its event loop is gone, or it stopped reading)

        threading.Thread(target=pump, name="tender-stdin", daemon=True).start()
        async with receive:
            async for line in receive:
                yield line


def _lines(fd: int):
    pending = b""
    while chunk := os.read(fd, CHUNK):
        pending += chunk
        *complete, pending = pending.split(b"\n")
        yield from (line.decode("utf-8", errors="replace") + "\n" for line in complete)
    if pending:
        yield pending.decode("utf-8", errors="replace")


async def serve_stdio(server: MCPServer) -> None:
    """What `server.run("stdio")` does, with stdin read by DaemonStdin."""
    lowlevel = server._lowlevel_server  # the SDK's run_stdio_async, which takes no stdin of its own
    stdin = DaemonStdin(os.dup(0))
    async with stdio_server(stdin=stdin) as (read_stream, write_stream):  # type: ignore[arg-type]  # iterable is all it needs
        await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())
