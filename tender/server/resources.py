"""Resources (catalog://categories, catalog://apis/{api_id}, runs://{run_id}) and the compose_service prompt."""

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, Completion, PromptReference, ResourceTemplateReference
from pydantic import Field

from tender.agents.protocols import PROTOCOLS
from tender.agents.request import DEFAULT_PROTOCOL, MAX_NEED_CHARS, MAX_NEEDS, MAX_REQUIREMENT_CHARS
from tender.answers.lookup import MAX_QUERY_CHARS
from tender.safety import echo

from tender.catalog import ApiNotFound, TenderError

from .context import SharedApp
from tender.answers.provenance import state_of
from tender.answers.budget import compact
from tender.answers.record import UnknownTranscriptPage, record, transcript_page
from tender.answers.runs import UnknownRun
from .tools import api_details, app_of

JSON = "application/json"


@contextmanager
def readable() -> Iterator[None]:
    """Unknown ids become not-found errors, other TenderErrors resource errors, both with their message."""
    try:
        yield
    except (ApiNotFound, UnknownRun, UnknownTranscriptPage) as error:
        raise ResourceNotFoundError(str(error)) from error
    except TenderError as error:
        raise ResourceError(str(error)) from error


def register(server, shared: SharedApp) -> None:
    @server.resource(
        "catalog://categories",
        name="categories",
        title="API categories",
        mime_type=JSON,
        description="Every API category in the catalogue with its number of APIs, by name.",
    )
    def categories() -> str:
        with readable():
            catalog = shared.current().require_catalog()
            return json.dumps([c.model_dump() for c in catalog.categories()], indent=1)

    @server.resource(
        "catalog://apis/{api_id}",
        name="api",
        title="One API's card",
        mime_type=JSON,
        description="An API by id (or exact name): categories, description, usage count, co-used APIs.",
    )
    def api(api_id: str, ctx: Context) -> str:
        with readable():
            return api_details(app_of(ctx).require_catalog(), api_id).model_dump_json(indent=1)

    @server.resource(
        "runs://{run_id}",
        name="run",
        title="A stored run",
        mime_type=JSON,
        description="A recommendation run by run_id: the catalogue it was made on, its plan, and where its "
        "contract-net transcript's pages are (`next`).",
    )
    def run(run_id: str, ctx: Context) -> str:
        with readable():
            entry = app_of(ctx).runs.entry(run_id)
            state = state_of(entry.catalog)[0] if entry.catalog else None
            return compact(record(entry, state))

    @server.resource(
        "runs://{run_id}/transcript/{page}",
        name="run_transcript",
        title="A stored run's transcript, a page",
        mime_type=JSON,
        description="Every contract-net message of a run, with whom each call reached, in pages of at most "
        "32 KB; `next` names the following page.",
    )
    def transcript(run_id: str, page: str, ctx: Context) -> str:
        with readable():
            if not page.isdigit():
                raise UnknownTranscriptPage(f"{echo(page)} is not a page number; pages count from 1.")
            return compact(transcript_page(app_of(ctx).runs.entry(run_id), int(page)))

    @server.prompt(title="Compose a service from Web APIs")
    def compose_service(
        requirement: Annotated[
            str,
            Field(
                description=(
                    "The app to build, in plain words: what it does for its users, e.g. 'a map of bike shops with their "
                    "opening hours'."
                )
            ),
        ],
        protocol: Annotated[
            str, Field(description=(f"How the agents negotiate: {', '.join(PROTOCOLS)} (default {DEFAULT_PROTOCOL})."))
        ] = DEFAULT_PROTOCOL,
        category: Annotated[
            str,
            Field(
                description=(
                    "An API category the app must use, e.g. 'Mapping' (optional; completions list the catalogue's names)."
                )
            ),
        ] = "",
        needs: Annotated[
            str,
            Field(
                description=(
                    "The functions the app needs, one short phrase a line or separated by semicolons (optional: "
                    "the assistant states them otherwise)."
                )
            ),
        ] = "",
    ) -> str:
        """Guide the assistant through recommending the APIs for an app and explaining the choice."""
        name = protocol.strip() or DEFAULT_PROTOCOL
        if name not in PROTOCOLS:
            raise MCPError(INVALID_PARAMS, f"protocol {echo(protocol)} is not one of {', '.join(PROTOCOLS)}")
        for what, text, most in (
            ("requirement", requirement, MAX_REQUIREMENT_CHARS),
            ("category", category, MAX_QUERY_CHARS),
            ("needs", needs, MAX_NEEDS * (MAX_NEED_CHARS + 1)),
        ):
            if len(text) > most:  # the prompt quotes what it is given: never more than a request may hold
                raise MCPError(
                    INVALID_PARAMS, f"the {what} argument is {len(text):,} characters long; give at most {most:,}"
                )
        extra = f', required_categories ["{category.strip()}"]' if category.strip() else ""
        stated = [n.strip() for n in re.split(r"[;\n]", needs) if n.strip()]
        extra += (
            ", needs " + json.dumps(stated)
            if stated
            else ", and needs: the functions the app needs, one short phrase each, as you understand them"
        )
        return COMPOSE_SERVICE.format(requirement=requirement.strip(), protocol=name, extra=extra)

    @server.completion()
    async def complete(ref, argument, context) -> Completion | None:
        """Completions for the prompt's protocol and category, and for API names in catalog://apis/{api_id}."""
        typed = argument.value.strip().casefold()
        if isinstance(ref, PromptReference) and ref.name == "compose_service":
            if argument.name == "protocol":
                return _completion([p for p in PROTOCOLS if p.startswith(typed)])
            if argument.name == "category":
                return _completion(_starting(shared, lambda c: c.category_names(), typed))
        if (
            isinstance(ref, ResourceTemplateReference)
            and ref.uri == "catalog://apis/{api_id}"
            and argument.name == "api_id"
        ):
            return _completion(_starting(shared, lambda c: [a.name for a in c.apis()], typed))
        return None


COMPLETIONS = 100  # the most values one completion may carry (MCP specification)


def _completion(values: list[str]) -> Completion:
    return Completion(values=values[:COMPLETIONS], total=len(values), has_more=len(values) > COMPLETIONS)


def _starting(shared: SharedApp, names, typed: str) -> list[str]:
    """Catalogue names beginning with what was typed (then containing it), alphabetically; none without a catalogue."""
    try:
        catalog = shared.current().require_catalog()
    except TenderError:
        return []
    every = sorted(names(catalog), key=str.casefold)
    first = [n for n in every if n.casefold().startswith(typed)]
    return first + [n for n in every if typed and typed in n.casefold() and n not in first]


COMPOSE_SERVICE = """\
I want to build this app:

{requirement}

Using the Tender tools:
1. Call recommend_apis with the requirement above (protocol "{protocol}"{extra}). \
If it fails, read the error: it says how to fix the call.
2. Call explain_bids with the run_id it returned.
3. Answer with: each function, the API chosen for it, what it does and why (its `why` and confidence); \
links where given; any API marked deprecated; any function left without an API or backtracked; and the \
sequence diagram from explain_bids in a ```mermaid block.
4. If an API looks wrong, say which, then call recommend_apis again with it in excluded_apis, or with \
required_categories for a missing kind of API (list_categories shows the names)."""
