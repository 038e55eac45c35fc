"""The agent card an A2A agent discovers Tender by (/.well-known/agent-card.json): what this server really serves,
read from the catalogue it holds (its size, its kinds of item, whether it has usage history), the negotiation
protocols, the modes it reads and writes, the bearer token it requires, and its version. The card is remade when a
republished catalogue is switched to (publication.py), so an agent that revalidates it (its ETag) sees the new one."""

import logging

import anyio
from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentProvider,
    AgentSkill,
    HTTPAuthSecurityScheme,
    SecurityRequirement,
    SecurityScheme,
    StringList,
)
from a2a.utils.constants import PROTOCOL_VERSION_CURRENT, TransportProtocol

from tender.agents.protocols import PROTOCOLS
from tender.catalog import TenderError
from tender.catalog.summary import NOUNS, CatalogSummary, summarise

from .a2a_asks import EXPLAIN_FIELDS, RECOMMEND_FIELDS
from .a2a_answers import JSON, TEXT
from .context import SharedApp

log = logging.getLogger("tender.server")

A2A_PATH = "/a2a"  # the JSON-RPC endpoint, beside MCP's /mcp
BEARER = "bearer"  # the security scheme's name on the card
# Tags for what the catalogue holds, by kind of item (catalog/summary.py's kinds).
KIND_TAGS = {"api": "web-apis", "operation": "openapi-operations", "tool": "mcp-tools", "server": "mcp-servers"}
EXAMPLES = {
    "tool": "An assistant that reads my GitHub issues and posts a daily summary to Slack",
    "server": "An assistant that reads my GitHub issues and posts a daily summary to Slack",
    "api": "A site that shows nearby restaurants on a map with their reviews",
    "operation": "Look up the weather forecast for a city",
}


def agent_card(summary: CatalogSummary | None, base_url: str, secured: bool, version: str) -> AgentCard:
    """The card of a server at `base_url` serving the catalogue `summary` describes (None: it has none)."""
    protocols = ", ".join(PROTOCOLS)
    noun = " and ".join(NOUNS.get(k.kind, k.kind) for k in summary.kinds) if summary else "Web APIs or MCP servers"
    whose = f"this catalogue's {summary.items:,}" if summary else "the catalogue's"
    if summary is None:
        served = "No catalogue is open yet: every request is answered with how to build one."
    else:
        built = f"built {summary.built_at}, " if summary.built_at else ""
        served = f"The catalogue served ({built}fingerprint {summary.fingerprint}): {summary.describe()}."
    recommend = AgentSkill(
        id="recommend",
        name=f"Recommend {noun}",
        description=(
            f"Which of {whose} {noun} a request needs, one function at a time, each with the probability that it "
            "serves and why, or why none does. Send the requirement as text; a data part may add "
            f"{', '.join(f for f in RECOMMEND_FIELDS if f != 'requirement')} (as MCP's recommend_apis takes them). "
            "The task's artifact holds the plan as data (recommend_apis' result) and as text; the task id is the "
            "run id."
        ),
        tags=["recommendation", "contract-net", *_kind_tags(summary), *PROTOCOLS],
        examples=_examples(summary),
        input_modes=[TEXT, JSON],
        output_modes=[JSON, TEXT],
    )
    explain = AgentSkill(
        id="explain",
        name="Explain a past plan",
        description=(
            "How a plan was reached: per function, whom the call for proposals reached, the winning and the best "
            f"losing bids. Send a data part with {', '.join(EXPLAIN_FIELDS)} (run_id alone will do): the run id is "
            "a recommendation task's id, and any replica of this server explains any run."
        ),
        tags=["explanation", "contract-net"],
        examples=['{"run_id": "<a recommendation task id>"}'],
        input_modes=[JSON],
        output_modes=[JSON, TEXT],
    )
    card = AgentCard(
        name="Tender",
        description=(
            f"Tender recommends which {noun} a composite service or an agent's task needs (MCP servers to install, "
            f"web APIs to call) by a contract-net negotiation among agents ({protocols}). {served} The same server "
            f"answers MCP clients at {base_url}/mcp."
        ),
        supported_interfaces=[
            AgentInterface(
                url=f"{base_url}{A2A_PATH}",
                protocol_binding=TransportProtocol.JSONRPC.value,
                protocol_version=PROTOCOL_VERSION_CURRENT,
            )
        ],
        provider=AgentProvider(organization="Tender", url=base_url),
        version=version,
        capabilities=AgentCapabilities(streaming=True, push_notifications=False, extended_agent_card=False),
        default_input_modes=[TEXT, JSON],
        default_output_modes=[JSON, TEXT],
        skills=[recommend, explain],
    )
    if secured:
        scheme = HTTPAuthSecurityScheme(
            scheme="Bearer", description="The server's TENDER_HTTP_TOKEN, the same token its MCP endpoint takes."
        )
        card.security_schemes[BEARER].CopyFrom(SecurityScheme(http_auth_security_scheme=scheme))
        card.security_requirements.append(SecurityRequirement(schemes={BEARER: StringList()}))
    return card


def _kind_tags(summary: CatalogSummary | None) -> list[str]:
    return [KIND_TAGS.get(k.kind, k.kind) for k in summary.kinds] if summary else []


def _examples(summary: CatalogSummary | None) -> list[str]:
    kinds = [k.kind for k in summary.kinds] if summary else ["api"]
    return list(dict.fromkeys(EXAMPLES.get(kind, EXAMPLES["api"]) for kind in kinds))


class Cards:
    """The card of the catalogue served now, made once per catalogue: the SDK's card route asks it for each request
    (`current`, its card_modifier), and a republished catalogue, once switched to, gets a card of its own."""

    def __init__(self, shared: SharedApp, base_url: str, secured: bool, version: str):
        self._shared, self._base_url, self._secured, self._version = shared, base_url, secured, version
        self._card: AgentCard | None = None
        self._fingerprint: str | None = None
        self._lock = anyio.Lock()

    async def current(self, _static: AgentCard | None = None) -> AgentCard:
        app = self._shared.app
        if app is None:  # still starting: the catalogue is not open yet
            return self._card or agent_card(None, self._base_url, self._secured, self._version)
        app.switch_if_published()
        catalog = app.catalog
        fingerprint = catalog.fingerprint if catalog is not None else None
        async with self._lock:
            if self._card is None or fingerprint != self._fingerprint:
                try:
                    summary = await anyio.to_thread.run_sync(summarise, catalog.path) if catalog is not None else None
                except TenderError as error:  # the file is gone or replaced by junk: the card it had stands
                    log.warning("The agent card was not remade: %s", error)
                    return self._card or agent_card(None, self._base_url, self._secured, self._version)
                # The file at the path may already be a newer build than the one served: keep the card of the one
                # served until it is switched to (a card made before any is better than none).
                if summary is None or summary.fingerprint == fingerprint or self._card is None:
                    self._card = agent_card(summary, self._base_url, self._secured, self._version)
                    self._fingerprint = fingerprint
                    log.info("A2A agent card made for %s", summary.describe() if summary else "no catalogue")
            return self._card
