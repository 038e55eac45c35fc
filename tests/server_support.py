"""Shared by the server tests: settings on the fixture catalogue, and the structured result of a call."""

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tender.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
TENDER = str(Path(sys.executable).with_name("tender"))
REQUIREMENT = "Show nearby restaurants on a map with their reviews"


@pytest.fixture
def settings(catalog_path, tmp_path) -> Settings:
    return Settings(catalog_path=catalog_path, runs_path=tmp_path / "runs.db", embedding_model="hashing")


@pytest.fixture
def server_env(catalog_path, tmp_path) -> dict[str, str]:
    """Environment for `tender serve` as a subprocess on the fixture catalogue."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TENDER_")}
    return env | {
        "TENDER_CATALOG": str(catalog_path),
        "TENDER_RUNS": str(tmp_path / "runs.db"),
        "TENDER_EMBEDDING_MODEL": "hashing",
    }


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class HttpServer:
    port: int
    process: subprocess.Popen

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"


@contextmanager
def http_server(env: dict, log: Path, *args: str) -> Iterator[HttpServer]:
    """`tender serve --transport http` on a free port, once it accepts connections (its stderr in `log`);
    stopped afterwards, having written nothing to stdout."""
    port = free_port()
    with log.open("w") as stderr:
        process = subprocess.Popen(
            [TENDER, "serve", "--transport", "http", "--port", str(port), *args],
            env=env,
            stdout=subprocess.PIPE,
            stderr=stderr,
        )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"tender serve did not start:\n{log.read_text()}") from None
                time.sleep(0.2)
        yield HttpServer(port, process)
    finally:
        process.terminate()
        try:
            stdout, _ = process.communicate(timeout=20)
        except subprocess.TimeoutExpired:  # a server stuck in C code ignores SIGTERM: never leave it running
            process.kill()
            stdout, _ = process.communicate(timeout=20)
            raise AssertionError("the HTTP server did not stop within 20 s of SIGTERM") from None
    assert stdout == b"", "the HTTP server wrote to stdout"


def error_text(result) -> str:
    assert result.is_error, result.structured_content
    return result.content[0].text


def ok(result) -> dict:
    assert not result.is_error, result.content[0].text if result.content else result
    return result.structured_content
