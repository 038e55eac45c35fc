"""Replicas under load: two `tender serve --transport http` over one PostgreSQL runs store and one catalogue file.

    python -m tests.postgres start        # or any PostgreSQL you may create tables in
    python -m tender.evaluation.replicas --runs "$TENDER_TEST_POSTGRES" --catalog catalog.db --apis apis.jsonl

Phases, each CLIENTS concurrent MCP clients making CALLS recommend_apis calls, call j of client i on
replica (i + j) mod 2, and each run explained by the other replica at once (explain_bids):
0. one: a single replica takes every call (and explains its own runs): the throughput of one, for comparison.
1. load: both replicas up.
2. kill: one replica is killed with SIGKILL a third of the way through; a call that cannot reach it is made on
   the other one (what a reverse proxy does), and counted as failed over.
3. publish: both up again; the catalogue is rebuilt and published PUBLISH times during the load
   (`tender catalog build` into the served path, one more API each time).
After each phase every run a client received is read back from the store and explained by every live replica.
The catalogue is copied into a scratch folder first: the one named is never touched. Prints one JSON line per
phase; exits 1 if a call failed or a received run is missing."""

import argparse
import json
import os
import shutil
import signal
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client

from tender.answers.stores import open_store

from .bench_http import TENDER, free_port, requirements, start_server


class Replica:
    def __init__(self, name: str, catalog: Path, runs: str, folder: Path):
        self.name, self.port = name, free_port()
        self.log = (folder / f"{name}.log").open("a")
        self.process = start_server(catalog, runs, self.port, self.log)  # type: ignore[arg-type]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def stop(self) -> None:
        if self.alive:
            self.process.terminate()
            self.process.wait(30)
        self.log.close()


class Reply:
    def __init__(self, tool: str, arguments: dict):
        self.tool, self.arguments = tool, arguments
        self.result: object = ConnectionError("the session ended before answering")
        self.done = anyio.Event()


class Session:
    """An MCP session with one replica, in a task of its own: a replica killed mid-call ends that task, not the
    client's, which gets an error and goes on."""

    def __init__(self, url: str):
        self.url = url
        self._send, self._requests = anyio.create_memory_object_stream[Reply](100)
        self.ended = False

    async def serve(self) -> None:
        current: Reply | None = None
        try:
            async with Client(self.url) as client:
                async for current in self._requests:
                    try:
                        current.result = await client.call_tool(current.tool, current.arguments)
                    except Exception as error:
                        current.result = error
                    current.done.set()
                    current = None
        except Exception:  # the connection died
            pass
        finally:
            self.ended = True
            if current is not None:
                current.done.set()  # its result says the session ended
            while True:  # a request sent before the session could open
                try:
                    self._requests.receive_nowait().done.set()
                except (anyio.WouldBlock, anyio.EndOfStream, anyio.ClosedResourceError):
                    break
            self._requests.close()

    async def call(self, tool: str, arguments: dict):
        if self.ended:
            raise ConnectionError(f"the session with {self.url} has ended")
        reply = Reply(tool, arguments)
        try:
            await self._send.send(reply)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            raise ConnectionError(f"the session with {self.url} has ended") from None
        await reply.done.wait()
        if isinstance(reply.result, Exception):
            raise reply.result
        return reply.result

    def close(self) -> None:
        self._send.close()


async def phase(replicas: list[Replica], texts: list[str], clients: int, calls: int, during=None) -> dict:
    """Run the load; `during(progress)` runs beside it (the kill, the publications)."""
    stats: dict = {"calls": 0, "errors": [], "failed_over": 0, "explained_by_other": 0, "explain_errors": []}
    received: list[str] = []
    done = [0]
    latencies: list[float] = []

    async def one_client(index: int) -> None:
        async with anyio.create_task_group() as sessions_group:
            sessions: dict[str, Session] = {}

            async def call(replica: Replica, tool: str, arguments: dict):
                """On the client's session with that replica (a proxy keeps a session on one replica), opened on
                first use, and again after a failure."""
                if replica.name not in sessions:
                    sessions[replica.name] = Session(replica.url)
                    sessions_group.start_soon(sessions[replica.name].serve)
                try:
                    return await sessions[replica.name].call(tool, arguments)
                except Exception:
                    sessions.pop(replica.name).close()
                    raise

            await calls_of(index, call)
            for session in sessions.values():
                session.close()

    async def calls_of(index: int, call) -> None:
        n = len(replicas)
        for j in range(calls):
            order = [replicas[(index + j + k) % n] for k in range(n)]
            text = texts[(index * calls + j) % len(texts)]
            started = time.perf_counter()
            result = None
            for attempt, replica in enumerate(order):
                try:
                    result = await call(replica, "recommend_apis", {"requirement": text})
                    break
                except Exception as error:  # cannot reach it: a proxy sends the call to the other replica
                    if replica.alive or attempt == n - 1:
                        stats["errors"].append(f"{replica.name}: {type(error).__name__}: {error}"[:300])
                        break
                    stats["failed_over"] += 1
            done[0] += 1
            stats["calls"] += 1
            if result is None or result.is_error:
                if result is not None:
                    stats["errors"].append(result.content[0].text[:300])
                continue
            latencies.append(time.perf_counter() - started)
            run_id = result.structured_content["run_id"]
            received.append(run_id)
            other = next((r for r in order[1:] + order[:1] if r.alive), None)  # itself when it is alone
            if other is None:
                continue
            try:
                told = await call(other, "explain_bids", {"run_id": run_id})
                if told.is_error:
                    stats["explain_errors"].append(told.content[0].text[:300])
                else:
                    stats["explained_by_other"] += 1
            except Exception as error:
                if other.alive:
                    stats["explain_errors"].append(f"{type(error).__name__}: {error}"[:300])

    started = time.perf_counter()
    async with anyio.create_task_group() as group:
        for index in range(clients):
            group.start_soon(one_client, index)
        if during is not None:
            group.start_soon(during, lambda: done[0] / (clients * calls))
    wall = time.perf_counter() - started
    latencies.sort()
    stats.update(
        received=received,
        wall_s=round(wall, 1),
        throughput_per_s=round(len(received) / wall, 2),
        p50_ms=round(1000 * latencies[len(latencies) // 2]) if latencies else None,
        p95_ms=round(1000 * latencies[int(len(latencies) * 0.95)]) if latencies else None,
    )
    return stats


async def check(replicas: list[Replica], runs_url: str, received: list[str]) -> dict:
    """Every run a client received: in the store, and explained by every live replica."""
    store = open_store(runs_url)
    stored = sum(1 for run_id in received if _stored(store, run_id))
    store.close()
    refused: dict[str, int] = {}
    for replica in (r for r in replicas if r.alive):
        async with Client(replica.url) as client:
            for run_id in received:
                told = await client.call_tool("explain_bids", {"run_id": run_id})
                if told.is_error:
                    refused[replica.name] = refused.get(replica.name, 0) + 1
    return {"stored": stored, "missing": len(received) - stored, "explain_refused_at_end": refused}


def _stored(store, run_id: str) -> bool:
    try:
        store.entry(run_id)
    except Exception:
        return False
    return True


def publisher(catalog: Path, apis: Path, mashups: Path, times: int, folder: Path, published: list):
    """Rebuild and publish the catalogue `times` times, spread over the load: one more API each time."""
    rows = [json.loads(line) for line in apis.read_text(encoding="utf-8").splitlines() if line]

    async def run(progress) -> None:
        for k in range(1, times + 1):
            while progress() < k / (times + 1):
                await anyio.sleep(0.2)
            extra = {
                "id": max(r["id"] for r in rows) + k,
                "name": f"Publication Check {k}",
                "url": "",
                "categories": ["Tools"],
                "description": f"Answers the publication check number {k} of the replica load test.",
            }
            source = folder / f"apis-{k}.jsonl"
            source.write_text("".join(json.dumps(r) + "\n" for r in [*rows, extra]), encoding="utf-8")
            started = time.perf_counter()
            command = [
                TENDER,
                "catalog",
                "build",
                "--apis",
                str(source),
                "--mashups",
                str(mashups),
                "--db",
                str(catalog),
            ]
            done = await anyio.run_process(command, check=False)
            published.append({"build_s": round(time.perf_counter() - started, 1), "exit": done.returncode})

    return run


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", required=True, help="A PostgreSQL URL (TENDER_RUNS) the replicas share.")
    parser.add_argument("--catalog", required=True, help="The catalogue to serve (copied first).")
    parser.add_argument("--apis", required=True, help="The APIs JSONL the catalogue was built from (to rebuild it).")
    parser.add_argument("--mashups", required=True)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--publish", type=int, default=3)
    parser.add_argument("--phases", default="one,load,kill,publish", help="one: a single replica, for comparison.")
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="tender-replicas-"))
    catalog = folder / "catalog.db"
    shutil.copyfile(args.catalog, catalog)
    texts = requirements(catalog, args.clients * args.calls, args.seed)
    os.environ.pop("TENDER_HTTP_TOKEN", None)
    failed = False
    replicas = [Replica("a", catalog, args.runs, folder), Replica("b", catalog, args.runs, folder)]
    try:
        for name in args.phases.split(","):
            if not all(r.alive for r in replicas):
                replicas = [r if r.alive else Replica(r.name, catalog, args.runs, folder) for r in replicas]
            during = None
            published: list = []
            if name == "kill":

                async def during(progress, victim=replicas[1]):
                    while progress() < 1 / 3:
                        await anyio.sleep(0.1)
                    victim.kill()

            elif name == "publish":
                during = publisher(catalog, Path(args.apis), Path(args.mashups), args.publish, folder, published)
            serving = replicas[:1] if name == "one" else replicas
            stats = anyio.run(phase, serving, texts, args.clients, args.calls, during)
            received = stats.pop("received")
            stats |= anyio.run(check, serving, args.runs, received)
            stats |= {
                "phase": name,
                "received": len(received),
                "errors": stats["errors"][:5],
                "errors_n": len(stats["errors"]),
            }
            stats["explain_errors_n"] = len(stats["explain_errors"])
            stats["explain_errors"] = stats["explain_errors"][:3]
            if published:
                stats["published"] = published
                stats["switches"] = {
                    r.name: Path(r.log.name).read_text().count("Serving the catalogue published") for r in replicas
                }
            print(json.dumps(stats), flush=True)
            failed |= bool(stats["errors_n"] or stats["missing"])
    finally:
        for replica in replicas:
            replica.stop()
        print(f"logs in {folder}", flush=True)
    raise SystemExit(1 if failed else 0)


if __name__ == "__main__":
    main()
