"""What the server says of itself (issue 37, items 2 and 3): instructions that describe the catalogue it serves,
its distribution's version, annotations that say which tools store a run, and descriptions as an assistant
should read them."""

from dataclasses import replace
from importlib.metadata import version
from pathlib import Path

import pytest
from mcp import Client

from tender.catalog.build import build_from_sources
from tender.catalog.sources.mcp import load_listing
from tender.server.app import build_server
from tests.server_support import settings  # noqa: F401 (fixture)

LISTING = Path(__file__).parent / "mcp_servers" / "filesystem_memory.json"


@pytest.fixture
def tools_catalog(tmp_path, embedder) -> Path:
    """The real tools of the filesystem and memory MCP servers (a listing saved from them), no usage history."""
    path = tmp_path / "tools.db"
    build_from_sources(load_listing(LISTING), path, embedder)
    return path


async def test_instructions_describe_a_programmableweb_catalogue_with_its_history(settings):
    async with Client(build_server(settings)) as client:
        told = client.instructions

    assert "24 Web APIs in" in told and "usage history of 40 past mashups" in told
    assert "tools" not in told.split("Describe")[0]


async def test_instructions_describe_an_mcp_catalogue_as_the_tools_it_is(settings, tools_catalog):
    async with Client(build_server(replace(settings, catalog_path=tools_catalog))) as client:
        told = client.instructions

    assert "23 tools of 2 MCP servers (filesystem, memory)" in told
    assert "without usage history" in told and "ProgrammableWeb" not in told
    assert "organisation='provider'" in told and "the MCP server and the tool to call" in told


async def test_instructions_without_a_catalogue_say_so(settings, tmp_path):
    async with Client(build_server(replace(settings, catalog_path=tmp_path / "none.db"))) as client:
        told = client.instructions

    assert "No catalogue is open" in told and "tender catalog build" in told


async def test_server_info_carries_the_distributions_version(settings):
    async with Client(build_server(settings)) as client:
        info = client.server_info

    assert info.version == version("tender-mcp") and info.version != "0"


async def test_annotations_say_which_tools_store_a_run(settings):
    async with Client(build_server(settings)) as client:
        tools = {tool.name: tool.annotations for tool in (await client.list_tools()).tools}

    for name in ("recommend_apis", "compare_protocols"):  # a new run, with a new run_id, per call
        assert tools[name].idempotent_hint is False and tools[name].read_only_hint is False, name
        assert tools[name].destructive_hint is False, name
    for name in ("explain_bids", "search_apis", "get_api", "list_categories"):
        assert tools[name].read_only_hint is True and tools[name].idempotent_hint is True, name


async def test_descriptions_are_dedented_and_organisation_offers_provider(settings):
    async with Client(build_server(settings)) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}

    for tool in tools.values():
        assert not any(line.startswith(" ") for line in tool.description.splitlines()), tool.name
    organisation = tools["compare_protocols"].input_schema["properties"]["organisation"]
    assert "provider" in organisation["enum"] and "'provider'" in organisation["description"]
