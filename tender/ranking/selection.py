"""The one selection objective: the set of items that maximises the expected coverage of the functions,

    sum over functions f of  1 - prod over chosen items i of (1 - p(i serves f)),

minus a cost per item and a cost for a second item of the same provider given the same function, chosen greedily
(the objective is submodular: a second map for a function already well served adds little). Where no item adds
more than it costs, nothing is chosen for that function: it is reported unserved, with its best candidates.

A deprecated item counts DEPRECATED_MARGIN less, so it gives way to an active one of similar score and is chosen
only where nothing active comes near; the plan flags it. An MCP server with no install route counts
UNINSTALLABLE_MARGIN less: a server the user can install wins over one they cannot that scores up to that much
higher (chosen on the dev parts: 0.05 left the assistant suite's awards with needs stated 7% uninstallable, 0.15 none,
no plan's judged figure lower)."""

from collections.abc import Callable
from dataclasses import dataclass, field

DEPRECATED_MARGIN = 0.05  # "of similar score": within this much
UNINSTALLABLE_MARGIN = 0.15


@dataclass(frozen=True)
class Option:
    item: int
    function: str
    score: float  # the probability that the item serves the function


@dataclass
class Choice:
    items: list[int] = field(default_factory=list)  # in the order chosen, most useful first
    awards: dict[int, str] = field(default_factory=dict)  # each item's function (the one it adds most to)
    coverage: dict[str, float] = field(default_factory=dict)  # each function's expected coverage
    gains: dict[int, float] = field(default_factory=dict)

    def unserved(self, functions: list[str]) -> list[str]:
        served = set(self.awards.values())
        return [f for f in functions if f not in served]


def choose(
    options: list[Option],
    functions: list[str],
    cost: float,
    redundancy: float = 0.0,
    provider: Callable[[int], str] = str,
    deprecated: Callable[[int], bool] = lambda item: False,
    max_items: int | None = None,
    uninstallable: Callable[[int], bool] = lambda item: False,
) -> Choice:
    """Greedy maximisation of the objective above."""
    scores: dict[int, dict[str, float]] = {}
    for o in options:
        margin = DEPRECATED_MARGIN * deprecated(o.item) + UNINSTALLABLE_MARGIN * uninstallable(o.item)
        effective = max(0.0, o.score - margin)
        row = scores.setdefault(o.item, {})
        row[o.function] = max(row.get(o.function, 0.0), effective)
    missing = {f: 1.0 for f in functions}  # 1 - coverage
    order = {f: i for i, f in enumerate(functions)}  # a tie goes to the earlier function
    choice = Choice()
    taken: set[tuple[str, str]] = set()  # (provider, function) already given an item
    while scores and (max_items is None or len(choice.items) < max_items):
        best, best_gain, best_function = None, 0.0, ""
        for item, row in scores.items():
            adds = {f: missing.get(f, 0.0) * p for f, p in row.items()}
            function = max(adds, key=lambda f: (adds[f], -order.get(f, len(order))))
            gain = sum(adds.values()) - cost - (redundancy if (provider(item), function) in taken else 0.0)
            if gain > best_gain or (gain == best_gain and best is not None and gain > 0 and item < best):
                best, best_gain, best_function = item, gain, function
        if best is None:
            break
        for f, p in scores.pop(best).items():
            missing[f] = missing.get(f, 0.0) * (1 - p)
        choice.items.append(best)
        choice.awards[best] = best_function
        choice.gains[best] = round(best_gain, 6)
        taken.add((provider(best), best_function))
    choice.coverage = {f: round(1 - missing[f], 6) for f in functions}
    return choice
