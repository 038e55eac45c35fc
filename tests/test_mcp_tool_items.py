"""MCP tools as catalogue items (issue 37, item 5): a plan says what a tool does (its description, not its
title), and a tool whose title or description says it is deprecated is marked so and counted."""

import json
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner
from mcp import Client

from tender.answers.brief import does
from tender.catalog import Api
from tender.catalog.build import build_from_sources
from tender.catalog.sources.mcp import load_listing
from tender.cli import main
from tender.server.app import build_server
from tests.server_support import ok, settings  # noqa: F401 (fixture)

# The tools/list of @modelcontextprotocol/server-filesystem and server-memory 2026.8.31, saved with
# `tender catalog list-tools --save` (output schemas left out).
LISTING = Path(__file__).parent / "mcp_servers" / "filesystem_memory.json"


@pytest.fixture
def items() -> dict[str, Api]:
    return {api.tool: api for source in load_listing(LISTING) for api in source.apis}


@pytest.fixture
def tools_catalog(tmp_path, embedder) -> Path:
    path = tmp_path / "tools.db"
    build_from_sources(load_listing(LISTING), path, embedder)
    return path


def test_a_tool_that_says_it_is_deprecated_is_marked_so(items):
    read_file = items["read_file"]  # title "Read File (Deprecated)"; "DEPRECATED: Use read_text_file instead."
    assert read_file.status == "deprecated" and read_file.status_source == "title: 'Read File (Deprecated)'"
    others = [api for name, api in items.items() if name != "read_file"]
    assert all(api.status == "active" for api in others)


@pytest.mark.parametrize(
    "title, description",
    [
        ("", "Read a file. DEPRECATED: use read_text_file."),
        ("", "Deprecated: use search_v2 instead."),
        ("", "Search the index (deprecated)."),
        ("", "This tool is deprecated and will be removed."),
    ],
)
def test_a_description_that_says_so_counts_too(title, description):
    from tender.catalog.status import status_from_tool

    assert status_from_tool(title, description)[0] == "deprecated"


def test_a_deprecated_parameter_does_not_make_a_tool_deprecated():
    from tender.catalog.status import status_from_tool

    assert status_from_tool("Search", "Search notes. The `tag` argument is deprecated; use `labels`.")[0] == "active"


def test_catalog_info_counts_the_deprecated_tool(tools_catalog, tmp_path):
    env = {"TENDER_HOME": str(tmp_path), "TENDER_EMBEDDING_MODEL": "hashing"}
    result = CliRunner().invoke(main, ["catalog", "info", "--db", str(tools_catalog), "--json"], env=env)

    assert json.loads(result.stdout)["deprecated"] == "1"


def test_a_tools_description_is_what_it_does_and_its_title_stays_apart(items):
    read_graph = items["read_graph"]
    assert read_graph.description == "Read the entire knowledge graph"
    assert read_graph.details["title"] == "Read Graph"
    assert read_graph.text().startswith("read_graph (memory). memory. Read Graph. Read the entire knowledge graph")


async def test_the_plan_says_what_a_tool_does_not_its_title(settings, tools_catalog):
    async with Client(build_server(replace(settings, catalog_path=tools_catalog))) as client:
        plan = ok(await client.call_tool("recommend_apis", {"requirement": "Read the entire knowledge graph"}))

    choices = {api["tool"]: api for f in plan["functions"] for api in f["apis"]}
    assert choices["read_graph"]["does"] == "Read the entire knowledge graph"


def test_a_catalogue_built_before_titles_were_kept_apart_still_says_what_the_tool_does():
    old = Api(
        id=1,
        name="read_graph (memory)",
        kind="tool",
        description="Read Graph. Read the entire knowledge graph",
        details={"title": "Read Graph"},
    )
    assert does(old) == "Read the entire knowledge graph"
