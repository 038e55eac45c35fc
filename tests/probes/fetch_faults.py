"""Probe (issue 56, rows 5, 9 and 12): `tender catalog build` against web servers on 127.0.0.x that trickle, fail,
redirect or want credentials, as a user would run it.

    python -m tests.probes.fetch_faults [--cap 90]

Each case runs the CLI once (with --fetch-timeout 5 where the case is about time) and prints how long it took,
its exit code and its last line of stderr; a run still going after `cap` seconds is stopped and said so."""

import argparse
import base64
import http.server
import json
import os
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from tests.server_support import TENDER

README = (
    "### Weather\n| API | Description | Auth | HTTPS | CORS |\n|---|---|---|---|---|\n"
    "| [Open-Meteo](https://open-meteo.com/) | Weather forecasts for any place | No | Yes | Yes |\n"
)
META = "io.modelcontextprotocol.registry/official"


def record(i: int) -> dict:
    server = {"name": f"io.example/server-{i}", "title": f"Server {i}", "description": f"Looks up thing {i}"}
    return {"server": server | {"version": "1.0.0"}, "_meta": {META: {"status": "active", "isLatest": True}}}


class Site:
    def __init__(self, host: str, answer):
        self.requests: list[tuple[str, dict]] = []
        site = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):  # noqa: N802
                site.requests.append((self.path, dict(self.headers)))
                try:
                    answer(self)
                except OSError:
                    pass

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer((host, 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://{host}:{self.server.server_address[1]}"

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def send(handler, status: int, body: bytes = b"", **headers: str) -> None:
    handler.send_response(status)
    for name, value in {"Content-Length": str(len(body)), **headers}.items():
        handler.send_header(name, value)
    handler.end_headers()
    handler.wfile.write(body)


def trickled_body(handler):
    handler.send_response(200)
    handler.send_header("Content-Length", "100000")
    handler.end_headers()
    for _ in range(100000):
        handler.wfile.write(b" ")
        time.sleep(1)


def trickled_headers(handler):
    handler.wfile.write(b"HTTP/1.1 200 OK\r\n")
    for byte in b"X-Slow: " + b"a" * 100000:
        handler.wfile.write(bytes([byte]))
        time.sleep(1)


def flaky_pages(handler):
    """20 pages of one server each; every page answers 503 twice before it answers."""
    query = parse_qs(urlsplit(handler.path).query)
    at = int(query.get("cursor", ["0"])[0])
    flaky_pages.tries[at] = flaky_pages.tries.get(at, 0) + 1
    if flaky_pages.tries[at] <= 2:
        send(handler, 503)
        return
    body = {"servers": [record(at)], "metadata": {"nextCursor": str(at + 1)} if at < 19 else {}}
    send(handler, 200, json.dumps(body).encode(), **{"Content-Type": "application/json"})


flaky_pages.tries = {}  # type: ignore[attr-defined]


def pages(handler):
    send(handler, 200, json.dumps({"servers": [record(1), record(2)]}).encode())


def run(args: list[str], folder: Path, cap: float) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TENDER_")}
    env |= {"TENDER_HOME": str(folder), "TENDER_EMBEDDING_MODEL": "hashing"}
    db = folder / f"probe-{time.monotonic_ns()}.db"
    began = time.monotonic()
    try:
        done = subprocess.run(
            [TENDER, "catalog", "build", *args, "--db", str(db), "--quiet"],
            env=env,
            capture_output=True,
            text=True,
            timeout=cap,
        )
    except subprocess.TimeoutExpired:
        return f"still running after {cap:g} s (stopped)"
    took = time.monotonic() - began
    lines = [line for line in done.stderr.splitlines() if line.startswith(("Error", "Read"))] or ["(no line)"]
    return f"{took:.1f} s, exit {done.returncode}: {lines[0][:300]}"


def probe(cap: float) -> None:
    with tempfile.TemporaryDirectory(prefix="tender-probe-") as name:
        folder = Path(name)
        cases = []
        body = Site("127.0.0.1", trickled_body)
        cases.append(("public-apis body, a byte a second", ["--public-apis", f"{body.url}/README.md"], True))
        headers = Site("127.0.0.1", trickled_headers)
        cases.append(("registry headers, a byte a second", ["--mcp-registry", headers.url], True))
        flaky = Site("127.0.0.1", flaky_pages)
        cases.append(("registry, 20 pages each failing twice (503)", ["--mcp-registry", flaky.url], False))
        elsewhere = Site("127.0.0.2", pages)
        away = Site("127.0.0.1", lambda h: send(h, 302, Location=f"{elsewhere.url}/v0.1/servers"))
        cases.append(("registry redirecting to another host", ["--mcp-registry", away.url], False))
        ftp = Site("127.0.0.1", lambda h: send(h, 302, Location="ftp://127.0.0.1/README.md"))
        cases.append(("public-apis redirecting to ftp://", ["--public-apis", f"{ftp.url}/README.md"], False))
        secret = Site("127.0.0.1", pages)
        port = secret.url.rsplit(":", 1)[1]
        keyed = f"http://reader:s3cret@127.0.0.1:{port}/v0.1/servers?api_key=TOPSECRET"
        cases.append(("registry URL with user:password@ and ?api_key=", ["--mcp-registry", keyed], False))
        for what, args, timed in cases:
            print(f"{what}: {run([*args, '--fetch-timeout', '5'] if timed else args, folder, cap)}")
        print(f"  the flaky registry was asked {len(flaky.requests)} times")
        print(f"  the other host was asked {len(elsewhere.requests)} times")
        if secret.requests:
            path, sent = secret.requests[0]
            basic = sent.get("Authorization", "")
            said = base64.b64decode(basic.split()[-1]).decode() if basic.startswith("Basic ") else "none"
            print(f"  the keyed registry was asked {path} with basic authentication {said!r}")
        info = subprocess.run(
            [TENDER, "catalog", "info", "--db", str(sorted(folder.glob("probe-*.db"))[-1])],
            env={k: v for k, v in os.environ.items() if not k.startswith("TENDER_")} | {"TENDER_HOME": name},
            capture_output=True,
            text=True,
        )
        shown = [line for line in info.stdout.splitlines() if "mcp-registry source" in line]
        print(f"  catalog info: {shown[0] if shown else info.stderr.strip()[:200]}")
        for site in (body, headers, flaky, elsewhere, away, ftp, secret):
            site.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cap", type=float, default=90.0, help="seconds a case may run before it is stopped")
    probe(parser.parse_args().cap)


if __name__ == "__main__":
    main()
