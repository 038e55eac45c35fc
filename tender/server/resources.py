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

from tender.agents.form import FORMS
from tender.agents.request import MAX_NEED_CHARS, MAX_NEEDS, MAX_REQUIREMENT_CHARS
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

    @server.prompt(title="Find the MCP servers or web APIs a request needs, and how to set them up")
    def compose_service(
        requirement: Annotated[
            str,
            Field(
                description=(
                    "What the user wants, in plain words: abilities for the assistant ('read my Google Calendar and "
                    "make Todoist tasks') or an app to build ('a map of bike shops with their opening hours')."
                )
            ),
        ],
        kind: Annotated[
            str,
            Field(
                description=(
                    "'mcp_server' (abilities for the assistant: servers to install), 'web_api' (an app's APIs) or "
                    "'any' (optional: the assistant decides from the request)."
                )
            ),
        ] = "",
        category: Annotated[
            str,
            Field(
                description=(
                    "A category the plan must use, e.g. 'Mapping' (optional; completions list the catalogue's names)."
                )
            ),
        ] = "",
        needs: Annotated[
            str,
            Field(
                description=(
                    "The functions needed, one short phrase a line or separated by semicolons (optional: the "
                    "assistant states them otherwise)."
                )
            ),
        ] = "",
    ) -> str:
        """Walk the assistant from the request to its needs, a recommendation, and a configuration to paste."""
        chosen = kind.strip()
        if chosen and chosen not in FORMS:
            raise MCPError(INVALID_PARAMS, f"kind {echo(kind)} is not one of {', '.join(FORMS)}")
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
            else ", and needs: the functions it takes, one short phrase each, as you understand them"
        )
        extra += (
            f', kind "{chosen}"'
            if chosen
            else ', and kind: "mcp_server" if the user wants abilities for you (servers to install), "web_api" if '
            'they are building an app, "any" if unclear'
        )
        return COMPOSE_SERVICE.format(requirement=requirement.strip(), extra=extra)

    @server.completion()
    async def complete(ref, argument, context) -> Completion | None:
        """Completions for the prompt's protocol and category, and for API names in catalog://apis/{api_id}."""
        typed = argument.value.strip().casefold()
        if isinstance(ref, PromptReference) and ref.name == "compose_service":
            if argument.name == "kind":
                return _completion([f for f in FORMS if f.startswith(typed)])
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
This is what I want:

{requirement}

Using the Tender tools:
1. Call recommend_apis with the request above{extra}. If it fails, read the error: it says how to fix the call.
2. For each function, say which server or API was chosen, what it does and why (its `why` and confidence), and for \
a server whether it was verified (`verified`); for a web API, its auth, HTTPS and CORS (`access`) and link. Name any \
item marked deprecated or with a `note`, and any function left unserved with its reason (where it names an item of \
the other form, say so: a web API is no server to install).
3. If the plan awards MCP servers, ask which client I use (Claude Desktop, Cursor, VS Code or Claude Code) and give \
its part of `client_config` to paste as it is, then list every value to fill in from `client_config.variables` \
(required or optional, secret or not, what it is). Never fill in a value yourself.
4. If an item looks wrong, say which, then call recommend_apis again with it in excluded_apis, or with \
required_categories for a missing kind of item (list_categories shows the names). explain_bids(run_id) tells why \
each was chosen, with a diagram, if I ask."""
