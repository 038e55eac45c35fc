"""What the tools return. Each model is a tool's outputSchema, so its field descriptions are written
for the assistant reading the result. recommend_apis returns agents.plan.Plan itself."""

from pydantic import BaseModel, Field

from tender.agents.messages import Backtrack, RoutedContractor
from tender.agents.plan import Cost, PlanStep, RecommendedApi, Stages


class CategoryInfo(BaseModel):
    name: str = Field(description="Category name, spelled as the catalogue spells it.")
    api_count: int = Field(description="APIs tagged with this category.")
    similarity: float | None = Field(None, description="Cosine similarity to the query, when one was given.")


class CategoryList(BaseModel):
    query: str | None = None
    total: int = Field(description="Categories in the catalogue (the list may show fewer).")
    categories: list[CategoryInfo] = Field(description="Most similar to the query first; without a query, largest first.")


class ApiHit(BaseModel):
    api_id: int
    name: str
    categories: list[str]
    score: float = Field(description="Cosine similarity between the query and the API's description, in [-1, 1].")
    usage_count: int = Field(description="Mashups in the catalogue that used this API.")
    description: str = Field(description="The API's description, shortened to 300 characters.")
    url: str = ""


class SearchResults(BaseModel):
    query: str
    categories: list[str] = Field(default_factory=list, description="The categories the search was restricted to.")
    results: list[ApiHit] = Field(description="Best match first.")


class CoUsedApi(BaseModel):
    api_id: int
    name: str
    mashups: int = Field(description="Mashups that used both APIs.")
    weight: float = Field(description="Jaccard weight of the pair: shared mashups over mashups using either.")


class MashupBrief(BaseModel):
    mashup_id: int
    name: str
    description: str


class ApiDetails(BaseModel):
    api_id: int
    name: str
    url: str
    categories: list[str] = Field(description="Primary category first.")
    description: str
    usage_count: int = Field(description="Mashups in the catalogue that used this API.")
    co_used: list[CoUsedApi] = Field(description="APIs most often used together with this one, strongest first.")
    recent_mashups: list[MashupBrief] = Field(description="A few of the latest mashups that used it.")


class Bid(BaseModel):
    contractor: str = Field(description="The bidding agent: 'api:<id>' or 'category:<name>'.")
    api_id: int
    api_name: str
    score: float = Field(description="The contractor's confidence that the API fits, in [0, 1].")
    rationale: str
    category: str | None = None
    evidence: dict[str, float | str] = Field(default_factory=dict, description="The features behind the score.")


class Refusal(BaseModel):
    contractor: str
    reason: str


class Decision(BaseModel):
    api_id: int
    contractor: str
    outcome: str = Field(description="'accepted' or 'rejected'.")
    reason: str


class CallExplained(BaseModel):
    """One call for proposals and everything that answered it."""

    task_id: str
    function_id: str | None = Field(description="The plan step announced; None when the whole requirement was.")
    function: str | None
    round: int = Field(description="1 for the first announcement, more after backtracking.")
    categories: list[str] = Field(description="Categories the call was restricted to; empty: any.")
    reasoning_steps: list[str] = Field(description="What contractors were asked to do: decompose, map, match, select.")
    routing_strategy: str | None = Field(None, description="'embedding' (the closest contractors) or 'broadcast'.")
    eligible: int | None = Field(None, description="Contractors that could have been asked.")
    contacted: list[RoutedContractor] = Field(default_factory=list, description="Whom the call reached, and why.")
    proposals: list[Bid] = Field(default_factory=list, description="Highest score first.")
    refusals: list[Refusal] = Field(default_factory=list)
    decisions: list[Decision] = Field(default_factory=list, description="The manager's accept and reject messages.")
    confirmations: list[str] = Field(default_factory=list, description="Winners' inform messages.")
    failures: list[str] = Field(default_factory=list)


class StageSizes(BaseModel):
    category: int = Field(description="APIs in the categories the manager mapped the requirement to.")
    bidding: int = Field(description="APIs some contractor proposed.")
    final: int = Field(description="APIs in the plan.")


class Explanation(BaseModel):
    run_id: str
    requirement: str
    protocol: str
    organisation: str
    function: str | None = Field(None, description="The plan step this explanation is limited to, if any.")
    steps: list[PlanStep] = Field(description="The plan's steps with their awards.")
    apis: list[RecommendedApi] = Field(description="The final API set, best first.")
    calls: list[CallExplained] = Field(description="Every call for proposals, in order.")
    backtracking: list[Backtrack] = Field(description="Functions sent back to category mapping, and why.")
    stages: Stages = Field(description="Candidate API ids at each stage: mapped categories, bids, final.")
    stage_sizes: StageSizes
    cost: Cost
    notes: list[str] = Field(description="Fallbacks, budget events and other remarks.")
    diagram: str = Field(description="A Mermaid sequenceDiagram of the exchange; render it in a ```mermaid block.")


class ApiBrief(BaseModel):
    api_id: int
    name: str
    score: float


class ProtocolRun(BaseModel):
    protocol: str
    run_id: str = Field(description="Pass to explain_bids to see this protocol's negotiation.")
    apis: list[ApiBrief] = Field(description="The protocol's final API set, best first.")
    steps: int = Field(description="Functions the requirement was split into.")
    latency_ms: float
    messages: int = Field(description="Contract-net messages exchanged.")
    contractors_contacted: int
    llm_calls: int
    tokens: int = Field(description="LLM tokens, input and output (0 for the offline reasoner).")
    cost: Cost


class Comparison(BaseModel):
    requirement: str
    organisation: str
    runs: list[ProtocolRun] = Field(description="One per protocol: manager-led, contractor-led, collaborative, single-agent.")
    common_apis: list[str] = Field(description="APIs every protocol recommended.")
