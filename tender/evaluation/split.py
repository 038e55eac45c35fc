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


# The reported test sample (`tender eval`'s defaults) and tender.training.tune's defaults: the bid model was
# fitted on the tuning sample, which never includes a reported mashup.
REPORT_SAMPLE, REPORT_SEED = 100, 0
TUNING_SAMPLE, TUNING_SEED = 1000, 1
# The validation samples (`tender eval --validation --sample N --seed S`) that settings are checked on. The
# encoder is fine-tuned on none of them (encoder_ids).
VALIDATION_SAMPLES = ((800, 2), (500, 3))


def tuning_ids(
    mashup_ids: list[int],
    n: int = TUNING_SAMPLE,
    seed: int = TUNING_SEED,
    report_sample: int = REPORT_SAMPLE,
    report_seed: int = REPORT_SEED,
) -> list[int]:
    """The tuning mashups: drawn from those outside the reported test sample."""
    reported = set(sample_ids(mashup_ids, report_sample, report_seed))
    return sample_ids([i for i in mashup_ids if i not in reported], n, seed)


def validation_pool(mashup_ids: list[int]) -> list[int]:
    """Mashups outside both the reported test sample and the tuning sample: where a tuned setting can be
    checked on more mashups than the reported 100 without touching them."""
    used = set(sample_ids(mashup_ids, REPORT_SAMPLE, REPORT_SEED)) | set(tuning_ids(mashup_ids))
    return [i for i in mashup_ids if i not in used]


def encoder_ids(mashup_ids: list[int]) -> list[int]:
    """The mashups the sentence encoder is fine-tuned on: the validation pool less the validation samples,
    so that neither the reported test sample, nor the tuning sample the bid model is fitted on, nor the
    validation samples were seen by the encoder."""
    pool = validation_pool(mashup_ids)
    held = {i for n, seed in VALIDATION_SAMPLES for i in sample_ids(pool, n, seed)}
    return [i for i in pool if i not in held]
