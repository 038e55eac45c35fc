"""Set-based and ranking metrics, macro-averaged over mashups."""

import math
from collections.abc import Iterable, Sequence


def prf(predicted: Iterable[int], truth: Iterable[int]) -> tuple[float, float, float]:
    """Precision, recall and F1 of a predicted set against the true set. Empty prediction: all zero."""
    predicted, truth = set(predicted), set(truth)
    hits = len(predicted & truth)
    if not predicted or not truth or not hits:
        return 0.0, 0.0, 0.0
    precision, recall = hits / len(predicted), hits / len(truth)
    return precision, recall, 2 * precision * recall / (precision + recall)


def precision_at(ranked: Sequence[int], truth: Iterable[int], k: int) -> float:
    """Hits in the first k, over k (a list shorter than k is not rewarded for stopping early)."""
    truth = set(truth)
    return sum(1 for a in ranked[:k] if a in truth) / k


def recall_at(ranked: Sequence[int], truth: Iterable[int], k: int) -> float:
    truth = set(truth)
    return sum(1 for a in ranked[:k] if a in truth) / len(truth) if truth else 0.0


def ndcg_at(ranked: Sequence[int], truth: Iterable[int], k: int) -> float:
    """Binary-relevance NDCG: DCG = sum of 1/log2(rank + 1) over hits, over the DCG of a perfect list."""
    truth = set(truth)
    dcg = sum(1 / math.log2(rank + 2) for rank, a in enumerate(ranked[:k]) if a in truth)
    ideal = sum(1 / math.log2(rank + 2) for rank in range(min(k, len(truth))))
    return dcg / ideal if ideal else 0.0


def average_precision_at(ranked: Sequence[int], truth: Iterable[int], k: int) -> float:
    """MAP@k as R2API's metric.py computes it: the precision at each hit in the first k, averaged over those
    hits (not over the true APIs); 0 without a hit."""
    truth = set(truth)
    hits, total = 0, 0.0
    for rank, a in enumerate(ranked[:k], start=1):
        if a in truth:
            hits += 1
            total += hits / rank
    return total / hits if hits else 0.0


def mean(values: Iterable[float]) -> float:
    values = list(values)
    return sum(values) / len(values) if values else 0.0


def percentile(values: Sequence[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low, high = math.floor(position), math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)
