"""The leftovers of the fault probe of 2026-11-28 (issue 56, row 13): a `cp` over the served catalogue fails no
call; no value comes back whole (a search's categories, an id `runs delete` cannot find, a transcript page, the
prompt's arguments); a need made of control characters only is refused like an empty one. (The reader cache's
modes: tests/test_faults_reader_cache.py.)"""

import threading

import pytest
from click.testing import CliRunner
from mcp import Client
from mcp.shared.exceptions import MCPError

from tender.cli import main
from tender.server.app import build_server
from tests.fixture_data import api_rows
from tests.server_support import REQUIREMENT, error_text, ok, settings  # noqa: F401 (fixture)
from tests.test_catalogue_publication import copy_slowly, knows, publish, served, until_served

SHORT = 600  # an error that quotes its input's start, and says how to fix the call
MEGABYTE = "x" * 1_000_000


async def test_a_cp_over_the_served_catalogue_fails_no_call_and_answers_from_the_previous_one(tmp_path):
    settings = served(tmp_path)
    publish(tmp_path, tmp_path / "new.db", api_rows()[12:])  # API 0 is gone from the new one
    async with Client(build_server(settings)) as client:
        copying = threading.Thread(
            target=copy_slowly,
            args=(tmp_path / "new.db", settings.catalog_path),
            kwargs={"into": settings.catalog_path},  # cp: the served file itself rewritten, 8 pieces 0.3 s apart
        )
        copying.start()
        failed, calls, old_answers = [], 0, 0
        while copying.is_alive():
            for tool, arguments in (
                ("recommend_apis", {"requirement": REQUIREMENT}),
                ("search_apis", {"query": "maps"}),
                ("list_categories", {}),
            ):
                result = await client.call_tool(tool, arguments)
                calls += 1
                if result.is_error:
                    failed.append(f"{tool}: {error_text(result)[:200]}")
            old_answers += await knows(client, 0)
        copying.join()
        await until_served(client, api_gone=0)  # and once whole, the new one is served
    assert calls >= 6 and failed == []  # was 2 of 6 failed (recommend_apis read a half-written file)
    assert old_answers > 0  # meanwhile, the previous catalogue answered


async def test_a_search_echoes_its_categories_once_and_refuses_a_flood_of_them(settings):  # noqa: F811
    async with Client(build_server(settings)) as client:
        categories = (ok(await client.call_tool("list_categories", {})))["categories"]
        name = categories[0]["name"]
        repeated = ok(await client.call_tool("search_apis", {"query": "maps", "categories": [name] * 50}))
        flood = await client.call_tool("search_apis", {"query": "maps", "categories": [name] * 100_000})
    assert repeated["categories"] == [name]  # said once, not 50 times
    error = error_text(flood)
    assert len(error) < SHORT and "100,000 categories were given; search in at most 100" in error  # was a 2 MB echo


def test_runs_delete_quotes_only_the_start_of_an_id_it_cannot_find(settings, tmp_path):  # noqa: F811
    env = {"TENDER_CATALOG": str(settings.catalog_path), "TENDER_RUNS": str(tmp_path / "runs.db")}
    result = CliRunner().invoke(main, ["runs", "delete", "r" * 100_000], env=env)
    assert result.exit_code == 2
    assert len(result.stderr) < SHORT and "(100,000 characters)" in result.stderr  # was 100,233 characters


async def test_a_transcript_page_and_the_prompts_arguments_are_never_echoed_whole(settings):  # noqa: F811
    async with Client(build_server(settings)) as client:
        plan = ok(await client.call_tool("recommend_apis", {"requirement": REQUIREMENT}))
        with pytest.raises(MCPError) as page:
            await client.read_resource(f"runs://{plan['run_id']}/transcript/{'x' * 1_000}")
        with pytest.raises(MCPError) as uri:  # past what the SDK matches against a template: an unknown resource
            await client.read_resource(f"runs://{plan['run_id']}/transcript/{'x' * 100_000}")
        for argument in ("requirement", "category", "needs"):
            given = {"requirement": "bike shops", argument: MEGABYTE}
            with pytest.raises(MCPError) as prompt:
                await client.get_prompt("compose_service", given)
            assert len(str(prompt.value)) < SHORT and "is 1,000,000 characters long" in str(prompt.value)
    assert len(str(page.value)) < SHORT and "is not a page number" in str(page.value)
    assert len(str(uri.value)) < SHORT and "Unknown resource" in str(uri.value)  # was the URI twice, 200 KB


@pytest.mark.parametrize(
    "need",
    ["\x1b[2J\x07", "\x00\x01\x7f\u200b\u202e", "\x1b]0;a window title\x07", "\x1b[31m---\x1b[0m"],
    ids=["clear screen and bell", "C0, DEL, zero width, bidi", "OSC retitle", "coloured dashes"],
)
async def test_a_need_of_control_characters_only_is_refused_saying_so(settings, need):  # noqa: F811
    """Refused as a list of empty needs is, and named even beside a need that has words (a blank need beside others
    is left out, as before: nothing was given there)."""
    async with Client(build_server(settings)) as client:
        alone = await client.call_tool("recommend_apis", {"requirement": REQUIREMENT, "needs": [need]})
        beside = await client.call_tool("recommend_apis", {"requirement": REQUIREMENT, "needs": [need, "a map"]})
    for result in (alone, beside):
        error = error_text(result)
        assert "needs: a need has no words" in error and "give each need as a short phrase" in error, error
        assert len(error) < SHORT and "\x1b" not in error and "\x07" not in error  # written out, never acting


def test_the_cli_refuses_a_need_of_control_characters_only(settings, tmp_path):  # noqa: F811
    env = {
        "TENDER_CATALOG": str(settings.catalog_path),
        "TENDER_RUNS": str(tmp_path / "runs.db"),
        "TENDER_EMBEDDING_MODEL": "hashing",
    }
    result = CliRunner().invoke(main, ["recommend", REQUIREMENT, "--need", "\x1b[2J\x07"], env=env)
    assert result.exit_code == 2 and "has no words" in result.stderr and "\x1b" not in result.stderr
