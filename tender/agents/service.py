"""Tender: the agency that takes a request, runs the chosen protocol and returns the plan and transcript."""

import threading

from tender.catalog import ApiNotFound, Catalog
from tender.ranking.evidence import LEVEL_WORDS, level
from tender.ranking.judge import Judge
from tender.ranking.policy import FORM_WORDS, OTHER_FORM
from tender.ranking.reader import Reader
from tender.ranking.retrieval import Ranker
from tender.ranking.choice import scorer_for
from tender.ranking.scorer import Scorer
from tender.ranking.vectors import QueryEncoder

from . import protocols
from .context import RunContext
from .contractor import ContractorPool
from .manager import Manager, Negotiation
from .outcome import plan_of
from .plan import Award, Plan, Run
from .reasoners.base import Reasoner
from .request import InvalidRequest, Request
from .routing import Router


class Tender:
    """Holds the catalogue, its ranking, one contractor pool and router per organisation, and the reasoners.
    Safe to share between threads: a run's state lives in its Negotiation."""

    def __init__(
        self,
        catalog: Catalog,
        *,
        manager: Reasoner | None = None,
        contractors: Reasoner | None = None,
        scorer: Scorer | None = None,
        reader: Reader | None = None,
        judge: Judge | None = None,
    ):
        if catalog.embedder is None:
            raise ValueError("Tender needs a catalogue opened with an embedder")
        self.catalog = catalog
        self.encoder = QueryEncoder.wrap(catalog.embedder)
        scorer = scorer or scorer_for(None, catalog, reader)
        self.ranker = Ranker(catalog, self.encoder, scorer, reader, judge)
        if manager is None or contractors is None:
            from .reasoners.embedded import EmbeddedReasoner

            default = EmbeddedReasoner()
            manager, contractors = manager or default, contractors or default
        self.manager_reasoner = manager
        self.contractor_reasoner = contractors
        self._pools: dict[str, ContractorPool] = {}
        self._routers: dict[str, Router] = {}
        self._lock = threading.Lock()

    def _directory(self, organisation: str) -> tuple[ContractorPool, Router]:
        with self._lock:
            if organisation not in self._pools:
                self._pools[organisation] = ContractorPool(self.catalog)
                self._routers[organisation] = Router(self.catalog, organisation)
            return self._pools[organisation], self._routers[organisation]

    def warm_up(self) -> None:
        """Load the embedding model, the judge's and the routers, so that the first request is not the slow one."""
        self.encoder.one("warm up")
        if self.ranker.judge is not None:
            self.ranker.judge.warm_up()
        for organisation in ("api", "category", "provider"):
            self._directory(organisation)

    def _resolve(self, request: Request) -> tuple[Request, set[int]]:
        """Check names in the constraints against the catalogue; unknown ones are the caller's to fix."""
        constraints = request.constraints
        try:
            excluded = {self.catalog.get_api(a).id for a in constraints.excluded_apis}
        except ApiNotFound as error:
            raise InvalidRequest(f"excluded_apis: {error}") from None
        required = [self.catalog.check_category(c) for c in constraints.required_categories]
        excluded_categories = [self.catalog.check_category(c) for c in constraints.excluded_categories]
        clash = set(required) & set(excluded_categories)
        if clash:
            raise InvalidRequest(f"categories {sorted(clash)} are both required and excluded; drop one of the two")
        constraints = constraints.model_copy(
            update={"required_categories": required, "excluded_categories": excluded_categories}
        )
        return request.model_copy(update={"constraints": constraints}), excluded

    def recommend(self, request: Request, context: RunContext | None = None) -> Run:
        context = context or RunContext()
        request, excluded = self._resolve(request)
        pool, router = self._directory(request.organisation)
        protocol = protocols.PROTOCOLS[request.protocol]
        manager = Manager(
            self.catalog,
            self.ranker,
            self.manager_reasoner,
            router,
            pool,
            self.contractor_reasoner if protocol.contract_net else self.manager_reasoner,
        )
        negotiation = Negotiation(request, context, excluded)
        outcome = protocol.negotiate(manager, negotiation)
        for api_id in outcome.final:
            api = self.catalog.get_api(api_id)
            if api.gone:
                context.note(
                    f"{api.name} is deprecated ({api.status_source or 'by its source'}); it is in the plan because "
                    "the request included deprecated items: check that it still works."
                )
        if negotiation.form_note:
            context.note(negotiation.form_note)
        context.report(1, 1, "plan ready")
        plan = plan_of(
            self.catalog,
            negotiation,
            outcome,
            cost=self.ranker.scorer.objective.cost_for(self.ranker.has_history),
            contract_net=protocol.contract_net,
            backends={"manager": self.manager_reasoner.name, "contractors": self.contractor_reasoner.name},
        )
        self._other_forms(plan, negotiation)
        return Run(plan=plan, transcript=self._transcript(negotiation))

    def _other_forms(self, plan: Plan, negotiation: Negotiation) -> None:
        """An unserved step of one form names the best item of the other form, never awarding it: "no MCP server
        for this in the catalogue; X is its web API" where the request names X, else "X, a web API, may serve the
        need" (SocialSwarm is not the web API of "draft replies")."""
        if not self.ranker.mixed_forms:
            return
        cost = self.ranker.scorer.objective.cost_for(self.ranker.has_history)
        for step in plan.steps:
            other = OTHER_FORM.get(step.form)
            if step.awarded or other is None:
                continue
            best = self.ranker.shortlist(
                step.function, plan.requirement, exclude=negotiation.excluded_apis, form=other
            ).best(1)
            if not best or best[0].score < cost:
                continue
            if self.ranker.refused([(step.function, best[0].item, best[0].score, best[0].evidence)])[0] is not None:
                continue  # a near miss of the other form is no answer either
            api = self.catalog.get_api(best[0].item)
            step.other_form = Award(
                api_id=api.id,
                api_name=api.name,
                score=best[0].score,
                rationale=f"a {FORM_WORDS[other]}, not a {FORM_WORDS[step.form]}",
                status=api.status,
                level=level(best[0].score, best[0].evidence.high),
            )
            what = (
                f"{api.name} is its {FORM_WORDS[other]}"
                if best[0].evidence.named > 0
                else f"{api.name}, a {FORM_WORDS[other]}, {LEVEL_WORDS[step.other_form.level]}"
            )
            said = f"no {FORM_WORDS[step.form]} for this in the catalogue; {what} ({best[0].score:.2f})"
            step.reason = f"{said}; {step.reason}" if step.reason else said

    def _transcript(self, negotiation: Negotiation):
        transcript = negotiation.transcript
        transcript.notes.extend(negotiation.context.notes)
        return transcript
