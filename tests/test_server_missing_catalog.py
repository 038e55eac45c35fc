"""With no catalog.db the server still starts, and every tool says how to build the catalogue."""

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from tender.server.app import build_server
from tender.settings import Settings
from tests.server_support import REQUIREMENT, error_text

CALLS = [
    ("recommend_apis", {"requirement": REQUIREMENT}),
    ("compare_protocols", {"requirement": REQUIREMENT}),
    ("explain_bids", {"run_id": "abc"}),
    ("search_apis", {"query": "maps"}),
    ("get_api", {"api": "Google Maps"}),
    ("list_categories", {}),
]


@pytest.fixture
def no_catalog(tmp_path) -> Settings:
    return Settings(
        catalog_path=tmp_path / "absent" / "catalog.db", runs_path=tmp_path / "runs.db", embedding_model="hashing"
    )


async def test_every_tool_says_how_to_build_the_catalogue(no_catalog):
    async with Client(build_server(no_catalog)) as client:
        assert {t.name for t in (await client.list_tools()).tools} == {name for name, _ in CALLS}
        for name, arguments in CALLS:
            text = error_text(await client.call_tool(name, arguments))
            assert f"No API catalogue at {no_catalog.catalog_path}" in text, name
            assert "`tender catalog build`" in text and "TENDER_CATALOG" in text, name


async def test_resources_say_so_too_and_the_prompt_still_works(no_catalog):
    async with Client(build_server(no_catalog)) as client:
        with pytest.raises(MCPError, match="tender catalog build"):
            await client.read_resource("catalog://categories")
        with pytest.raises(MCPError, match="tender catalog build"):
            await client.read_resource("catalog://apis/1")
        assert (await client.get_prompt("compose_service", {"requirement": REQUIREMENT})).messages
