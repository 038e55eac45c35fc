"""What a finished negotiation says: each final item's award, each item's best bid, and the Plan: its steps filled
with their awards or the reason they are unserved, the items recommended, the stages and the notes. Read after a
protocol has negotiated (protocols.py); nothing here negotiates."""

import math
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field

from tender.catalog import Catalog
from tender.ranking.evidence import HIGH, level

from .language import NAMES, language
from .manager import Negotiation
from .messages import Propose
from .plan import CATEGORY_IDS, Award, Plan, PlanStep, RecommendedApi, Stages, StepStatus


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
        api_id=p.api_id,
        api_name=api_names[p.api_id],
        score=p.score,
        rationale=rationale,
        level=level(p.score, p.evidence.high if p.evidence else HIGH),
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


def plan_of(
    catalog: Catalog,
    negotiation: Negotiation,
    outcome: Outcome,
    *,
    cost: float,
    contract_net: bool,
    backends: dict[str, str],
) -> Plan:
    """The plan a finished negotiation makes: its steps filled with their awards (or why they are unserved, naming
    dead items that alone could have served), the final items as recommended, the stages and the notes. `cost`:
    the objective's price of an item (what a dead item's bid must beat to be named)."""
    request, context = negotiation.request, negotiation.context
    awards = outcome.awarded
    names = {p.api_id: p.api_name for p in outcome.proposals}
    fill_steps(outcome, awards, names)
    _name_the_dead(negotiation, outcome, cost)
    for step in outcome.steps:
        for award in step.awarded:
            award.status = catalog.get_api(award.api_id).status
    apis = []
    for api_id in outcome.final:
        api = catalog.get_api(api_id)
        p = awards[api_id]
        apis.append(
            RecommendedApi(
                api_id=api_id,
                name=api.name,
                score=p.score,
                categories=api.categories,
                url=api.url,
                steps=[s.id for s in outcome.steps if any(a.api_id == api_id for a in s.awarded)],
                rationale=p.rationale,
                status=api.status,
                status_source=api.status_source,
                link=api.link,
                provider=api.provider_name,
                server=api.server,
                tool=api.tool,
            )
        )
    verdict = "plan"
    written_in = language(request.requirement)
    if written_in not in (None, "en"):
        context.note(
            f"The requirement looks {NAMES.get(written_in, written_in)}; the catalogue and the embedded "
            "model are English, so matches are weak: write it in English for a reliable plan."
        )
    if not outcome.final:
        verdict = "nothing fits"
        top = max(outcome.proposals, key=lambda p: p.score, default=None)
        context.note(
            "Nothing in the catalogue fits this requirement"
            + (
                f": the best bid, {top.api_name} at {top.score:.2f}, is not credible."
                if top
                else ": no contractor proposed an API."
            )
            if not request.constraints.excluded_apis
            else "Nothing is left to recommend: every API that bid is excluded by the request."
        )
    context.cost.messages = len(negotiation.transcript.messages)
    context.cost.contractors_contacted = len(negotiation.contacted)
    category, in_categories = (
        catalog.first_apis_in_categories(negotiation.mapped_categories, CATEGORY_IDS) if contract_net else ([], 0)
    )
    stages = Stages(
        candidates=negotiation.candidates(),
        category=category,
        category_total=in_categories,
        bidding=bids_best_first(outcome),
        final=list(outcome.final),
    )
    return Plan(
        run_id=uuid.uuid4().hex,
        requirement=request.requirement,
        protocol=request.protocol,
        organisation=request.organisation,
        steps=outcome.steps,
        apis=apis,
        stages=stages,
        cost=context.cost,
        latency_ms=round(context.elapsed_ms(), 2),
        constraints=request.constraints,
        backends=backends,
        notes=list(context.notes),
        verdict=verdict,
        context=list(negotiation.context_parts),
        read_by=negotiation.read_by,
    )


def _name_the_dead(negotiation: Negotiation, outcome: Outcome, cost: float) -> None:
    """An unserved step whose credible bids all came from items no longer available says so, naming them: the
    catalogue knew something that once did the job."""
    for step in outcome.steps:
        if step.awarded:
            continue
        live = max((p.score for p in outcome.proposals if p.function_id == step.id), default=0.0)
        credible = [p for p in negotiation.dead if p.function_id == step.id and p.score > max(live, cost)]
        dead = sorted(best_proposals(credible).values(), key=lambda p: -p.score)
        if dead:
            named = ", ".join(f"{p.api_name} ({p.score:.2f})" for p in dead[:3])
            step.reason = f"the catalogue's only candidates for '{step.function}' are no longer available: {named}" + (
                f"; {step.reason}" if step.reason else ""
            )
