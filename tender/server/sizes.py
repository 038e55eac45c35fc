"""What an assistant's context receives from Tender, in bytes, and how long each call takes: tools/list, and each
tool's and resource's result for the README's requirements, every page of a paged one included (the calls made
in-memory, warm, so the time is the server's own). The README's sizes and timings come from here:

    python -m tender.server.sizes                 # the catalogue at TENDER_CATALOG (default: TENDER_HOME's)
    python -m tender.server.sizes --db openapi.db --json sizes.json

A tool result counts its text block and its structured copy together: a client passes both on to its model."""

import argparse
import asyncio
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

REQUIREMENTS = [
    "A travel site with hotels on a map, the weather there, photos of the place, and sharing on Twitter",
    "A run tracker: GPS routes, music while running, posting runs to Facebook, and an SMS reminder",
    "A site that shows nearby restaurants on a map with their reviews",
]
TOOLS_LIST_BUDGET = 20_000  # bytes: the whole tools/list
RESULT_BUDGET = 32_000  # bytes: any one result, text and structured copy together


def _json_size(value) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())


def result_size(result) -> int:
    """Bytes a client receives from one tool call: its text blocks and its structured copy."""
    text = sum(len(block.text.encode()) for block in result.content if getattr(block, "text", None) is not None)
    return text + (_json_size(result.structured_content) if result.structured_content is not None else 0)


def resource_size(result) -> int:
    return sum(len(getattr(c, "text", "").encode()) for c in result.contents)


def _next(resource) -> str | None:
    """The next page's address a runs:// resource names."""
    return json.loads(getattr(resource.contents[0], "text", "{}")).get("next")


async def _pages(call, first: dict) -> list:
    """Every page of a paged result: the first, then each `next_page` it names."""
    results = [await call(first)]
    while (results[-1].structured_content or {}).get("next_page"):
        results.append(await call(first | {"page": results[-1].structured_content["next_page"]}))
    return results


async def measure(settings, requirements: list[str] = REQUIREMENTS) -> dict:
    from mcp import Client

    from tender.server.app import build_server

    report: dict = {"catalog": str(settings.catalog_path), "measured_at": time.strftime("%Y-%m-%d")}
    async with Client(build_server(settings)) as client:
        tools = (await client.list_tools()).tools
        listed = [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in tools]
        report["tools_list"] = _json_size(listed)
        report["tools"] = {
            t["name"]: {"whole": _json_size(t), "output_schema": _json_size(t.get("outputSchema"))} for t in listed
        }
        rows = []
        await client.call_tool("recommend_apis", {"requirement": requirements[0]})  # warm: models, routers
        for requirement in requirements:
            started = time.perf_counter()
            summary = await client.call_tool("recommend_apis", {"requirement": requirement})
            recommend_ms = (time.perf_counter() - started) * 1000
            run_id = summary.structured_content["run_id"]
            full = await client.call_tool("recommend_apis", {"requirement": requirement, "detail": "full"})
            started = time.perf_counter()
            told = await client.call_tool("explain_bids", {"run_id": run_id})
            explain_ms = (time.perf_counter() - started) * 1000
            started = time.perf_counter()
            pages = await _pages(
                lambda args: client.call_tool("explain_bids", args), {"run_id": run_id, "detail": "full"}
            )
            full_ms = (time.perf_counter() - started) * 1000
            transcript = [await client.read_resource(f"runs://{run_id}")]
            uri = _next(transcript[-1])
            while uri:
                transcript.append(await client.read_resource(uri))
                uri = _next(transcript[-1])
            compared = await client.call_tool("compare_protocols", {"requirement": requirement})
            rows.append(
                {
                    "requirement": requirement,
                    "functions": len(summary.structured_content["functions"]),
                    "recommend_apis": result_size(summary),
                    "recommend_apis_full": result_size(full),
                    "explain_bids": result_size(told),
                    "explain_bids_full_pages": [result_size(p) for p in pages],
                    "runs_resource_pages": [resource_size(r) for r in transcript],
                    "compare_protocols": result_size(compared),
                    "recommend_apis_ms": round(recommend_ms, 1),
                    "explain_bids_ms": round(explain_ms, 1),
                    "explain_bids_full_all_pages_ms": round(full_ms, 1),
                }
            )
        report["requirements"] = rows
        search = await client.call_tool("search_apis", {"query": "maps", "limit": 100})
        categories = await client.call_tool("list_categories", {"limit": 1000})
        report["search_apis_100"] = result_size(search)
        report["list_categories_1000"] = result_size(categories)
    every = [
        n
        for row in report["requirements"]
        for n in (
            row["recommend_apis"],
            row["recommend_apis_full"],
            row["explain_bids"],
            row["compare_protocols"],
            *row["explain_bids_full_pages"],
            *row["runs_resource_pages"],
        )
    ] + [report["search_apis_100"], report["list_categories_1000"]]
    report["largest_result"] = max(every)
    report["within_budget"] = report["tools_list"] <= TOOLS_LIST_BUDGET and report["largest_result"] <= RESULT_BUDGET
    return report


def kb(n: int) -> str:
    return f"{n / 1000:.1f} KB"


def markdown(report: dict) -> str:
    lines = [
        f"tools/list: {kb(report['tools_list'])} (budget {kb(TOOLS_LIST_BUDGET)}); "
        + ", ".join(f"{name} {kb(t['whole'])}" for name, t in report["tools"].items()),
        "",
        "| requirement | functions | recommend_apis | explain_bids | explain_bids full: largest page (pages) "
        "| runs:// largest page (pages) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for row in report["requirements"]:
        full = row["explain_bids_full_pages"]
        pages = row["runs_resource_pages"]
        lines.append(
            f"| {row['requirement']} | {row['functions']} | {kb(row['recommend_apis'])}, {row['recommend_apis_ms']:.0f} ms "
            f"| {kb(row['explain_bids'])}, {row['explain_bids_ms']:.0f} ms "
            f"| {kb(max(full))} ({len(full)}; all in {row['explain_bids_full_all_pages_ms']:.0f} ms) "
            f"| {kb(max(pages))} ({len(pages)}) |"
        )
    lines += [
        "",
        f"search_apis (limit 100): {kb(report['search_apis_100'])}; list_categories (limit 1000): "
        f"{kb(report['list_categories_1000'])}; largest result: {kb(report['largest_result'])} "
        f"(budget {kb(RESULT_BUDGET)}). Measured {report['measured_at']} on {report['catalog']}.",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    from tender.settings import Settings

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", type=Path, help="Catalogue (default: TENDER_CATALOG, else TENDER_HOME's).")
    parser.add_argument(
        "--runs", type=Path, help="Runs database to write the measured runs to (default: a temporary one)."
    )
    parser.add_argument("--json", dest="json_path", type=Path, help="Write the measurements here too.")
    args = parser.parse_args(argv)
    settings = Settings.from_env()
    if args.db:
        settings = replace(settings, catalog_path=args.db)
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        settings = replace(settings, runs_path=args.runs or Path(scratch) / "runs.db")
        report = asyncio.run(measure(settings))
    print(markdown(report))
    if args.json_path:
        args.json_path.write_text(json.dumps(report, indent=2))
    return 0 if report["within_budget"] else 1


if __name__ == "__main__":
    sys.exit(main())
