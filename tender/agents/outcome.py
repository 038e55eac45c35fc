"""What a finished negotiation says: each final item's award, each item's best bid, and the plan's steps filled
with their awards or the reason they are unserved. Read after a protocol has negotiated (protocols.py); nothing
here negotiates."""

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

from .messages import Propose
from .plan import Award, PlanStep, StepStatus, confidence


@dataclass
class Outcome:
    steps: list[PlanStep]
    final: list[int]
    proposals: list[Propose]
    awards: dict[int, str] = field(default_factory=dict)  # each final item's function id, where selection said
    stages: dict[str, list[int]] = field(default_factory=dict)
    awarded: dict[int, Propose] = field(default_factory=dict)  # the proposal each final item is awarded on

    def functions(self) -> dict[str, str]:
        """Each step's function text, by step id."""
        return {s.id: s.function for s in self.steps}


def unserved_reason(function: str, bids: list[Propose], serving: dict[int, str]) -> str:
    """Why a step has no award, naming its best candidates that fell short; a best bidder awarded to another step
    is said to serve that one, not to have been passed over."""
    top = bids[0]
    if top.api_id not in serving:
        reason = f"no credible bid for '{function}': the best, {top.api_name} at {top.score:.2f}, fell short"
    else:
        reason = f"no credible bid for '{function}' of its own: the best, {top.api_name} ({top.score:.2f}), serves {serving[top.api_id]}"
    others = [p for p in bids[1:] if p.api_id not in serving][:2]
    if others:
        reason += "; next: " + ", ".join(f"{p.api_name} ({p.score:.2f})" for p in others)
    return reason


def award_of(outcome: Outcome) -> dict[int, Propose]:
    """The proposal each item of the final set is awarded on: its bid for the function the selection gave it,
    else its best bid."""
    best: dict[int, Propose] = {}
    for p in outcome.proposals:
        wanted = outcome.awards.get(p.api_id)
        current = best.get(p.api_id)
        if current is None:
            best[p.api_id] = p
            continue
        on_award = wanted is not None and p.function_id == wanted
        current_on_award = wanted is not None and current.function_id == wanted
        if (on_award, p.score) > (current_on_award, current.score):
            best[p.api_id] = p
    return best


def bids_best_first(outcome: Outcome) -> list[int]:
    """Every API bid for, once, by its best bid. (Taking the steps in turn instead, each step's best, then each
    step's second best, was tried: it moved R@5 by +0.018 on one dev part and -0.014 on another; docs/tuning.md.)"""
    best = best_bids(outcome.proposals)
    return sorted(best, key=lambda a: (-best[a], a))


def best_bids(proposals: list[Propose]) -> dict[int, float]:
    """Each API's best bid among these proposals."""
    return {api_id: p.score for api_id, p in best_proposals(proposals).items()}


def best_proposals(proposals: Iterable[Propose]) -> dict[int, Propose]:
    """Each API's highest proposal among these (the first of equals), in the order the APIs first bid."""
    best: dict[int, Propose] = {}
    for p in proposals:
        if p.api_id not in best or p.score > best[p.api_id].score:
            best[p.api_id] = p
    return best


# A step the chosen APIs more likely than not serve is served: "more likely than not" is the definition, not a
# fitted number.
LIKELY = 0.5


def _covered(bids: list[Propose]) -> float:
    """The chance that at least one of these APIs serves the function (each API's best bid)."""
    return 1.0 - math.prod(1.0 - score for score in best_bids(bids).values())


def _award(p: Propose, api_names: dict[int, str], rationale: str) -> Award:
    return Award(
        api_id=p.api_id, api_name=api_names[p.api_id], score=p.score, rationale=rationale, level=confidence(p.score)
    )


def fill_steps(outcome: Outcome, awards: dict[int, Propose], api_names: dict[int, str]) -> None:
    """Attach each awarded API to the step it was awarded; a step left without one is unserved, with the reason
    and the best bids that fell short."""
    by_id = {s.id: s for s in outcome.steps}
    for api_id in outcome.final:
        p = awards[api_id]
        step = by_id.get(p.function_id or "") or (outcome.steps[0] if outcome.steps else None)
        if step is None:
            continue
        step.awarded.append(_award(p, api_names, p.rationale))
        step.status = StepStatus.awarded
    serving = {a.api_id: s.id for s in outcome.steps for a in s.awarded}
    chosen = set(outcome.final)
    for step in outcome.steps:
        if step.awarded:
            continue
        bids = sorted((p for p in outcome.proposals if p.function_id == step.id), key=lambda p: -p.score)
        mine = [p for p in bids if p.api_id in chosen]
        if mine and _covered(mine) >= LIKELY:
            # The selection counted on APIs awarded to other steps for this one: say so, rather than call it unserved
            # beside a good bid that was left out only because they already covered it.
            p = mine[0]
            also = f"{p.rationale} Chosen for {serving.get(p.api_id, 'another step')}, it serves this too."
            step.awarded.append(_award(p, api_names, also))
            step.status = StepStatus.awarded
            continue
        unique = list({p.api_id: p for p in reversed(bids)}.values())[::-1]
        unique.sort(key=lambda p: -p.score)
        step.reason = (
            unserved_reason(step.function, unique, serving)
            if unique
            else f"no contractor proposed an API for '{step.function}'"
        )
        if step.status != StepStatus.failed:  # failed: every round of announcements went unanswered
            step.status = StepStatus.unserved
