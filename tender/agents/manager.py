"""The manager: decomposes the requirement, maps functions to categories, announces calls for
proposals, and awards contracts. What it reasons with is its reasoner; what it knows is the category
list, the tool graph (co-usage) and past mashups."""

import math
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from tender.catalog import Catalog, Hit

from .context import RunContext
from .contractor import ContractorPool
from .messages import (
    MANAGER,
    AcceptProposal,
    Backtrack,
    CallForProposals,
    Failure,
    Inform,
    Neighbourhood,
    Propose,
    RejectProposal,
    Transcript,
)
from .reasoners.base import Reasoner
from .request import Request
from .routing import Router
from .lexicon import Lexicon
from .tasks import CategoryCandidate, CoUsageEdge, DecomposeTask, FunctionSpec, MapCategoriesTask, Part, SelectTask
from .text import clauses, fragments, short_name
from .vectors import QueryEncoder


class Negotiation:
    """The state of one run: the request, the transcript, and the candidate sets of each stage."""

    def __init__(self, request: Request, context: RunContext, excluded_apis: set[int]):
        self.request = request
        self.context = context
        self.transcript = Transcript()
        self.excluded_apis = excluded_apis
        self.excluded_categories = set(request.constraints.excluded_categories)
        self.mapped_categories: dict[str, None] = {}
        self.proposed: dict[int, float] = {}  # each proposed API's best bid
        self.contacted: set[str] = set()
        self._tasks = 0

    def next_task_id(self) -> str:
        self._tasks += 1
        return f"t{self._tasks}"

    def send(self, message) -> None:
        self.transcript.messages.append(message)


def weighed(
    hits, temperature: float, about: str | None = None, words: float = 0.0, provider_of=None, sibling_weight=0.0
) -> Neighbourhood | None:
    """The neighbourhood a contractor votes against: the nearest and k-th similarities of the hits, and the
    sum of their weights exp((similarity - nearest) / temperature). With `provider_of` (descriptions), a
    provider counts by its nearest item, its others' weight times `sibling_weight`: four near-alike 'send
    email' operations of one API would otherwise split one vote four ways where an API with one such operation
    keeps it whole, and an API of many loosely related operations would outweigh a lone tool that fits better."""
    if not hits:
        return None
    nearest = hits[0].score
    weights = [math.exp((h.score - nearest) / temperature) for h in hits]
    if provider_of is not None:
        held: dict[str, list[float]] = defaultdict(list)
        for h, w in zip(hits, weights):
            held[provider_of(h.id)].append(w)
        weights = [max(ws) + sibling_weight * (sum(ws) - max(ws)) for ws in held.values()]
    return Neighbourhood(
        k=len(hits),
        nearest=round(nearest, 6),
        radius=round(hits[-1].score, 6),
        temperature=temperature,
        mass=round(sum(weights), 6),
        about=about,
        words=words,
    )


class Manager:
    def __init__(
        self,
        catalog: Catalog,
        encoder: QueryEncoder,
        reasoner: Reasoner,
        router: Router,
        pool: ContractorPool,
        contractor_reasoner: Reasoner,
        neighbours: int = 10,
        bid_neighbours: int = 20,
        vote_temperature: float = 0.1,
        max_categories: int = 8,
        description_neighbours: int = 20,
        description_temperature: float = 0.05,
        lexicon: Lexicon | None = None,
        lexical_weight: float = 0.3,
        routing_lexical_weight: float = 1.0,
        vote_lexical_weight: float = 0.3,
        sibling_weight: float = 0.0,
    ):
        self.catalog = catalog
        self.encoder = encoder
        self.reasoner = reasoner
        self.router = router
        self.pool = pool
        self.contractor_reasoner = contractor_reasoner
        self.neighbours = neighbours  # past mashups voting for categories
        # The neighbourhood announced to bidders, the descriptions announced and the categories a function
        # may map to: sizes and temperatures chosen on tuning samples (docs/tuning.md).
        self.bid_neighbours = bid_neighbours
        self.vote_temperature = vote_temperature
        self.description_neighbours = description_neighbours
        self.description_temperature = description_temperature
        self.max_categories = max_categories
        self._neighbourhoods: dict[str, dict] = {}  # a run announces the same past in every call
        self._word_shares: dict[str, np.ndarray] = {}  # ... and routes and ranks by a function's words more than once
        self.lexicon = lexicon  # the catalogue's words, to find which APIs explain each piece of a requirement
        self.lexical_weight = lexical_weight
        # How much the task's words count beside profile similarity when a catalogue without history is routed
        # (Router.routes_on_words); chosen on MetaTool's tune half and validation mashups (docs/tuning.md).
        self.routing_lexical_weight = routing_lexical_weight
        # ... and how much they count when it ranks the descriptions nearest to a function or to the requirement,
        # whose shares are the bidders' function and description votes (chosen the same way; docs/tuning.md).
        self.vote_lexical_weight = vote_lexical_weight
        # How much a provider's other items near the task add to its nearest one's weight in those rankings'
        # mass (0: a provider counts once; 1: every item counts; docs/tuning.md).
        self.sibling_weight = sibling_weight
        # A manager serves one run: its decomposition, whose functions it maps together in one step (one LLM call).
        self._functions: list[FunctionSpec] = []
        self._mapped: dict[str, list[str]] | None = None

    # -- steps 1 and 2 ----------------------------------------------------------------------------
    def decompose(self, request: Request, context: RunContext) -> list[FunctionSpec]:
        """Step 1: the needs the caller stated, as they are, or the reasoner's decomposition of the requirement."""
        if request.needs:
            functions = [
                FunctionSpec(id=f"f{i}", name=short_name(need), description=need)
                for i, need in enumerate(request.needs, start=1)
            ]
            context.note(f"The plan's {len(functions)} step(s) are the needs the caller stated, as stated.")
        else:
            requirement = request.requirement
            functions = self.reasoner.run(
                DecomposeTask(requirement=requirement, parts=self.parts(requirement)), context
            ).functions
        self._functions = list(functions)
        return functions

    def parts(self, requirement: str, top: int = 5) -> list[Part]:
        """The requirement's pieces, each with the APIs whose descriptions and words explain it best."""
        pieces = fragments(requirement)
        if len(pieces) < 2 or self.lexicon is None:
            return [Part(text=p) for p in pieces]
        table = self.catalog.vectors("api")
        vectors = self.encoder.embed(pieces)
        out = []
        for piece, vector in zip(pieces, vectors):
            scores = table.matrix @ vector + self.lexical_weight * self.lexicon.scores(piece)
            order = np.argsort(-scores)[:top]
            out.append(
                Part(text=piece, apis=[int(table.ids[r]) for r in order], score=round(float(scores[order[0]]), 4))
            )
        return out

    def category_candidates(
        self, requirement: str, function: FunctionSpec, skip: set[str], limit: int = 8
    ) -> list[CategoryCandidate]:
        """Categories close to the function, and the categories of the APIs that similar past mashups used."""
        f_vector = self.encoder.one(function.description, context=requirement)
        by_similarity = {h.id: h.score for h in self.catalog.search(f_vector, kind="category", k=limit + len(skip))}
        votes: dict[str, float] = defaultdict(float)
        hits = self.catalog.search(self.task_vector(requirement, function), kind="mashup", k=self.neighbours)
        total = sum(max(h.score, 0.0) for h in hits) or 1.0
        for hit in hits:
            names = {c for a in self.catalog.get_mashup(hit.id).api_ids for c in self.catalog.get_api(a).categories[:1]}
            for name in sorted(names):  # a set's order changes between processes; ties must not
                votes[name] += max(hit.score, 0.0) / total
        top_votes = sorted(votes, key=lambda n: (-votes[n], n))[: limit + len(skip)]
        counts = {c.name: c.api_count for c in self.catalog.categories()}
        names = [n for n in dict.fromkeys([*by_similarity, *top_votes]) if n not in skip]
        table = self.catalog.vectors("category")
        return [
            CategoryCandidate(
                name=n,
                similarity=round(by_similarity.get(n, float(table.vector(n) @ f_vector) if n in table.row else 0.0), 4),
                neighbour_votes=round(votes.get(n, 0.0), 4),
                api_count=counts.get(n, 0),
            )
            for n in names
        ]

    def map_categories(self, negotiation: Negotiation, function: FunctionSpec, tried: set[str]) -> list[str]:
        """The categories to announce a function under, none of `tried`. The first time, every function of the
        decomposition is mapped in one step (one call for an LLM); backtracking maps one function again."""
        if not tried and self._mapped is None and len(self._functions) > 1 and function in self._functions:
            self._mapped = self._map_all(negotiation, self._functions)
        if not tried and self._mapped and function.id in self._mapped:
            return self._mapped.pop(function.id)
        task = self._map_task(negotiation, function, tried)
        return self._chosen(task, self.reasoner.run(task, negotiation.context)) if task else []

    def _map_all(self, negotiation: Negotiation, functions: list[FunctionSpec]) -> dict[str, list[str]]:
        tasks = [task for f in functions if (task := self._map_task(negotiation, f, set()))]
        mapped = {f.id: [] for f in functions}
        for task, mapping in zip(tasks, self.reasoner.run_batch(tasks, negotiation.context)):
            mapped[task.function.id] = self._chosen(task, mapping)
        return mapped

    def _map_task(self, negotiation: Negotiation, function: FunctionSpec, tried: set[str]) -> MapCategoriesTask | None:
        candidates = self.category_candidates(
            negotiation.request.requirement, function, tried | negotiation.excluded_categories
        )
        if not candidates:
            return None
        return MapCategoriesTask(
            requirement=negotiation.request.requirement,
            function=function,
            candidates=candidates,
            max_categories=self.max_categories,
        )

    def _chosen(self, task: MapCategoriesTask, mapping) -> list[str]:
        known = {c.name for c in task.candidates}
        return [c for c in mapping.categories if c in known][: self.max_categories]

    def neighbourhood(self, requirement: str, clause: str | None = None) -> Neighbourhood | None:
        """The past mashups nearest to the requirement (or to one of its clauses)."""
        vector = self.encoder.one(clause or requirement, context=requirement)
        return weighed(self.catalog.search(vector, kind="mashup", k=self.bid_neighbours), self.vote_temperature, clause)

    def descriptions(self, requirement: str) -> Neighbourhood | None:
        """The API descriptions nearest to the requirement: a contractor whose description is among them
        bids with its share of their weight (its description vote)."""
        return self._nearest_descriptions(self.encoder.one(requirement), requirement)

    def function_descriptions(self, requirement: str, function: FunctionSpec) -> Neighbourhood | None:
        """The API descriptions nearest to the announced function (read in the requirement's context, as bidders
        read it): a contractor whose description is among them bids with its share of their weight."""
        return self._nearest_descriptions(
            self.encoder.one(function.description, context=requirement), function.description
        )

    def clause_descriptions(self, requirement: str) -> list[Neighbourhood]:
        """The API descriptions nearest to each clause of a requirement of several, each about its clause; only in
        a catalogue without usage history (with it, the bid model weighs the requirement's nearest: docs/tuning.md)."""
        parts = clauses(requirement)
        if len(parts) < 2 or not self.router.routes_on_words:
            return []
        vectors = self.encoder.embed(parts, context=requirement)
        nearest = (self._nearest_descriptions(v, part) for part, v in zip(parts, vectors))
        return [n.model_copy(update={"about": part}) for part, n in zip(parts, nearest) if n]

    def _nearest_descriptions(self, vector, text: str) -> Neighbourhood | None:
        """In a catalogue without usage history, nearness counts the text's words too (Neighbourhood.words)."""
        words = self.vote_lexical_weight if self.lexicon is not None and self.router.routes_on_words else 0.0
        if not words:
            hits = self.catalog.search(vector, kind="api", k=self.description_neighbours)
            return weighed(
                hits, self.description_temperature, provider_of=self._provider_of, sibling_weight=self.sibling_weight
            )
        table = self.catalog.vectors("api")
        scores = table.matrix @ vector + words * self._word_share(text)
        top = np.argsort(-scores, kind="stable")[: self.description_neighbours]
        hits = [Hit(kind="api", id=table.ids[r], score=float(scores[r])) for r in top]
        return weighed(
            hits,
            self.description_temperature,
            words=words,
            provider_of=self._provider_of,
            sibling_weight=self.sibling_weight,
        )

    def _provider_of(self, api_id: int) -> str:
        return self.catalog.get_api(api_id).provider

    def _word_share(self, text: str) -> np.ndarray:
        """Per API, the share of the text's words in its own text (Lexicon.scores), computed once a text."""
        assert self.lexicon is not None
        if text not in self._word_shares:
            self._word_shares[text] = self.lexicon.scores(text)
        return self._word_shares[text]

    def neighbourhoods(self, requirement: str) -> dict:
        """What a call for proposals announces of the past and of the catalogue: the requirement's neighbourhood,
        each clause's when it has several, and the nearest API descriptions (as the CallForProposals fields of
        those names)."""
        if requirement not in self._neighbourhoods:
            parts = clauses(requirement)
            around = [n for part in parts if (n := self.neighbourhood(requirement, part))] if len(parts) > 1 else []
            self._neighbourhoods[requirement] = {
                "neighbourhood": self.neighbourhood(requirement),
                "clause_neighbourhoods": around,
                "descriptions": self.descriptions(requirement),
            }
        return self._neighbourhoods[requirement]

    def task_vector(self, requirement: str, function: FunctionSpec | None) -> np.ndarray:
        """The requirement, leaning towards the announced function: what routing compares profiles with."""
        vectors = self.encoder.embed([requirement] + ([function.description] if function else []), context=requirement)
        combined = vectors.sum(axis=0)
        return combined / (np.linalg.norm(combined) or 1.0)

    # -- the contract net -------------------------------------------------------------------------
    def announce(
        self,
        negotiation: Negotiation,
        *,
        function: FunctionSpec | None,
        categories: list[str],
        steps: list[str],
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
            round=round,
            steps=steps,
            **self.neighbourhoods(request.requirement),
            reserve=reserve,
            function_descriptions=self.function_descriptions(request.requirement, function) if function else None,
            clause_descriptions=[] if function else self.clause_descriptions(request.requirement),
        )
        negotiation.send(cfp)
        negotiation.mapped_categories.update(dict.fromkeys(categories))
        # LLM contractors cost a call each: a function's call for proposals (one of several a request makes) reaches
        # the nearest `contractors_per_call` of them; the one call announcing the whole requirement reaches top_n.
        limit = getattr(self.contractor_reasoner, "contractors_per_call", None)
        llm = getattr(self.contractor_reasoner, "uses_llm", False)
        top_n = min(request.top_n, limit) if limit and llm and function is not None else request.top_n
        lexical = None
        if self.routing_lexical_weight and self.lexicon is not None and self.router.routes_on_words:
            lexical = self.routing_lexical_weight * self._word_share(
                function.description if function else request.requirement
            )
        routing, contractor_ids = self.router.route(
            cfp,
            self.task_vector(request.requirement, function),
            top_n,
            request.routing,
            negotiation.excluded_apis,
            negotiation.excluded_categories,
            lexical,
        )
        negotiation.transcript.routing.append(routing)
        negotiation.contacted.update(contractor_ids)
        context.cost.calls_for_proposals += 1
        contractors = [self.pool.contractor(c, self.contractor_reasoner) for c in contractor_ids]
        if getattr(self.contractor_reasoner, "uses_llm", False) and len(contractors) > 1:
            # LLM contractors bid in parallel, within the reasoner's limit of calls in flight.
            workers = max(1, int(getattr(self.contractor_reasoner, "max_in_flight", 4)))
            with ThreadPoolExecutor(max_workers=workers) as pool:
                answers = list(pool.map(lambda c: c.handle(cfp, context), contractors))
        else:
            answers = [c.handle(cfp, context) for c in contractors]
        proposals = []
        for replies in answers:
            for reply in replies:
                negotiation.send(reply)
                if reply.kind == "propose":
                    proposals.append(reply)
                    negotiation.proposed[reply.api_id] = max(reply.score, negotiation.proposed.get(reply.api_id, 0.0))
        return proposals

    def admissible(self, negotiation: Negotiation, proposal: Propose) -> str | None:
        """Why a proposal breaks a constraint, or None."""
        if proposal.api_id in negotiation.excluded_apis:
            return f"{proposal.api_name} is excluded by the request"
        broken = negotiation.excluded_categories.intersection(self.catalog.get_api(proposal.api_id).categories)
        if broken:
            return f"{proposal.api_name} is in excluded categories {sorted(broken)}"
        return None

    def backtrack(
        self, negotiation: Negotiation, function: FunctionSpec, tried: set[str], round: int, reason: str
    ) -> list[str]:
        following = self.map_categories(negotiation, function, tried)
        negotiation.transcript.backtracking.append(
            Backtrack(
                function_id=function.id,
                round=round,
                reason=reason,
                from_categories=sorted(tried),
                to_categories=following,
            )
        )
        return following

    # -- step 4 -----------------------------------------------------------------------------------
    def select(self, negotiation: Negotiation, functions: list[FunctionSpec], proposals: list[Propose]) -> list[int]:
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
            ),
            negotiation.context,
        )
        return [a for a in dict.fromkeys(selection.api_ids) if a in set(ids)]

    def award(
        self, negotiation: Negotiation, proposals: list[Propose], selected: list[int], awards: dict[int, Propose]
    ) -> None:
        """Accept the selected APIs' proposals they are awarded on (`awards`, one per API: see award_bids), reject
        the rest; the winners inform."""
        chosen = set(selected)
        best = {a: p for a, p in awards.items() if a in chosen}
        at = negotiation.context.elapsed_ms
        for p in proposals:
            if best.get(p.api_id) is p:
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
            p = best[api_id]
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
