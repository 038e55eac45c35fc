"""Contract Net Protocol messages, as a tagged union, and the transcript of a run.

The same models are produced by the embedded reasoner and by an LLM: the protocol does not care who thought."""

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from tender.ranking.evidence import Evidence

MANAGER = "manager"
Step = Literal["decompose", "map", "match", "select"]


class Message(BaseModel):
    """A message once sent is never changed: a later stage that needs another view makes a copy."""

    model_config = ConfigDict(frozen=True)

    sender: str
    receiver: str
    task_id: str = Field(description="The call for proposals this message belongs to.")
    at_ms: float = Field(0.0, description="Milliseconds since the run started.")


class CallForProposals(Message):
    """The manager announces a task: a function of the requirement (or, contractor-led, the requirement as it
    is), and where to look for it."""

    kind: Literal["cfp"] = "cfp"
    function_id: str | None = Field(
        None, description="The plan step announced; None when the requirement is announced as it is."
    )
    function: str | None = Field(None, description="What the step must do, in words.")
    categories: list[str] = Field(
        default_factory=list, description="Categories the manager mapped the function to; empty: any."
    )
    requirement: str
    needs: list[str] = Field(
        default_factory=list,
        description="The needs the caller stated, where the requirement is announced as it is: a contractor "
        "bids for the one it serves.",
    )
    round: int = Field(1, description="1 for the first announcement, more after backtracking.")
    reserve: float | None = Field(
        None, ge=0.0, le=1.0, description="The lowest score the manager will consider; None lets contractors judge."
    )
    steps: list[Step] = Field(
        default_factory=lambda: list[Step](["match"]),
        description="The reasoning steps the contractor is asked to perform.",
    )


class Propose(Message):
    kind: Literal["propose"] = "propose"
    api_id: int
    api_name: str
    score: float = Field(ge=0.0, le=1.0, description="The probability that the API serves the function.")
    rationale: str
    evidence: Evidence | None = Field(None, description="What the score rests on (the embedded reasoner's).")
    function_id: str | None = None
    function: str | None = Field(None, description="The function the contractor chose to serve (contractor-led).")
    category: str | None = Field(None, description="The category the contractor bids under.")


class Refuse(Message):
    kind: Literal["refuse"] = "refuse"
    reason: str


class AcceptProposal(Message):
    kind: Literal["accept"] = "accept"
    api_id: int
    reason: str


class RejectProposal(Message):
    kind: Literal["reject"] = "reject"
    api_id: int
    reason: str


class Inform(Message):
    """The winner confirms it has taken the contract."""

    kind: Literal["inform"] = "inform"
    api_id: int
    result: str


class Failure(Message):
    kind: Literal["failure"] = "failure"
    reason: str


ContractNetMessage = Annotated[
    CallForProposals | Propose | Refuse | AcceptProposal | RejectProposal | Inform | Failure,
    Field(discriminator="kind"),
]


class RoutedContractor(BaseModel):
    contractor: str
    similarity: float = Field(description="The score of its best item for the task: what it was reached on.")
    reason: str


class Routing(BaseModel):
    """Whom one call for proposals reached, and why."""

    task_id: str
    strategy: Literal["embedding", "broadcast"] = Field(
        description="embedding: the contractors holding the task's best candidates (by the ranking); broadcast: all."
    )
    eligible: int = Field(description="Contractors that could have been asked (inside the announced categories).")
    contacted: list[RoutedContractor]


class Backtrack(BaseModel):
    """Feedback that sent a function back to category mapping."""

    function_id: str
    round: int
    reason: str
    from_categories: list[str]
    to_categories: list[str]


class Transcript(BaseModel):
    messages: list[ContractNetMessage] = Field(default_factory=list)
    routing: list[Routing] = Field(default_factory=list)
    backtracking: list[Backtrack] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list, description="Fallbacks, budget events and other remarks.")

    def of_kind(self, kind: str) -> list:
        return [m for m in self.messages if m.kind == kind]

    def for_task(self, task_id: str) -> list:
        return [m for m in self.messages if m.task_id == task_id]


transcript_adapter = TypeAdapter(Transcript)
