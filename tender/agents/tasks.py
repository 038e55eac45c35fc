"""The four reasoning steps as typed tasks. A reasoner turns a task into the task's output type;
the embedded reasoner and an LLM reasoner answer the same tasks with the same models."""

from typing import ClassVar, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema

from tender.ranking.evidence import Evidence
from tender.ranking.retrieval import Shortlist
from tender.ranking.scorer import Objective

from .form import Form
from .messages import CallForProposals, Propose
from .text import is_presentation, short_name

Out = TypeVar("Out", bound=BaseModel)
Role = Literal["manager", "contractor"]


class Task(BaseModel, Generic[Out]):
    """A unit of reasoning. `step` names the prompt file prompts/{role}_{step}.txt."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    step: ClassVar[str]
    role: ClassVar[Role]
    output: ClassVar[type[BaseModel]]


# -- 1. core function decomposition -----------------------------------------------------------
class FunctionSpec(BaseModel):
    id: str = Field(description="f1, f2, ... in the order the functions run.")
    name: str = Field(description="A short name for the function, e.g. 'show locations on a map'.")
    description: str = Field(description="The part of the requirement this function realises.")
    depends_on: list[str] = Field(default_factory=list, description="Ids of functions whose output this one uses.")
    form: Form = Field(
        "any",
        description="What serves it: 'mcp_server' (an ability for the assistant itself), 'web_api' (a part of an app) "
        "or 'any'.",
    )


def functions_of(needs: list[str]) -> list[FunctionSpec]:
    """One function per need, in order (f1, f2, ...): a function that shows what others fetch depends on them. The
    rules and the local model read needs alike from here."""
    functions: list[FunctionSpec] = []
    for need in needs:
        earlier = [f.id for f in functions if not is_presentation(f.description)]
        functions.append(
            FunctionSpec(
                id=f"f{len(functions) + 1}",
                name=short_name(need),
                description=need,
                depends_on=earlier if is_presentation(need) and earlier else [],
            )
        )
    return functions


class Decomposition(BaseModel):
    functions: list[FunctionSpec] = Field(min_length=1, max_length=12)
    context: list[str] = Field(
        default_factory=list,
        description="The parts of the requirement that are no function of an API: the kind of app, who it is for, "
        "why. Every part of the requirement is a function's or the context's.",
    )
    # What read the requirement ("rules", "the local model Qwen2.5-Coder-1.5B"); None: the reasoner that answered.
    read_by: SkipJsonSchema[str | None] = None


class DecomposeTask(Task[Decomposition]):
    step: ClassVar[str] = "decompose"
    role: ClassVar[Role] = "manager"
    output: ClassVar[type[BaseModel]] = Decomposition
    requirement: str


# -- 2. category mapping ----------------------------------------------------------------------
class CategoryCandidate(BaseModel):
    name: str
    similarity: float = Field(description="Cosine similarity between the function and the category.")
    neighbour_votes: float = Field(0.0, description="Share of similar past mashups that used an API of this category.")
    api_count: int = 0


class CategoryMapping(BaseModel):
    categories: list[str] = Field(description="Chosen categories, best first.", max_length=10)
    rationale: str = ""


class MapCategoriesTask(Task[CategoryMapping]):
    step: ClassVar[str] = "map"
    role: ClassVar[Role] = "manager"
    output: ClassVar[type[BaseModel]] = CategoryMapping
    requirement: str
    function: FunctionSpec
    candidates: list[CategoryCandidate]
    max_categories: int = 3


class FunctionMapping(BaseModel):
    function_id: str
    categories: list[str] = Field(description="Chosen categories, best first.")


class MappingBatch(BaseModel):
    mappings: list[FunctionMapping]


class MapAllTask(Task[MappingBatch]):
    """Step 2 for every function of a decomposition in one call: `items` are the per-function tasks, which
    a reasoner that cannot answer them together answers one by one."""

    step: ClassVar[str] = "map_all"
    role: ClassVar[Role] = "manager"
    output: ClassVar[type[BaseModel]] = MappingBatch
    items: list[MapCategoriesTask] = Field(min_length=1)


# -- 3. API matching (a contractor's bid) -----------------------------------------------------
class PastUse(BaseModel):
    mashup_id: int
    name: str
    description: str
    other_apis: list[str] = Field(default_factory=list)


class ApiKnowledge(BaseModel):
    """What a contractor knows of one API: its card and its own usage history. Nothing else."""

    api_id: int
    name: str
    categories: list[str]
    description: str
    usage_count: int = 0
    history: list[PastUse] = Field(default_factory=list)


class ContractorKnowledge(BaseModel):
    contractor: str = Field(description="'api:<id>', 'category:<name>' or 'provider:<name>'.")
    apis: list[ApiKnowledge]
    category: str | None = None
    provider: str | None = None


class BidDraft(BaseModel):
    api_id: int
    score: float = Field(ge=0.0, le=1.0, description="How well the API fits, from 0 (not at all) to 1 (certainly).")
    rationale: str = Field(description="One sentence: why this API fits the function.")
    function: str | None = Field(
        None, description="The function of the requirement the API would serve (when asked to decompose)."
    )
    category: str | None = Field(None, description="The category the API is offered under (when asked to map).")
    # The embedded reasoner's evidence; an LLM is not asked for it.
    evidence: SkipJsonSchema[Evidence | None] = None


class BidDecision(BaseModel):
    proposals: list[BidDraft] = Field(default_factory=list, description="Empty when refusing.")
    refusal: str | None = Field(None, description="Why the contractor refuses, when it proposes nothing.")


class BidTask(Task[BidDecision]):
    step: ClassVar[str] = "bid"
    role: ClassVar[Role] = "contractor"
    output: ClassVar[type[BaseModel]] = BidDecision
    cfp: CallForProposals
    knowledge: ContractorKnowledge
    # The ranking's candidates for the announced function (or, announced as it is, for each of the requirement's
    # parts): what the embedded reasoner bids from. Never put in a prompt.
    shortlists: tuple[Shortlist, ...] = Field(default=(), exclude=True, repr=False)
    # The selection's settings: a contractor asked to select too proposes what it would select.
    selection: Objective = Field(default_factory=Objective, exclude=True, repr=False)


# -- 4. API selection -------------------------------------------------------------------------
class CoUsageEdge(BaseModel):
    a: int
    b: int
    weight: float


class Selection(BaseModel):
    api_ids: list[int] = Field(description="Selected APIs, best first.")
    rationale: str = ""
    # The embedded reasoner's: for each selected API, the function it is awarded (the one it adds most to).
    awards: SkipJsonSchema[dict[int, str]] = Field(default_factory=dict)
    # ... and each function's expected coverage by the selected set.
    coverage: SkipJsonSchema[dict[str, float]] = Field(default_factory=dict)


class SelectTask(Task[Selection]):
    step: ClassVar[str] = "select"
    role: ClassVar[Role] = "manager"
    output: ClassVar[type[BaseModel]] = Selection
    requirement: str
    functions: list[FunctionSpec]
    proposals: list[Propose]
    co_usage: list[CoUsageEdge] = Field(default_factory=list)
    max_apis: int | None = None
    providers: dict[int, str] = Field(default_factory=dict, exclude=True, repr=False)  # each proposed API's provider
    selection: Objective = Field(default_factory=Objective, exclude=True, repr=False)  # the objective's settings
