"""The stdio server stops at the first Ctrl-C (SIGINT) while its client keeps stdin open, and when stdin closes."""

import json
import signal
import subprocess

import pytest

from tests.server_support import TENDER, server_env  # noqa: F401 (fixture)

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "probe", "version": "0"}},
}


@pytest.fixture
def initialized(server_env):  # noqa: F811 (fixture)
    """`tender serve` over stdio that has answered `initialize`; its stdin stays open."""
    process = subprocess.Popen(
        [TENDER, "serve"], env=server_env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    process.stdin.write((json.dumps(INITIALIZE) + "\n").encode())
    process.stdin.flush()
    answer = json.loads(process.stdout.readline())
    assert answer["id"] == 1 and answer["result"]["serverInfo"]["name"] == "tender"
    yield process
    if process.poll() is None:
        process.kill()
    process.wait()


def test_the_first_sigint_stops_the_stdio_server_while_stdin_is_open(initialized):
    initialized.send_signal(signal.SIGINT)

    try:
        code = initialized.wait(timeout=60)  # a guard: before the fix it waited for stdin to close, for ever
    except subprocess.TimeoutExpired:
        pytest.fail("the server ignored SIGINT while its stdin was open")
    stderr = initialized.stderr.read().decode()

    assert code == 130
    assert stderr.rstrip().endswith("Interrupted.") and "Traceback" not in stderr


def test_closing_stdin_stops_the_stdio_server(initialized):
    initialized.stdin.close()

    assert initialized.wait(timeout=15) == 0
