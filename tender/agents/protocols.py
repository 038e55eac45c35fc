"""The three contract-net protocols and the single-agent baseline. They differ in who performs the four
reasoning steps (decompose, map, match, select):

    manager-led     manager 1, 2, 4   contractors 3
    contractor-led  contractors 1, 2, 3   manager 4
    collaborative   manager 1   contractors 2, 3, 4 (the manager integrates)
    single-agent    one reasoner does all four, no contract net
"""

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from .manager import Manager, Negotiation
from .messages import MANAGER, Backtrack, CallForProposals, Propose
from .plan import Award, PlanStep, StepStatus, confidence
from .request import InvalidRequest
from .tasks import BidTask, ContractorKnowledge, FunctionSpec

MAX_ROUNDS = 3  # announcements per function, the first included


@dataclass
class Outcome:
    steps: list[PlanStep]
    final: list[int]
    proposals: list[Propose]
    stages: dict[str, list[int]] = field(default_factory=dict)

    def functions(self) -> dict[str, str]:
        """Each step's function text, by step id."""
        return {s.id: s.function for s in self.steps}


def _steps_from(functions: list[FunctionSpec]) -> list[PlanStep]:
    return [PlanStep(id=f.id, function=f.description, depends_on=f.depends_on) for f in functions]


def _decompose(manager: Manager, negotiation: Negotiation) -> tuple[list[FunctionSpec], list[PlanStep]]:
    """The manager's decomposition of the requirement: the functions, and a plan step for each."""
    functions = manager.decompose(negotiation.request, negotiation.context)
    return functions, _steps_from(functions)


def _one_by_one(
    negotiation: Negotiation, functions: list[FunctionSpec], steps: list[PlanStep]
) -> Iterator[tuple[FunctionSpec, PlanStep]]:
    """Each function with its step, in order, reporting it as announced (the selection is the last share)."""
    for index, (function, step) in enumerate(zip(functions, steps)):
        negotiation.context.report(index, len(functions) + 1, f"announcing {function.id}: {function.name}")
        yield function, step


def _admissible(manager: Manager, negotiation: Negotiation, proposals: list[Propose]) -> list[Propose]:
    kept = []
    for p in proposals:
        reason = manager.admissible(negotiation, p)
        if reason is None:
            kept.append(p)
    return kept


def manager_led(manager: Manager, negotiation: Negotiation) -> Outcome:
    functions, steps = _decompose(manager, negotiation)
    proposals: list[Propose] = []
    for function, step in _one_by_one(negotiation, functions, steps):
        tried: set[str] = set()
        # Without categories (a catalogue of MCP tools or OpenAPI operations has none) the first call goes to
        # whoever routing finds closest; so does it when no category fits.
        categories = manager.map_categories(negotiation, function, tried)
        for round in range(1, MAX_ROUNDS + 1):
            if not categories and round > 1:
                break
            step.status, step.rounds = StepStatus.announced, round
            step.categories = categories
            tried.update(categories)
            offers = _admissible(
                manager,
                negotiation,
                manager.announce(negotiation, function=function, categories=categories, steps=["match"], round=round),
            )
            if offers:
                proposals.extend(offers)
                break
            step.status = StepStatus.backtracked
            if round < MAX_ROUNDS:
                categories = manager.backtrack(
                    negotiation, function, tried, round, f"no acceptable proposal in {', '.join(categories)}"
                )
        if not any(p.function_id == function.id for p in proposals):
            step.status = StepStatus.failed
            manager.fail(
                negotiation, f"{function.id}", f"no contractor could realise {function.id} in {step.rounds} round(s)"
            )
    negotiation.context.report(len(functions), len(functions) + 1, "selecting the API set")
    final = manager.select(negotiation, functions, proposals) if proposals else []
    return Outcome(steps=steps, final=final, proposals=proposals)


def contractor_led(manager: Manager, negotiation: Negotiation) -> Outcome:
    context = negotiation.context
    context.report(0, 2, "announcing the requirement to contractors")
    offers = _admissible(
        manager,
        negotiation,
        manager.announce(negotiation, function=None, categories=[], steps=["decompose", "map", "match"]),
    )
    # The contractors' own decomposition becomes the plan's steps, in the requirement's order.
    texts = list(dict.fromkeys(str(p.evidence.get("function") or negotiation.request.requirement) for p in offers))
    requirement = negotiation.request.requirement
    texts.sort(key=lambda t: requirement.find(t) if t in requirement else len(requirement))
    functions = [FunctionSpec(id=f"f{i}", name=t[:60], description=t) for i, t in enumerate(texts, start=1)] or [
        FunctionSpec(id="f1", name=requirement[:60], description=requirement)
    ]
    by_text = {f.description: f.id for f in functions}
    for p in offers:
        p.function_id = by_text.get(str(p.evidence.get("function") or requirement), functions[0].id)
    negotiation.mapped_categories.update(dict.fromkeys(p.category for p in offers if p.category))
    steps = _steps_from(functions)
    for step in steps:
        step.status, step.rounds = StepStatus.announced, 1
        step.categories = list(dict.fromkeys(p.category for p in offers if p.function_id == step.id and p.category))
    context.report(1, 2, "selecting the API set")
    final = manager.select(negotiation, functions, offers) if offers else []
    return Outcome(steps=steps, final=final, proposals=offers)


def collaborative(manager: Manager, negotiation: Negotiation) -> Outcome:
    functions, steps = _decompose(manager, negotiation)
    offers: list[Propose] = []
    for function, step in _one_by_one(negotiation, functions, steps):
        step.status, step.rounds = StepStatus.announced, 1
        got = _admissible(
            manager,
            negotiation,
            manager.announce(negotiation, function=function, categories=[], steps=["map", "match", "select"]),
        )
        step.categories = list(dict.fromkeys(p.category for p in got if p.category))
        negotiation.mapped_categories.update(dict.fromkeys(step.categories))
        offers.extend(got)
        if not got:
            step.status = StepStatus.failed
            manager.fail(negotiation, function.id, f"no contractor selected itself for {function.id}")
    # Integration: every self-selected contractor is kept, best first, one entry per API.
    best: dict[int, float] = {}
    for p in offers:
        best[p.api_id] = max(best.get(p.api_id, 0.0), p.score)
    final = sorted(best, key=lambda a: (-best[a], a))
    if negotiation.request.constraints.max_apis:
        final = final[: negotiation.request.constraints.max_apis]
    return Outcome(steps=steps, final=final, proposals=offers)


def single_agent(manager: Manager, negotiation: Negotiation, shortlist: int = 40) -> Outcome:
    """One reasoner over the whole catalogue: it retrieves its own shortlist, judges it and selects."""
    request = negotiation.request
    functions, steps = _decompose(manager, negotiation)
    scores = manager.router.profile_scores(manager.encoder.one(request.requirement))
    named = manager.router.named(request.requirement)
    order = np.argsort(-scores, kind="stable")[:shortlist]
    ids = list(dict.fromkeys([*sorted(named), *(int(manager.router.api_ids[r]) for r in order)]))
    ids = [
        i
        for i in ids
        if i not in negotiation.excluded_apis
        and not negotiation.excluded_categories.intersection(manager.catalog.get_api(i).categories)
    ]
    proposals = _judged_alone(
        manager, negotiation, ids, task_id="t1", function_id=functions[0].id, steps=["decompose", "map", "match"]
    )
    final = manager.select(negotiation, functions, proposals) if proposals else []
    return Outcome(steps=steps, final=final, proposals=proposals)


def _judged_alone(
    manager: Manager,
    negotiation: Negotiation,
    ids: list[int],
    task_id: str,
    function_id: str,
    category: str | None = None,
    **cfp_fields,
) -> list[Propose]:
    """The single agent judges these APIs itself, in one bid task, and its bids become the proposals (of
    this category, or of the category it names)."""
    requirement = negotiation.request.requirement
    knowledge = ContractorKnowledge(contractor="single-agent", apis=[manager.pool.api_knowledge(i) for i in ids])
    cfp = CallForProposals(
        sender=MANAGER,
        receiver=MANAGER,
        task_id=task_id,
        requirement=requirement,
        **manager.neighbourhoods(requirement),
        clause_descriptions=manager.clause_descriptions(requirement),
        **cfp_fields,
    )
    decision = manager.reasoner.run(BidTask(cfp=cfp, knowledge=knowledge), negotiation.context)
    names = {k.api_id: k.name for k in knowledge.apis}
    return [
        Propose(
            sender=MANAGER,
            receiver=MANAGER,
            task_id=task_id,
            api_id=d.api_id,
            api_name=names[d.api_id],
            score=d.score,
            rationale=d.rationale,
            evidence=d.evidence,
            function_id=function_id,
            category=category or d.category,
        )
        for d in decision.proposals
        if d.api_id in names
    ]


@dataclass(frozen=True)
class Protocol:
    """A way to negotiate, registered by name in PROTOCOLS: the command line's choices, the MCP tools' enum,
    `tender eval --protocol all` and their help texts all come from the registry."""

    name: str
    summary: str  # one line: who does what (help texts and the tools' descriptions)
    run: Callable[[Manager, Negotiation], Outcome]
    contract_net: bool = True  # False: one reasoner does every step; nothing is announced or awarded


PROTOCOLS: dict[str, Protocol] = {}  # by name, in the order they are shown


def register(protocol: Protocol) -> Protocol:
    if protocol.name in PROTOCOLS:
        raise ValueError(f"a protocol named {protocol.name!r} is already registered")
    PROTOCOLS[protocol.name] = protocol
    return protocol


def described(quote: str = "'") -> str:
    """Every protocol with its summary, a sentence each, for a help text: "'manager-led': the manager ...."."""
    return " ".join(f"{quote}{p.name}{quote}: {p.summary}." for p in PROTOCOLS.values())


def protocol_type() -> Any:
    """The registered names as a Literal, for a signature or a model whose schema must list them (an enum)."""
    return Literal[tuple(PROTOCOLS)]


register(
    Protocol(
        "manager-led",
        "the manager splits the requirement into functions and maps each to categories; "
        "contractors only bid (the default, usually best)",
        manager_led,
    )
)
register(
    Protocol(
        "contractor-led",
        "contractors read the whole requirement and decide what they can serve; the manager selects",
        contractor_led,
    )
)
register(
    Protocol(
        "collaborative", "the manager splits the requirement; contractors map, bid and select themselves", collaborative
    )
)
register(
    Protocol(
        "single-agent", "one reasoner does every step, no negotiation (a baseline)", single_agent, contract_net=False
    )
)


def unserved_reason(function: str, bids: list[Propose], serving: dict[int, str]) -> str:
    """Why a step has no award, naming the best bid that fell short; a best bidder awarded to another step is
    said to serve that one, not to have been passed over. Where another bidder's description matches the function
    best (a bid weighs history and popularity too), it is named as well: the lead a reader would follow."""
    top = bids[0]
    if top.api_id not in serving:
        reason = f"no credible bid for '{function}': the best, {top.api_name} at {top.score:.2f}, fell short"
        named = {top.api_id}
    else:
        reason = f"no credible bid for '{function}' of its own: the best, {top.api_name} ({top.score:.2f}), serves {serving[top.api_id]}"
        rest = [p for p in bids if p.api_id not in serving]
        reason += f"; the next, {rest[0].api_name} at {rest[0].score:.2f}, fell short" if rest else ""
        named = {top.api_id, *(p.api_id for p in rest[:1])}
    described = [p for p in bids if "desc_function" in p.evidence and p.api_id not in serving]
    closest = max(described, key=lambda p: p.evidence["desc_function"], default=None)
    if closest is not None and closest.api_id not in named:
        similarity = float(closest.evidence["desc_function"])
        reason += f"; closest in description: {closest.api_name} (similarity {similarity:.2f}, bid {closest.score:.2f})"
    return reason


def fill_steps(outcome: Outcome, scores: dict[int, Propose], api_names: dict[int, str]) -> None:
    """Attach each awarded API to the step it was proposed for; a step left without one is unserved, with the
    reason and the best bid that fell short."""
    by_id = {s.id: s for s in outcome.steps}
    for api_id in outcome.final:
        p = scores[api_id]
        step = by_id.get(p.function_id or "") or (outcome.steps[0] if outcome.steps else None)
        if step is None:
            continue
        step.awarded.append(
            Award(
                api_id=api_id,
                api_name=api_names[api_id],
                score=p.score,
                rationale=p.rationale,
                level=confidence(p.score),
            )
        )
        step.status = StepStatus.awarded
    serving = {a.api_id: s.id for s in outcome.steps for a in s.awarded}
    for step in outcome.steps:
        if step.awarded:
            continue
        bids = sorted((p for p in outcome.proposals if p.function_id == step.id), key=lambda p: -p.score)
        if bids:
            step.reason = unserved_reason(step.function, bids, serving)
        else:
            step.reason = f"no contractor proposed an API for '{step.function}'"
        if step.status != StepStatus.failed:  # failed: every round of announcements went unanswered
            step.status = StepStatus.unserved


def enforce_constraints(manager: Manager, negotiation: Negotiation, outcome: Outcome) -> None:
    """Make the final set honour the request: nothing excluded, an API of every required category
    (announcing again for a category the selection missed), and at most max_apis APIs."""
    request = negotiation.request
    constraints = request.constraints
    catalog = manager.catalog
    by_api = {}
    for p in outcome.proposals:
        if p.api_id not in by_api or p.score > by_api[p.api_id].score:
            by_api[p.api_id] = p
    outcome.final = [a for a in outcome.final if manager.admissible(negotiation, by_api[a]) is None]
    for number, category in enumerate(constraints.required_categories, start=1):
        if any(category in catalog.get_api(a).categories for a in outcome.final):
            continue
        in_hand = [
            p
            for p in outcome.proposals
            if category in catalog.get_api(p.api_id).categories and manager.admissible(negotiation, p) is None
        ]
        if not in_hand:
            in_hand = _announce_required(manager, negotiation, outcome, category, number)
        if not in_hand:
            raise _unsatisfiable(category)
        best = max(in_hand, key=lambda p: p.score)
        by_api.setdefault(best.api_id, best)
        outcome.final.append(best.api_id)
    if constraints.max_apis and len(outcome.final) > constraints.max_apis:
        covering = []
        for category in constraints.required_categories:
            if not any(category in catalog.get_api(a).categories for a in covering):
                covering.append(next(a for a in outcome.final if category in catalog.get_api(a).categories))
        rest = [a for a in outcome.final if a not in covering]
        keep = set(covering + rest[: max(0, constraints.max_apis - len(covering))])
        outcome.final = [a for a in outcome.final if a in keep]


def _announce_required(
    manager: Manager, negotiation: Negotiation, outcome: Outcome, category: str, number: int
) -> list[Propose]:
    step_id = f"r{number}"
    function = FunctionSpec(id=step_id, name=f"a {category} API", description=negotiation.request.requirement)
    step = PlanStep(
        id=step_id,
        function=f"provide a {category} API, as the request requires",
        categories=[category],
        status=StepStatus.announced,
        rounds=1,
    )
    outcome.steps.append(step)
    negotiation.transcript.backtracking.append(
        Backtrack(
            function_id=step_id,
            round=1,
            reason=f"the selection has no API of the required category {category}",
            from_categories=[],
            to_categories=[category],
        )
    )
    if not PROTOCOLS[negotiation.request.protocol].contract_net:
        ids = [i for i in manager.catalog.apis_in_categories([category]) if i not in negotiation.excluded_apis]
        offers = _judged_alone(
            manager,
            negotiation,
            ids,
            task_id=step_id,
            function_id=step_id,
            category=category,
            categories=[category],
            reserve=0.0,
        )
    else:
        # The category is required: any bid will do, so the manager sets no bar.
        offers = manager.announce(negotiation, function=function, categories=[category], steps=["match"], reserve=0.0)
        offers = [p for p in offers if category in manager.catalog.get_api(p.api_id).categories]
    offers = [p for p in offers if manager.admissible(negotiation, p) is None]
    for p in offers:
        p.function_id = step_id
    outcome.proposals.extend(offers)
    if not offers:
        step.status = StepStatus.failed
    return offers


def _unsatisfiable(category: str) -> InvalidRequest:
    return InvalidRequest(
        f"no API of the required category {category!r} fits the requirement or is left after the "
        "exclusions; drop it from required_categories or relax the exclusions"
    )
