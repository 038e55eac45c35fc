"""Flat baselines, scored exactly like the protocols on the same parts and catalogues: each ranks the catalogue's
items for the query (or for each need the caller states) and keeps the first k as its final set, k fitted on the
dataset's dev part (runner.fit_cuts). What a search engineer compares a recommender with first."""

import time
from collections import defaultdict
from collections.abc import Callable

import numpy as np

from tender.catalog import Catalog
from tender.ranking.lexical import query_terms

from .gold import Query

DEPTH = 50  # how deep each ranking goes
RRF_K = 60  # reciprocal-rank fusion's constant, as in Cormack et al. (2009); not tuned here

Ranking = list[tuple[int, float]]


class QueryVectors:
    """A query's texts embedded once for all the baselines that ask (dense, hybrid, knn: the same vector each
    time, so the same rankings). `skipped` adds up the embedding time a baseline was spared, which the runner
    counts back into its latency: each baseline is timed as if it ran alone."""

    def __init__(self, catalog: Catalog):
        self.catalog = catalog
        self.skipped = 0.0
        self._memo: dict[str, tuple[np.ndarray, float]] = {}

    def __call__(self, text: str) -> np.ndarray:
        if text in self._memo:
            vector, seconds = self._memo[text]
            self.skipped += seconds
            return vector
        started = time.perf_counter()
        vector = self.catalog.embed([text])[0]
        self._memo[text] = (vector, time.perf_counter() - started)
        return vector


Embed = Callable[[str], np.ndarray]


def bm25(catalog: Catalog, text: str, embed: Embed) -> Ranking:
    return [(int(h.id), h.score) for h in catalog.lexical(query_terms(text), k=DEPTH)]


def dense(catalog: Catalog, text: str, embed: Embed) -> Ranking:
    return [(int(h.id), h.score) for h in catalog.search(embed(text), kind="api", k=DEPTH)]


def fuse(*rankings: Ranking) -> Ranking:
    """Reciprocal-rank fusion: each item scores the sum of 1 / (RRF_K + rank) over the rankings it is in."""
    scores: dict[int, float] = defaultdict(float)
    for ranking in rankings:
        for rank, (item, _) in enumerate(ranking, start=1):
            scores[item] += 1 / (RRF_K + rank)
    return sorted(scores.items(), key=lambda pair: (-pair[1], pair[0]))[:DEPTH]


def hybrid(catalog: Catalog, text: str, embed: Embed) -> Ranking:
    return fuse(bm25(catalog, text, embed), dense(catalog, text, embed))


def nearest_mashups(catalog: Catalog, text: str, embed: Embed, k: int = 10) -> Ranking:
    """The APIs of the most similar past mashups, each weighted by the mashup's similarity."""
    votes: dict[int, float] = defaultdict(float)
    for hit in catalog.search(embed(text), kind="mashup", k=k):
        for api_id in catalog.get_mashup(int(hit.id)).api_ids:
            votes[api_id] += max(hit.score, 0.0)
    return sorted(votes.items(), key=lambda pair: (-pair[1], pair[0]))


def popularity(catalog: Catalog, text: str, embed: Embed) -> Ranking:
    return [(a, float(n)) for a, n in catalog.usage_counts().most_common(DEPTH)]


def interleave(rankings: list[Ranking]) -> Ranking:
    """Each need's first, then each need's second, ...: one list, each item once (at its best place)."""
    out: dict[int, float] = {}
    for rank in range(max((len(r) for r in rankings), default=0)):
        for ranking in rankings:
            if rank < len(ranking) and ranking[rank][0] not in out:
                out[ranking[rank][0]] = ranking[rank][1]
    return list(out.items())


class Baseline:
    """A flat ranking of the whole query. `per_need`: the caller's needs ranked one by one (each need's best is
    the final set)."""

    def __init__(self, name: str, rank: Callable[[Catalog, str, Embed], Ranking], summary: str, per_need: bool = False):
        self.name, self.rank, self.summary, self.per_need = name, rank, summary, per_need

    def answer(
        self, catalog: Catalog, query: Query, needs: tuple[str, ...] | None, k: int, vectors: Embed | None = None
    ) -> tuple[list, list]:
        """(final set, ranked list). `vectors`: the query's texts embedded once for every baseline (QueryVectors)."""
        embed = vectors or QueryVectors(catalog)
        if self.per_need:
            lists = [self.rank(catalog, need, embed) for need in (needs or (query.text,))]
            ranked = [item for item, _ in interleave(lists)]
            final = list(dict.fromkeys(r[0][0] for r in lists if r))
            return final, ranked
        ranked = [item for item, _ in self.rank(catalog, query.text, embed)]
        return ranked[:k], ranked


BASELINES: dict[str, Baseline] = {
    b.name: b
    for b in (
        Baseline("bm25", bm25, "BM25 over the items' names and texts (FTS5)"),
        Baseline("dense", dense, "cosine similarity of the encoder's vectors"),
        Baseline("hybrid", hybrid, "reciprocal-rank fusion of bm25 and dense"),
        Baseline("knn", nearest_mashups, "the APIs of the 10 nearest past mashups"),
        Baseline("popularity", popularity, "the most used APIs, whatever the query"),
        Baseline("dense per need", dense, "dense search of each stated need alone", per_need=True),
        Baseline("hybrid per need", hybrid, "hybrid search of each stated need alone", per_need=True),
    )
}
HISTORY_ONLY = ("knn", "popularity")
NEEDS_ONLY = ("dense per need", "hybrid per need")
