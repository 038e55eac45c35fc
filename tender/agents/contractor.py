"""Contractors: each knows one API (or one category of APIs, or one provider's items: an MCP server's tools, an
OpenAPI document's operations) and bids from that local knowledge alone."""

import threading

from tender.catalog import Catalog
from tender.ranking.retrieval import Shortlist
from tender.ranking.scorer import Objective

from .context import RunContext
from .messages import MANAGER, CallForProposals, Propose, Refuse
from .reasoners.base import Reasoner
from .tasks import ApiKnowledge, BidTask, ContractorKnowledge, PastUse


class Contractor:
    def __init__(self, knowledge: ContractorKnowledge, reasoner: Reasoner):
        self.knowledge = knowledge
        self.reasoner = reasoner
        self.id = knowledge.contractor

    def handle(
        self,
        cfp: CallForProposals,
        context: RunContext,
        shortlists: tuple[Shortlist, ...] = (),
        objective: Objective | None = None,
    ) -> list[Propose | Refuse]:
        """Answer a call for proposals with proposals, or one refusal. `shortlists`: the ranking's candidates for
        the call, which an embedded contractor bids from; `objective`: the selection's, for one asked to select."""
        task = BidTask(cfp=cfp, knowledge=self.knowledge, shortlists=shortlists, selection=objective or Objective())
        decision = self.reasoner.run(task, context)
        own = {api.api_id: api for api in self.knowledge.apis}
        at = context.elapsed_ms()
        replies: list[Propose | Refuse] = [
            Propose(
                sender=self.id,
                receiver=MANAGER,
                task_id=cfp.task_id,
                at_ms=at,
                api_id=d.api_id,
                api_name=own[d.api_id].name,
                score=d.score,
                rationale=d.rationale,
                evidence=d.evidence,
                function_id=cfp.function_id,
                function=d.function,  # the function a contractor chose for itself (contractor-led)
                category=d.category or next(iter(own[d.api_id].categories), None),
            )
            for d in decision.proposals
            if d.api_id in own  # a contractor can only offer what it holds
        ]
        if replies:
            return replies
        reason = decision.refusal or "proposed only APIs outside its own knowledge"
        return [Refuse(sender=self.id, receiver=MANAGER, task_id=cfp.task_id, at_ms=at, reason=reason)]


def api_contractor_id(api_id: int) -> str:
    return f"api:{api_id}"


def category_contractor_id(name: str) -> str:
    return f"category:{name}"


def provider_contractor_id(name: str) -> str:
    return f"provider:{name}"


class ContractorPool:
    """Builds each contractor's knowledge from the catalogue once, on first use."""

    def __init__(self, catalog: Catalog):
        self.catalog = catalog
        self._api_knowledge: dict[int, ApiKnowledge] = {}
        self._knowledge: dict[str, ContractorKnowledge] = {}
        self._lock = threading.Lock()

    def api_knowledge(self, api_id: int) -> ApiKnowledge:
        known = self._api_knowledge.get(api_id)
        if known is not None:
            return known
        api = self.catalog.get_api(api_id)
        history = self.catalog.usage_history(api_id)
        known = ApiKnowledge(
            api_id=api.id,
            name=api.name,
            categories=api.categories,
            description=api.description,
            usage_count=len(history),
            history=[
                PastUse(
                    mashup_id=m.id,
                    name=m.name,
                    description=m.description,
                    other_apis=[n for n in m.api_names if n != api.name],
                )
                for m in history
            ],
        )
        with self._lock:
            self._api_knowledge[api_id] = known
        return known

    def knowledge(self, contractor: str) -> ContractorKnowledge:
        known = self._knowledge.get(contractor)
        if known is not None:
            return known
        kind, _, key = contractor.partition(":")
        if kind == "api":
            known = ContractorKnowledge(contractor=contractor, apis=[self.api_knowledge(int(key))])
        elif kind == "provider":
            ids = self.catalog.apis_of_provider(key)
            known = ContractorKnowledge(contractor=contractor, provider=key, apis=[self.api_knowledge(i) for i in ids])
        else:
            ids = self.catalog.apis_in_categories([key])
            known = ContractorKnowledge(contractor=contractor, category=key, apis=[self.api_knowledge(i) for i in ids])
        with self._lock:
            self._knowledge[contractor] = known
        return known

    def contractor(self, contractor: str, reasoner: Reasoner) -> Contractor:
        return Contractor(self.knowledge(contractor), reasoner)
