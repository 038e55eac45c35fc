"""Choosing the test mashups, which the catalogue then leaves out."""

import random


def sample_ids(mashup_ids: list[int], n: int, seed: int) -> list[int]:
    """n mashup ids drawn without replacement; the same seed always draws the same ones."""
    ids = sorted(mashup_ids)
    return sorted(random.Random(seed).sample(ids, min(n, len(ids))))


def folds(mashup_ids: list[int], k: int, seed: int) -> list[list[int]]:
    """K disjoint folds covering every mashup."""
    ids = sorted(mashup_ids)
    random.Random(seed).shuffle(ids)
    return [sorted(ids[i::k]) for i in range(k)]
