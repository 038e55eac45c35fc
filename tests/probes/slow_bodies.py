"""Probe (issue 56, row 2): slow request bodies against `tender serve --transport http` with its default settings
on the hashing-encoder fixture catalogue, and a normal client meanwhile.

    python -m tests.probes.slow_bodies [--connections 1000] [--every 3] [--seconds 30] [--reconnect]

Opens `connections` connections from loopback (in a process of their own), each sending a POST's headers and then
a byte of its 1,000-byte body every `every` seconds (and, --reconnect, opening a new one for each the server
closes); every second a normal MCP client (a new session, initialize and tools/list, from loopback too) is timed.
Prints the normal client's latencies and what became of the slow ones. Not a test: it takes `seconds` and most
of two cores."""

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mcp import Client

from tender.catalog import HashingEmbedder, build_catalog
from tests.fixture_data import api_rows, mashup_rows
from tests.server_support import TENDER, free_port


def fixture_catalogue(folder: Path) -> Path:
    rows = {"apis.jsonl": api_rows(), "mashups.jsonl": mashup_rows()}
    for name, items in rows.items():
        (folder / name).write_text("".join(json.dumps(row) + "\n" for row in items), encoding="utf-8")
    path = folder / "catalog.db"
    build_catalog(folder / "apis.jsonl", folder / "mashups.jsonl", path, HashingEmbedder(256))
    return path


class Counts:
    opened = refused = cut = 0


async def slow_body(port: int, source: str, every: float, reconnect: bool, stop: asyncio.Event, counts: Counts) -> None:
    head = (
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
        b"Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{" % port
    )
    while not stop.is_set():
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))
        except OSError:
            counts.refused += 1
            await asyncio.sleep(0.5)
            continue
        counts.opened += 1
        try:
            writer.write(head)
            while not stop.is_set():
                try:
                    if await asyncio.wait_for(reader.read(1), every) == b"":
                        break  # closed by the server
                except TimeoutError:
                    writer.write(b" ")
                    await writer.drain()
        except OSError:
            pass
        finally:
            if not stop.is_set():
                counts.cut += 1
            writer.close()
        if not reconnect:
            return


async def normal_client(url: str, failures: list[str]) -> float | None:
    began = time.monotonic()
    try:
        with anyio_fail_after(10):
            async with Client(url) as client:
                await client.list_tools()
    except Exception as error:
        while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
            error = error.exceptions[0]
        failures.append(f"{type(error).__name__} after {time.monotonic() - began:.1f} s: {error!r}"[:200])
        return None
    return time.monotonic() - began


def anyio_fail_after(seconds: float):
    import anyio

    return anyio.fail_after(seconds)


def open_sockets(pid: int) -> int:
    fds = f"/proc/{pid}/fd"
    count = 0
    for fd in os.listdir(fds):
        try:
            count += os.readlink(f"{fds}/{fd}").startswith("socket:")
        except OSError:
            pass
    return count


async def probe(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="tender-probe-") as folder:
        catalogue = fixture_catalogue(Path(folder))
        port = free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith("TENDER_")}
        env |= {"TENDER_CATALOG": str(catalogue), "TENDER_RUNS": f"{folder}/runs.db", "TENDER_HOME": folder}
        env["TENDER_EMBEDDING_MODEL"] = "hashing"
        log = Path(folder) / "serve.log"
        with log.open("w") as stderr:
            server = subprocess.Popen(
                [TENDER, "serve", "--transport", "http", "--port", str(port)], env=env, stderr=stderr
            )
        try:
            for _ in range(300):
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    await asyncio.sleep(0.2)
            url = f"http://127.0.0.1:{port}/mcp"
            attacker = subprocess.Popen(  # its own process, as the probe's was: it does not slow this one's loop
                [sys.executable, "-m", "tests.probes.slow_bodies", "--attack", str(port)]
                + ["--connections", str(args.connections), "--every", str(args.every)]
                + ["--seconds", str(args.seconds + 3), "--from", args.source]
                + (["--reconnect"] if args.reconnect else []),
                stdout=subprocess.PIPE,
                text=True,
            )
            await asyncio.sleep(3)  # all of them open, their headers sent
            latencies: list[float | None] = []
            failures: list[str] = []
            held = []
            began = time.monotonic()
            while time.monotonic() - began < args.seconds:
                latencies.append(await normal_client(url, failures))
                held.append(open_sockets(server.pid))
                await asyncio.sleep(1)
            opened, cut, refused = map(int, attacker.communicate(timeout=60)[0].split())
        finally:
            server.terminate()
            server.wait(20)
        served = [t for t in latencies if t is not None]
        again = ", each reopened when closed" if args.reconnect else ""
        print(
            f"slow-body connections from {args.source}: {args.connections}, a byte every {args.every:g} s{again}, "
            f"for {args.seconds:g} s"
        )
        print(f"  opened {opened}, closed by the server {cut}, refused at connect {refused}")
        print(f"  sockets the server held: max {max(held)}, median {statistics.median(held):g}")
        print(f"normal client (a new session, initialize and tools/list), {len(latencies)} tries:")
        print(f"  served {len(served)}, failed {len(latencies) - len(served)}")
        if served:
            print(f"  latency: median {statistics.median(served):.3f} s, max {max(served):.3f} s")
        for failure in failures[:5]:
            print(f"  failed: {failure}")
        refused = sum("Refused a connection" in line for line in log.read_text().splitlines())
        print(f"  log: {len(log.read_text().splitlines())} lines, {refused} refusals")
        if args.log:
            print(log.read_text()[-args.log :])


async def attack(args: argparse.Namespace) -> None:
    """The slow bodies, for `seconds`; prints how many were opened, closed by the server, refused."""
    stop, counts = asyncio.Event(), Counts()
    slow = [
        asyncio.create_task(slow_body(args.attack, args.source, args.every, args.reconnect, stop, counts))
        for _ in range(args.connections)
    ]
    await asyncio.sleep(args.seconds)
    stop.set()
    await asyncio.gather(*slow, return_exceptions=True)
    print(counts.opened, counts.cut, counts.refused)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connections", type=int, default=1000)
    parser.add_argument("--every", type=float, default=3.0)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--from", dest="source", default="127.0.0.1", help="the slow ones' address (127.0.0.1)")
    parser.add_argument("--reconnect", action="store_true", help="open a new one for each the server closes")
    parser.add_argument("--log", type=int, default=0, metavar="CHARS", help="print the end of the server's log")
    parser.add_argument("--attack", type=int, metavar="PORT", help=argparse.SUPPRESS)
    args = parser.parse_args()
    asyncio.run(attack(args) if args.attack else probe(args))


if __name__ == "__main__":
    sys.exit(main())
