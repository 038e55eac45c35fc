"""A function's candidates from the whole catalogue, each with its evidence and its score.

Candidates come from three rankings fused by reciprocal rank: the items whose texts are nearest to the function
(the encoder), those that share its words (BM25), and, where the catalogue has usage history, those the nearest
past mashups used. Items the requirement names are always in. Then every candidate gets its Evidence and the
scorer's probability that it serves the function."""

import threading
from collections import defaultdict
from collections.abc import Iterable

import numpy as np
from pydantic import BaseModel, ConfigDict

from tender.catalog import Catalog

from .evidence import Evidence
from .lexical import query_terms
from .names import NameIndex, common_words
from .scorer import Scorer
from .vectors import QueryEncoder

DEPTH = 50  # candidates a function keeps, and how deep each ranking is read
RRF_K = 60  # reciprocal-rank fusion's constant (Cormack et al., 2009)
# Past mashups that vote for the APIs they used, weighted exp((similarity - nearest) / TEMPERATURE).
NEIGHBOURS = 20
TEMPERATURE = 0.1


class Candidate(BaseModel):
    model_config = ConfigDict(frozen=True)

    item: int
    score: float  # the probability that the item serves the function
    evidence: Evidence


class Shortlist(BaseModel):
    """A function's candidates, best first."""

    model_config = ConfigDict(frozen=True)

    function: str
    candidates: tuple[Candidate, ...]

    def best(self, n: int = 1) -> tuple[Candidate, ...]:
        return self.candidates[:n]

    def get(self, item: int) -> Candidate | None:
        return next((c for c in self.candidates if c.item == item), None)


class Ranker:
    """Scores a catalogue's items for a function. Safe to share between threads."""

    def __init__(self, catalog: Catalog, encoder: QueryEncoder, scorer: Scorer):
        self.catalog = catalog
        self.encoder = encoder
        self.scorer = scorer
        self._items = catalog.vectors("api")
        self._names = catalog.vectors("name")
        self._dense, self._name_dense = catalog.dense_search("api"), catalog.dense_search("name")
        self._ids = np.array(self._items.ids, dtype=np.int64)
        self._deprecated = {a.id for a in catalog.apis() if a.status == "deprecated"}
        mashups = catalog.vectors("mashup")
        self._mashups = mashups
        self._used_by: list[list[int]] = [catalog.get_mashup(int(m)).api_ids for m in mashups.ids]
        self.has_history = bool(len(mashups.ids))
        self._uses = catalog.usage_counts()
        apis = catalog.apis()
        self._named = NameIndex([(a.id, a.name) for a in apis], common_words([a.description for a in apis]))
        self._lock = threading.Lock()

    def shortlist(
        self,
        function: str,
        requirement: str,
        exclude: Iterable[int] = (),
        depth: int = DEPTH,
        among: Iterable[int] | None = None,
    ) -> Shortlist:
        """The function's candidates (its words read alone, and where they stand in the requirement), best first,
        `exclude` left out; with `among`, only those items (the items of a required category, say), however far
        down they rank."""
        vectors = self.encoder.embed([function, requirement])
        f_vector, r_vector = vectors[0], vectors[1]
        c_vector = self.encoder.in_context(function, requirement)
        excluded = set(exclude)
        # Exact below 50,000 items; above, an approximate index and exact scores for what it finds (catalog/ann.py).
        dense = self._dense.similarities(f_vector)
        names = self._name_dense.similarities(f_vector) if len(self._names.ids) == len(self._ids) else dense
        allowed = ~np.isin(self._ids, list(excluded)) if excluded else np.ones(len(self._ids), dtype=bool)
        dense_order = self._dense.nearest(dense, allowed, depth)
        lexical = [
            h for h in self.catalog.lexical(query_terms(function), k=depth + len(excluded)) if h.id not in excluded
        ]
        history = self._votes(f_vector) if self.has_history else {}
        history_requirement = self._votes(r_vector) if self.has_history else {}
        row = self._items.row
        rankings = [
            [int(self._ids[r]) for r in dense_order],
            [int(h.id) for h in lexical[:depth]],
            sorted(history, key=lambda a: -history[a])[:depth],
        ]
        fused: dict[int, float] = defaultdict(float)
        for ranking in rankings:
            for rank, item in enumerate(ranking, start=1):
                if item not in excluded and item in row:
                    fused[item] += 1 / (RRF_K + rank)
        for item in self._named.named(requirement):
            if item not in excluded and item in row:
                fused[item] += 1.0  # an item the requirement names is always a candidate
        pool = sorted(fused, key=lambda a: (-fused[a], a))[:depth]
        if among is not None:
            inside = [a for a in among if a in row and a not in excluded]
            pool = sorted(inside, key=lambda a: (-fused.get(a, 0.0), -float(dense[row[a]]), a))[:depth]
        bm25 = {int(h.id): h.score for h in lexical}
        missing = [a for a in pool if a not in bm25]
        if missing:  # BM25 of candidates beyond the lexical ranking's depth
            bm25.update(
                {int(h.id): h.score for h in self.catalog.lexical(query_terms(function), k=len(missing), among=missing)}
            )
        best_bm25 = max(bm25.values(), default=0.0)
        lexical_scores = sorted(bm25.values(), reverse=True)
        allowed_dense = dense[allowed] if allowed.any() else dense
        best_dense = float(allowed_dense.max()) if len(allowed_dense) else 0.0
        best_name = float(names[allowed].max()) if allowed.any() else 0.0
        in_context = self._dense.similarities(c_vector) if c_vector is not None else None
        best_context = float(in_context[allowed].max()) if in_context is not None and allowed.any() else 0.0
        candidates = []
        for item in pool:
            r = row[item]
            score_lex = bm25.get(item, 0.0)
            evidence = Evidence(
                dense=round(float(dense[r]), 6),
                dense_gap=round(float(dense[r]) - best_dense, 6),
                dense_rank=int((allowed_dense > dense[r]).sum()) + 1,
                dense_requirement=round(float(self._items.matrix[r] @ r_vector), 6),
                dense_context=round(float(in_context[r]), 6) if in_context is not None else None,
                dense_context_gap=round(float(in_context[r]) - best_context, 6) if in_context is not None else None,
                name=round(float(names[r]), 6),
                name_gap=round(float(names[r]) - best_name, 6),
                lexical=round(score_lex / best_bm25, 6) if best_bm25 > 0 else 0.0,
                lexical_rank=(sum(1 for s in lexical_scores if s > score_lex) + 1) if score_lex > 0 else 0,
                history=round(history.get(item, 0.0), 6),
                history_requirement=round(history_requirement.get(item, 0.0), 6),
                uses=self._uses.get(item, 0),
                catalogue_history=self.has_history,
                named=self._named.mentions(item, requirement),
                deprecated=item in self._deprecated,
            )
            candidates.append((item, evidence))
        scores = [round(float(p), 4) for p in self.scorer.probabilities([e for _, e in candidates])]
        # Ordered by the score as reported, ties by id: the last bits of a similarity differ between exact and
        # approximate search, and must not reorder candidates that score alike.
        ranked = sorted(zip(candidates, scores), key=lambda pair: (-pair[1], pair[0][0]))
        return Shortlist(
            function=function,
            candidates=tuple(Candidate(item=item, score=p, evidence=e) for (item, e), p in ranked),
        )

    def _votes(self, vector: np.ndarray) -> dict[int, float]:
        """Per API, its share of the weight of the past mashups nearest to the vector."""
        sims = self._mashups.matrix @ vector
        k = min(NEIGHBOURS, len(sims))
        top = np.argpartition(-sims, k - 1)[:k]
        nearest = float(sims[top].max())
        weights = np.exp((sims[top] - nearest) / TEMPERATURE)
        total = float(weights.sum()) or 1.0
        votes: dict[int, float] = defaultdict(float)
        for row, weight in zip(top, weights):
            for api in self._used_by[row]:
                votes[api] += float(weight) / total
        return votes
