"""Resources (catalog://categories, catalog://apis/{api_id}, runs://{run_id}) and the compose_service prompt."""

import json
from collections.abc import Iterator
from contextlib import contextmanager

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError

from tender.catalog import ApiNotFound, TenderError
from tender.agents.messages import transcript_adapter

from .app import SharedApp
from tender.answers.runs import UnknownRun
from .tools import api_details, app_of

JSON = "application/json"


@contextmanager
def readable() -> Iterator[None]:
    """Unknown ids become not-found errors, other TenderErrors resource errors, both with their message."""
    try:
        yield
    except (ApiNotFound, UnknownRun) as error:
        raise ResourceNotFoundError(str(error)) from error
    except TenderError as error:
        raise ResourceError(str(error)) from error


def register(server, shared: SharedApp) -> None:
    @server.resource("catalog://categories", name="categories", title="API categories", mime_type=JSON,
                     description="Every API category in the catalogue with its number of APIs, by name.")
    def categories() -> str:
        with readable():
            catalog = shared.current().require_catalog()
            return json.dumps([c.model_dump() for c in catalog.categories()], indent=1)

    @server.resource("catalog://apis/{api_id}", name="api", title="One API's card", mime_type=JSON,
                     description="An API by id (or exact name): categories, description, usage count, co-used APIs.")
    def api(api_id: str, ctx: Context) -> str:
        with readable():
            return api_details(app_of(ctx).require_catalog(), api_id).model_dump_json(indent=1)

    @server.resource("runs://{run_id}", name="run", title="A stored run", mime_type=JSON,
                     description="A recommendation run by run_id: its plan and its full contract-net transcript.")
    def run(run_id: str, ctx: Context) -> str:
        with readable():
            stored = app_of(ctx).runs.get(run_id)
            return json.dumps({"plan": stored.plan.model_dump(mode="json"),
                               "transcript": transcript_adapter.dump_python(stored.transcript, mode="json")}, indent=1)

    @server.prompt(title="Compose a service from Web APIs")
    def compose_service(requirement: str) -> str:
        """Guide the assistant through recommending the APIs for an app and explaining the choice."""
        return COMPOSE_SERVICE.format(requirement=requirement.strip())


COMPOSE_SERVICE = """\
I want to build this app:

{requirement}

Using the Tender tools:
1. Call recommend_apis with the requirement above (protocol "manager-led" unless I asked otherwise). \
If it fails, read the error: it says how to fix the call.
2. Call explain_bids with the run_id it returned.
3. Answer with: the plan's steps, each with the API chosen for it and why (the winning bid's rationale \
and score); the final API list with links; any step that failed or was backtracked; and the \
sequence diagram from explain_bids in a ```mermaid block.
4. If an API looks wrong, say which, then call recommend_apis again with it in excluded_apis, or with \
required_categories for a missing kind of API (list_categories shows the names)."""
