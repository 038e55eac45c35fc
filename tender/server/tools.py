"""The tools. Each signature is the tool's input schema and its return type the output schema; the
docstrings are what a calling assistant reads. TenderError becomes ToolError at this edge, so the
caller sees the message that says how to fix the call."""

import inspect
import json
import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Annotated, Literal, TypeVar

import anyio
import anyio.from_thread
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from tender.agents.context import RunContext
from tender.agents.form import Form
from tender.agents.plan import Plan, Run
from tender.agents.protocols import PROTOCOLS
from tender.agents.request import Organisation, Request
from tender.catalog import ApiNotFound, Catalog, TenderError
from tender.catalog.servers import routes_of
from tender.safety import redact

from .context import AppContext
from .sampling import needs_from_client
from .workers import on_worker, recommend_work
from tender.answers.brief import recommendation
from tender.answers.budget import lean
from tender.answers.budget import fitting
from tender.answers.explain import explain
from tender.answers.lookup import MAX_QUERY_CHARS, check_query, find_apis, short
from tender.answers.provenance import UNRECORDED
from tender.answers.runs import UnknownRun, keep
from tender.answers.schemas import (
    MAX_DESCRIPTION_CHARS,
    ApiBrief,
    ApiDetails,
    CategoryInfo,
    CategoryList,
    Comparison,
    CoUsedApi,
    Detail,
    Explanation,
    MashupBrief,
    ProtocolRun,
    Recommendation,
    SearchResults,
)

log = logging.getLogger("tender.server")
T = TypeVar("T")

READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
# Each call stores a new run (with a new run_id) in the runs database: it adds, never changes or removes.
STORES_A_RUN = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)
Backend = Literal["offline", "llm"]
Needs = Annotated[
    list[str] | None,
    Field(
        max_length=12,
        description=(
            "The functions needed, a short phrase each, in order, e.g. ['find nearby restaurants', 'show them on a "
            "map']; at most 12. Each becomes one step of the plan."
        ),
    ),
]
Kind = Annotated[
    Form | None,
    Field(
        description=(
            "'mcp_server': abilities for you (servers to install); 'web_api': an app's APIs; 'any'. Omit: read "
            "from the request."
        )
    ),
]
Requirement = Annotated[
    str,
    Field(
        description=(
            "The app or service to build, in plain words, e.g. 'nearby restaurants on a map with their reviews' (up "
            "to 20,000 characters)."
        )
    ),
]


def app_of(ctx: Context) -> AppContext:
    return ctx.request_context.lifespan_context  # type: ignore[return-value]  # the SDK types it as a dict


@contextmanager
def fixable() -> Iterator[None]:
    """A TenderError is the caller's to fix: hand its message back as a tool error."""
    try:
        yield
    except TenderError as error:
        raise ToolError(redact(str(error))) from error


async def in_worker(
    ctx: Context, work: Callable[[RunContext], T], limiter: anyio.CapacityLimiter, deadline_s: float | None = None
) -> T:
    """Run blocking agent work on a worker thread (workers.on_worker), its progress reaching the client as progress
    notifications."""
    return await on_worker(work, limiter, deadline_s, _progress_to(ctx))


PROGRESS_TOTAL = 100


def _progress_to(ctx: Context) -> Callable[[float, float, str], None]:
    """Progress as MCP requires it: one total for the whole request and a value that only goes up. The
    agents report per phase (2 of 3 functions announced, then 1 of 1 plan ready), so each report becomes
    its share of PROGRESS_TOTAL, and a report that would not advance is dropped."""
    sent = [-1.0]
    lock = threading.Lock()

    def report(done: float, total: float, message: str) -> None:
        share = min(1.0, max(0.0, done / total if total else 1.0))
        value = round(share * PROGRESS_TOTAL, 1)
        with lock:
            if value <= sent[0]:
                return
            sent[0] = value
        try:
            anyio.from_thread.run(ctx.report_progress, value, PROGRESS_TOTAL, message)
        except Exception:  # progress is best effort: a client gone away must not fail the run
            log.debug("progress notification not sent", exc_info=True)

    return report


TITLES = {
    "recommend_apis": "Recommend servers or APIs",
    "explain_bids": "Explain a recommendation's bidding",
    "compare_protocols": "Compare negotiation protocols",
    "search_apis": "Search APIs by meaning",
    "get_api": "One API's card",
    "list_categories": "List API categories",
}


def register(server) -> None:
    for tool in (recommend_apis, explain_bids, compare_protocols, search_apis, get_api, list_categories):
        # compare_protocols names the registered protocols where its docstring says {protocols}; the docstring's
        # indentation is the source's, not the assistant's to read
        description = inspect.cleandoc(tool.__doc__ or "").replace("{protocols}", ", ".join(PROTOCOLS))
        annotations = STORES_A_RUN if tool in (recommend_apis, compare_protocols) else READ_ONLY
        server.add_tool(tool, title=TITLES[tool.__name__], description=description, annotations=annotations)


def result_of(model) -> CallToolResult:
    """A structured result without the fields left empty, and, as the MCP specification asks, its JSON
    as the text block, unindented: the two copies are all a client passes on, and most clients pass both."""
    structured = lean(model)
    text = json.dumps(structured, ensure_ascii=False, separators=(",", ":"))
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=structured)


async def recommend_apis(
    ctx: Context,
    requirement: Requirement,
    needs: Needs = None,
    kind: Kind = None,
    max_apis: Annotated[int | None, Field(ge=1, le=50, description="At most this many items in the plan.")] = None,
    required_categories: Annotated[
        list[str],
        Field(
            description=(
                "Categories the plan must include an item of, e.g. ['Mapping']. Names as list_categories shows them."
            )
        ),
    ] = [],
    excluded_categories: Annotated[list[str], Field(description="Categories whose items are never used.")] = [],
    excluded_apis: Annotated[list[int | str], Field(description="Items (ids or exact names) never to use.")] = [],
    include_deprecated: Annotated[
        bool, Field(description="Also award items marked gone, and server lists, templates and demos.")
    ] = False,
    detail: Annotated[
        Detail,
        Field(
            description=(
                "'summary' (default): per function, its items a line each. 'full' adds the stage sets, the cost and "
                "the rationales."
            )
        ),
    ] = "summary",
) -> Annotated[CallToolResult, Recommendation]:
    """Recommend the MCP servers or web APIs a request needs, from this server's catalogue, by a contract-net
    negotiation among agents.

    Pass the requirement, the needs when you can state them, and kind: 'mcp_server' for abilities for you
    (servers to install), 'web_api' for an app. Each function gets its item(s) with the probability it serves and
    why, or is unserved; servers come with a client configuration to paste. explain_bids(run_id) tells why."""
    app = app_of(ctx)
    settings = app.settings
    with fixable():
        app.require_catalog()
        request = Request.create(
            requirement,
            needs=needs,
            kind=kind,
            constraints={
                "max_apis": max_apis,
                "required_categories": required_categories,
                "excluded_categories": excluded_categories,
                "excluded_apis": excluded_apis,
                "include_deprecated": include_deprecated,
            },
        )
        run, catalog = await _recommend(
            ctx, app, request, settings.manager_backend, settings.contractor_backend, settings.deadline_s
        )
    return result_of(recommendation(run, catalog, detail))


async def _recommend(
    ctx: Context, app: AppContext, request: Request, manager_backend: str, contractor_backend: str, deadline_s
) -> tuple[Run, Catalog]:
    """One recommendation on a worker, kept in the runs store (a plan that cannot be stored is returned with a
    note); with the `client` manager, the needs asked of the client's model first."""
    request, said = await _needs_by_client(ctx, app, request, manager_backend)
    if manager_backend == "client":
        manager_backend = "offline"  # the client's model states the needs; the other steps are Tender's own
    tender = app.tender(manager_backend, contractor_backend)
    work = recommend_work(app, tender, request, said)
    run = await in_worker(ctx, work, app.limiter(manager_backend, contractor_backend), deadline_s)
    return run, tender.catalog


async def _needs_by_client(ctx: Context, app: AppContext, request: Request, backend: str) -> tuple[Request, str]:
    """With manager_backend='client' and no needs given, the needs the client's model states through MCP sampling
    (sampling.py); the request unchanged and a note where it cannot or may not."""
    if backend != "client" or request.needs:
        return request, ""
    if not app.settings.sampling:
        return request, (
            "This server does not ask clients' models (TENDER_SAMPLING=off); Tender's embedded reader decomposed the "
            "requirement."
        )
    needs, said = await needs_from_client(ctx.session, request.requirement, ctx.request_id)
    return (request.model_copy(update={"needs": needs, "needs_note": said}) if needs else request), said


def explain_bids(
    ctx: Context,
    run_id: Annotated[str, Field(description="The run_id that recommend_apis or compare_protocols returned.")],
    function: Annotated[
        str | None,
        Field(
            description=(
                "Limit the explanation to one plan step: its id ('f1', 'f2', ...) or its text. Omit for the whole run."
            )
        ),
    ] = None,
    detail: Annotated[
        Detail,
        Field(
            description=(
                "'summary' (default): per function, the winning and best losing bids and a diagram of the winners. "
                "'full': every call for proposals and its answers, stage sets and cost, in pages."
            )
        ),
    ] = "summary",
    page: Annotated[
        int,
        Field(ge=1, description="A long explanation comes in pages: pass the `next_page` a result names."),
    ] = 1,
) -> Annotated[CallToolResult, Explanation]:
    """Explain how a recommendation was reached: the contract-net negotiation behind a plan.

    By default a summary per function: whom the call reached and why, the winning and best losing bids
    with their reasons, any backtracking, and a Mermaid `diagram`. Drill down with `function` and
    detail='full' (in pages); every message is at `transcript_uri`. A run_id is the key to its stored
    run, from any client; whoever holds it can read the run."""
    with fixable():
        return result_of(explanation_of(app_of(ctx), run_id, function, detail, page))


def explanation_of(app: AppContext, run_id: str, function: str | None, detail: Detail, page: int) -> Explanation:
    """A stored run explained with the catalogue it was made on (blocking: it reads the runs store); UnknownRun, or
    another TenderError, saying what to fix."""
    try:
        entry = app.runs.entry(run_id)
    except UnknownRun as error:
        if app.missing:  # no catalogue, so no run could have been made: say how to get one
            raise TenderError(f"{error} {app.missing}") from None
        raise
    catalog = app.catalogue_of(entry)  # the run's own: its ids mean nothing in another
    told = explain(entry.run, function, _contractor_names(catalog, entry.run), detail, catalog, page)
    if catalog is None:
        told.notes = [*told.notes, UNRECORDED]
    return told


def _contractor_names(catalog: Catalog | None, run: Run) -> dict[str, str]:
    """API names for the api:<id> contractors of a run, from the catalogue when one is open."""
    names = {}
    for contractor in {c.contractor for r in run.transcript.routing for c in r.contacted}:
        kind, _, key = contractor.partition(":")
        if catalog is not None and kind == "api" and key.isdigit():
            try:
                names[contractor] = catalog.get_api(int(key)).name
            except ApiNotFound:  # a run made on another catalogue
                pass
    return names


async def compare_protocols(
    ctx: Context,
    requirement: Requirement,
    needs: Annotated[list[str] | None, Field(max_length=12, description="As recommend_apis' needs.")] = None,
    kind: Kind = None,
    organisation: Annotated[
        Organisation,
        Field(description="One contractor per 'api' (default), 'category' or 'provider'."),
    ] = "api",
    max_apis: Annotated[
        int | None, Field(ge=1, le=50, description="At most this many items per plan (1 to 50); omit for no limit.")
    ] = None,
    manager_backend: Annotated[Backend, Field(description="The manager's reasoner.")] = "offline",
    contractor_backend: Annotated[Backend, Field(description="The contractors' reasoner.")] = "offline",
    deadline_s: Annotated[
        float | None, Field(gt=0, le=3600, description="With 'llm': seconds for each run's LLM steps.")
    ] = None,
) -> Comparison:
    """Run the same requirement under every protocol ({protocols}) side by side: each one's items,
    latency, messages, contractors contacted and LLM cost, with a run_id each. For one recommendation use
    recommend_apis."""
    app = app_of(ctx)
    with fixable():
        app.require_catalog()
        requests = [
            Request.create(
                requirement,
                protocol=p,
                organisation=organisation,
                needs=needs,
                kind=kind,
                constraints={"max_apis": max_apis},
            )
            for p in PROTOCOLS
        ]
        tender = app.tender(manager_backend, contractor_backend)

        def work(context: RunContext) -> list[Run]:
            runs = []
            for index, request in enumerate(requests):
                # A context per protocol, so each plan carries its own cost and latency; one cancel for all.
                progress = _share_of(context, index, len(requests), request.protocol)
                run = tender.recommend(
                    request,
                    RunContext(
                        cancel=context.cancel,
                        progress=progress,
                        deadline_s=context.deadline_s,
                        deadline=context.deadline,
                    ),
                )
                keep(app.runs, run, tender.catalog)
                runs.append(run)
            return runs

        runs = await in_worker(
            ctx,
            work,
            app.limiter(manager_backend, contractor_backend),
            deadline_s if deadline_s is not None else app.settings.deadline_s,
        )
    common = set.intersection(*({a.name for a in run.plan.apis} for run in runs))
    return Comparison(
        requirement=runs[0].plan.requirement,
        organisation=organisation,
        runs=[_protocol_run(run.plan) for run in runs],
        common_apis=[a.name for a in runs[0].plan.apis if a.name in common],
    )


def _share_of(context: RunContext, index: int, count: int, label: str) -> Callable[[float, float, str], None]:
    """Progress of the index-th of `count` runs, reported as a share of the whole."""

    def report(done: float, total: float, message: str) -> None:
        context.report(index + (done / total if total else 1), count, f"{label}: {message}")

    return report


def _protocol_run(plan: Plan) -> ProtocolRun:
    return ProtocolRun(
        protocol=plan.protocol,
        run_id=plan.run_id,
        apis=[ApiBrief(api_id=a.api_id, name=a.name, score=a.score) for a in plan.apis],
        steps=len(plan.steps),
        latency_ms=plan.latency_ms,
        messages=plan.cost.messages,
        contractors_contacted=plan.cost.contractors_contacted,
        llm_calls=plan.cost.llm_calls,
        tokens=plan.cost.tokens.input + plan.cost.tokens.output,
        cost=plan.cost,
    )


def search_apis(
    ctx: Context,
    query: Annotated[
        str,
        Field(
            description=f"What the API should do, e.g. 'geocode street addresses'. Up to {MAX_QUERY_CHARS:,} characters."
        ),
    ],
    categories: Annotated[list[str], Field(description="Only APIs in any of these categories; empty: all.")] = [],
    limit: Annotated[int, Field(ge=1, le=100, description="How many results (1 to 100).")] = 10,
    offset: Annotated[int, Field(ge=0, description="Skip this many results: a `next_offset` given before.")] = 0,
) -> Annotated[CallToolResult, SearchResults]:
    """Find catalogue APIs by meaning (semantic search over their descriptions), best match first.

    A direct lookup, no negotiation: use it to browse or check what exists. To choose the APIs for a whole
    app, use recommend_apis."""
    app = app_of(ctx)
    with fixable():
        found = find_apis(app.require_catalog(), query, categories, offset + limit)
    hits = found.results[offset:]
    kept = fitting(hits, lambda shown: found.model_copy(update=dict(results=list(shown), next_offset=offset + limit)))
    more = offset + kept if kept < len(hits) else None
    return result_of(found.model_copy(update=dict(results=hits[:kept], next_offset=more)))


def get_api(
    ctx: Context,
    api: Annotated[int | str, Field(description="The API's id (e.g. 370) or its exact name (e.g. 'Google Maps').")],
) -> Annotated[CallToolResult, ApiDetails]:
    """One API's card: categories, description, URL, the mashups that used it and the APIs most used with it; for
    an MCP registry's server, how to install it."""
    app = app_of(ctx)
    with fixable():
        return result_of(api_details(app.require_catalog(), api))


def api_details(catalog: Catalog, api_ref: int | str) -> ApiDetails:
    api = catalog.get_api(api_ref)
    history = catalog.usage_history(api.id)
    cut = len(api.description) > MAX_DESCRIPTION_CHARS
    return ApiDetails(
        api_id=api.id,
        name=api.name,
        url=api.url,
        categories=api.categories,
        description=api.description[: MAX_DESCRIPTION_CHARS - 1] + "…" if cut else api.description,
        description_chars=len(api.description) if cut else None,
        usage_count=len(history),
        co_used=[
            CoUsedApi(api_id=c.api_id, name=catalog.get_api(c.api_id).name, mashups=c.count, weight=round(c.weight, 4))
            for c in catalog.co_usage(api.id, limit=10)
        ],
        recent_mashups=[
            MashupBrief(mashup_id=m.id, name=m.name, description=short(m.description, 200))
            for m in reversed(history[-5:])
        ],
        install=routes[0].model_dump(mode="json") if (routes := routes_of(api.details)) else None,
    )


def list_categories(
    ctx: Context,
    query: Annotated[
        str | None,
        Field(
            description=(
                "Rank categories by similarity to this text, e.g. 'maps and locations' (up to "
                f"{MAX_QUERY_CHARS:,} characters). Omit to list the largest."
            )
        ),
    ] = None,
    limit: Annotated[int, Field(ge=1, le=1000, description="How many categories (1 to 1000).")] = 50,
    offset: Annotated[int, Field(ge=0, description="Skip this many categories: a `next_offset` given before.")] = 0,
) -> Annotated[CallToolResult, CategoryList]:
    """The catalogue's API categories with their API counts. With a query, the categories closest to it
    in meaning come first. Use the names as they appear here in recommend_apis' required_categories and
    excluded_categories, and in search_apis."""
    app = app_of(ctx)
    with fixable():
        catalog = app.require_catalog()
        counts = {c.name: c.api_count for c in catalog.categories()}
        if query and query.strip():
            hits = catalog.search(check_query(query), kind="category", k=offset + limit)[offset:]
            shown = [
                CategoryInfo(name=str(h.id), api_count=counts.get(str(h.id), 0), similarity=round(h.score, 4))
                for h in hits
            ]
        else:
            largest = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[offset : offset + limit]
            shown = [CategoryInfo(name=name, api_count=n) for name, n in largest]
    listed = CategoryList(query=query, total=len(counts), categories=shown)
    kept = fitting(
        shown, lambda part: listed.model_copy(update=dict(categories=list(part), next_offset=offset + limit))
    )
    more = offset + kept if kept < len(shown) else None
    return result_of(listed.model_copy(update=dict(categories=shown[:kept], next_offset=more)))
