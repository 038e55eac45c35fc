"""Preferring live items: a deprecated item in the final set gives way to an active one that bid nearly as well
for the same step. Deprecated items are never dropped for nothing: with no such alternative they stay, marked."""

from collections.abc import Callable

from tender.catalog import Api

from .messages import Propose

NEARLY_AS_WELL = 0.05  # a bid this much lower still counts as "nearly as well"


def carried_only_by(api: Api, others: list[Api], required_categories) -> set[str]:
    """The required categories that `api` alone carries among `others`: dropping it would break the constraint."""
    return {c for c in required_categories if c in api.categories and not any(c in o.categories for o in others)}


def prefer_active(
    final: list[int],
    proposals: list[Propose],
    api_of: Callable[[int], Api],
    *,
    required_categories: list[str] = (),
    margin: float = NEARLY_AS_WELL,
) -> tuple[list[int], list[str]]:
    """The final set with each deprecated item replaced, in place, by the best bid for the same step from an
    item that is not deprecated, not already chosen, and within `margin` of the deprecated item's bid; and a
    note per replacement. A replacement must carry every required category the deprecated item alone covered,
    so constraints that held still hold."""
    best: dict[int, Propose] = {}
    for p in proposals:
        if p.api_id not in best or p.score > best[p.api_id].score:
            best[p.api_id] = p
    chosen = list(final)
    notes = []
    for index, api_id in enumerate(final):
        api = api_of(api_id)
        if api.status != "deprecated" or api_id not in best:
            continue
        own = best[api_id]
        needed = carried_only_by(api, [api_of(a) for a in chosen if a != api_id], required_categories)
        candidates = [
            p
            for p in best.values()
            if p.api_id not in chosen
            and p.function_id == own.function_id
            and p.score >= own.score - margin
            and api_of(p.api_id).status != "deprecated"
            and needed <= set(api_of(p.api_id).categories)
        ]
        if not candidates:
            continue
        replacement = max(candidates, key=lambda p: (p.score, -p.api_id))
        chosen[index] = replacement.api_id
        notes.append(
            f"{api.name} is deprecated ({api.status_source or 'by its source'}); {replacement.api_name} bid "
            f"{replacement.score:.2f} against its {own.score:.2f} and takes its place"
        )
    return chosen, notes
