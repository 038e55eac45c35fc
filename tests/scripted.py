"""A scripted reasoner for protocol and constraint tests: contractors bid what the test says, so that refitting
the bid model never changes what these tests see, and every task asked is recorded.

    reasoner = ScriptedReasoner(catalog.embedder, bids={"Google Maps": 0.9, "Yelp": 0.7})
    tender = Tender(catalog, manager=reasoner, contractors=reasoner)
    ...
    reasoner.asked_for(BidTask)  # the calls for proposals each contractor saw

Bids are scripted by API name: a contractor proposes each of its APIs that has a score, at that score, and
refuses when none has. Any task type can be given a canned answer (an output, or a function of the task);
the rest (decomposition, category mapping, selection) go to the embedded reasoner. `keep_everything()` is a
ranking model whose selection keeps every bid (an item costs next to nothing), for tests of mechanics.

`ScriptedModel` stands for the local language model (agents/local_model.TextModel) where the reader or the LLM
backend's local endpoint is tested without one."""

import time
from collections.abc import Callable

from pydantic import BaseModel

from tender.agents.context import RunContext
from tender.agents.local_model import Generation
from tender.agents.reasoners.base import Reasoner
from tender.agents.reasoners.embedded import EmbeddedReasoner
from tender.agents.tasks import BidDecision, BidDraft, BidTask, Task


class ScriptedReasoner(Reasoner):
    name = "scripted"

    def __init__(
        self,
        embedder=None,
        bids=None,
        answers: dict[type[Task], BaseModel | Callable[[Task], BaseModel]] | None = None,
    ):
        self.bids = bids if callable(bids) else dict(bids or {})
        self.answers = dict(answers or {})
        self.fallback = EmbeddedReasoner()
        self.asked: list[Task] = []

    def answer(self, task: Task, context: RunContext) -> BaseModel:
        context.check()
        self.asked.append(task)
        if type(task) in self.answers:
            answer = self.answers[type(task)]
            return answer(task) if callable(answer) else answer
        if isinstance(task, BidTask):
            return self.bid(task)
        return self.fallback.run(task, context)

    def bid(self, task: BidTask) -> BidDecision:
        """Each API with a score bids it; `bids` may also be a function of (API name, announced function) giving
        a score or None."""
        function = task.cfp.function or ""
        scores = {
            api.api_id: self.bids(api.name, function) if callable(self.bids) else self.bids.get(api.name)
            for api in task.knowledge.apis
        }
        drafts = [
            BidDraft(api_id=api.api_id, score=score, rationale=f"scripted: {api.name}", function=task.cfp.function)
            for api in task.knowledge.apis
            if (score := scores[api.api_id]) is not None
        ]
        return BidDecision(proposals=drafts) if drafts else BidDecision(refusal="scripted to refuse")

    def asked_for(self, task_type: type[Task]) -> list:
        """The tasks of one type asked so far, in order."""
        return [task for task in self.asked if isinstance(task, task_type)]


def keep_everything():
    """The shipped ranking model with a selection that keeps every bid: for tests of mechanics, not accuracy."""
    from tender.ranking.scorer import Objective, Scorer

    return Scorer.load().model_copy(update={"objective": Objective(cost=0.0001, redundancy=0.0)})


class ScriptedModel:
    """Answers every prompt with the text it was given, as a model would: "deadline" where the deadline it is handed
    has passed, or the ending `stopped` says. Its prompt is 1,000 tokens, 40 of them not read by the call before
    (what llama.cpp would still have to read). Records what it was asked."""

    name = "Scripted-1B"

    def __init__(self, text: str, stopped: str | None = None):
        self.text, self.stopped = text, stopped
        self.asked: list[tuple[list[dict], dict, int, float | None]] = []

    def generate(self, messages, schema, max_tokens, deadline):
        self.asked.append((messages, schema, max_tokens, deadline))
        if self.stopped == "deadline" or (deadline is not None and time.monotonic() >= deadline):
            return Generation(self.text[:10], 40, 3, "deadline", 0.0, prompt_total=1000)
        return Generation(self.text, 40, len(self.text.split()), self.stopped or "done", 0.0, prompt_total=1000)
