"""The MCP Registry as a catalogue source: the seed snapshot of ../shared/data/mcp-registry (early field names),
records in the current shape written here (titles, runtime and package arguments, remotes, deprecated and
deleted servers, older versions), and a fake registry on 127.0.0.1 that pages 2,000 servers, fails, hangs and
goes round in circles. No test reaches the network."""

import hashlib
import http.server
import json
import threading
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import parse_qs, urlsplit

import pytest
from click.testing import CliRunner
from mcp import Client

from tender.answers.install import client_config, install_line, plan_client_config
from tender.catalog.install import PackageInstall, RemoteInstall, Variable, package
from tender.catalog.servers import routes_of
from tender.catalog import Catalog
from tender.catalog.build import build_from_sources
from tender.catalog.sources.gather import gather
from tender.catalog.sources.http import Fetcher
from tender.catalog.sources.mcp_registry import MAX_RECORD_BYTES, OFFICIAL_META, load_registry
from tender.catalog.sources.public_apis import load_public_apis
from tender.cli import main
from tender.errors import SourceError
from tender.server.app import build_server
from tender.server.tools import api_details
from tender.settings import Settings
from tests.server_support import ok

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
SEED = SHARED / "mcp-registry" / "seed_2025_05_16.json"
README = SHARED / "public-apis" / "public-apis-README.md"


def response(server: dict, status="active", message="", latest=True, updated="2025-10-01T00:00:00Z") -> dict:
    meta = {"status": status, "isLatest": latest, "publishedAt": "2025-09-01T00:00:00Z", "updatedAt": updated}
    if message:
        meta["statusMessage"] = message
    return {"server": server, "_meta": {OFFICIAL_META: meta}}


def npm_server(i: int, **extra) -> dict:
    return {
        "name": f"io.example/server-{i}",
        "title": f"Server {i}",
        "description": f"Looks up thing number {i}",
        "version": "1.0.0",
        "packages": [
            {
                "registryType": "npm",
                "identifier": f"@example/server-{i}",
                "version": "1.0.0",
                "transport": {"type": "stdio"},
            }
        ],
        **extra,
    }


GITHUB = {
    "name": "io.github.github/github-mcp-server",
    "title": "GitHub",
    "description": "Repositories, issues and pull requests of GitHub",
    "version": "0.9.0",
    "websiteUrl": "https://github.com/github/github-mcp-server",
    "repository": {"url": "https://github.com/github/github-mcp-server", "source": "github"},
    "packages": [
        {
            "registryType": "oci",
            "identifier": "ghcr.io/github/github-mcp-server",
            "version": "0.9.0",
            "transport": {"type": "stdio"},
            "environmentVariables": [
                {"name": "GITHUB_PERSONAL_ACCESS_TOKEN", "isRequired": True, "isSecret": True, "description": "A PAT"}
            ],
        },
        {
            "registryType": "npm",
            "identifier": "@github/mcp",
            "version": "0.9.0",
            "transport": {"type": "streamable-http", "url": "http://localhost:3000/mcp"},
        },
    ],
    "remotes": [{"type": "streamable-http", "url": "https://api.githubcopilot.com/mcp/"}],
}
FILES = {
    "name": "io.example/files",
    "description": "Reads and writes files under a folder",
    "version": "2.0.0",
    "repository": {"url": "https://github.com/example/files"},
    "packages": [
        {
            "registryType": "pypi",
            "identifier": "mcp-files",
            "version": "2.0.0",
            "runtimeHint": "uvx",
            "runtimeArguments": [{"type": "named", "name": "--python", "value": "3.12"}],
            "packageArguments": [
                {"type": "positional", "valueHint": "root_folder", "isRequired": True},
                {"type": "named", "name": "--mode", "value": "read; rm -rf /"},
                {"type": "named", "name": "--log", "valueHint": "log_file"},  # optional, no value: left out
                {"type": "named", "name": "--token", "value": "{token}", "variables": {"token": {"isSecret": True}}},
            ],
            "environmentVariables": [{"name": "FILES_HOME", "description": "Where files live"}],
        }
    ],
}
WEATHER = {
    "name": "com.example/weather",
    "title": "Weather",
    "description": "Forecasts for any place",
    "version": "3.1.0",
    "remotes": [
        {"type": "sse", "url": "https://weather.example.com/sse"},
        {
            "type": "streamable-http",
            "url": "https://weather.example.com/mcp",
            "headers": [{"name": "X-API-Key", "isRequired": True, "isSecret": True, "description": "Your key"}],
        },
    ],
}


@pytest.fixture(scope="module")
def seed():
    if not SEED.is_file():
        pytest.skip(f"{SEED} is not here (the shared data sit beside the clone)")
    return load_registry(SEED)


def items(loaded):
    return {api.provider: api for api in loaded.apis}


def route(api) -> dict:
    """The item's best install route, as stored."""
    return api.details["installs"][0]


# -- the seed snapshot ------------------------------------------------------------------------------
def test_the_seed_reads_into_one_item_per_server_with_its_checked_install_routes(seed):
    assert seed.info.kind == "mcp-registry" and seed.info.items == len(seed.apis) >= 450
    assert seed.info.counts["records"] == 471 and seed.info.counts["malformed"] == 7  # empty records, named
    assert seed.info.left_out[0] == "record 16: has no name"
    assert "MIT" in seed.info.licence and list(seed.info.sha256) == [str(SEED.resolve())]
    magic = items(seed)["io.github.21st-dev/magic-mcp"]
    assert (magic.kind, magic.categories, magic.status) == ("server", [], "active")  # npm is no category
    assert magic.link == "https://github.com/21st-dev/magic-mcp"
    assert route(magic) == {
        "kind": "package",
        "registry": "npm",
        "identifier": "@21st-dev/magic",
        "version": "0.0.46",
        "runtime_args": [],
        "package_args": [],
        "env": [{"name": "API_KEY", "required": False, "secret": False, "description": "${input:apiKey}"}],
        "transport": "stdio",
        "source": "registry",
        "command": "npx",
        "args": ["-y", "@21st-dev/magic@0.0.46"],
    }
    routes = [r for api in seed.apis for r in routes_of(api.details)]
    assert {r.command for r in routes if isinstance(r, PackageInstall)} == {"npx", "uvx", "docker"}
    # The seed glued flags to values and repeated docker's own flags among the package's arguments: read apart,
    # the runner's own options once, and a record that asks for what Tender will not run keeps no route.
    docker = [r for r in routes if isinstance(r, PackageInstall) and r.registry == "oci"]
    assert all(r.args[:3] == ["run", "-i", "--rm"] and r.args.count("-i") == 1 for r in docker)
    assert all(" " not in a for r in routes if isinstance(r, PackageInstall) for a in r.args if a.startswith("-"))
    refused = [why for api in seed.apis for why in api.details.get("install_refused", [])]
    assert any("uvx option '--directory'" in why for why in refused)  # run from a local checkout, not the package


# -- records in the current shape -------------------------------------------------------------------
def test_current_records_give_titles_links_and_install_as_argument_lists(tmp_path):
    path = tmp_path / "page.json"
    path.write_text(json.dumps({"servers": [response(GITHUB), response(FILES), response(WEATHER)]}))
    found = items(load_registry(path))

    github = found["io.github.github/github-mcp-server"]
    assert (github.name, github.url, github.categories) == (
        "GitHub (io.github.github/github-mcp-server)",  # with its namespace: a title alone can be anybody's
        "https://github.com/github/github-mcp-server",
        [],
    )
    assert route(github)["command"] == "docker"  # the stdio package before the remote and the HTTP package
    assert route(github)["args"] == [
        "run",
        "-i",
        "--rm",
        "-e",
        "GITHUB_PERSONAL_ACCESS_TOKEN",
        "ghcr.io/github/github-mcp-server:0.9.0",
    ]
    assert [r["kind"] for r in github.details["installs"]] == ["package", "remote", "package"]
    assert route(github)["env"][0] == {
        "name": "GITHUB_PERSONAL_ACCESS_TOKEN",
        "required": True,
        "secret": True,
        "description": "A PAT",
    }
    files = found["io.example/files"]
    assert files.name == "io.example/files" and files.link == "https://github.com/example/files"
    assert route(files)["args"] == [
        "--python",
        "3.12",
        "mcp-files@2.0.0",
        "<root_folder>",
        "--mode",
        "read; rm -rf /",  # one argument, as written: never a shell line
        "--token",
        "<token>",
    ]
    weather = found["com.example/weather"]
    assert route(weather) == {
        "kind": "remote",
        "url": "https://weather.example.com/mcp",
        "transport": "streamable-http",
        "headers": [{"name": "X-API-Key", "required": True, "secret": True, "description": "Your key"}],
        "source": "registry",
    }
    assert weather.categories == []


def test_deleted_servers_are_dropped_deprecated_flagged_and_only_the_latest_version_kept(tmp_path):
    records = [
        response(npm_server(1, version="0.9.0"), latest=False),
        response(npm_server(1, description="The newest one")),
        response(npm_server(2), status="deprecated", message="Use io.example/server-3 instead"),
        response(npm_server(3), status="deleted", message="Gone"),
        response(npm_server(4)),
    ]
    path = tmp_path / "servers.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records) + "{not json\n")
    loaded = load_registry(path)
    found = items(loaded)

    assert sorted(found) == ["io.example/server-1", "io.example/server-2", "io.example/server-4"]
    assert found["io.example/server-1"].description == "The newest one"
    deprecated = found["io.example/server-2"]
    assert (deprecated.status, deprecated.status_source) == ("deprecated", "Use io.example/server-3 instead")
    assert found["io.example/server-4"].status_source == "MCP Registry status: active"
    counts = loaded.info.counts
    assert (counts["records"], counts["malformed"], counts["older versions"], counts["deleted"]) == (6, 1, 1, 1)
    assert loaded.info.left_out == ["line 6: not JSON (Expecting property name enclosed in double quotes)"]


def test_malformed_and_oversized_records_are_named_and_skipped(tmp_path):
    big = npm_server(2, description="x" * (MAX_RECORD_BYTES + 1))
    records = [response(npm_server(1)), "not an object", response(big), response({"name": "io.x/y", "packages": 3})]
    (tmp_path / "list.json").write_text(json.dumps(records))
    loaded = load_registry(tmp_path / "list.json")
    assert [api.provider for api in loaded.apis] == ["io.example/server-1"]
    assert loaded.info.counts["malformed"] == 2 and loaded.info.counts["too large"] == 1
    assert loaded.info.left_out[0] == "record 2: is not an object"
    assert loaded.info.left_out[1].startswith("record 3 (io.example/server-2): ") and "bytes" in loaded.info.left_out[1]
    assert loaded.info.left_out[2] == "record 4 (io.x/y): packages is not a list of objects"


@pytest.mark.parametrize(
    "content, says",
    [("{}", "is not a registry listing"), ("[1, 2", "neither JSON nor JSON lines"), ("[]", "no server")],
)
def test_a_file_that_is_not_a_listing_is_named(tmp_path, content, says):
    (tmp_path / "x.json").write_text(content)
    with pytest.raises(SourceError, match=says):
        load_registry(tmp_path / "x.json")


# -- a registry over HTTP ---------------------------------------------------------------------------
class FakeRegistry:
    """/v0.1/servers with cursors (the index of the next record), or only /v0/servers with limit and offset."""

    def __init__(self, records, page=100):
        self.records, self.page = records, page
        self.requests: list[dict] = []
        self.fail = 0  # answer 500 to this many requests first
        self.retry_after = ""
        self.circle = False  # give the same cursor again and again
        self.hang = threading.Event()  # set: requests wait until it is cleared... or the test ends
        self.v0_only = False
        self.released = threading.Event()
        registry = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server's name)
                registry.answer(self)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.server.block_on_close = False  # type: ignore[attr-defined]
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def answer(self, handler):
        parts = urlsplit(handler.path)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        self.requests.append({"path": parts.path, **query})
        if self.hang.is_set():
            self.released.wait(10)
            return
        if self.fail:
            self.fail -= 1
            handler.send_response(500)
            if self.retry_after:
                handler.send_header("Retry-After", self.retry_after)
            handler.end_headers()
            return
        if parts.path != ("/v0/servers" if self.v0_only else "/v0.1/servers"):
            handler.send_error(404)
            return
        since = query.get("updated_since")
        chosen = [r for r in self.records if not since or r["_meta"][OFFICIAL_META]["updatedAt"] > since]
        at = query.get("cursor") or query.get("offset") or "0"
        start = int(at) if at.isdigit() else 0
        limit = int(query.get("limit", self.page))
        page = chosen[start : start + limit]
        body: dict = {"servers": page, "metadata": {"count": len(page)}}
        if self.v0_only:
            body["total_count"] = len(chosen)
        elif self.circle:
            body["metadata"]["nextCursor"] = "again"
        elif start + limit < len(chosen):
            body["metadata"]["nextCursor"] = str(start + limit)
        data = json.dumps(body).encode()
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    def close(self):
        self.released.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def registry():
    records = [response(npm_server(i)) for i in range(2_000)]
    records[1_234] = {"server": {"name": "io.example/server-1234", "packages": "npm"}}  # malformed
    fake = FakeRegistry(records)
    yield fake
    fake.close()


FAST = Fetcher(timeout=5, backoff=0.01)


def test_every_page_is_read_and_a_malformed_record_is_named_and_skipped(registry):
    loaded = load_registry(registry.url, fetcher=FAST)

    assert loaded.info.items == 1_999 and loaded.info.counts["pages"] == 20
    assert loaded.info.left_out == ["page 13, record 35 (io.example/server-1234): packages is not a list of objects"]
    assert loaded.info.name == registry.url and loaded.info.synced_at.endswith("Z")
    first, second = registry.requests[:2]
    assert first == {"path": "/v0.1/servers", "limit": "100", "version": "latest"}
    assert second["cursor"] == "100"


def test_failures_are_retried_with_back_off_and_retry_after(registry):
    registry.fail, registry.retry_after = 2, "1"
    waits: list[float] = []
    fetcher = Fetcher(timeout=5, backoff=0.01, max_wait=0.5, sleep=waits.append)
    loaded = load_registry(registry.url, fetcher=fetcher)
    assert loaded.info.items == 1_999
    assert waits == [0.5, 0.5]  # Retry-After: 1, capped at max_wait

    registry.fail, registry.retry_after = 3, ""
    waits.clear()
    load_registry(registry.url, fetcher=Fetcher(timeout=5, backoff=0.01, sleep=waits.append))
    assert waits == [0.01, 0.02, 0.04]


def test_the_v0_api_is_read_with_limit_and_offset_where_v0_1_is_missing(registry):
    registry.v0_only = True
    registry.records = registry.records[:250]
    loaded = load_registry(registry.url + "/v0.1/servers", fetcher=FAST)
    assert loaded.info.items == 250 and "/v0/servers, 3 pages" in loaded.info.detail
    offsets = [r.get("offset") for r in registry.requests if r["path"] == "/v0/servers"]
    assert offsets == [None, "100", "200"]


def test_a_page_cap_stops_a_listing_that_would_not_end(registry):
    with pytest.raises(SourceError, match="more than 5 pages"):
        load_registry(registry.url, fetcher=FAST, max_pages=5)


@pytest.fixture
def previous(tmp_path, embedder):
    """A catalogue built before, and its sha256."""
    (tmp_path / "page.json").write_text(json.dumps([response(GITHUB), response(WEATHER)]))
    db = tmp_path / "catalog.db"
    build_from_sources([load_registry(tmp_path / "page.json")], db, embedder)
    return db, hashlib.sha256(db.read_bytes()).hexdigest()


ENV = {"TENDER_EMBEDDING_MODEL": "hashing", "TENDER_DEBUG": None}


def test_a_cursor_that_comes_again_stops_the_build_and_keeps_the_previous_catalogue(registry, previous, tmp_path):
    db, before = previous
    registry.circle = True
    result = CliRunner().invoke(
        main,
        ["catalog", "build", "--mcp-registry", registry.url, "--db", str(db)],
        env={**ENV, "TENDER_HOME": str(tmp_path / "home")},
    )
    assert result.exit_code == 2 and "gives the cursor 'again' again" in result.output
    assert "Nothing was written" in result.output
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before


def test_a_hung_registry_times_out_and_keeps_the_previous_catalogue(registry, previous, tmp_path):
    db, before = previous
    registry.hang.set()  # for 10 s, then the connection closes: a client without a timeout fails otherwise
    result = CliRunner().invoke(
        main,
        ["catalog", "build", "--mcp-registry", registry.url, "--fetch-timeout", "0.5", "--db", str(db)],
        env={**ENV, "TENDER_HOME": str(tmp_path / "home")},
    )
    assert result.exit_code == 2 and "did not answer within 0.5 s" in result.output
    assert len(registry.requests) == 1  # a timeout is not tried again
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before


def test_errors_that_outlast_the_retries_keep_the_previous_catalogue(registry, previous, embedder):
    db, before = previous
    registry.fail = 10
    with pytest.raises(SourceError, match="failed 3 times; the last time: HTTP 500"):
        sources = gather(mcp_registry=[registry.url], fetcher=Fetcher(timeout=5, retries=2, backoff=0.01), previous=db)
        build_from_sources(sources, db, embedder)
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before


def test_a_rebuild_asks_only_for_what_changed_and_keeps_the_rest(registry, tmp_path):
    registry.records = registry.records[:150]
    db = tmp_path / "registry.db"
    env = {**ENV, "TENDER_HOME": str(tmp_path / "home")}
    first = CliRunner().invoke(
        main, ["catalog", "build", "--quiet", "--mcp-registry", registry.url, "--db", str(db)], env=env
    )
    assert first.exit_code == 0, first.output
    meta = Catalog(db).meta
    synced = json.loads(meta["registry_synced_at"])[registry.url]
    ids = {api.provider: api.id for api in Catalog(db).apis()}
    assert "updated_since" not in registry.requests[0]

    registry.requests.clear()
    later = "2100-01-01T00:00:00Z"
    registry.records[5] = response(npm_server(5, description="Now looks up other things"), updated=later)
    registry.records[7] = response(npm_server(7), status="deleted", updated=later)
    registry.records.append(response(npm_server(9_999), updated=later))
    again = CliRunner().invoke(
        main, ["catalog", "build", "--quiet", "--mcp-registry", registry.url, "--db", str(db)], env=env
    )
    assert again.exit_code == 0, again.output
    asked = registry.requests[0]["updated_since"]
    assert asked < synced  # the time of the last read, less a margin for clocks
    catalog = Catalog(db)
    servers = {api.provider: api for api in catalog.apis()}
    assert len(servers) == 150 and "io.example/server-7" not in servers and "io.example/server-9999" in servers
    assert servers["io.example/server-5"].description == "Now looks up other things"
    assert servers["io.example/server-6"].description == "Looks up thing number 6"
    assert all(servers[f"io.example/server-{i}"].id == ids[f"io.example/server-{i}"] for i in range(7))  # in place
    source = catalog.sources()[0]
    assert (source["counts"]["changed"], source["counts"]["kept"]) == (3, 148)
    assert int(catalog.meta["texts_embedded"]) <= 4  # only the changed and new texts

    registry.requests.clear()
    full = CliRunner().invoke(
        main, ["catalog", "build", "--quiet", "--mcp-registry", registry.url, "--full-sync", "--db", str(db)], env=env
    )
    assert full.exit_code == 0 and "updated_since" not in registry.requests[0]


# -- both snapshots in one catalogue, and what a plan makes of a server -----------------------------
def test_both_snapshots_build_into_one_catalogue(seed, tmp_path, embedder):
    if not README.is_file():
        pytest.skip(f"{README} is not here")
    meta = build_from_sources([load_public_apis(README), seed], tmp_path / "all.db", embedder)
    catalog = Catalog(tmp_path / "all.db", embedder=embedder)
    kinds = [api.kind for api in catalog.apis()]
    assert kinds.count("api") >= 1_400 and kinds.count("server") >= 450
    assert int(meta["apis"]) == len(kinds)
    card = api_details(catalog, catalog.get_api("io.github.21st-dev/magic-mcp").id)
    assert card.install is not None and card.install["args"] == ["-y", "@21st-dev/magic@0.0.46"]
    assert api_details(catalog, "AdoptAPet").install is None


NPM = package(
    "npm",
    "@example/notes",
    "1.2.0",
    env=[Variable(name="NOTES_TOKEN", required=True, secret=True), Variable(name="NOTES_DIR")],
)
REMOTE = RemoteInstall(
    url="https://weather.example.com/mcp",
    transport="streamable-http",
    headers=[Variable(name="X-API-Key", required=True, secret=True)],
)


def test_a_plans_servers_become_client_configurations_that_keep_the_pinned_version(tmp_path, embedder):
    expected = {
        "claude_desktop": {
            "mcpServers": {
                "notes": {
                    "command": "npx",
                    "args": ["-y", "@example/notes@1.2.0"],  # the version the source pins
                    "env": {"NOTES_TOKEN": "<NOTES_TOKEN>", "NOTES_DIR": "<NOTES_DIR>"},
                },
                "weather": {
                    "type": "http",
                    "url": "https://weather.example.com/mcp",
                    "headers": {"X-API-Key": "<X-API-Key>"},
                },
            }
        },
        "vscode": {
            "servers": {
                "notes": {
                    "type": "stdio",
                    "command": "npx",
                    "args": ["-y", "@example/notes@1.2.0"],
                    "env": {"NOTES_TOKEN": "<NOTES_TOKEN>", "NOTES_DIR": "<NOTES_DIR>"},
                },
                "weather": {
                    "type": "http",
                    "url": "https://weather.example.com/mcp",
                    "headers": {"X-API-Key": "<X-API-Key>"},
                },
            }
        },
        "claude_code": [
            "claude mcp add notes -e 'NOTES_TOKEN=<NOTES_TOKEN>' -e 'NOTES_DIR=<NOTES_DIR>' -- npx -y @example/notes@1.2.0",
            "claude mcp add --transport http --header 'X-API-Key: <X-API-Key>' weather https://weather.example.com/mcp",
        ],
        "variables": [
            {
                "server": "notes",
                "name": "NOTES_TOKEN",
                "required": True,
                "secret": True,
                "description": "",
                "kind": "env",
            },
            {
                "server": "notes",
                "name": "NOTES_DIR",
                "required": False,
                "secret": False,
                "description": "",
                "kind": "env",
            },
            {
                "server": "weather",
                "name": "X-API-Key",
                "required": True,
                "secret": True,
                "description": "",
                "kind": "header",
            },
        ],
    }
    assert client_config([("notes", NPM), ("weather", REMOTE)]).model_dump() == expected

    notes = {
        "name": "io.example/notes",
        "description": "Keeps notes",
        "version": "1.2.0",
        "packages": [
            {
                "registryType": "npm",
                "identifier": "@example/notes",
                "version": "1.2.0",
                "environmentVariables": [
                    {"name": "NOTES_TOKEN", "isRequired": True, "isSecret": True},
                    {"name": "NOTES_DIR"},
                ],
            }
        ],
    }
    (tmp_path / "page.json").write_text(json.dumps([response(notes), response(WEATHER), response(GITHUB)]))
    build_from_sources([load_registry(tmp_path / "page.json")], tmp_path / "c.db", embedder)
    catalog = Catalog(tmp_path / "c.db", embedder=embedder)
    awarded = [catalog.get_api(name).id for name in ("io.example/notes", "Weather (com.example/weather)")]
    plan = SimpleNamespace(apis=[SimpleNamespace(api_id=i) for i in awarded])
    config = plan_client_config(plan, catalog)  # type: ignore[arg-type]
    assert config is not None and config.model_dump() == {
        **expected,
        "variables": [{**v, "description": "Your key"} if v["kind"] == "header" else v for v in expected["variables"]],
    }
    assert plan_client_config(SimpleNamespace(apis=[]), catalog) is None  # type: ignore[arg-type]
    weather = routes_of(catalog.get_api("Weather (com.example/weather)").details)[0]
    assert install_line(weather) == (
        "connect: https://weather.example.com/mcp (streamable-http); headers: X-API-Key (required, secret)"
    )


async def test_recommend_apis_and_get_api_carry_the_install(tmp_path, embedder):
    (tmp_path / "page.json").write_text(json.dumps([response(FILES), response(WEATHER)]))
    build_from_sources([load_registry(tmp_path / "page.json")], tmp_path / "c.db", embedder)
    settings = Settings(catalog_path=tmp_path / "c.db", runs_path=tmp_path / "runs.db", embedding_model="hashing")
    async with Client(build_server(settings)) as client:
        plan = ok(await client.call_tool("recommend_apis", {"requirement": "read and write files under a folder"}))
        card = ok(await client.call_tool("get_api", {"api": "Weather (com.example/weather)"}))

    chosen = plan["functions"][0]["apis"][0]
    assert chosen["name"] == "io.example/files" and chosen["install"]["command"] == "uvx"
    assert "read; rm -rf /" in chosen["install"]["args"]
    assert card["install"]["url"] == "https://weather.example.com/mcp"


def test_recommend_prints_the_install_and_the_client_configuration(tmp_path):
    (tmp_path / "page.json").write_text(json.dumps([response(FILES)]))
    db = tmp_path / "files.db"
    env = {**ENV, "TENDER_HOME": str(tmp_path / "home"), "TENDER_RUNS": str(tmp_path / "runs.db")}
    assert (
        CliRunner()
        .invoke(
            main,
            ["catalog", "build", "--quiet", "--mcp-registry", str(tmp_path / "page.json"), "--db", str(db)],
            env=env,
        )
        .exit_code
        == 0
    )
    need = "read and write files under a folder"
    text = CliRunner().invoke(main, ["recommend", need, "--db", str(db)], env=env)
    assert text.exit_code == 0, text.output
    assert "run: uvx --python 3.12 mcp-files@2.0.0 '<root_folder>' --mode 'read; rm -rf /'" in text.output
    assert '"mcpServers": {' in text.output and '"servers": {' in text.output and "claude mcp add files" in text.output

    as_json = CliRunner().invoke(main, ["recommend", need, "--db", str(db), "--json"], env=env)
    config = json.loads(as_json.output)["client_config"]
    assert list(config["claude_desktop"]["mcpServers"]) == ["files"]
    assert config["vscode"]["servers"]["files"]["args"][-4:] == ["--mode", "read; rm -rf /", "--token", "<token>"]
