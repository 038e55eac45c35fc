"""A recommendation over a catalogue of real MCP servers' tools names the right server and tool. The
requirements were written for these servers before Tender's answers were seen; each lists the tools that
would serve it (any one of them is right)."""

import pytest

from tender.agents.request import Request
from tender.agents.service import Tender
from tender.catalog import Catalog, get_embedder
from tender.catalog.build import build_from_sources
from tender.catalog.sources.mcp import load_servers
from tests.mcp_servers.installed import npm_and_pypi_servers, tender_server

pytestmark = [pytest.mark.real_model, pytest.mark.servers]

REQUIREMENTS = [
    ("What time is it right now in Tokyo?", {("time", "get_current_time")}),
    ("Convert 3 pm New York time into London time for a meeting invitation.", {("time", "convert_time")}),
    ("Download the web page at a URL and read its content as markdown.", {("fetch", "fetch")}),
    (
        "Read the contents of a text file from my project folder.",
        {("filesystem", "read_text_file"), ("filesystem", "read_file")},
    ),
    ("Write the meeting notes into a new file on disk.", {("filesystem", "write_file")}),
    ("Find every file whose name matches a pattern under a directory.", {("filesystem", "search_files")}),
    ("Show the tree of folders and files inside a directory.", {("filesystem", "directory_tree")}),
    ("Move a file into another directory.", {("filesystem", "move_file")}),
    (
        "Remember people and how they are related to each other in a knowledge graph.",
        {("memory", "create_entities"), ("memory", "create_relations")},
    ),
    ("Search my knowledge graph for the nodes about a project.", {("memory", "search_nodes")}),
    ("Add two numbers and return their sum.", {("everything", "get-sum")}),
    ("Echo back the message I send.", {("everything", "echo")}),
    pytest.param(
        "Recommend which Web APIs an app that shows nearby restaurants on a map should use.",
        {("tender", "recommend_apis")},
        marks=pytest.mark.xfail(strict=False, reason="the bids put search_apis above recommend_apis (bidding)"),
    ),
]
IDS = [(r.values[0] if hasattr(r, "values") else r[0])[:40] for r in REQUIREMENTS]


@pytest.fixture(scope="module")
def tender(tmp_path_factory, catalog_path):
    folder = tmp_path_factory.mktemp("tools")
    sources = load_servers([*npm_and_pypi_servers(folder), tender_server(catalog_path)], timeout=60)
    embedder = get_embedder("default")
    build_from_sources(sources, folder / "tools.db", embedder)
    return Tender(Catalog(folder / "tools.db", embedder=embedder))


def chosen(tender, text, **fields):
    return {(api.server, api.tool) for api in tender.recommend(Request.create(text, **fields)).plan.apis}


@pytest.mark.parametrize("protocol", ["manager-led", "contractor-led", "collaborative"])
@pytest.mark.parametrize("text,right", REQUIREMENTS, ids=IDS)
def test_the_plan_names_a_right_server_and_tool(tender, text, right, protocol):
    assert chosen(tender, text, protocol=protocol) & right
