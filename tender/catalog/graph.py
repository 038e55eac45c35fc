"""The tool graph's arithmetic, shared by the build (which stores the graph) and the reader (which takes
left-out mashups back out of it)."""

import itertools
from collections import Counter
from collections.abc import Iterable


def jaccard(count: int, uses_a: int, uses_b: int) -> float:
    """Co-usage weight: the share of mashups using either API that use both."""
    union = uses_a + uses_b - count
    return count / union if union else 0.0


def co_usage_counts(mashup_apis: Iterable[list[int]]) -> Counter:
    """Pairs (a, b), a < b, counted once per mashup that uses both."""
    pairs: Counter = Counter()
    for api_ids in mashup_apis:
        for a, b in itertools.combinations(sorted(set(api_ids)), 2):
            pairs[(a, b)] += 1
    return pairs
