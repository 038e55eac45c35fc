"""A scripted reasoner for protocol and constraint tests: contractors bid what the test says, so that refitting
the bid model never changes what these tests see, and every task asked is recorded.

    reasoner = ScriptedReasoner(catalog.embedder, bids={"Google Maps": 0.9, "Yelp": 0.7})
    tender = Tender(catalog, manager=reasoner, contractors=reasoner)
    ...
    reasoner.asked_for(BidTask)  # the calls for proposals each contractor saw

Bids are scripted by API name: a contractor proposes each of its APIs that has a score, at that score, and
refuses when none has. Any task type can be given a canned answer (an output, or a function of the task);
the rest (decomposition, category mapping, selection) go to the embedded reasoner, whose answers to those
steps do not read the bid model."""

from collections.abc import Callable

from pydantic import BaseModel

from tender.agents.context import RunContext
from tender.agents.reasoners.base import Reasoner
from tender.agents.reasoners.embedded import EmbeddedReasoner, Policy
from tender.agents.tasks import BidDecision, BidDraft, BidTask, Task


class ScriptedReasoner(Reasoner):
    name = "scripted"

    def __init__(
        self,
        embedder,
        bids: dict[str, float] | None = None,
        answers: dict[type[Task], BaseModel | Callable[[Task], BaseModel]] | None = None,
        policy: Policy | None = None,
    ):
        self.bids = dict(bids or {})
        self.answers = dict(answers or {})
        self.fallback = EmbeddedReasoner(embedder, policy=policy)  # its policy: the selection's thresholds
        self.asked: list[Task] = []

    def run(self, task: Task, context: RunContext) -> BaseModel:
        context.check()
        self.asked.append(task)
        if type(task) in self.answers:
            answer = self.answers[type(task)]
            return answer(task) if callable(answer) else answer
        if isinstance(task, BidTask):
            return self.bid(task)
        return self.fallback.run(task, context)

    def bid(self, task: BidTask) -> BidDecision:
        drafts = [
            BidDraft(
                api_id=api.api_id,
                score=self.bids[api.name],
                rationale=f"scripted: {api.name}",
                function=task.cfp.function,
            )
            for api in task.knowledge.apis
            if api.name in self.bids
        ]
        return BidDecision(proposals=drafts) if drafts else BidDecision(refusal="scripted to refuse")

    def asked_for(self, task_type: type[Task]) -> list:
        """The tasks of one type asked so far, in order."""
        return [task for task in self.asked if isinstance(task, task_type)]
