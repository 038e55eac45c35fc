"""The composite service plan a run returns."""

from enum import Enum

from pydantic import BaseModel, Field


from .messages import Transcript
from .request import Constraints


class StepStatus(str, Enum):
    pending = "pending"
    announced = "announced"
    awarded = "awarded"
    backtracked = "backtracked"
    failed = "failed"
    skipped = "skipped"
    unserved = "unserved"  # no bid was credible: `reason` says why, with the best bid that fell short


class Award(BaseModel):
    api_id: int
    api_name: str
    score: float
    rationale: str
    status: str = Field("unknown", description="The item's status: active, deprecated or unknown.")
    level: str = Field("", description="The score in a word: high (>= 0.6), medium (>= 0.3) or low.")


class PlanStep(BaseModel):
    id: str = Field(description="Step id, e.g. 'f1'.")
    function: str = Field(description="The functional unit of the requirement this step realises.")
    categories: list[str] = Field(default_factory=list, description="API categories this step was announced under.")
    awarded: list[Award] = Field(default_factory=list)
    status: StepStatus = StepStatus.pending
    depends_on: list[str] = Field(default_factory=list, description="Steps whose output this step consumes.")
    rounds: int = Field(0, description="Announcements made (more than 1 after backtracking).")
    reason: str = Field("", description="Why the step is unserved or failed, with the best bid that fell short.")
    form: str = Field(
        "any",
        description="What serves the step: 'mcp_server' (an ability for the assistant: a server to install), "
        "'web_api' (a part of an app) or 'any'.",
    )
    other_form: Award | None = Field(
        None,
        description="An unserved step's best item of the other form (its service's web API where no MCP server "
        "serves it, or the reverse): named, never awarded.",
    )


class RecommendedApi(BaseModel):
    api_id: int
    name: str
    score: float = Field(description="Award score in [0, 1].")
    categories: list[str]
    steps: list[str] = Field(description="Plan steps this API was awarded.")
    rationale: str
    url: str = Field("", description="The source's own reference; for ProgrammableWeb a path that leads nowhere today.")
    status: str = Field("unknown", description="active, deprecated (the source says it is gone) or unknown.")
    status_source: str = Field("", description="Where the status came from.")
    link: str = Field("", description="Documentation or endpoint URL, where the source has one.")
    provider: str = Field("", description="The API or MCP server the item belongs to.")
    server: str = Field("", description="MCP tools: the server to call, by its configured name.")
    tool: str = Field("", description="MCP tools: the tool's name on that server.")


CATEGORY_IDS = 1_000  # ids a plan lists of its mapped categories' APIs: at a million items they number 100,000s


class Stages(BaseModel):
    """Candidate API ids at each stage: the ranking's candidates for the functions (best first), the APIs of the
    mapped categories (the first CATEGORY_IDS; `category_total` counts them all), all proposed (best bid first),
    final."""

    candidates: list[int] = Field(default_factory=list)
    category: list[int] = Field(default_factory=list)
    bidding: list[int] = Field(default_factory=list)
    final: list[int] = Field(default_factory=list)
    category_total: int | None = Field(None, description="APIs of the mapped categories; None: `category` is all.")

    def sizes(self) -> dict[str, int]:
        """How many ids each stage holds, listed or not."""
        sizes = {name: len(getattr(self, name)) for name in STAGE_LISTS}
        if self.category_total is not None:
            sizes["category"] = self.category_total
        return sizes

    def capped(self, limit: int) -> "Stages":
        """Each stage's first `limit` ids (the category stage's count kept)."""
        return self.model_copy(
            update={name: getattr(self, name)[:limit] for name in STAGE_LISTS}
            | {"category_total": self.sizes()["category"]}
        )


STAGE_LISTS = ("candidates", "category", "bidding", "final")


class TokenCount(BaseModel):
    input: int = 0
    output: int = 0

    def add(self, prompt: int, completion: int) -> None:
        self.input += prompt
        self.output += completion


class Cost(BaseModel):
    tokens: TokenCount = Field(default_factory=TokenCount)
    tokens_by_role: dict[str, TokenCount] = Field(default_factory=dict)
    tokens_by_step: dict[str, TokenCount] = Field(
        default_factory=dict,
        description="Per reasoning step ('manager.decompose', 'manager.map_all', 'contractor.bid', "
        "...); repair round trips under 'repairs'. They add up to `tokens`.",
    )
    tokens_from_cache: TokenCount = Field(
        default_factory=TokenCount, description="The part of `tokens` replayed from the cache, not sent again."
    )
    llm_calls: int = 0
    cache_hits: int = 0
    repairs: int = Field(0, description="Answers sent back once to be repaired.")
    tidied: int = Field(0, description="Answers used after an unambiguous fix (each with a note), without a repair.")
    fallbacks: int = Field(0, description="Steps the fallback (embedded) reasoner answered instead of the LLM.")
    messages: int = 0
    contractors_contacted: int = Field(0, description="Distinct contractors that received a call for proposals.")
    calls_for_proposals: int = 0

    def add_tokens(
        self, role: str, prompt: int, completion: int, step: str | None = None, cached: bool = False
    ) -> None:
        self.tokens.add(prompt, completion)
        self.tokens_by_role.setdefault(role, TokenCount()).add(prompt, completion)
        if step:
            self.tokens_by_step.setdefault(step, TokenCount()).add(prompt, completion)
        if cached:
            self.tokens_from_cache.add(prompt, completion)


class Plan(BaseModel):
    run_id: str
    requirement: str
    protocol: str
    organisation: str
    steps: list[PlanStep]
    apis: list[RecommendedApi] = Field(description="The final API set, best first.")
    stages: Stages
    cost: Cost
    latency_ms: float
    constraints: Constraints
    backends: dict[str, str] = Field(default_factory=dict, description="Reasoner used per role.")
    notes: list[str] = Field(default_factory=list)
    verdict: str = Field(
        "plan", description="'plan', or 'nothing fits' when no API of the catalogue serves the requirement."
    )
    context: list[str] = Field(
        default_factory=list,
        description="The parts of the requirement read as context (the kind of app, who it is for), not as needs.",
    )
    read_by: str = Field(
        "rules",
        description="What read the request into needs: 'the caller' (needs stated), 'rules', or a model, named "
        "(e.g. 'the local model Qwen2.5-Coder-1.5B').",
    )


class Run(BaseModel):
    """A plan together with the contract-net exchange that produced it."""

    plan: Plan
    transcript: Transcript
