"""The HTTP server under connection abuse: idle connections are bounded and closed, a normal client is
served meanwhile, repeated log lines are held back, and no token means no listening beyond loopback."""

import logging
import os
import socket
import subprocess
import time

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
        started = time.monotonic()
        closed = False
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

    assert closed and time.monotonic() - started < 12


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
