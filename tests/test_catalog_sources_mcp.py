"""MCP servers as a catalogue source: real servers started by the tests, listed over stdio; client
configuration files; saved listings; and every way a server can fail, each named, with exit code 2 and the
previous catalogue intact."""

import json
import sys

import pytest
from click.testing import CliRunner

from tender.catalog import Catalog
from tender.catalog.sources.mcp import (
    Server,
    list_servers,
    load_listing,
    load_servers,
    server_from_argument,
    servers_from_config,
)
from tender.cli import main
from tender.errors import SourceError
from tests.mcp_servers.installed import npm_and_pypi_servers, paged_server, tender_server

# Every test here starts MCP servers over stdio (real ones from npm and PyPI, the tests' own, or commands that fail
# or hang), most of them behind a catalogue build: the `servers` lane, out of the fast one.
pytestmark = pytest.mark.servers
PY = sys.executable


@pytest.fixture(scope="module")
def five(tmp_path_factory):
    return load_servers(npm_and_pypi_servers(tmp_path_factory.mktemp("files")), timeout=60)


def test_every_tool_of_five_real_servers_becomes_an_item_of_its_server(five):
    tools = {source.info.name: {api.tool for api in source.apis} for source in five}
    assert list(tools) == ["everything", "filesystem", "memory", "time", "fetch"]
    assert {"read_text_file", "write_file", "search_files", "directory_tree"} <= tools["filesystem"]
    assert {"create_entities", "create_relations", "search_nodes"} <= tools["memory"]
    assert tools["time"] == {"get_current_time", "convert_time"} and tools["fetch"] == {"fetch"}
    assert {"echo", "get-sum"} <= tools["everything"]
    for source in five:
        assert source.info.kind == "mcp" and source.info.items == len(source.apis) > 0
        for api in source.apis:
            deprecated = api.tool == "read_file"  # the filesystem server's, "Read File (Deprecated)"
            assert (api.kind, api.server, api.provider, api.status) == (
                "tool",
                source.info.name,
                source.info.name,
                "deprecated" if deprecated else "active",
            )
            assert api.name == f"{api.tool} ({api.server})" and api.description
            assert deprecated or api.status_source == "listed by the server"


def test_input_schemas_and_annotations_are_summarised(five):
    time_tool = next(a for s in five for a in s.apis if a.tool == "get_current_time")
    assert time_tool.details["input_schema"] == {"properties": {"timezone": "string"}, "required": ["timezone"]}
    assert time_tool.details["annotations"]["readOnlyHint"] is True
    assert "Inputs: timezone" in time_tool.text()


def test_pagination_is_followed_to_the_last_page():
    [shop] = load_servers([paged_server()], timeout=30)
    assert [a.tool for a in shop.apis] == [
        "send_invoice",
        "refund_payment",
        "list_customers",
        "create_coupon",
        "ship_order",
    ]


def test_tenders_own_server_is_one_more_server_to_import(catalog_path):
    [tender] = load_servers([tender_server(catalog_path)], timeout=60)
    assert {"recommend_apis", "search_apis", "get_api"} <= {a.tool for a in tender.apis}


def test_servers_are_named_by_command_url_or_an_explicit_name():
    assert server_from_argument("npx -y @modelcontextprotocol/server-everything@2025.1.1").name == "server-everything"
    assert server_from_argument("uvx mcp-server-time --local-timezone UTC").name == "mcp-server-time"
    assert server_from_argument("http://127.0.0.1:9000/mcp").url == "http://127.0.0.1:9000/mcp"
    named = server_from_argument("clock=uvx mcp-server-time")
    assert (named.name, named.command, named.args) == ("clock", "uvx", ["mcp-server-time"])


@pytest.mark.parametrize(
    "key,extra", [("mcpServers", {}), ("servers", {"type": "stdio"})]
)  # Claude Desktop / Cursor, VS Code
def test_client_configuration_files_name_servers_as_configured(tmp_path, key, extra):
    config = tmp_path / "config.json"
    config.write_text(
        json.dumps(
            {
                key: {
                    "shop": {"command": PY, "args": [str(paged_server().args[0])], "env": {"X": "1"}, **extra},
                    "remote": {"url": "http://127.0.0.1:9/mcp"},
                    "off": {"command": "nothing", "disabled": True},
                }
            }
        )
    )
    servers = servers_from_config(config)
    assert [(s.name, s.env, s.url) for s in servers] == [
        ("shop", {"X": "1"}, ""),
        ("remote", {}, "http://127.0.0.1:9/mcp"),
    ]


def build(tmp_path, *args):
    env = {"TENDER_EMBEDDING_MODEL": "hashing", "TENDER_HOME": str(tmp_path / "home")}
    return CliRunner().invoke(main, ["catalog", "build", "--quiet", "--db", str(tmp_path / "tools.db"), *args], env=env)


@pytest.fixture
def previous(tmp_path):
    """A catalogue already in place, which a failed build must leave as it was."""
    result = build(tmp_path, "--mcp", f"shop={PY} {paged_server().args[0]}")
    assert result.exit_code == 0, result.output
    return (tmp_path / "tools.db").read_bytes()


@pytest.mark.parametrize(
    "server,says",
    [
        ("ghost=/no/such/mcp-server", "cannot be started: no command '/no/such/mcp-server'"),
        (
            f"quitter={PY} -c \"import sys; sys.stderr.write('bad config'); sys.exit(3)\"",
            "exited with status 3 before listing its tools; its stderr ends: bad config",
        ),
        (f'sleeper={PY} -c "import time; time.sleep(60)"', "did not list its tools within 2 s"),
        (f"mute={PY} -c \"print('hello'); import time; time.sleep(60)\"", "did not list its tools within 2 s"),
    ],
)
def test_a_failing_server_is_named_exit_2_and_the_previous_catalogue_is_intact(tmp_path, previous, server, says):
    result = build(tmp_path, "--mcp", server, "--mcp-timeout", "2")
    name = server.split("=")[0]
    assert result.exit_code == 2
    assert f"MCP server '{name}'" in result.output and says in result.output and "Nothing was written" in result.output
    assert (tmp_path / "tools.db").read_bytes() == previous


def test_skip_failed_builds_the_rest_and_says_what_was_skipped(tmp_path):
    result = build(
        tmp_path, "--mcp", "ghost=/no/such/mcp-server", "--mcp", f"shop={PY} {paged_server().args[0]}", "--skip-failed"
    )
    assert result.exit_code == 0, result.output
    assert "Skipped MCP server 'ghost'" in result.output
    catalog = Catalog(tmp_path / "tools.db")
    assert catalog.providers() == ["shop"]
    assert [(s["name"], s["items"], bool(s["skipped"])) for s in catalog.sources()] == [
        ("shop", 5, False),
        ("ghost", 0, True),
    ]


def test_two_servers_of_one_name_are_an_error(tmp_path, previous):
    result = build(tmp_path, "--mcp", f"shop={PY} a.py", "--mcp", f"shop={PY} b.py")
    assert result.exit_code == 2 and "MCP server 'shop': is named twice" in result.output
    assert (tmp_path / "tools.db").read_bytes() == previous


def test_a_saved_listing_rebuilds_without_starting_anything(tmp_path):
    listing = tmp_path / "listing.json"
    result = CliRunner().invoke(
        main, ["catalog", "list-tools", "--mcp", f"shop={PY} {paged_server().args[0]}", "--save", str(listing)]
    )
    assert result.exit_code == 0, result.output
    assert "shop" in result.output and "ship_order" in result.output
    [shop] = load_listing(listing)
    assert (shop.info.kind, shop.info.items) == ("mcp-listing", 5)
    assert shop.apis[0].status_source == "listed in listing.json"
    assert build(tmp_path, "--mcp-listing", str(listing)).exit_code == 0
    assert len(Catalog(tmp_path / "tools.db").apis()) == 5


@pytest.mark.parametrize(
    "content,says",
    [
        ({"servers": []}, "empty listing"),
        ({"servers": [{"name": "a", "tools": []}]}, "empty listing"),
        ({"tools": []}, "is not a listing"),
        ({"servers": [{"name": "a", "tools": [{"description": "no name"}]}]}, "tool 1 is malformed"),
        (
            {
                "servers": [
                    {"name": "a", "tools": [{"name": "t", "inputSchema": {}}]},
                    {"name": "a", "tools": [{"name": "u", "inputSchema": {}}]},
                ]
            },
            "'a': is named twice",
        ),
    ],
)
def test_a_bad_listing_is_named_exit_2(tmp_path, previous, content, says):
    listing = tmp_path / "bad.json"
    listing.write_text(json.dumps(content))
    result = build(tmp_path, "--mcp-listing", str(listing))
    assert result.exit_code == 2 and says in result.output
    assert (tmp_path / "tools.db").read_bytes() == previous


@pytest.mark.parametrize("option", ["--mcp-listing", "--mcp-config"])
@pytest.mark.parametrize(
    "make,says",
    [
        (lambda path: path.write_bytes(b'\xff\xfe{"servers": []}'), "is not UTF-8 text"),
        (lambda path: path.mkdir(), "is a folder, not a file"),
        (lambda path: None, "no such file"),
    ],
    ids=["not-utf8", "folder", "missing"],
)
def test_an_unreadable_listing_or_configuration_is_named_exit_2(tmp_path, previous, option, make, says):
    source = tmp_path / "source.json"
    make(source)
    result = build(tmp_path, option, str(source))
    assert result.exit_code == 2 and f"{source}: {says}" in result.output
    assert (tmp_path / "tools.db").read_bytes() == previous


# A server that never lists its tools, and that says whether it saw all three of its kind started while it ran.
SLEEPER = """
import pathlib, sys, time
folder, me = pathlib.Path(sys.argv[1]), sys.argv[2]
(folder / f"started-{me}").touch()
for _ in range(1200):
    if len(list(folder.glob("started-*"))) == 3:
        (folder / f"saw-all-{me}").touch()
        break
    time.sleep(0.05)
time.sleep(60)
"""


def test_every_failing_server_is_named_with_its_cause_and_all_start_at_once(tmp_path, previous):
    """Three servers that fail three ways: one error names each, with its exit status and last stderr lines, its
    timeout, or the command that is missing. The hung ones are started at once, so they cost one timeout, not one
    each: each of them saw the other two started while it was still waiting (one after another, the first would be
    stopped before the second started)."""
    quitter = f"quitter={PY} -c \"import sys; print('line 1', file=sys.stderr); sys.exit('no API key set')\""
    (tmp_path / "sleeper.py").write_text(SLEEPER)
    (seen := tmp_path / "sleepers").mkdir()
    sleepers = [f"sleeper{n}={PY} {tmp_path / 'sleeper.py'} {seen} {n}" for n in range(3)]

    result = build(
        tmp_path,
        "--mcp",
        quitter,
        *[a for s in sleepers for a in ("--mcp", s)],
        "--mcp",
        "ghost=/no/such",
        "--mcp-timeout",
        "5",
    )

    assert sorted(p.name for p in seen.glob("saw-all-*")) == ["saw-all-0", "saw-all-1", "saw-all-2"]
    assert result.exit_code == 2
    [error, _] = result.stderr.strip().splitlines()
    assert error.startswith("Error: 5 of 5 MCP servers: failed:")
    assert "MCP server 'quitter'" in error and "exited with status 1" in error
    assert "its stderr ends: line 1 / no API key set" in error
    for n in range(3):
        assert f"MCP server 'sleeper{n}'" in error
    assert error.count("did not list its tools within 5 s") == 3
    assert "MCP server 'ghost' (/no/such): cannot be started: no command '/no/such'" in error
    assert "--skip-failed" in error
    assert (tmp_path / "tools.db").read_bytes() == previous


def test_list_servers_reports_each_failure_separately_with_skip_failed():
    listings, failed = list_servers(
        [paged_server(), Server(name="ghost", command="/no/such/server")], timeout=30, skip_failed=True
    )
    assert [x.name for x in listings] == ["shop"] and [s.name for s, _ in failed] == ["ghost"]
    with pytest.raises(SourceError, match="ghost"):
        list_servers([Server(name="ghost", command="/no/such/server")], timeout=30)
