"""Probe (issue 56, row 4): `tender serve --transport http` with its runs on PostgreSQL, a few clients asking for
plans without pause, and the PostgreSQL server frozen (SIGSTOP) for a while, then thawed (SIGCONT).

    python -m tests.probes.frozen_postgres [--clients 4] [--before 5] [--frozen 20] [--after 15]

Starts a throwaway cluster (tests/postgres.py) and the server on the hashing-encoder fixture catalogue; prints,
for each phase, the plans made, their latency (median and max) and how many say they were not stored, and how
long after the thaw the first plan was stored again."""

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client

from tests.postgres import start, stop
from tests.probes.slow_bodies import fixture_catalogue
from tests.server_support import REQUIREMENT, TENDER, free_port
from tests.test_faults_runs_postgres import frozen

NOT_STORED = "could not be stored"


async def client(url: str, stop_at: float, plans: list[tuple[float, float, bool]]) -> None:
    async with Client(url) as session:
        while time.monotonic() < stop_at:
            began = time.monotonic()
            with anyio.fail_after(120):
                result = await session.call_tool("recommend_apis", {"requirement": REQUIREMENT})
            notes = (result.structured_content or {}).get("notes", [])
            plans.append((began, time.monotonic() - began, any(NOT_STORED in note for note in notes)))


def summary(plans: list[tuple[float, float, bool]]) -> str:
    if not plans:
        return "no plan"
    took = [t for _, t, _ in plans]
    lost = sum(n for _, _, n in plans)
    return (
        f"{len(plans)} plans, latency median {statistics.median(took):.3f} s, max {max(took):.3f} s; {lost} not stored"
    )


async def probe(args: argparse.Namespace) -> None:
    cluster = start()
    try:
        with tempfile.TemporaryDirectory(prefix="tender-probe-") as folder:
            catalogue = fixture_catalogue(Path(folder))
            port = free_port()
            env = {k: v for k, v in os.environ.items() if not k.startswith("TENDER_")}
            env |= {"TENDER_CATALOG": str(catalogue), "TENDER_RUNS": cluster.url, "TENDER_HOME": folder}
            env["TENDER_EMBEDDING_MODEL"] = "hashing"
            with (Path(folder) / "serve.log").open("w") as log:
                server = subprocess.Popen(
                    [TENDER, "serve", "--transport", "http", "--port", str(port)], env=env, stderr=log
                )
            try:
                for _ in range(300):  # until it accepts connections
                    try:
                        socket.create_connection(("127.0.0.1", port), timeout=1).close()
                        break
                    except OSError:
                        await asyncio.sleep(0.2)
                url = f"http://127.0.0.1:{port}/mcp"
                plans: list[tuple[float, float, bool]] = []
                began = time.monotonic()
                freeze_at = began + args.before
                thaw_at = freeze_at + args.frozen
                end = thaw_at + args.after
                tasks = [asyncio.create_task(client(url, end, plans)) for _ in range(args.clients)]
                await asyncio.sleep(freeze_at - time.monotonic())
                with frozen(cluster):
                    await asyncio.sleep(thaw_at - time.monotonic())
                thawed = time.monotonic()
                await asyncio.gather(*tasks)
            finally:
                server.terminate()
                server.wait(20)
        before = [p for p in plans if p[0] < freeze_at]
        during = [p for p in plans if freeze_at <= p[0] < thawed]
        after = [p for p in plans if p[0] >= thawed]
        stored_again = min((s + t for s, t, n in after if not n), default=None)
        print(f"{args.clients} clients; PostgreSQL frozen {args.frozen:g} s")
        print(f"  before: {summary(before)}")
        print(f"  frozen: {summary(during)}")
        print(f"  after:  {summary(after)}")
        again = f"{stored_again - thawed:.1f} s" if stored_again else "never"
        print(f"  first plan stored again {again} after the thaw")
    finally:
        stop(cluster.folder)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--before", type=float, default=5)
    parser.add_argument("--frozen", type=float, default=20)
    parser.add_argument("--after", type=float, default=15)
    asyncio.run(probe(parser.parse_args()))


if __name__ == "__main__":
    main()
