"""Contract Net Protocol messages, as a tagged union, and the transcript of a run.

The same models are produced by the embedded reasoner and by an LLM: the protocol does not care who thought."""

from typing import Annotated, Literal

import numpy as np
from pydantic import BaseModel, Field, TypeAdapter

MANAGER = "manager"


class Message(BaseModel):
    sender: str
    receiver: str
    task_id: str = Field(description="The call for proposals this message belongs to.")
    at_ms: float = Field(0.0, description="Milliseconds since the run started.")


class Neighbourhood(BaseModel):
    """The manager's view of the past: the k nearest past mashups to the requirement (or, announced as
    `descriptions`, the k API descriptions nearest to it). A contractor weighs each of its own past mashups
    (or its description) within the radius by exp((similarity - nearest) / temperature); its vote is that
    weight's share of `mass`, the same sum over all k."""

    k: int
    nearest: float = Field(description="Similarity of the nearest past mashup.")
    radius: float = Field(description="Similarity of the k-th nearest past mashup.")
    temperature: float = Field(description="How sharply nearer mashups outweigh farther ones.")
    mass: float = Field(
        description="Sum of exp((similarity - nearest) / temperature) over the k nearest (descriptions: each "
        "provider once, by its nearest item)."
    )
    about: str | None = Field(
        None, description="The clause of the requirement these mashups are nearest to; None: all of it."
    )
    words: float = Field(
        0.0,
        description="Descriptions only: how much the share of the task's words in an API's text adds to its "
        "similarity (a catalogue without usage history ranks descriptions by both).",
    )

    def vote(self, similarities) -> float:
        """The share of the neighbourhood's weight held by past mashups with these similarities."""
        inside = similarities[similarities >= self.radius]
        return (
            min(1.0, float(np.exp((inside - self.nearest) / self.temperature).sum() / self.mass))
            if self.mass > 0
            else 0.0
        )


class CallForProposals(Message):
    """The manager announces a task: a function of the requirement, and where to look for it."""

    kind: Literal["cfp"] = "cfp"
    function_id: str | None = Field(
        None, description="The plan step announced; None when the requirement is announced as it is."
    )
    function: str | None = Field(None, description="What the step must do, in words.")
    categories: list[str] = Field(
        default_factory=list, description="Categories the manager mapped the function to; empty: any."
    )
    requirement: str
    round: int = Field(1, description="1 for the first announcement, more after backtracking.")
    neighbourhood: "Neighbourhood | None" = Field(
        None,
        description="How close the nearest past mashups are to the requirement, for contractors to weigh their history.",
    )
    clause_neighbourhoods: list[Neighbourhood] = Field(
        default_factory=list,
        description="The same for each clause of a requirement of several: a function stated in one clause of a long "
        "requirement has past mashups of its own that the whole requirement's neighbourhood drowns.",
    )
    descriptions: "Neighbourhood | None" = Field(
        None,
        description="How close the API descriptions nearest to the requirement are, for contractors to weigh "
        "their own description's match against the catalogue's best.",
    )
    function_descriptions: "Neighbourhood | None" = Field(
        None,
        description="The same for the API descriptions nearest to the announced function.",
    )
    clause_descriptions: list[Neighbourhood] = Field(
        default_factory=list,
        description="With no function announced, the same for each clause of a requirement of several: a "
        "contractor that picks its clause weighs its description against that clause's nearest, not against the "
        "whole requirement's, which the clause asked for first dominates.",
    )
    reserve: float | None = Field(
        None, ge=0.0, le=1.0, description="The lowest score the manager will consider; None lets contractors judge."
    )
    steps: list[Literal["decompose", "map", "match", "select"]] = Field(
        default_factory=lambda: ["match"], description="The reasoning steps the contractor is asked to perform."
    )


class Propose(Message):
    kind: Literal["propose"] = "propose"
    api_id: int
    api_name: str
    score: float = Field(ge=0.0, le=1.0)
    rationale: str
    evidence: dict[str, float | str] = Field(default_factory=dict)
    function_id: str | None = None
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
    similarity: float = Field(
        description="What it was ranked on: its profile's similarity to the task, plus the share of the task's "
        "words in its text where the catalogue has no usage history (so up to 2)."
    )
    reason: str


class Routing(BaseModel):
    """Whom one call for proposals reached, and why."""

    task_id: str
    strategy: Literal["embedding", "broadcast"]
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
