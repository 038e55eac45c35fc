"""Load test of `tender serve --transport http`: concurrent MCP clients calling recommend_apis.

Starts the server on a free loopback port with the real catalogue and a fresh runs database, then runs
CLIENTS concurrent MCP sessions, each making CALLS recommend_apis calls with requirements drawn from the
catalogue's mashup descriptions (seeded). Reports errors, latency percentiles as the client sees them,
throughput, and whether every run was stored. Exits 1 if any call failed, a run is missing, or p95 is over
the target.

    .venv/bin/python -m tender.evaluation.bench_http                 # 20 clients x 25 calls on catalog.db
    .venv/bin/python -m tender.evaluation.bench_http --clients 5 --calls 4 --json out/bench.json
"""

import argparse
import json
import os
import random
import resource
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client

from tender.catalog.database import connect_read_only
from tender.settings import Settings

TENDER = str(Path(sys.executable).with_name("tender"))


def requirements(catalog: Path, count: int, seed: int) -> list[str]:
    """Mashup descriptions from the catalogue: what real users asked of real APIs."""
    db = connect_read_only(catalog)
    rows = [r[0] for r in db.execute("select description from mashups where length(description) > 40 order by id")]
    db.close()
    return random.Random(seed).sample(rows, min(count, len(rows)))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_server(catalog: Path, runs: Path, port: int, log) -> subprocess.Popen:
    env = os.environ | {"TENDER_CATALOG": str(catalog), "TENDER_RUNS": str(runs)}
    env.pop("TENDER_HTTP_TOKEN", None)
    process = subprocess.Popen(
        [TENDER, "serve", "--transport", "http", "--port", str(port)], env=env, stdout=subprocess.DEVNULL, stderr=log
    )
    deadline = time.monotonic() + 180
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return process
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                raise SystemExit(f"the server did not start; see {log.name}") from None
            time.sleep(0.25)


async def load(url: str, texts: list[str], clients: int, calls: int) -> dict:
    latencies: list[float] = []
    errors: list[str] = []
    run_ids: list[str] = []

    async def one_client(index: int) -> None:
        async with Client(url) as client:
            for call in range(calls):
                text = texts[(index * calls + call) % len(texts)]
                started = time.perf_counter()
                try:
                    result = await client.call_tool("recommend_apis", {"requirement": text})
                except Exception as error:  # a transport failure counts as an error, and the client goes on
                    errors.append(f"{type(error).__name__}: {error}")
                    continue
                finally:
                    latencies.append(time.perf_counter() - started)
                if result.is_error:
                    errors.append(getattr(result.content[0], "text", "an error without text"))
                else:
                    run_ids.append(result.structured_content["run_id"])

    started = time.perf_counter()
    async with anyio.create_task_group() as group:
        for index in range(clients):
            group.start_soon(one_client, index)
    return {"latencies": latencies, "errors": errors, "run_ids": run_ids, "wall_s": time.perf_counter() - started}


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of a process so far (Linux /proc; 0 where there is none)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered) + 0.5) - 1))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--calls", type=int, default=25, help="recommend_apis calls per client")
    parser.add_argument("--catalog", type=Path, default=Settings.from_env().catalog_path)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--target-p95", type=float, default=1.0, help="seconds")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    if not args.catalog.is_file():
        raise SystemExit(f"No catalogue at {args.catalog}: build it with `tender catalog build`.")

    texts = requirements(args.catalog, args.clients * args.calls, args.seed)
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="tender-bench-") as folder:
        runs = Path(folder) / "runs.db"
        port = free_port()
        with open(Path(folder) / "server.log", "w") as log:
            started = time.perf_counter()
            server = start_server(args.catalog, runs, port, log)
            startup = time.perf_counter() - started
            server_cpu, client_cpu = cpu_seconds(server.pid), time.process_time()
            try:
                result = anyio.run(load, f"http://127.0.0.1:{port}/mcp", texts, args.clients, args.calls)
                server_cpu, client_cpu = cpu_seconds(server.pid) - server_cpu, time.process_time() - client_cpu
            finally:
                server.terminate()
                server.wait(30)
        db = sqlite3.connect(runs)
        stored = {row[0] for row in db.execute("select run_id from runs")}
        db.close()

    latencies = result["latencies"]
    figures = {
        "clients": args.clients,
        "calls_per_client": args.calls,
        "calls": len(latencies),
        "errors": len(result["errors"]),
        "p50_ms": round(percentile(latencies, 0.50) * 1000, 1),
        "p95_ms": round(percentile(latencies, 0.95) * 1000, 1),
        "max_ms": round(max(latencies) * 1000, 1),
        "mean_ms": round(statistics.mean(latencies) * 1000, 1),
        "throughput_per_s": round(len(latencies) / result["wall_s"], 1),
        "wall_s": round(result["wall_s"], 2),
        "server_start_s": round(startup, 2),
        # Where the 2 cores went: the server's agents and the clients' own protocol work share them.
        "server_cpu_ms_per_call": round(server_cpu / len(latencies) * 1000, 1),
        "client_cpu_ms_per_call": round(client_cpu / len(latencies) * 1000, 1),
        "runs_returned": len(result["run_ids"]),
        "runs_stored": len(stored & set(result["run_ids"])),
        # The server is this process's only child: the children's peak RSS is the server's.
        "server_peak_rss_mib": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024),
        "cpus": os.cpu_count(),
        # Other work on the machine skews every figure: note the 1-minute load average around the run.
        "load_average_before": round(load_before, 2),
        "load_average_after": round(os.getloadavg()[0], 2),
    }
    print(
        f"{figures['clients']} clients x {figures['calls_per_client']} recommend_apis calls on {args.catalog} "
        f"({os.cpu_count()} CPUs)"
    )
    print(f"errors            {figures['errors']}")
    print(f"latency p50       {figures['p50_ms']} ms")
    print(f"latency p95       {figures['p95_ms']} ms   (target {args.target_p95 * 1000:.0f} ms)")
    print(f"latency max       {figures['max_ms']} ms")
    print(f"throughput        {figures['throughput_per_s']} calls/s over {figures['wall_s']} s")
    print(
        f"CPU per call      {figures['server_cpu_ms_per_call']} ms server, {figures['client_cpu_ms_per_call']} ms clients"
    )
    print(f"runs stored       {figures['runs_stored']} of {figures['runs_returned']} returned")
    print(f"server peak RSS   {figures['server_peak_rss_mib']} MiB")
    print(
        f"load average      {figures['load_average_before']} before, {figures['load_average_after']} after "
        f"(1 min; anything else running on the machine slows the figures above)"
    )
    for error in result["errors"][:5]:
        print(f"  error: {error[:200]}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(figures, indent=2))
    passed = (
        figures["errors"] == 0
        and figures["runs_stored"] == figures["runs_returned"] == figures["calls"]
        and figures["p95_ms"] <= args.target_p95 * 1000
    )
    print("PASS" if passed else "FAIL")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
