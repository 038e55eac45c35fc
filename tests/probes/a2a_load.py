"""Benchmark (issue 59): Tender as an A2A agent under the official SDK's client, on the hashing-encoder fixture catalogue.

    python -m tests.probes.a2a_load [--clients 20] [--requests 10] [--single 20] [--json out.json]

Starts `tender serve --transport http --a2a` with a bearer token on a free port (runs in a fresh runs.db), then:
1. single: `single` times, a new SDK client discovers Tender by its card (GET /.well-known/agent-card.json), sends
   one message (SendMessage) and reads the plan artifact: the whole of it timed, warm (after 3 untimed);
2. load: `clients` SDK clients at once, each discovering Tender and then sending `requests` messages one after
   another (requirements from the fixture's mashups); meanwhile one more client sends bad input (a 10 MB part, a part
   of an unknown kind, 1,000 needs, invalid JSON-RPC), each timed;
then reads every plan's run back from the runs store. Prints the figures and one JSON line; exits 1 if a request
failed, a run is missing, p95 of the load or the single path is over `target` seconds, or bad input took longer.
Not a test: the figures depend on the machine (2 cores here), and the clients share its cores with the server."""

import argparse
import json
import os
import random
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
import httpx
from a2a.types.a2a_pb2 import Part, TaskState

from tender.evaluation.bench_http import cpu_seconds, percentile
from tests.a2a_support import artifact_data, connect, data, send, text
from tests.fixture_data import mashup_rows
from tests.probes.slow_bodies import fixture_catalogue
from tests.server_support import TENDER, free_port

TOKEN = "bench-token"
COMPLETED = TaskState.TASK_STATE_COMPLETED


def start(folder: Path, port: int, log) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TENDER_")} | {
        "TENDER_CATALOG": str(fixture_catalogue(folder)),
        "TENDER_RUNS": str(folder / "runs.db"),
        "TENDER_EMBEDDING_MODEL": "hashing",
        "TENDER_HTTP_TOKEN": TOKEN,
        "TENDER_HOME": str(folder / "home"),
    }
    process = subprocess.Popen(
        [TENDER, "serve", "--transport", "http", "--a2a", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=log,
    )
    deadline = time.monotonic() + 120
    while True:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/.well-known/agent-card.json", timeout=2).status_code == 200:
                return process
        except httpx.HTTPError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise SystemExit(f"the server did not start; see {log.name}")
        time.sleep(0.25)


async def discover_send_read(base: str, requirement: str) -> tuple[float, str]:
    """One whole agent's errand: the card, a client made from it, SendMessage, the plan read from the artifact."""
    started = time.perf_counter()
    async with await connect(base, TOKEN) as client:
        task = await send(client, text(requirement))
    plan = artifact_data(task)
    assert task.status.state == COMPLETED and plan["run_id"] == task.id and "functions" in plan, task
    return time.perf_counter() - started, task.id


async def single(base: str, texts: list[str], count: int) -> list[float]:
    for requirement in texts[:3]:  # warm: the server's first requests, and this process's imports
        await discover_send_read(base, requirement)
    return [(await discover_send_read(base, texts[i % len(texts)]))[0] for i in range(count)]


async def load(base: str, texts: list[str], clients: int, requests: int) -> dict:
    latencies: list[float] = []
    errors: list[str] = []
    run_ids: list[str] = []
    bad: dict[str, float] = {}

    async def one_client(index: int) -> None:
        try:
            client = await connect(base, TOKEN)
        except Exception as error:  # a client that cannot even discover counts every request as failed
            errors.extend([f"discover: {type(error).__name__}: {error}"] * requests)
            return
        async with client:
            for number in range(requests):
                started = time.perf_counter()
                try:
                    task = await send(client, text(texts[(index * requests + number) % len(texts)]))
                except Exception as error:  # a transport failure counts as an error, and the client goes on
                    errors.append(f"{type(error).__name__}: {error}")
                    continue
                finally:
                    latencies.append(time.perf_counter() - started)
                if task.status.state != COMPLETED:
                    errors.append(f"{TaskState.Name(task.status.state)}: {task.status.message}")
                else:
                    run_ids.append(task.id)

    async def bad_input() -> None:
        await anyio.sleep(1)  # into the load
        headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json", "A2A-Version": "1.0"}
        message = {"messageId": "m1", "role": "ROLE_USER"}
        async with await connect(base, TOKEN) as client, httpx.AsyncClient(timeout=30) as http:
            cases = {
                "a 10 MB part": lambda: send(client, text("x" * 10_000_000)),
                "an unknown part kind": lambda: send(client, Part()),
                "1,000 needs": lambda: send(client, text("maps"), data({"needs": ["a need"] * 1000})),
                "invalid JSON-RPC": lambda: http.post(
                    f"{base}/a2a", content=b'{"jsonrpc": "2.0", "id": 1, "method": ', headers=headers
                ),
                "an unknown method": lambda: http.post(
                    f"{base}/a2a",
                    json={"jsonrpc": "2.0", "id": 1, "method": "Nope", "params": {"message": message}},
                    headers=headers,
                ),
            }
            for name, call in cases.items():
                started = time.perf_counter()
                try:
                    await call()
                except Exception:  # an error answered is what bad input should get
                    pass
                bad[name] = time.perf_counter() - started

    started = time.perf_counter()
    async with anyio.create_task_group() as group:
        for index in range(clients):
            group.start_soon(one_client, index)
        group.start_soon(bad_input)
    return {
        "latencies": latencies,
        "errors": errors,
        "run_ids": run_ids,
        "bad": bad,
        "wall_s": time.perf_counter() - started,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--requests", type=int, default=10, help="messages per client")
    parser.add_argument("--single", type=int, default=20, help="discover-send-read errands timed one at a time")
    parser.add_argument("--target", type=float, default=1.0, help="seconds: p95 of the load, max of bad input")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()

    texts = [row["description"] for row in mashup_rows() if len(row["description"]) > 20]
    random.Random(args.seed).shuffle(texts)
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="tender-a2a-bench-") as name:
        folder = Path(name)
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        with open(folder / "server.log", "w") as log:
            server = start(folder, port, log)
            try:
                alone = anyio.run(single, base, texts, args.single)
                server_cpu, client_cpu = cpu_seconds(server.pid), time.process_time()
                result = anyio.run(load, base, texts, args.clients, args.requests)
                server_cpu, client_cpu = cpu_seconds(server.pid) - server_cpu, time.process_time() - client_cpu
            finally:
                server.terminate()
                server.wait(30)
        db = sqlite3.connect(folder / "runs.db")
        stored = {row[0] for row in db.execute("select run_id from runs")}
        db.close()

    latencies = result["latencies"]
    calls = len(latencies)
    figures = {
        "single_p50_ms": round(statistics.median(alone) * 1000, 1),
        "single_max_ms": round(max(alone) * 1000, 1),
        "clients": args.clients,
        "requests_per_client": args.requests,
        "requests": calls,
        "errors": len(result["errors"]),
        "p50_ms": round(percentile(latencies, 0.50) * 1000, 1),
        "p95_ms": round(percentile(latencies, 0.95) * 1000, 1),
        "max_ms": round(max(latencies) * 1000, 1),
        "throughput_per_s": round(calls / result["wall_s"], 1),
        "runs_returned": len(result["run_ids"]),
        "runs_stored": len(stored & set(result["run_ids"])),
        "bad_input_ms": {name: round(s * 1000, 1) for name, s in result["bad"].items()},
        "server_cpu_ms_per_request": round(server_cpu / calls * 1000, 1),
        "client_cpu_ms_per_request": round(client_cpu / calls * 1000, 1),
        "server_peak_rss_mib": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024),
        "cpus": os.cpu_count(),
        "load_average_before": round(load_before, 2),
        "load_average_after": round(os.getloadavg()[0], 2),
    }
    print(
        f"discover -> SendMessage -> plan, warm, one at a time ({args.single}): p50 {figures['single_p50_ms']} ms, "
        f"max {figures['single_max_ms']} ms"
    )
    print(
        f"{args.clients} clients x {args.requests} messages: {figures['errors']} errors, p50 {figures['p50_ms']} ms, "
        f"p95 {figures['p95_ms']} ms, max {figures['max_ms']} ms, {figures['throughput_per_s']} requests/s"
    )
    print(f"runs stored {figures['runs_stored']} of {figures['runs_returned']} returned ({calls} sent)")
    print(f"bad input during the load (ms): {figures['bad_input_ms']}")
    print(
        f"CPU per request: {figures['server_cpu_ms_per_request']} ms server, "
        f"{figures['client_cpu_ms_per_request']} ms clients; server peak RSS {figures['server_peak_rss_mib']} MiB; "
        f"load average {figures['load_average_before']} before, {figures['load_average_after']} after "
        f"({figures['cpus']} CPUs)"
    )
    for error in result["errors"][:5]:
        print(f"  error: {error[:200]}")
    print(json.dumps(figures))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(figures, indent=2))
    passed = (
        figures["errors"] == 0
        and figures["runs_stored"] == figures["runs_returned"] == calls
        and figures["p95_ms"] <= args.target * 1000
        and figures["single_max_ms"] <= args.target * 1000
        and max(result["bad"].values(), default=0) <= args.target
    )
    print("PASS" if passed else "FAIL")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
