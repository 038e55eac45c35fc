"""Answers that fit an assistant's context (issue 37, item 4): tools/list within 20 KB, every result within 32 KB
(text block and structured copy together), with pages or a narrower call for the rest."""

import json
from dataclasses import replace

import pytest
from mcp import Client

from tender.answers.budget import RESULT_BYTES, result_bytes
from tender.answers.explain import explain
from tender.answers.record import record, transcript_page
from tender.answers.runs import RunStore
from tender.catalog import build_catalog
from tender.server import sizes
from tender.server.app import build_server
from tests.conftest import write_jsonl
from tests.server_support import ok, settings  # noqa: F401 (fixture)

FOUR_FUNCTIONS = (
    "Weather forecasts on a map. Send an SMS alert when a storm comes. Show restaurant reviews. "
    "Share photos with friends."
)


def size(result) -> int:
    return sizes.result_size(result)


async def test_tools_list_fits_in_20_kb(settings):
    async with Client(build_server(settings)) as client:
        tools = [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in (await client.list_tools()).tools]

    assert len(json.dumps(tools, separators=(",", ":")).encode()) <= 20_000
    for tool in tools:  # titles pydantic derives from names ("Max Apis") say nothing and cost a twentieth
        assert "title" not in tool["inputSchema"] and "title" not in tool["outputSchema"], tool["name"]
        assert all("title" not in p for p in tool["inputSchema"]["properties"].values()), tool["name"]


async def test_a_full_explanation_comes_in_pages_that_each_fit(settings):
    async with Client(build_server(settings)) as client:
        plan = ok(await client.call_tool("recommend_apis", {"requirement": FOUR_FUNCTIONS, "detail": "full"}))
        pages = [await client.call_tool("explain_bids", {"run_id": plan["run_id"], "detail": "full"})]
        while ok(pages[-1]).get("next_page"):
            pages.append(
                await client.call_tool(
                    "explain_bids", {"run_id": plan["run_id"], "detail": "full", "page": ok(pages[-1])["next_page"]}
                )
            )

    assert all(size(page) <= RESULT_BYTES for page in pages)
    calls = [call for page in pages for call in ok(page)["calls"]]
    assert len(calls) == plan["cost"]["calls_for_proposals"]


def test_pages_hold_every_call_once_and_the_run_level_parts_on_the_first(settings, tmp_path):
    """The budget made small, so that a fixture run needs several pages."""
    from tender.agents.service import Tender
    from tender.agents.request import Request
    from tender.catalog import Catalog, HashingEmbedder

    catalog = Catalog(settings.catalog_path, embedder=HashingEmbedder(256))
    run = Tender(catalog).recommend(Request.create(FOUR_FUNCTIONS))
    whole = explain(run, detail="full", budget=None)
    first = explain(run, detail="full", budget=12_000)
    pages = [first] + [explain(run, detail="full", budget=12_000, page=n) for n in range(2, first.pages + 1)]

    assert first.pages > 1 and [p.next_page for p in pages] == [*range(2, first.pages + 1), None]
    assert [c.task_id for p in pages for c in p.calls] == [c.task_id for c in whole.calls]
    assert first.steps and first.stages and all(p.steps is None for p in pages[1:])
    assert all(result_bytes(p) <= 12_000 for p in pages)
    with pytest.raises(Exception, match=f"ask for page 1 to {first.pages}"):
        explain(run, detail="full", budget=12_000, page=first.pages + 1)


async def test_recommend_apis_in_full_leaves_the_transcript_to_runs_and_fits(settings):
    async with Client(build_server(settings)) as client:
        result = await client.call_tool("recommend_apis", {"requirement": FOUR_FUNCTIONS, "detail": "full"})

    assert size(result) <= RESULT_BYTES and ok(result)["transcript_uri"].startswith("runs://")


def test_the_runs_transcript_comes_in_pages_that_hold_every_message(settings, tmp_path):
    from tender.agents.request import Request
    from tender.agents.service import Tender
    from tender.catalog import Catalog, HashingEmbedder

    run = Tender(Catalog(settings.catalog_path, embedder=HashingEmbedder(256))).recommend(
        Request.create(FOUR_FUNCTIONS)
    )
    store = RunStore(tmp_path / "runs.db")
    store.save(run)
    entry = store.entry(run.plan.run_id)

    root = record(entry, None, budget=6_000)
    pages = [transcript_page(entry, n, budget=6_000) for n in range(1, root["transcript"]["pages"] + 1)]

    assert root["transcript"]["pages"] > 1 and root["next"] == f"runs://{run.plan.run_id}/transcript/1"
    assert all(len(json.dumps(p, separators=(",", ":")).encode()) <= 6_000 for p in pages)
    assert [m for p in pages for m in p.get("messages", [])] == json.loads(run.transcript.model_dump_json())["messages"]
    assert len([r for p in pages for r in p.get("routing", [])]) == len(run.transcript.routing)
    assert [p["next"] for p in pages][-1] is None


@pytest.fixture
def many_apis(tmp_path, embedder):
    """150 APIs with 300-character descriptions: more than a search of 100 can return in 32 KB."""
    rows = [
        {
            "id": i,
            "name": f"Maps API {i}",
            "categories": ["Mapping", f"Group {i % 7}"],
            "description": f"Maps API {i} draws interactive maps with markers and routes. " + "Tiles and layers. " * 14,
        }
        for i in range(150)
    ]
    path = tmp_path / "many.db"
    build_catalog(write_jsonl(tmp_path / "apis.jsonl", rows), None, path, embedder)
    return path


async def test_search_apis_gives_what_fits_and_the_offset_of_the_rest(settings, many_apis):
    async with Client(build_server(replace(settings, catalog_path=many_apis))) as client:
        first = await client.call_tool("search_apis", {"query": "maps with markers", "limit": 100})
        offset = ok(first)["next_offset"]
        rest = await client.call_tool("search_apis", {"query": "maps with markers", "limit": 100, "offset": offset})

    assert size(first) <= RESULT_BYTES and size(rest) <= RESULT_BYTES
    assert offset == len(ok(first)["results"]) < 100
    seen = [h["api_id"] for h in ok(first)["results"] + ok(rest)["results"]]
    assert len(seen) == len(set(seen))


async def test_list_categories_gives_what_fits_and_the_offset_of_the_rest(settings, tmp_path, embedder):
    rows = [
        {"id": i, "name": f"API {i}", "categories": [f"A rather long category name number {i}"]} for i in range(900)
    ]
    path = tmp_path / "wide.db"
    build_catalog(write_jsonl(tmp_path / "apis.jsonl", rows), None, path, embedder)
    async with Client(build_server(replace(settings, catalog_path=path))) as client:
        pages = [await client.call_tool("list_categories", {"limit": 1000})]
        while ok(pages[-1]).get("next_offset"):
            offset = ok(pages[-1])["next_offset"]
            pages.append(await client.call_tool("list_categories", {"limit": 1000, "offset": offset}))

    assert len(pages) > 1 and all(size(page) <= RESULT_BYTES for page in pages)
    names = [c["name"] for page in pages for c in ok(page)["categories"]]
    assert len(names) == len(set(names)) == ok(pages[0])["total"] == 900


def test_the_measuring_command_prints_the_readmes_table(catalog_path, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TENDER_EMBEDDING_MODEL", "hashing")
    monkeypatch.setenv("TENDER_HOME", str(tmp_path))

    code = sizes.main(["--db", str(catalog_path), "--json", str(tmp_path / "sizes.json")])

    printed = capsys.readouterr().out
    assert code == 0 and "tools/list:" in printed and "| requirement | functions |" in printed
    report = json.loads((tmp_path / "sizes.json").read_text())
    assert report["within_budget"] and len(report["requirements"]) == len(sizes.REQUIREMENTS)
