"""Siblings: two operations of one API, or two tools of one MCP server, chosen for the same step do the same
job for the plan (SendPost and SendbatchPost of one SMS API); the better bid is kept, the other stays among the
bids. Items of different providers are alternatives, not siblings, and are left to the selection."""

from collections.abc import Callable

from tender.catalog import Api

from .messages import Propose
from .status import carried_only_by


def drop_siblings(
    final: list[int], proposals: list[Propose], api_of: Callable[[int], Api], *, required_categories=()
) -> list[int]:
    """The final set without an item whose provider already has a better-bid item for the same step (the step of
    each item's best bid, where the plan awards it). An item that alone carries a required category stays."""
    best: dict[int, Propose] = {}
    for p in proposals:
        if p.api_id not in best or p.score > best[p.api_id].score:
            best[p.api_id] = p
    taken: set[tuple[str, str | None]] = set()
    dropped: set[int] = set()
    for api_id in sorted(final, key=lambda a: -best[a].score if a in best else 0.0):
        api = api_of(api_id)
        if api_id not in best or not api.provider or api.provider == api.name:
            continue
        step = (api.provider, best[api_id].function_id)
        if step in taken:
            others = [api_of(a) for a in final if a != api_id and a not in dropped]
            if not carried_only_by(api, others, required_categories):
                dropped.add(api_id)
        taken.add(step)
    return [a for a in final if a not in dropped]
