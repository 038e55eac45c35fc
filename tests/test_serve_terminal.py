"""`tender serve` started by hand in a terminal (issue 37, item 8): it says on stderr what it waits for and how
to stop it, and Ctrl-C ends it without waiting for a key (it used to hang until one was pressed)."""

import os
import pty
import signal
import subprocess
import time

import pytest

from tests.server_support import TENDER, server_env  # noqa: F401 (fixture)


def started_on_a_terminal(env: dict) -> tuple[subprocess.Popen, int]:
    """`tender serve` with a pseudo-terminal as its stdin, as when a person types the command."""
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        [TENDER, "serve"], stdin=terminal, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    os.close(terminal)
    return process, controller


def read_until(stream, words: str, timeout: float = 60) -> str:
    os.set_blocking(stream.fileno(), False)
    seen, deadline = b"", time.monotonic() + timeout
    while words.encode() not in seen and time.monotonic() < deadline:
        seen += stream.read() or b""
        time.sleep(0.1)
    return seen.decode()


def test_on_a_terminal_it_says_what_it_waits_for_and_ctrl_c_ends_it_at_once(server_env):
    process, controller = started_on_a_terminal(server_env)
    try:
        said = read_until(process.stderr, "Serving")  # the catalogue is open: the server reads stdin
        assert "waiting for an MCP client on stdin and stdout" in said and "Ctrl-C to stop" in said
        time.sleep(0.5)

        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=60)  # a guard: before the fix it waited for a key to be pressed, for ever
        except subprocess.TimeoutExpired:
            pytest.fail("Ctrl-C did not end the server while nothing was typed")

        assert process.returncode == 130
        assert process.stdout.read() == b""  # stdout stays the protocol's
    finally:
        process.kill()
        os.close(controller)


def test_started_by_a_client_it_says_nothing_of_the_kind(server_env):
    process = subprocess.run(
        [TENDER, "serve"], input=b"", capture_output=True, env=server_env, timeout=120
    )  # a client that goes away at once: stdin at its end

    assert "waiting for an MCP client" not in process.stderr.decode()
    assert process.stdout == b""
