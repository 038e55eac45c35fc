"""The HTTP server under connection abuse: idle connections and slow request bodies are bounded and closed, one
client address cannot take the connections from the others, a normal client is served meanwhile, repeated log
lines are held back, and no token means no listening beyond loopback."""

import logging
import os
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import anyio
from mcp import Client

from tender.server.limits import RepeatFilter
from tests.server_support import TENDER, free_port, http_server, server_env  # noqa: F401 (fixture)

IDLE = 100  # connections held open by the test; far fewer than the probe's 20,000, same mechanism


def open_sockets(pid: int) -> int:
    fds = f"/proc/{pid}/fd"
    return sum(
        os.readlink(f"{fds}/{fd}").startswith("socket:") for fd in os.listdir(fds) if os.path.exists(f"{fds}/{fd}")
    )


def closed_by_server(sock: socket.socket, within_s: float) -> bool:
    sock.settimeout(within_s)
    try:
        return sock.recv(1) == b""
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True


async def test_idle_connections_are_bounded_and_a_normal_client_is_served_meanwhile(server_env, tmp_path):
    with http_server(server_env, tmp_path / "http.log", "--max-connections", "20", "--idle-timeout", "3") as server:
        port, process = server.port, server.process
        idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(IDLE)]
        time.sleep(0.5)  # let the server accept them
        try:
            async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                assert {t.name for t in (await client.list_tools()).tools} >= {"recommend_apis"}
            assert open_sockets(process.pid) <= 20 + 5  # the cap, the listening socket and a few more
            assert closed_by_server(idle[-1], within_s=15)  # the newest idle one too, at the idle timeout
        finally:
            for sock in idle:
                sock.close()
        assert process.poll() is None


def test_headers_sent_a_byte_at_a_time_do_not_hold_a_connection(server_env, tmp_path):
    with http_server(server_env, tmp_path / "http.log", "--idle-timeout", "2") as server:
        port = server.port
        sock = socket.create_connection(("127.0.0.1", port))
        closed = False
        # 80 bytes, one each quarter of a second (20 s): never idle for 2 s, so only a deadline on the whole
        # request closes the connection before the headers are complete.
        for byte in b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 60:
            try:
                sock.send(bytes([byte]))
            except (BrokenPipeError, ConnectionResetError):
                closed = True
                break
            if closed_by_server(sock, within_s=0.25):
                closed = True
                break
        sock.close()

    assert closed, "the server waited for headers sent a byte at a time to be complete"


SLOW = 60  # connections sending a request body a byte a second; far fewer than the probe's 1,000, same mechanism


def slow_body(port: int, source: str = "127.0.0.1") -> socket.socket:
    """A connection that has sent a request's headers and the first byte of its 1,000-byte body."""
    sock = socket.create_connection(("127.0.0.1", port), source_address=(source, 0))
    sock.sendall(
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
        b"Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{" % port
    )
    return sock


@contextmanager
def trickling_bodies(port: int, count: int) -> Iterator[list[socket.socket]]:
    """`count` slow bodies (slow_body), each sent a byte a second as long as the server keeps it; stopped and
    closed on leaving."""
    slow = [slow_body(port) for _ in range(count)]
    stop = threading.Event()

    def trickle() -> None:
        while not stop.wait(1):
            for sock in slow:
                try:
                    sock.send(b" ")
                except OSError:
                    pass

    trickling = threading.Thread(target=trickle)
    trickling.start()
    try:
        yield slow
    finally:
        stop.set()
        trickling.join()
        for sock in slow:
            sock.close()


def test_slow_request_bodies_are_cut_at_the_deadline(server_env, tmp_path):
    """A byte a second keeps each connection from ever being idle: only a deadline on the whole request (headers and
    body within --idle-timeout) closes them."""
    with http_server(server_env, tmp_path / "http.log", "--max-connections", "40", "--idle-timeout", "3") as server:
        with trickling_bodies(server.port, SLOW) as slow:
            guard = time.monotonic() + 60  # against hanging: the slow bodies would trickle for 1,000 s
            cut = [closed_by_server(sock, within_s=max(0.1, guard - time.monotonic())) for sock in slow]
        assert server.process.poll() is None

    assert all(cut), f"{cut.count(False)} of {SLOW} slow bodies were never closed"


async def test_a_normal_client_is_served_while_slow_request_bodies_hold_the_connections(server_env, tmp_path):
    """The slow bodies' deadline (--idle-timeout 60) is past the guard on the normal client's call (30 s): it is
    served while they still hold their connections, not when their deadline frees them."""
    with http_server(server_env, tmp_path / "http.log", "--max-connections", "40", "--idle-timeout", "60") as server:
        with trickling_bodies(server.port, SLOW):
            time.sleep(0.5)  # let the server take them in
            with anyio.fail_after(30):
                async with Client(server.url) as client:
                    assert {t.name for t in (await client.list_tools()).tools} >= {"recommend_apis"}
        assert server.process.poll() is None


def test_one_client_address_cannot_take_the_connections_of_others(server_env, tmp_path):
    """A quarter of --max-connections per client address: a flood from one address closes its own connections
    to make room, not another address's."""
    with http_server(server_env, tmp_path / "http.log", "--max-connections", "40", "--idle-timeout", "20") as server:
        others = [slow_body(server.port, source="127.0.0.3") for _ in range(5)]
        time.sleep(0.3)
        flood = [slow_body(server.port, source="127.0.0.2") for _ in range(100)]
        time.sleep(1)
        try:
            flood_open = sum(not closed_by_server(sock, within_s=0.01) for sock in flood)
            others_open = sum(not closed_by_server(sock, within_s=0.01) for sock in others)
        finally:
            for sock in [*others, *flood]:
                sock.close()

    assert others_open == 5
    assert flood_open == 40 // 4


def test_no_token_no_listening_beyond_loopback(server_env):
    result = subprocess.run(
        [TENDER, "serve", "--transport", "http", "--host", "0.0.0.0", "--port", str(free_port())],
        env=server_env,
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert result.returncode == 2  # a token or a flag to give: input to fix
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert errors == [errors[0]] and "Refusing to serve on 0.0.0.0 without a bearer token" in errors[0]
    assert "--allow-unauthenticated" in errors[0] and "Traceback" not in result.stderr


def test_repeated_log_lines_are_held_back_and_counted():
    repeats = RepeatFilter(burst=3, window_s=0.5)

    def record(message):
        return logging.LogRecord("asyncio", logging.ERROR, __file__, 1, message, None, None)

    passed = [repeats.filter(record("socket.accept() out of system resource")) for _ in range(1000)]
    assert sum(passed) == 3
    assert repeats.filter(record("another line"))
    time.sleep(0.6)
    after = record("socket.accept() out of system resource")
    assert repeats.filter(after) and "997 more like this held back" in after.msg
