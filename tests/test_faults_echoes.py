"""What comes back is bounded whatever goes in: a 1 MB query is refused saying the limit, an error quotes at
most the start of a 1 MB value (and never looks for close names across it), and get_api returns at most the start
of a 50 MB description, saying so."""

import difflib

import pytest
from click.testing import CliRunner
from mcp import Client

from tender.answers.lookup import MAX_QUERY_CHARS
from tender.answers.schemas import MAX_DESCRIPTION_CHARS
from tender.catalog import HashingEmbedder, build_catalog
from tender.cli import main
from tender.server.app import build_server
from tender.settings import Settings
from tests.conftest import write_jsonl
from tests.fixture_data import api_rows, mashup_rows
from tests.server_support import REQUIREMENT, error_text, ok, settings  # noqa: F401 (fixture)

MEGABYTE = "x" * 1_000_000
SHORT = 600  # an error message that quotes its input's start, and says how to fix the call


@pytest.mark.parametrize(
    "tool, arguments",
    [
        ("search_apis", {"query": MEGABYTE}),
        ("list_categories", {"query": MEGABYTE}),
    ],
)
async def test_a_megabyte_query_is_refused_saying_the_limit(settings, tool, arguments):  # noqa: F811
    async with Client(build_server(settings)) as client:
        result = await client.call_tool(tool, arguments)

    error = error_text(result)
    assert len(error) < SHORT and f"at most {MAX_QUERY_CHARS:,}" in error and "1,000,000 characters" in error


@pytest.mark.parametrize(
    "tool, arguments",
    [
        ("get_api", {"api": MEGABYTE}),
        ("explain_bids", {"run_id": MEGABYTE}),
        ("recommend_apis", {"requirement": REQUIREMENT, "excluded_apis": [MEGABYTE]}),
        ("recommend_apis", {"requirement": REQUIREMENT, "required_categories": [MEGABYTE]}),
    ],
    ids=["get_api", "explain_bids", "excluded_apis", "required_categories"],
)
async def test_an_error_quotes_only_the_start_of_a_megabyte_value(settings, tool, arguments, monkeypatch):  # noqa: F811
    searched: list[int] = []  # the length of each name that close names were looked for
    close_matches = difflib.get_close_matches

    def spy(word, possibilities, *args, **kwargs):
        searched.append(len(word))
        return close_matches(word, possibilities, *args, **kwargs) if len(word) < 1_000 else []

    monkeypatch.setattr(difflib, "get_close_matches", spy)
    async with Client(build_server(settings)) as client:
        result = await client.call_tool(tool, arguments)

    error = error_text(result)
    assert len(error) < SHORT and "(1,000,000 characters)" in error
    assert all(length < len(MEGABYTE) for length in searched), searched  # difflib on a megabyte: minutes of CPU


@pytest.mark.parametrize(
    "args",
    [
        ("catalog", "search", MEGABYTE),
        ("catalog", "categories", MEGABYTE),
        ("recommend", REQUIREMENT, "--exclude-api", MEGABYTE),
        ("explain", MEGABYTE),
    ],
    ids=["search", "categories", "exclude-api", "explain"],
)
def test_the_cli_quotes_only_the_start_of_a_megabyte_value(settings, tmp_path, args):  # noqa: F811
    env = {
        "TENDER_CATALOG": str(settings.catalog_path),
        "TENDER_RUNS": str(tmp_path / "runs.db"),
        "TENDER_EMBEDDING_MODEL": "hashing",
    }

    result = CliRunner().invoke(main, list(args), env=env)

    assert result.exit_code in (1, 2)
    assert len(result.stderr) < SHORT, result.stderr[:SHORT]


async def test_get_api_returns_the_start_of_a_huge_description_and_its_length(tmp_path):
    rows = api_rows()
    rows[0]["description"] = "Maps and directions. " * 100_000  # 2 MB (the probe's 50 MB: docs/faults.md)
    db = tmp_path / "huge.db"
    build_catalog(
        write_jsonl(tmp_path / "apis.jsonl", rows),
        write_jsonl(tmp_path / "m.jsonl", mashup_rows()),
        db,
        HashingEmbedder(256),
    )
    settings = Settings(catalog_path=db, runs_path=tmp_path / "runs.db", embedding_model="hashing")

    async with Client(build_server(settings)) as client:
        result = await client.call_tool("get_api", {"api": rows[0]["id"]})

    card = ok(result)
    assert len(card["description"]) == MAX_DESCRIPTION_CHARS and card["description"].endswith("…")
    assert card["description_chars"] == len(rows[0]["description"])
    assert len(result.content[0].text) < 3 * MAX_DESCRIPTION_CHARS  # the text block is bounded too
