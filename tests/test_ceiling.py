"""The feature ceiling's measures (tender/training/ceiling.py): what counts as a need's top-1 and R@5."""

import numpy as np

from tender.training.ceiling import Need, measures


def need(right: list[int], gold: int) -> Need:
    r = np.array(right, dtype=float)
    return Need(evidence=[], right=r, shipped=r, history_only=r, gold=gold)


def test_top1_is_whether_the_best_scored_candidate_is_acceptable():
    needs = [need([0, 1, 0], gold=1), need([1, 0, 0], gold=1)]
    top1, _ = measures(needs, [np.array([0.9, 0.5, 0.1]), np.array([0.9, 0.5, 0.1])])
    assert top1 == 0.5


def test_recall_at_five_counts_acceptable_items_outside_the_candidates_as_missed():
    # two acceptable items, one among the candidates: half found however it is scored
    _, recall = measures([need([1, 0, 0], gold=2)], [np.array([0.1, 0.2, 0.3])])
    assert recall == 0.5


def test_recall_at_five_asks_for_at_most_five():
    _, recall = measures([need([1] * 7, gold=7)], [np.arange(7, dtype=float)])
    assert recall == 1.0
