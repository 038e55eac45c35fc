"""Registry and public-apis URLs under a hostile or broken web server (the fault probe of 2026-11-28): a body or
headers trickled a byte at a time are cut at --fetch-timeout; a registry read has one retry budget for all its
pages; redirects go to the same host over http or https only; credentials in a URL are sent, as basic
authentication and as the query asks, but never printed or kept. Real sockets on 127.0.0.x; no test reaches the
network."""

import base64
import http.server
import json
import sqlite3
import threading
import time
from collections.abc import Callable
from urllib.parse import parse_qs, urlsplit

import pytest
from click.testing import CliRunner

from tender.catalog.sources.http import Fetcher
from tender.catalog.sources.mcp_registry import OFFICIAL_META, load_registry
from tender.catalog.sources.public_apis import load_public_apis
from tender.cli import main
from tender.errors import SourceError

README = """### Weather
| API | Description | Auth | HTTPS | CORS |
|---|---|---|---|---|
| [Open-Meteo](https://open-meteo.com/) | Weather forecasts for any place | No | Yes | Yes |
| [wttr.in](https://wttr.in/) | Weather in a terminal | No | Yes | Unknown |
"""
ENV = {"TENDER_EMBEDDING_MODEL": "hashing", "TENDER_DEBUG": None}


def record(i: int) -> dict:
    server = {"name": f"io.example/server-{i}", "title": f"Server {i}", "description": f"Looks up thing {i}"}
    meta = {"status": "active", "isLatest": True, "updatedAt": "2025-10-01T00:00:00Z"}
    return {"server": server | {"version": "1.0.0"}, "_meta": {OFFICIAL_META: meta}}


class Site:
    """A web server on `host` whose answers the test writes: `routes` maps a path to a function of the request
    handler; every request is kept (path, query, headers); `cut` is set when the client shut a connection while
    an answer was still being written."""

    def __init__(self, host: str = "127.0.0.1"):
        self.routes: dict[str, Callable] = {}
        self.requests: list[dict] = []
        self.cut = threading.Event()
        site = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):  # noqa: N802 (http.server's name)
                parts = urlsplit(self.path)
                site.requests.append({"path": parts.path, "query": parse_qs(parts.query), "headers": self.headers})
                answer = site.routes.get(parts.path)
                if answer is None:
                    self.send_error(404)
                    return
                try:
                    answer(self)
                except (BrokenPipeError, ConnectionResetError):  # the client cut it: what the test wants
                    site.cut.set()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer((host, 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        self.url = f"http://{host}:{self.server.server_address[1]}"

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def site():
    site = Site()
    yield site
    site.close()


def send(handler, status: int, body: bytes = b"", **headers: str) -> None:
    handler.send_response(status)
    for name, value in {"Content-Length": str(len(body)), **headers}.items():
        handler.send_header(name.replace("_", "-"), value)
    handler.end_headers()
    handler.wfile.write(body)


def trickle(handler, data: bytes, every_s: float = 0.1, for_s: float = 8.0) -> None:
    """`data` a byte every `every_s`, for `for_s` at most (a guard: then the connection closes, and a fetch that was
    not cut ends there, as an incomplete answer)."""
    until = time.monotonic() + for_s
    for byte in data:
        if time.monotonic() > until:
            return
        handler.wfile.write(bytes([byte]))
        handler.wfile.flush()
        time.sleep(every_s)


# -- row 5: --fetch-timeout bounds a request, headers and body together ---------------------------------------
def test_a_body_trickled_a_byte_at_a_time_is_cut_at_the_fetch_timeout(site):
    def slow_body(handler):
        handler.send_response(200)
        handler.send_header("Content-Length", "10000")
        handler.end_headers()
        trickle(handler, b"x" * 10000)

    site.routes["/README.md"] = slow_body
    with pytest.raises(SourceError, match=r"did not answer within 1 s"):
        load_public_apis(f"{site.url}/README.md", fetcher=Fetcher(timeout=1, retries=0))
    assert site.cut.wait(30)  # the client shut the connection while the body was still arriving


def test_headers_trickled_a_byte_at_a_time_are_cut_at_the_fetch_timeout(site):
    def slow_headers(handler):
        handler.wfile.write(b"HTTP/1.1 200 OK\r\n")
        trickle(handler, b"X-Slow: " + b"a" * 200 + b"\r\n")

    site.routes["/v0.1/servers"] = slow_headers
    with pytest.raises(SourceError, match=r"did not answer within 1 s"):
        load_registry(site.url, fetcher=Fetcher(timeout=1, retries=0))
    assert site.cut.wait(30)  # the client shut the connection while the headers were still arriving


def test_a_registry_read_has_one_retry_budget_for_all_its_pages(site):
    """Each page fails once, then answers: four retries in all, not four a page (up to 1,000 pages)."""
    failed: set[str] = set()

    def pages(handler):
        query = parse_qs(urlsplit(handler.path).query)
        at = int(query.get("cursor", ["0"])[0])
        if at not in failed:
            failed.add(at)
            send(handler, 503)
            return
        body = {"servers": [record(at)], "metadata": {"nextCursor": str(at + 1)} if at < 9 else {}}
        send(handler, 200, json.dumps(body).encode(), Content_Type="application/json")

    site.routes["/v0.1/servers"] = pages
    waits: list[float] = []
    with pytest.raises(SourceError, match=r"the read's 4 retries are spent") as raised:
        load_registry(site.url, fetcher=Fetcher(timeout=5, retries=4, backoff=0.01, sleep=waits.append))

    assert "cursor=4: failed once" in str(raised.value)  # the fifth page, named
    assert len(waits) == 4 and len(site.requests) == 4 * 2 + 1


# -- row 9: redirects ---------------------------------------------------------------------------------------
def test_a_redirect_to_another_host_is_refused_and_named():
    registry, elsewhere = Site("127.0.0.1"), Site("127.0.0.2")
    try:
        elsewhere.routes["/v0.1/servers"] = lambda h: send(h, 200, json.dumps({"servers": [record(1)]}).encode())
        registry.routes["/v0.1/servers"] = lambda h: send(h, 302, Location=f"{elsewhere.url}/v0.1/servers")
        with pytest.raises(SourceError, match=r"redirects to http://127\.0\.0\.2:\d+/v0\.1/servers, another host"):
            load_registry(registry.url, fetcher=Fetcher(timeout=5))
        assert elsewhere.requests == []  # never asked
    finally:
        registry.close()
        elsewhere.close()


def test_a_redirect_to_ftp_is_refused_and_named(site):
    site.routes["/README.md"] = lambda h: send(h, 301, Location="ftp://127.0.0.1/README.md")
    with pytest.raises(SourceError, match=r"redirects to ftp://127\.0\.0\.1/README\.md: only http and https"):
        load_public_apis(f"{site.url}/README.md", fetcher=Fetcher(timeout=5))


def test_a_redirect_on_the_same_host_is_followed(site):
    site.routes["/old/README.md"] = lambda h: send(h, 301, Location="/README.md")
    site.routes["/README.md"] = lambda h: send(h, 200, README.encode())
    loaded = load_public_apis(f"{site.url}/old/README.md", fetcher=Fetcher(timeout=5))
    assert loaded.info.items == 2 and loaded.info.name == f"{site.url}/old/README.md"  # as the user named it


# -- row 12: credentials in a URL -----------------------------------------------------------------------------
def test_a_registry_url_s_credentials_are_sent_but_never_printed_or_kept(site, tmp_path):
    def pages(handler):
        send(handler, 200, json.dumps({"servers": [record(1), record(2)]}).encode())

    site.routes["/v0.1/servers"] = pages
    port = site.url.rsplit(":", 1)[1]
    url = f"http://reader:s3cr%40t@127.0.0.1:{port}/v0.1/servers?api_key=TOPSECRET"
    db = tmp_path / "registry.db"
    env = {**ENV, "TENDER_HOME": str(tmp_path / "home")}
    built = CliRunner().invoke(main, ["catalog", "build", "--mcp-registry", url, "--db", str(db), "--quiet"], env=env)
    info = CliRunner().invoke(main, ["catalog", "info", "--db", str(db)], env=env)
    again = CliRunner().invoke(main, ["catalog", "build", "--mcp-registry", url, "--db", str(db), "--quiet"], env=env)

    assert built.exit_code == 0, built.output
    assert f"Read http://***@127.0.0.1:{port}?api_key=***: 2 items" in built.output
    assert info.exit_code == 0 and f"http://***@127.0.0.1:{port}?api_key=***" in info.output
    with sqlite3.connect(db) as conn:
        sources = {row[0] for row in conn.execute("select source from apis")}
        everything = "\n".join(str(row) for table in ("apis", "meta") for row in conn.execute(f"select * from {table}"))
    assert sources == {f"http://***@127.0.0.1:{port}?api_key=***"}
    for said in (built.output, info.output, everything):
        assert "TOPSECRET" not in said and "s3cr" not in said
    first = site.requests[0]
    assert first["headers"]["Authorization"] == "Basic " + base64.b64encode(b"reader:s3cr@t").decode()
    assert first["query"]["api_key"] == ["TOPSECRET"] and first["path"] == "/v0.1/servers"
    assert again.exit_code == 0 and "changed since" in again.output  # the masked name still finds its catalogue


def test_a_public_apis_url_s_token_is_fetched_with_but_never_shown(site):
    site.routes["/README.md"] = lambda h: send(h, 200, README.encode())
    loaded = load_public_apis(f"{site.url}/README.md?token=TOPSECRET", fetcher=Fetcher(timeout=5))

    assert loaded.info.name == f"{site.url}/README.md?token=***"
    assert {api.source for api in loaded.apis} == {loaded.info.name} and "TOPSECRET" not in str(loaded.info)
    assert site.requests[0]["query"]["token"] == ["TOPSECRET"]
