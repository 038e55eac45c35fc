"""The manager: takes the caller's needs or decomposes the requirement, maps functions to categories, announces
calls for proposals to the contractors holding each function's best candidates, and awards contracts. What it
reasons with is its reasoner; what it knows of the catalogue comes from the ranking (tender.ranking)."""

from concurrent.futures import ThreadPoolExecutor

from tender.catalog import Catalog
from tender.ranking.evidence import Evidence
from tender.ranking.retrieval import Ranker, Shortlist
from tender.settings import LLM_IN_FLIGHT_DEFAULT

from .context import RunContext
from .contractor import ContractorPool
from .form import FormReading, describe, read_forms
from .messages import (
    MANAGER,
    AcceptProposal,
    Backtrack,
    CallForProposals,
    Failure,
    Inform,
    Propose,
    RejectProposal,
    Transcript,
)
from .reasoners.base import Reasoner
from .request import Request
from .routing import Router
from .tasks import CategoryCandidate, CoUsageEdge, DecomposeTask, FunctionSpec, MapCategoriesTask, SelectTask
from .text import short_name

# Selections a judge may send back (ranking/judge.py): a refusal takes away the need's bids that scored no better
# than the refused one (nearer misses still), so a need is left unserved rather than handed its next-best near miss.
JUDGED_ROUNDS = 3
CATEGORY_EVIDENCE = 10  # a function's categories are read off its best this-many candidates


class Negotiation:
    """The state of one run: the request, the transcript, and what each stage found."""

    def __init__(self, request: Request, context: RunContext, excluded_apis: set[int]):
        self.request = request
        self.context = context
        self.transcript = Transcript()
        self.excluded_apis = excluded_apis
        self.excluded_categories = set(request.constraints.excluded_categories)
        self.mapped_categories: dict[str, None] = {}
        self.proposed: dict[int, float] = {}  # each proposed API's best bid
        # Bids of items their source marks gone, kept out of the selection unless the request includes them: a step
        # only they would serve is unserved, and says so.
        self.dead: list[Propose] = []
        self.contacted: set[str] = set()
        self.context_parts: list[str] = []  # the parts of the requirement the decomposition read as context
        self.forms: dict[str, str] = {}  # each function's text -> the form that serves it (agents/form.py)
        self.form_note = ""
        # What read the request into needs: the caller (who stated them), rules, or a model, by its name.
        self.read_by = "the caller" if request.needs else "rules"
        self._shortlists: dict[tuple[str, str], Shortlist] = {}
        self._tasks = 0

    def candidates(self) -> list[int]:
        """Every item the ranking shortlisted for this run's functions, once, by its best score."""
        best: dict[int, float] = {}
        for shortlist in self._shortlists.values():
            for c in shortlist.candidates:
                best[c.item] = max(best.get(c.item, 0.0), c.score)
        return sorted(best, key=lambda a: (-best[a], a))

    def form_of(self, text: str) -> str:
        """The form that serves a function (or a part of the requirement): as the caller's kind says, as read for
        it, else as the request reads as a whole."""
        kind = self.request.kind
        if kind is not None:
            return kind
        if text not in self.forms:
            self.forms[text] = read_forms(self.request.requirement, [text]).forms[0]
        return self.forms[text]

    def next_task_id(self) -> str:
        self._tasks += 1
        return f"t{self._tasks}"

    def send(self, message) -> None:
        self.transcript.messages.append(message)


class Manager:
    def __init__(
        self,
        catalog: Catalog,
        ranker: Ranker,
        reasoner: Reasoner,
        router: Router,
        pool: ContractorPool,
        contractor_reasoner: Reasoner,
        max_categories: int = 3,
    ):
        self.catalog = catalog
        self.ranker = ranker
        self.reasoner = reasoner
        self.router = router
        self.pool = pool
        self.contractor_reasoner = contractor_reasoner
        self.max_categories = max_categories

    # -- step 1 -----------------------------------------------------------------------------------
    def decompose(
        self, request: Request, context: RunContext, negotiation: Negotiation | None = None
    ) -> list[FunctionSpec]:
        """Step 1: the needs the caller stated, as they are, or the reasoner's decomposition of the requirement;
        each with the form that serves it (the caller's kind, a form the reasoner read, else read by rules)."""
        if request.needs:
            if request.needs_note is None:
                context.note(
                    f"The plan's {len(request.needs)} step(s) are the needs stated with the request, as stated."
                )
            functions = [
                FunctionSpec(id=f"f{i}", name=short_name(need), description=need)
                for i, need in enumerate(request.needs, start=1)
            ]
        else:
            decomposition = self.reasoner.run(DecomposeTask(requirement=request.requirement), context)
            if negotiation is not None:
                negotiation.context_parts = list(decomposition.context)
                negotiation.read_by = decomposition.read_by or self._reader()
            functions = list(decomposition.functions)
        return self.with_forms(request, functions, negotiation)

    def _reader(self) -> str:
        """What read a decomposition that does not say: an LLM, by its model's name, else the rules."""
        if self.reasoner.uses_llm:
            model = getattr(self.reasoner, "model", "")
            return f"the LLM {model}" if model else "an LLM"
        return "rules"

    def with_forms(
        self, request: Request, functions: list[FunctionSpec], negotiation: Negotiation | None
    ) -> list[FunctionSpec]:
        """The functions with their forms, and the plan's note saying what was read, where the catalogue holds
        both MCP servers and web APIs (elsewhere the form chooses nothing)."""
        if request.kind is not None:
            reading = FormReading(forms=[request.kind] * len(functions), source="given")
        else:
            reading = read_forms(request.requirement, [f.description for f in functions])
            stated = [f.form for f in functions]  # a reasoner that read the forms itself (the local model) is kept
            if any(form != "any" for form in stated):
                reading = FormReading(forms=stated, source="model")
        functions = [f.model_copy(update={"form": form}) for f, form in zip(functions, reading.forms)]
        if negotiation is not None:
            negotiation.forms.update({f.description: f.form for f in functions})
            if self.ranker.mixed_forms:
                negotiation.form_note = describe(reading, [f.description for f in functions])
        return functions

    # -- step 2 -----------------------------------------------------------------------------------
    def map_categories(
        self, negotiation: Negotiation, functions: list[FunctionSpec], shortlists: list[Shortlist]
    ) -> dict[str, list[str]]:
        """Step 2 for every function at once (one call for an LLM): the categories to announce each under, those of
        its best candidates as the reasoner chooses among them. None in a catalogue without categories."""
        tasks = {f.id: t for f, s in zip(functions, shortlists) if (t := self._map_task(negotiation, f, s))}
        mapped: dict[str, list[str]] = {f.id: [] for f in functions}
        if not tasks:
            return mapped
        for (function_id, task), mapping in zip(
            tasks.items(), self.reasoner.run_batch(list(tasks.values()), negotiation.context)
        ):
            known = {c.name for c in task.candidates}
            mapped[function_id] = [c for c in mapping.categories if c in known][: self.max_categories]
        return mapped

    def _map_task(
        self, negotiation: Negotiation, function: FunctionSpec, shortlist: Shortlist
    ) -> MapCategoriesTask | None:
        weight: dict[str, float] = {}
        count: dict[str, int] = {}
        best = shortlist.candidates[:CATEGORY_EVIDENCE]
        total = sum(c.score for c in best) or 1.0
        for c in best:
            for name in self.catalog.get_api(c.item).categories[:1]:
                if name in negotiation.excluded_categories:
                    continue
                weight[name] = max(weight.get(name, 0.0), c.score)
                count[name] = count.get(name, 0) + 1
        if not weight:
            return None
        shares = {
            n: sum(c.score for c in best if n in self.catalog.get_api(c.item).categories[:1]) / total for n in weight
        }
        sizes = {c.name: c.api_count for c in self.catalog.categories()}
        candidates = [
            CategoryCandidate(
                name=n, similarity=round(weight[n], 4), neighbour_votes=round(shares[n], 4), api_count=sizes.get(n, 0)
            )
            for n in sorted(weight, key=lambda n: (-weight[n], n))
        ]
        return MapCategoriesTask(
            requirement=negotiation.request.requirement,
            function=function,
            candidates=candidates,
            max_categories=self.max_categories,
        )

    # -- step 3 -----------------------------------------------------------------------------------
    def shortlists(self, negotiation: Negotiation, texts: list[str]) -> list[Shortlist]:
        """The shortlists of several functions (or parts of the requirement), their texts embedded together first:
        one pass of the encoder for the run's texts rather than one each."""
        self.ranker.prepare(negotiation.request.requirement, texts)
        return [self.shortlist(negotiation, text) for text in texts]

    def shortlist(self, negotiation: Negotiation, text: str) -> Shortlist:
        """The ranking's candidates for a function (or a part of the requirement), once a run."""
        key = (text, negotiation.request.requirement)
        if key not in negotiation._shortlists:
            negotiation._shortlists[key] = self.ranker.shortlist(
                text,
                negotiation.request.requirement,
                exclude=negotiation.excluded_apis,
                form=negotiation.form_of(text),
                include_unfit=negotiation.request.constraints.include_deprecated,
            )
        return negotiation._shortlists[key]

    def announce(
        self,
        negotiation: Negotiation,
        *,
        function: FunctionSpec | None,
        categories: list[str],
        steps: list[str],
        shortlists: tuple[Shortlist, ...],
        round: int = 1,
        reserve: float | None = None,
    ) -> list[Propose]:
        """Send a call for proposals to the routed contractors and collect their answers."""
        context = negotiation.context
        request = negotiation.request
        cfp = CallForProposals(
            sender=MANAGER,
            receiver="*",
            task_id=negotiation.next_task_id(),
            at_ms=context.elapsed_ms(),
            function_id=function.id if function else None,
            function=function.description if function else None,
            categories=categories,
            requirement=request.requirement,
            needs=[] if function else list(request.needs or []),
            round=round,
            steps=steps,
            reserve=reserve,
        )
        negotiation.send(cfp)
        negotiation.mapped_categories.update(dict.fromkeys(categories))
        # LLM contractors cost a call each: a function's call for proposals (one of several a request makes) reaches
        # the nearest `contractors_per_call` of them; the one call announcing the whole requirement reaches top_n.
        limit = getattr(self.contractor_reasoner, "contractors_per_call", None)
        llm = getattr(self.contractor_reasoner, "uses_llm", False)
        top_n = min(request.top_n, limit) if limit and llm and function is not None else request.top_n
        routing, contractor_ids = self.router.route(
            cfp, shortlists, top_n, request.routing, negotiation.excluded_apis, negotiation.excluded_categories
        )
        negotiation.transcript.routing.append(routing)
        negotiation.contacted.update(contractor_ids)
        context.cost.calls_for_proposals += 1
        contractors = [self.pool.contractor(c, self.contractor_reasoner) for c in contractor_ids]
        objective = self.ranker.scorer.objective
        if llm and len(contractors) > 1:
            # LLM contractors bid in parallel, within the reasoner's limit of calls in flight.
            workers = max(1, int(getattr(self.contractor_reasoner, "max_in_flight", LLM_IN_FLIGHT_DEFAULT)))
            with ThreadPoolExecutor(max_workers=workers) as pool:
                answers = list(pool.map(lambda c: c.handle(cfp, context, shortlists, objective), contractors))
        else:
            answers = [c.handle(cfp, context, shortlists, objective) for c in contractors]
        proposals = []
        for replies in answers:
            for reply in replies:
                negotiation.send(reply)
                if reply.kind != "propose":
                    continue
                if self.admissible(negotiation, reply) is None:
                    proposals.append(reply)
                    negotiation.proposed[reply.api_id] = max(reply.score, negotiation.proposed.get(reply.api_id, 0.0))
                elif self._dead(negotiation, reply.api_id):
                    negotiation.dead.append(reply)
        return proposals

    def _dead(self, negotiation: Negotiation, api_id: int) -> bool:
        return not negotiation.request.constraints.include_deprecated and self.catalog.get_api(api_id).gone

    def admissible(self, negotiation: Negotiation, proposal: Propose) -> str | None:
        """Why a proposal breaks a constraint, or None."""
        if proposal.api_id in negotiation.excluded_apis:
            return f"{proposal.api_name} is excluded by the request"
        if self._dead(negotiation, proposal.api_id):
            return f"{proposal.api_name} is no longer available (pass include_deprecated to use it anyway)"
        broken = negotiation.excluded_categories.intersection(self.catalog.get_api(proposal.api_id).categories)
        if broken:
            return f"{proposal.api_name} is in excluded categories {sorted(broken)}"
        return None

    def backtrack(
        self, negotiation: Negotiation, function: FunctionSpec, tried: list[str], round: int, reason: str
    ) -> None:
        """Record that a function goes out again, to every category (its mapped ones drew no acceptable bid)."""
        negotiation.transcript.backtracking.append(
            Backtrack(
                function_id=function.id, round=round, reason=reason, from_categories=sorted(tried), to_categories=[]
            )
        )

    # -- step 4 -----------------------------------------------------------------------------------
    def select(self, negotiation: Negotiation, functions: list[FunctionSpec], proposals: list[Propose]):
        """The reasoner's selection (a Selection: the items, and for each the function it is awarded), each award
        put to the judge (ranking/judge.py) where there is one: an item it finds does not serve the need it would
        be awarded for loses that bid, with the need's bids that scored no better, and the reasoner selects again
        from the rest, at most JUDGED_ROUNDS times (Ranker.refused says which awards are put to it)."""
        selection = self._select(negotiation, functions, proposals)
        for _ in range(JUDGED_ROUNDS):
            refused = self._refused(negotiation, functions, proposals, selection)
            if not refused:
                break
            # A need's bids that scored no better than one the judge refused are nearer misses still.
            proposals = [p for p in proposals if p.score > refused.get(p.function_id or "", -1.0)]
            selection = self._select(negotiation, functions, proposals)
        return selection

    def _refused(
        self, negotiation: Negotiation, functions: list[FunctionSpec], proposals: list[Propose], selection
    ) -> dict[str, float]:
        """For each function, the best score of an award the judge refuses for it; each refusal noted in the plan."""
        judge = self.ranker.judge
        if judge is None:
            return {}
        needs = {f.id: f.description for f in functions}
        awarded: list[tuple[Propose, Evidence]] = []
        for item in selection.api_ids:
            bids = sorted((p for p in proposals if p.api_id == item), key=lambda p: -p.score)
            function = selection.awards.get(item) or (bids[0].function_id if bids else None)
            bid = next((p for p in bids if p.function_id == function), None)
            if bid is not None and bid.evidence is not None and function in needs:
                awarded.append((bid, bid.evidence))
        judged = self.ranker.refused([(needs[str(b.function_id)], b.api_id, b.score, e) for b, e in awarded])
        refused: dict[str, float] = {}
        for (bid, _), similarity in zip(awarded, judged):
            if similarity is None:
                continue
            function = str(bid.function_id)
            refused[function] = max(bid.score, refused.get(function, -1.0))
            negotiation.context.note(
                f"{bid.api_name} was not awarded for '{needs[function]}': {judge.name} judged it not to serve the "
                f"need (similarity {similarity:.2f}, below {judge.floor:.2f})."
            )
        return refused

    def _select(self, negotiation: Negotiation, functions: list[FunctionSpec], proposals: list[Propose]):
        ids = list(dict.fromkeys(p.api_id for p in proposals))
        edges = [
            CoUsageEdge(a=a, b=b, weight=round(w, 4))
            for i, a in enumerate(ids)
            for b in ids[i + 1 :]
            if (w := self.catalog.co_usage_weight(a, b)) > 0
        ]
        selection = self.reasoner.run(
            SelectTask(
                requirement=negotiation.request.requirement,
                functions=functions,
                proposals=proposals,
                co_usage=edges,
                max_apis=negotiation.request.constraints.max_apis,
                providers={a: self.catalog.get_api(a).provider_name for a in ids},
                selection=self.ranker.scorer.objective,
            ),
            negotiation.context,
        )
        known = set(ids)
        return selection.model_copy(update={"api_ids": [a for a in dict.fromkeys(selection.api_ids) if a in known]})

    def award(
        self, negotiation: Negotiation, proposals: list[Propose], selected: list[int], awards: dict[int, Propose]
    ) -> None:
        """Accept the proposal each selected API is awarded on (`awards`, one per API), reject the rest; the winners
        inform."""
        chosen = set(selected)
        at = negotiation.context.elapsed_ms
        for p in proposals:
            if awards.get(p.api_id) is p and p.api_id in chosen:
                negotiation.send(
                    AcceptProposal(
                        sender=MANAGER,
                        receiver=p.sender,
                        task_id=p.task_id,
                        at_ms=at(),
                        api_id=p.api_id,
                        reason=f"selected (score {p.score:.2f})",
                    )
                )
            else:
                why = (
                    "a better bid for the same API was accepted"
                    if p.api_id in chosen
                    else "not selected for the final set"
                )
                negotiation.send(
                    RejectProposal(
                        sender=MANAGER, receiver=p.sender, task_id=p.task_id, at_ms=at(), api_id=p.api_id, reason=why
                    )
                )
        for api_id in selected:
            p = awards[api_id]
            negotiation.send(
                Inform(
                    sender=p.sender,
                    receiver=MANAGER,
                    task_id=p.task_id,
                    at_ms=at(),
                    api_id=api_id,
                    result=f"{p.api_name} contracted" + (f" for {p.function_id}" if p.function_id else ""),
                )
            )

    def fail(self, negotiation: Negotiation, task_id: str, reason: str) -> None:
        negotiation.send(
            Failure(
                sender=MANAGER, receiver="*", task_id=task_id, at_ms=negotiation.context.elapsed_ms(), reason=reason
            )
        )
