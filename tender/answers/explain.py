"""A stored run, told function by function: what explain_bids returns.

The summary says, per function, whom the call for proposals reached and why, the winning and the best
losing bids with their reasons, and any backtracking; `detail="full"` adds every call with every answer
and the full diagram. The message list itself stays in the runs database (runs://{run_id})."""

import re

from tender.agents.diagram import sequence_diagram, summary_diagram
from tender.agents.messages import Transcript
from tender.agents.plan import Run
from tender.catalog import Catalog
from tender.errors import InputToFix
from tender.ranking.evidence import Evidence
from tender.safety import echo

from .brief import api_choice, one_line, step_reason, why, winning_bid
from .budget import RESULT_BYTES, STAGE_IDS, pages_of, result_bytes
from .schemas import Bid, BidBrief, CallExplained, Decision, Detail, Explanation, FunctionExplained, Refusal, StageSizes


class UnknownFunction(InputToFix):
    pass


class UnknownPage(InputToFix):
    pass


def explain(
    run: Run,
    function: str | None = None,
    names: dict[str, str] | None = None,
    detail: Detail = "summary",
    catalog: Catalog | None = None,
    page: int = 1,
    budget: int | None = RESULT_BYTES,
) -> Explanation:
    """Tell the run per function; with `function` (a step id such as 'f1', or its text), only that step.
    `names` labels contractors in the diagram; `catalog` adds usage counts to the reasons. An explanation
    heavier than `budget` bytes as a tool result comes in pages: `page` picks one, `next_page` names the next
    (None: one page, whatever it weighs, for a terminal). Raises UnknownFunction naming the valid steps and
    UnknownPage naming how many pages there are."""
    plan, transcript = run.plan, run.transcript
    if names is None and catalog is not None:
        names = _names(transcript, catalog)
    step_id = _step_id(run, function) if function else None
    if step_id:
        tasks = {m.task_id for m in transcript.of_kind("cfp") if m.function_id == step_id}
        transcript = _only(transcript, tasks)
        transcript.backtracking = [b for b in transcript.backtracking if b.function_id == step_id]
    calls = _calls(transcript)
    functions = _functions(run, calls, transcript, catalog)
    base = Explanation(
        run_id=plan.run_id,
        protocol=plan.protocol,
        organisation=plan.organisation,
        detail=detail,
        function=step_id,
        functions=[],
        apis=[a.name for a in plan.apis],
        messages=plan.cost.messages,
        contractors_contacted=plan.cost.contractors_contacted,
        notes=transcript.notes or plan.notes,
        diagram="",
        transcript_uri=f"runs://{plan.run_id}",
    )
    if detail == "full":
        first = base.model_copy(
            update=dict(
                functions=[told for told, _ in functions],
                requirement=plan.requirement,
                steps=[s for s in plan.steps if step_id in (None, s.id)],
                backtracking=transcript.backtracking,
                stages=plan.stages.capped(STAGE_IDS),
                cost=plan.cost,
                stage_sizes=StageSizes(**plan.stages.sizes()),
            )
        )

        def full_page(chunk: list[CallExplained | None]) -> Explanation:
            """A page of calls; the run-level parts (None, the first unit) head the first page."""
            here = [c for c in chunk if c is not None]
            head = first if chunk and chunk[0] is None else base.model_copy(update=dict(notes=[]))
            sub = _only(transcript, {c.task_id for c in here})
            return head.model_copy(update=dict(calls=here, diagram=sequence_diagram(sub, names=names)))

        fitted = [_fitted(call, plan.run_id, budget, full_page) for call in calls] if budget else calls
        return _page(full_page, [None, *fitted], page, plan.run_id, budget)

    def summary_page(chunk: list[tuple[FunctionExplained, list[str]]]) -> Explanation:
        sub = _only(transcript, {task for _, tasks in chunk for task in tasks})
        sub.backtracking = transcript.backtracking
        return base.model_copy(
            update=dict(functions=[told for told, _ in chunk], diagram=summary_diagram(sub, names=names))
        )

    return _page(summary_page, functions, page, plan.run_id, budget)


def _page(render, units: list, page: int, run_id: str, budget: int | None) -> Explanation:
    """The `page`-th page of `units` rendered, each page within `budget` (None: one page)."""
    pages = pages_of(units, lambda chunk: _weight(render(chunk)), budget) if budget else [units]
    if not 1 <= page <= len(pages):
        raise UnknownPage(
            f"Run {run_id}'s explanation has {len(pages)} page{'s' if len(pages) != 1 else ''} here; "
            f"ask for page 1 to {len(pages)}."
        )
    told = render(pages[page - 1])
    if len(pages) == 1:
        return told
    return told.model_copy(update=dict(page=page, pages=len(pages), next_page=page + 1 if page < len(pages) else None))


def _weight(page: Explanation) -> int:
    """A page's weight as a result, counting the paging fields it may carry."""
    return result_bytes(page.model_copy(update=dict(page=999, pages=999, next_page=999)))


def _only(transcript: Transcript, tasks: set[str]) -> Transcript:
    return Transcript(
        messages=[m for m in transcript.messages if m.task_id in tasks],
        routing=[r for r in transcript.routing if r.task_id in tasks],
        backtracking=list(transcript.backtracking),
        notes=transcript.notes,
    )


_LISTS = ("contacted", "proposals", "refusals", "decisions", "confirmations")


def _fitted(call: CallExplained, run_id: str, budget: int, render) -> CallExplained:
    """The call, its longest lists cut until a page of it alone fits (a broadcast reaches hundreds), saying what
    was left out and where it is (the saying weighed too)."""
    whole = {name: len(getattr(call, name)) for name in _LISTS}

    def told(trimmed: CallExplained) -> CallExplained:
        shown = ", ".join(
            f"{len(getattr(trimmed, name))} of {whole[name]} {name}"
            for name in _LISTS
            if len(getattr(trimmed, name)) < whole[name]
        )
        return trimmed.model_copy(update=dict(left_out=f"Shown: {shown}; runs://{run_id} has every message."))

    trimmed = call
    while _weight(render([trimmed if trimmed is call else told(trimmed)])) > budget:
        longest = max(_LISTS, key=lambda name: len(getattr(trimmed, name)))
        items = getattr(trimmed, longest)
        if len(items) <= 1:
            break
        trimmed = trimmed.model_copy(update={longest: items[: len(items) // 2]})
    return call if trimmed is call else told(trimmed)


def _names(transcript: Transcript, catalog: Catalog) -> dict[str, str]:
    """API names for the api:<id> contractors that never proposed (refusers), from the catalogue."""
    known, names = set(catalog.api_ids()), {}
    for contractor in {c.contractor for r in transcript.routing for c in r.contacted}:
        kind, _, key = contractor.partition(":")
        if kind == "api" and key.isdigit() and int(key) in known:
            names[contractor] = catalog.get_api(int(key)).name
    return names


def _functions(
    run: Run, calls: list[CallExplained], transcript: Transcript, catalog: Catalog | None
) -> list[tuple[FunctionExplained, list[str]]]:
    """One entry per announced function, its rounds merged, in the order first announced, with the tasks
    (calls for proposals) it was announced in."""
    steps = {s.id: s for s in run.plan.steps}
    groups: dict[str | None, list[CallExplained]] = {}
    for call in calls:
        groups.setdefault(call.function_id, []).append(call)
    told = []
    for function_id, rounds in groups.items():
        step = steps.get(function_id) if function_id else None
        if function_id is None:  # the whole requirement announced at once: every step's awards came from it
            awards = [a for s in run.plan.steps for a in s.awarded]
        else:
            awards = step.awarded if step else []
        winners = {a.api_id for a in awards}
        proposals = sorted((p for c in rounds for p in c.proposals), key=lambda p: -p.score)
        decisions = {d.api_id: d.reason for c in rounds for d in c.decisions}
        losing = next((p for p in proposals if p.api_id not in winners), None)
        for api in run.plan.apis:  # an API that lost here because it won elsewhere says where
            if losing and api.api_id == losing.api_id and api.steps:
                decisions[api.api_id] = f"awarded to {', '.join(api.steps)} instead"
        told.append(
            (
                FunctionExplained(
                    id=function_id,
                    function=(step.function if step else rounds[0].function) or one_line(run.plan.requirement, 80),
                    status=getattr(step.status, "value", None) if step else None,
                    sent_to=_sent_to(rounds[-1]),
                    categories=[c for c in rounds[-1].categories if catalog is None or c in catalog.real_categories],
                    rounds=len(rounds) if len(rounds) > 1 else None,
                    bids=len(proposals),
                    refusals=sum(len(c.refusals) for c in rounds),
                    winners=[_winner(a, transcript, function_id, catalog, decisions) for a in awards],
                    best_losing=_brief(losing, catalog, decisions) if losing else None,
                    backtracking=[
                        f"round {b.round}: {b.reason} ({', '.join(b.from_categories) or 'any'} -> "
                        f"{', '.join(b.to_categories) or 'any'})"
                        for b in transcript.backtracking
                        if b.function_id == function_id
                    ],
                    reason=step_reason(step) if step else None,
                ),
                [c.task_id for c in rounds],
            )
        )
    return told


def _winner(award, transcript, function_id, catalog, decisions) -> BidBrief:
    choice = api_choice(award, winning_bid(transcript, award.api_id, function_id), catalog)
    return BidBrief(api_id=award.api_id, name=award.api_name, confidence=choice.confidence, why=choice.why)


def _brief(bid: Bid, catalog: Catalog | None, decisions: dict[int, str]) -> BidBrief:
    usage = catalog.usage_count(bid.api_id) if catalog is not None and bid.api_id in set(catalog.api_ids()) else None
    return BidBrief(
        api_id=bid.api_id,
        name=bid.api_name,
        confidence=round(bid.score, 2),
        why=why(Evidence.model_validate(bid.evidence) if bid.evidence else None, bid.rationale, usage, bid.score),
        outcome=decisions.get(bid.api_id),
    )


_RANK = re.compile(r"\s*(?:rank\s*)?#?\d+\s*$")


def _sent_to(call: CallExplained) -> str:
    """'12 of 940 contractors: 1 named in the requirement, 11 closest in profile (similarity 0.66 to 0.43)'."""
    contacted = call.contacted
    if not contacted:
        return "no contractor"
    of = f" of {call.eligible}" if call.eligible else ""
    if call.routing_strategy == "broadcast":
        return f"all {len(contacted)}{of} contractors (broadcast)"
    reasons: dict[str, int] = {}
    for c in contacted:
        reason = _RANK.sub("", c.reason).replace("profile similarity", "closest in profile") or "routed"
        reasons[reason] = reasons.get(reason, 0) + 1
    similarities = [c.similarity for c in contacted]
    why_them = ", ".join(f"{n} {reason}" for reason, n in reasons.items())
    return (
        f"{len(contacted)}{of} contractors: {why_them} (similarity {max(similarities):.2f} to {min(similarities):.2f})"
    )


def _step_id(run: Run, function: str) -> str:
    wanted = function.strip().casefold()
    for step in run.plan.steps:
        if wanted in (step.id.casefold(), step.function.strip().casefold()):
            if not any(m.function_id == step.id for m in run.transcript.of_kind("cfp")):
                raise UnknownFunction(
                    f"Step {step.id} was not announced on its own under the {run.plan.protocol} protocol "
                    "(the whole requirement was); explain the whole run instead (no function)."
                )
            return step.id
    steps = ", ".join(f"{s.id} ({s.function[:60]})" for s in run.plan.steps) or "none"
    raise UnknownFunction(f"No step {echo(function)} in run {run.plan.run_id}. Its steps: {steps}.")


def _calls(transcript: Transcript) -> list[CallExplained]:
    routing = {r.task_id: r for r in transcript.routing}
    calls: dict[str, CallExplained] = {}
    for message in transcript.messages:
        if message.kind == "cfp":
            if message.task_id not in calls:
                route = routing.get(message.task_id)
                calls[message.task_id] = CallExplained(
                    task_id=message.task_id,
                    function_id=message.function_id,
                    function=message.function,
                    round=message.round,
                    categories=message.categories,
                    reasoning_steps=list(message.steps),
                    routing_strategy=route.strategy if route else None,
                    eligible=route.eligible if route else None,
                    contacted=route.contacted if route else [],
                )
            continue
        call = calls.get(message.task_id)
        if call is None:
            continue
        match message.kind:
            case "propose":
                call.proposals.append(
                    Bid(
                        contractor=message.sender,
                        api_id=message.api_id,
                        api_name=message.api_name,
                        score=message.score,
                        rationale=message.rationale,
                        category=message.category,
                        evidence=message.evidence.model_dump() if message.evidence else None,
                    )
                )
            case "refuse":
                call.refusals.append(Refusal(contractor=message.sender, reason=message.reason))
            case "accept" | "reject":
                call.decisions.append(
                    Decision(
                        api_id=message.api_id,
                        contractor=message.receiver,
                        outcome="accepted" if message.kind == "accept" else "rejected",
                        reason=message.reason,
                    )
                )
            case "inform":
                call.confirmations.append(f"{message.sender}: {message.result}")
            case "failure":
                call.failures.append(message.reason)
    for call in calls.values():
        call.proposals.sort(key=lambda bid: -bid.score)
    return list(calls.values())


def explanation_text(told: Explanation) -> str:
    """The summary for a terminal: per function, whom the call reached, the winners and the best losing bid."""
    lines = [
        f"Run {told.run_id} ({told.protocol}, {told.organisation} contractors): "
        f"{told.messages} messages, {told.contractors_contacted} contractors contacted",
        "",
    ]
    for f in told.functions:
        head = f"{f.id or 'requirement'} {f.function}"
        lines.append(head + (f"  [{f.status}]" if f.status and f.status != "awarded" else ""))
        where = f" in {', '.join(f.categories)}" if f.categories else ""
        lines.append(f"    sent to {f.sent_to}{where}")
        rounds = f", {f.rounds} rounds" if f.rounds else ""
        lines.append(f"    {f.bids} bid{'s' if f.bids != 1 else ''}, {f.refusals} refused{rounds}")
        for w in f.winners:
            lines.append(f"    won:  {w.name} ({w.confidence:.2f}): {w.why}")
        if f.best_losing:
            b = f.best_losing
            lost = f"; {b.outcome}" if b.outcome else ""
            lines.append(f"    lost: {b.name} ({b.confidence:.2f}): {b.why}{lost}")
        if f.reason:
            lines.append(f"    no API: {f.reason}")
        lines += [f"    backtracked {b}" for b in f.backtracking]
        lines.append("")
    lines.append("APIs, best first: " + (", ".join(told.apis) or "none"))
    lines += [f"Note: {note}" for note in told.notes]
    return "\n".join(lines)
