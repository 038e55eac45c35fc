"""The embedded reasoner: every reasoning step with no LLM, deterministic and offline.

It reads a requirement's needs and context from its text (agents/decomposition.py), maps a function to the
categories of its best candidates, bids each of a contractor's items at the ranking's score for the announced
function, and selects by the ranking's objective (tender.ranking.selection)."""

from pydantic import BaseModel

from tender.ranking.retrieval import Candidate, Shortlist
from tender.ranking.selection import Option, choose

from ..context import RunContext
from ..tasks import (
    BidDecision,
    BidDraft,
    BidTask,
    CategoryMapping,
    DecomposeTask,
    Decomposition,
    MapCategoriesTask,
    Selection,
    SelectTask,
    Task,
    functions_of,
)
from ..decomposition import read
from ..text import short_name
from .base import Reasoner

RULES = "rules"  # as a plan says what read the request
# A bid under this is noise: the contractor refuses rather than propose it.
PROPOSE_AT = 0.01
# A category's or a provider's contractor offers at most this many of its items for one call.
MAX_BIDS_PER_CONTRACTOR = 3


class EmbeddedReasoner(Reasoner):
    name = "offline"

    def answer(self, task: Task, context: RunContext) -> BaseModel:
        context.check()
        if isinstance(task, DecomposeTask):
            return self.decompose(task)
        if isinstance(task, MapCategoriesTask):
            return self.map_categories(task)
        if isinstance(task, BidTask):
            return self.bid(task)
        if isinstance(task, SelectTask):
            return self.select(task)
        raise TypeError(f"no embedded answer to a {type(task).__name__}")

    # 1 ------------------------------------------------------------------------------------------
    def decompose(self, task: DecomposeTask) -> Decomposition:
        """One function per need the requirement's text states; the rest is context (decomposition.read). A
        function that shows what others fetch depends on them."""
        reading = read(task.requirement)
        return Decomposition(functions=functions_of(reading.needs), context=reading.context, read_by=RULES)

    # 2 ------------------------------------------------------------------------------------------
    def map_categories(self, task: MapCategoriesTask) -> CategoryMapping:
        """The categories of the function's best candidates, the best candidate's first."""
        if not task.candidates:
            return CategoryMapping(categories=[], rationale="no candidate categories")
        chosen = [c.name for c in task.candidates][: task.max_categories]
        return CategoryMapping(categories=chosen, rationale="the categories of the function's best candidates")

    # 3 ------------------------------------------------------------------------------------------
    def bid(self, task: BidTask) -> BidDecision:
        """Each of the contractor's items at its score for the announced function (announced as it is: for the part
        of the requirement it serves best), where it is a candidate and scores at least the bar: the reserve, else
        PROPOSE_AT, or, asked to select too, the selection's cost (it proposes what it would select)."""
        steps = set(task.cfp.steps)
        history = any(c.evidence.catalogue_history for s in task.shortlists for c in s.candidates[:1])
        bar = task.selection.cost_for(history) if "select" in steps else PROPOSE_AT
        if task.cfp.reserve is not None:
            bar = task.cfp.reserve
        drafts = []
        for api in task.knowledge.apis:
            found = [(s, c) for s in task.shortlists if (c := s.get(api.api_id)) is not None]
            if not found:
                continue
            shortlist, candidate = max(found, key=lambda pair: pair[1].score)
            if candidate.score < bar:
                continue
            drafts.append(self._draft(candidate, shortlist, task, "decompose" in steps or not task.cfp.function))
        drafts.sort(key=lambda d: -d.score)
        if task.knowledge.category or task.knowledge.provider:
            drafts = drafts[:MAX_BIDS_PER_CONTRACTOR]
        if not drafts:
            return BidDecision(refusal=f"no API of {task.knowledge.contractor} fits well enough (below {bar:.2f})")
        return BidDecision(proposals=drafts)

    @staticmethod
    def _draft(candidate: Candidate, shortlist: Shortlist, task: BidTask, names_function: bool) -> BidDraft:
        said = "; ".join(candidate.evidence.describe(candidate.score))
        return BidDraft(
            api_id=candidate.item,
            score=candidate.score,
            function=shortlist.function if names_function else None,
            category=None,
            rationale=f"For '{short_name(shortlist.function, 10)}': {said}.",
            evidence=candidate.evidence,
        )

    # 4 ------------------------------------------------------------------------------------------
    def select(self, task: SelectTask) -> Selection:
        """The set of highest expected coverage of the functions, less what its items cost (ranking.selection)."""
        deprecated = {p.api_id for p in task.proposals if p.evidence is not None and p.evidence.deprecated}
        uninstallable = {p.api_id for p in task.proposals if p.evidence is not None and p.evidence.uninstallable}
        cost = task.selection.cost_for(
            any(p.evidence is not None and p.evidence.catalogue_history for p in task.proposals)
        )
        options = [Option(item=p.api_id, function=p.function_id or "", score=p.score) for p in task.proposals]
        functions = [f.id for f in task.functions] or list(dict.fromkeys(o.function for o in options))
        choice = choose(
            options,
            functions,
            cost=cost,
            redundancy=task.selection.redundancy,
            provider=lambda item: task.providers.get(item, str(item)),
            deprecated=lambda item: item in deprecated,
            uninstallable=lambda item: item in uninstallable,
            max_items=task.max_apis,
        )
        if not choice.items:
            best = max((p.score for p in task.proposals), default=0.0)
            return Selection(api_ids=[], rationale=f"nothing is likely enough: the best bid is {best:.2f}")
        covered = sum(choice.coverage.values())
        return Selection(
            api_ids=choice.items,
            awards=choice.awards,
            coverage=choice.coverage,
            rationale=(
                f"the set of highest expected coverage ({covered:.2f} of {len(functions)} function(s)) less "
                f"{cost:.2f} an item"
            ),
        )
