"""Tender: the agency that takes a request, runs the chosen protocol and returns the plan and transcript."""

import threading
import uuid
from pathlib import Path

from tender.catalog import ApiNotFound, Catalog
from tender.catalog.encoders import check_encoder, recorded_encoder
from tender.ranking.reader import Reader
from tender.ranking.retrieval import Ranker
from tender.ranking.scorer import MODEL_FILE, Scorer, shipped_model
from tender.ranking.vectors import QueryEncoder

from . import protocols
from .context import RunContext
from .contractor import ContractorPool
from .language import NAMES, language
from .manager import Manager, Negotiation
from .outcome import Outcome, best_proposals, bids_best_first, fill_steps
from .plan import CATEGORY_IDS, Plan, RecommendedApi, Run, Stages
from .reasoners.base import Reasoner
from .request import InvalidRequest, Request
from .routing import Router


def ranking_model(path: Path | None, embedder) -> Scorer:
    """The ranking model: a refitted one (TENDER_RANKING_MODEL) or the one fitted on the loaded encoder's vectors,
    shipped or written beside the encoder's folder by `tender train ranker` (the hashing encoder of the tests runs
    the stock one)."""
    from tender.catalog import TenderError

    encoder = embedder.encoder
    testing = encoder.name.startswith("hashing")
    if path is None:
        folder = getattr(getattr(embedder, "folder", None), "path", None)
        stock = getattr(embedder, "stock", True)
        path = shipped_model(encoder.name, encoder.fingerprint, None if stock else folder)
        if path is None and not testing:
            where = f" (it is written beside the encoder, in {folder}, and used from then on)" if folder else ""
            raise TenderError(
                f"No ranking model is fitted for the encoder {encoder}: fit one with `tender train ranker`{where}, "
                "or name one with TENDER_RANKING_MODEL."
            )
        path = path or MODEL_FILE
    try:
        scorer = Scorer.load(path)
    except (OSError, ValueError) as error:  # pydantic's ValidationError is a ValueError
        raise TenderError(
            f"Cannot read the ranking model {path}: {str(error).splitlines()[0]}. Refit it with "
            "`tender train ranker --out FILE`, or unset TENDER_RANKING_MODEL for the shipped one."
        ) from None
    if scorer.encoder and not testing:
        check_encoder(
            f"The ranking model {path.name}",
            recorded_encoder(scorer.encoder, scorer.encoder_weights or None),
            encoder,
            "Use the encoder it was fitted on (unset TENDER_EMBEDDING_MODEL for the stock one), or refit it for this "
            "encoder: `tender train ranker --out FILE`, then TENDER_RANKING_MODEL=FILE.",
        )
    return scorer


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
    ):
        if catalog.embedder is None:
            raise ValueError("Tender needs a catalogue opened with an embedder")
        self.catalog = catalog
        self.encoder = QueryEncoder.wrap(catalog.embedder)
        # With a reader, the ranking model is the one fitted on the reader's vectors (ranking/reader.py).
        scorer = scorer or ranking_model(None, reader.embedder if reader else catalog.embedder)
        self.ranker = Ranker(catalog, self.encoder, scorer, reader)
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
        """Load the embedding model and the routers, so that the first request is not the slow one."""
        self.encoder.one("warm up")
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
        awards = outcome.awarded
        for api_id in outcome.final:
            api = self.catalog.get_api(api_id)
            if api.status == "deprecated":
                context.note(
                    f"{api.name} is deprecated ({api.status_source or 'by its source'}); it is in the plan because "
                    "the request included deprecated items: check that it still works."
                )
        context.report(1, 1, "plan ready")
        return Run(plan=self._plan(request, negotiation, outcome, awards), transcript=self._transcript(negotiation))

    def _name_the_dead(self, negotiation: Negotiation, outcome: Outcome) -> None:
        """An unserved step whose credible bids all came from items no longer available says so, naming them: the
        catalogue knew something that once did the job."""
        cost = self.ranker.scorer.objective.cost_for(self.ranker.has_history)
        for step in outcome.steps:
            if step.awarded:
                continue
            live = max((p.score for p in outcome.proposals if p.function_id == step.id), default=0.0)
            credible = [p for p in negotiation.dead if p.function_id == step.id and p.score > max(live, cost)]
            dead = sorted(best_proposals(credible).values(), key=lambda p: -p.score)
            if dead:
                named = ", ".join(f"{p.api_name} ({p.score:.2f})" for p in dead[:3])
                step.reason = (
                    f"the catalogue's only candidates for '{step.function}' are no longer available: {named}"
                    + (f"; {step.reason}" if step.reason else "")
                )

    def _transcript(self, negotiation: Negotiation):
        transcript = negotiation.transcript
        transcript.notes.extend(negotiation.context.notes)
        return transcript

    def _plan(self, request: Request, negotiation: Negotiation, outcome: Outcome, awards: dict) -> Plan:
        context = negotiation.context
        names = {p.api_id: p.api_name for p in outcome.proposals}
        fill_steps(outcome, awards, names)
        self._name_the_dead(negotiation, outcome)
        for step in outcome.steps:
            for award in step.awarded:
                award.status = self.catalog.get_api(award.api_id).status
        apis = []
        for api_id in outcome.final:
            api = self.catalog.get_api(api_id)
            p = awards[api_id]
            apis.append(
                RecommendedApi(
                    api_id=api_id,
                    name=api.name,
                    score=p.score,
                    categories=api.categories,
                    url=api.url,
                    steps=[s.id for s in outcome.steps if any(a.api_id == api_id for a in s.awarded)],
                    rationale=p.rationale,
                    status=api.status,
                    status_source=api.status_source,
                    link=api.link,
                    provider=api.provider_name,
                    server=api.server,
                    tool=api.tool,
                )
            )
        verdict = "plan"
        written_in = language(request.requirement)
        if written_in not in (None, "en"):
            context.note(
                f"The requirement looks {NAMES.get(written_in, written_in)}; the catalogue and the embedded "
                "model are English, so matches are weak: write it in English for a reliable plan."
            )
        if not outcome.final:
            verdict = "nothing fits"
            top = max(outcome.proposals, key=lambda p: p.score, default=None)
            context.note(
                "Nothing in the catalogue fits this requirement"
                + (
                    f": the best bid, {top.api_name} at {top.score:.2f}, is not credible."
                    if top
                    else ": no contractor proposed an API."
                )
                if not request.constraints.excluded_apis
                else "Nothing is left to recommend: every API that bid is excluded by the request."
            )
        context.cost.messages = len(negotiation.transcript.messages)
        context.cost.contractors_contacted = len(negotiation.contacted)
        contract_net = protocols.PROTOCOLS[request.protocol].contract_net
        category, in_categories = (
            self.catalog.first_apis_in_categories(negotiation.mapped_categories, CATEGORY_IDS)
            if contract_net
            else ([], 0)
        )
        stages = Stages(
            candidates=negotiation.candidates(),
            category=category,
            category_total=in_categories,
            bidding=bids_best_first(outcome),
            final=list(outcome.final),
        )
        return Plan(
            run_id=uuid.uuid4().hex,
            requirement=request.requirement,
            protocol=request.protocol,
            organisation=request.organisation,
            steps=outcome.steps,
            apis=apis,
            stages=stages,
            cost=context.cost,
            latency_ms=round(context.elapsed_ms(), 2),
            constraints=request.constraints,
            backends={"manager": self.manager_reasoner.name, "contractors": self.contractor_reasoner.name},
            notes=list(context.notes),
            verdict=verdict,
            context=list(negotiation.context_parts),
        )
