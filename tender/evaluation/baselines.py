"""Baselines under the same leave-out as the agents. Each ranks APIs by a score and picks its set size
from the scores (keep what scores at least `ratio` of the best), so final F1 compares like with like."""

from collections import defaultdict

from tender.catalog import Catalog


def cut(scores: dict[int, float], ratio: float, limit: int = 10) -> tuple[list[int], list[int]]:
    """(the chosen set, the full ranking) from scores."""
    ranked = sorted(scores, key=lambda a: (-scores[a], a))[:limit]
    if not ranked:
        return [], []
    top = scores[ranked[0]]
    return [a for a in ranked if scores[a] >= ratio * top], ranked


class Popularity:
    """The most used APIs, whatever the requirement."""

    name = "baseline-popularity"

    def __init__(self, catalog: Catalog, ratio: float = 0.6):
        self.scores = {a: float(n) for a, n in catalog.usage_counts().most_common(10)}
        self.ratio = ratio

    def __call__(self, query: str) -> tuple[list[int], list[int]]:
        return cut(self.scores, self.ratio)


class EmbeddingRetrieval:
    """APIs whose descriptions are closest to the requirement."""

    name = "baseline-embedding"

    def __init__(self, catalog: Catalog, ratio: float = 0.9):
        self.catalog, self.ratio = catalog, ratio

    def __call__(self, query: str) -> tuple[list[int], list[int]]:
        return cut({h.id: h.score for h in self.catalog.search(query, kind="api", k=10)}, self.ratio)


class NearestMashups:
    """The APIs of the most similar past mashups, weighted by similarity."""

    name = "baseline-knn"

    def __init__(self, catalog: Catalog, k: int = 10, ratio: float = 0.5):
        self.catalog, self.k, self.ratio = catalog, k, ratio

    def __call__(self, query: str) -> tuple[list[int], list[int]]:
        votes: dict[int, float] = defaultdict(float)
        for hit in self.catalog.search(query, kind="mashup", k=self.k):
            for api_id in self.catalog.get_mashup(hit.id).api_ids:
                votes[api_id] += max(hit.score, 0.0)
        return cut(dict(votes), self.ratio)


BASELINES = {cls.name: cls for cls in (Popularity, EmbeddingRetrieval, NearestMashups)}
