"""A stored run as the runs:// resources give it: the record (catalogue, plan, the transcript's size) at
runs://{run_id}, and the transcript in pages at runs://{run_id}/transcript/{page}, each within RESOURCE_BYTES.

A page holds whole calls for proposals where they fit: the routing of a call (whom it reached) comes just
before its messages. A four-function run's transcript was 52 KB in one read."""

from tender.agents.messages import transcript_adapter
from tender.errors import InputToFix

from .budget import RESOURCE_BYTES, STAGE_IDS, compact
from .runs import StoredRun

PAGE_OVERHEAD = 300  # the page's own keys: run_id, page, pages, next


class UnknownTranscriptPage(InputToFix):
    pass


def transcript_uri(run_id: str, page: int) -> str:
    return f"runs://{run_id}/transcript/{page}"


def record(entry: StoredRun, catalog_state: str | None, budget: int = RESOURCE_BYTES) -> dict:
    """runs://{run_id}: the catalogue the run was made on (and whether it still is what the run saw), the plan,
    and where the transcript's pages are."""
    run = entry.run
    pages = len(_pages(entry, budget))
    plan = run.plan.model_dump(mode="json")
    data = {
        "run_id": run.plan.run_id,
        "created_at": entry.created_at,
        "catalog": entry.catalog.model_dump() | {"state": catalog_state} if entry.catalog else None,
        "plan": plan,
        "transcript": {"messages": len(run.transcript.messages), "pages": pages},
        "next": transcript_uri(run.plan.run_id, 1),
    }
    if len(compact(data).encode()) > budget:  # a large catalogue's stage lists run to thousands of ids
        plan["stages"] = run.plan.stages.capped(STAGE_IDS).model_dump(mode="json")
        plan["notes"] = [*plan["notes"], f"Each stage lists its first {STAGE_IDS} ids here."]
    return data


def transcript_page(entry: StoredRun, page: int, budget: int = RESOURCE_BYTES) -> dict:
    """runs://{run_id}/transcript/{page}: part of the transcript (messages, routing, backtracking, notes, in the
    transcript's own shape), and the next page's address. UnknownTranscriptPage past the last page."""
    pages = _pages(entry, budget)
    run_id = entry.run.plan.run_id
    if not 1 <= page <= len(pages):
        raise UnknownTranscriptPage(f"Run {run_id}'s transcript has pages 1 to {len(pages)}.")
    part: dict = {"run_id": run_id, "page": page, "pages": len(pages)}
    for section, item in pages[page - 1]:
        part.setdefault(section, []).append(item)
    part["next"] = transcript_uri(run_id, page + 1) if page < len(pages) else None
    return part


def _pages(entry: StoredRun, budget: int) -> list[list[tuple[str, object]]]:
    """The transcript as (section, item) units, cut into pages by their compact JSON size."""
    transcript = transcript_adapter.dump_python(entry.run.transcript, mode="json")
    routing = {r["task_id"]: r for r in transcript["routing"]}
    units: list[tuple[str, object]] = []
    for message in transcript["messages"]:
        route = routing.pop(message.get("task_id"), None)
        if route is not None:
            units.append(("routing", _fitted(route, budget)))
        units.append(("messages", message))
    units += [("routing", _fitted(r, budget)) for r in routing.values()]
    units += [("backtracking", b) for b in transcript["backtracking"]]
    units += [("notes", n) for n in transcript["notes"]]
    pages: list[list[tuple[str, object]]] = [[]]
    weight = PAGE_OVERHEAD
    for unit in units:
        size = len(compact(unit[1]).encode()) + 1
        if pages[-1] and weight + size > budget:
            pages.append([])
            weight = PAGE_OVERHEAD
        pages[-1].append(unit)
        weight += size
    return pages


def _fitted(route: dict, budget: int) -> dict:
    """A routing entry whose contacted list alone is over a page (a broadcast to hundreds), cut to fit."""
    contacted = route["contacted"]
    while len(contacted) > 1 and len(compact(route | {"contacted": contacted}).encode()) > budget - PAGE_OVERHEAD:
        contacted = contacted[: len(contacted) // 2]
    if len(contacted) == len(route["contacted"]):
        return route
    return route | {"contacted": contacted, "contacted_left_out": len(route["contacted"]) - len(contacted)}
