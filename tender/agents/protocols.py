"""The three contract-net protocols and the single-agent baseline. They differ in who performs the four
reasoning steps (decompose, map, match, select):

    manager-led     manager 1, 2, 4   contractors 3
    contractor-led  contractors 1, 2, 3   manager 4
    collaborative   manager 1   contractors 2, 3, 4 (the manager integrates)
    single-agent    one reasoner does all four, no contract net

Whoever reasons, relevance and selection come from tender.ranking: a contractor bids its item's score for the
announced function, and the embedded manager selects by the ranking's objective.
"""

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal, cast

from tender.ranking.retrieval import Shortlist

from .manager import Manager, Negotiation
from .messages import MANAGER, Backtrack, CallForProposals, Propose
from .outcome import Outcome, award_of, best_proposals
from .plan import PlanStep, StepStatus
from .request import REGISTRY, InvalidRequest
from .tasks import BidTask, ContractorKnowledge, FunctionSpec, Selection
from .decomposition import read

SHORTLIST = 40  # the single agent judges this many items of its own retrieval


def _steps_from(functions: list[FunctionSpec]) -> list[PlanStep]:
    return [PlanStep(id=f.id, function=f.description, depends_on=f.depends_on, form=f.form) for f in functions]


def _decompose(manager: Manager, negotiation: Negotiation) -> tuple[list[FunctionSpec], list[PlanStep]]:
    """The caller's needs or the manager's decomposition: the functions, and a plan step for each."""
    functions = manager.decompose(negotiation.request, negotiation.context, negotiation)
    return functions, _steps_from(functions)


def _one_by_one(
    negotiation: Negotiation, functions: list[FunctionSpec], steps: list[PlanStep]
) -> Iterator[tuple[FunctionSpec, PlanStep]]:
    """Each function with its step, in order, reporting it as announced (the selection is the last share)."""
    for index, (function, step) in enumerate(zip(functions, steps)):
        negotiation.context.report(index, len(functions) + 1, f"announcing {function.id}: {function.name}")
        yield function, step


def _selected(manager: Manager, negotiation: Negotiation, functions, proposals) -> tuple[list[int], dict[int, str]]:
    if not proposals:
        return [], {}
    selection: Selection = manager.select(negotiation, functions, proposals)
    return selection.api_ids, dict(selection.awards)


def manager_led(manager: Manager, negotiation: Negotiation) -> Outcome:
    functions, steps = _decompose(manager, negotiation)
    shortlists = manager.shortlists(negotiation, [f.description for f in functions])
    mapped = manager.map_categories(negotiation, functions, shortlists)
    proposals: list[Propose] = []
    for (function, step), shortlist in zip(_one_by_one(negotiation, functions, steps), shortlists):
        categories = mapped[function.id]
        step.status, step.rounds, step.categories = StepStatus.announced, 1, categories
        offers = manager.announce(
            negotiation, function=function, categories=categories, steps=["match"], shortlists=(shortlist,)
        )
        if not offers and categories:
            # Nothing acceptable inside the mapped categories: announce again, to every category.
            step.status, step.rounds = StepStatus.backtracked, 2
            manager.backtrack(
                negotiation, function, categories, 1, f"no acceptable proposal in {', '.join(categories)}"
            )
            offers = manager.announce(
                negotiation, function=function, categories=[], steps=["match"], shortlists=(shortlist,), round=2
            )
        if not offers:
            step.status = StepStatus.failed
            manager.fail(
                negotiation, function.id, f"no contractor could realise {function.id} in {step.rounds} round(s)"
            )
        proposals.extend(offers)
    negotiation.context.report(len(functions), len(functions) + 1, "selecting the API set")
    final, awards = _selected(manager, negotiation, functions, proposals)
    return Outcome(steps=steps, final=final, proposals=proposals, awards=awards)


def _read_as(negotiation: Negotiation) -> list[str]:
    """The parts a contractor reads the requirement as when it is announced whole: the caller's needs, else the
    needs its text states."""
    request = negotiation.request
    return list(request.needs) if request.needs else read(request.requirement).needs


def _functions_of(negotiation: Negotiation, offers: list[Propose]) -> tuple[list[FunctionSpec], list[Propose]]:
    """The contractors' own decomposition (the functions their bids name) as the plan's functions, in the
    requirement's order (with needs stated, every need is one, bid for or not); each offer with its function's id."""
    request = negotiation.request
    requirement = request.requirement
    if request.needs:
        texts = list(request.needs)
    else:
        texts = list(dict.fromkeys(p.function or requirement for p in offers))
        texts.sort(key=lambda t: requirement.find(t) if t in requirement else len(requirement))
    functions = [
        FunctionSpec(id=f"f{i}", name=t[:60], description=t, form=negotiation.form_of(t))
        for i, t in enumerate(texts, start=1)
    ] or [FunctionSpec(id="f1", name=requirement[:60], description=requirement, form=negotiation.form_of(requirement))]
    by_text = {f.description: f.id for f in functions}
    return functions, [
        p.model_copy(update={"function_id": by_text.get(p.function or requirement, functions[0].id)}) for p in offers
    ]


def contractor_led(manager: Manager, negotiation: Negotiation) -> Outcome:
    context = negotiation.context
    context.report(0, 2, "announcing the requirement to contractors")
    shortlists = tuple(manager.shortlists(negotiation, _read_as(negotiation)))
    offers = manager.announce(
        negotiation, function=None, categories=[], steps=["decompose", "map", "match"], shortlists=shortlists
    )
    functions, offers = _functions_of(negotiation, offers)
    negotiation.mapped_categories.update(dict.fromkeys(p.category for p in offers if p.category))
    steps = _steps_from(functions)
    for step in steps:
        step.status, step.rounds = StepStatus.announced, 1
        step.categories = list(dict.fromkeys(p.category for p in offers if p.function_id == step.id and p.category))
    context.report(1, 2, "selecting the API set")
    final, awards = _selected(manager, negotiation, functions, offers)
    return Outcome(steps=steps, final=final, proposals=offers, awards=awards)


def collaborative(manager: Manager, negotiation: Negotiation) -> Outcome:
    functions, steps = _decompose(manager, negotiation)
    offers: list[Propose] = []
    manager.shortlists(negotiation, [f.description for f in functions])
    for function, step in _one_by_one(negotiation, functions, steps):
        step.status, step.rounds = StepStatus.announced, 1
        shortlist = manager.shortlist(negotiation, function.description)
        got = manager.announce(
            negotiation, function=function, categories=[], steps=["map", "match", "select"], shortlists=(shortlist,)
        )
        step.categories = list(dict.fromkeys(p.category for p in got if p.category))
        negotiation.mapped_categories.update(dict.fromkeys(step.categories))
        offers.extend(got)
        if not got:
            step.status = StepStatus.failed
            manager.fail(negotiation, function.id, f"no contractor selected itself for {function.id}")
    # Integration: every self-selected contractor is kept, best first, one entry per API.
    best = best_proposals(offers)
    final = sorted(best, key=lambda a: (-best[a].score, a))
    if negotiation.request.constraints.max_apis:
        final = final[: negotiation.request.constraints.max_apis]
    return Outcome(steps=steps, final=final, proposals=offers, awards={a: best[a].function_id or "" for a in final})


def single_agent(manager: Manager, negotiation: Negotiation) -> Outcome:
    """One reasoner over the whole catalogue: it decomposes, retrieves its own shortlist, judges it and selects."""
    functions, steps = _decompose(manager, negotiation)
    shortlists = tuple(manager.shortlists(negotiation, [f.description for f in functions]))
    pooled: dict[int, float] = {}
    for shortlist in shortlists:
        for c in shortlist.candidates:
            pooled[c.item] = max(pooled.get(c.item, 0.0), c.score)
    ids = sorted(pooled, key=lambda a: (-pooled[a], a))[:SHORTLIST]
    proposals = _judged_alone(manager, negotiation, ids, functions, shortlists, task_id="t1")
    final, awards = _selected(manager, negotiation, functions, proposals)
    for step in steps:
        step.status, step.rounds = StepStatus.announced, 1
    return Outcome(steps=steps, final=final, proposals=proposals, awards=awards)


def _judged_alone(
    manager: Manager,
    negotiation: Negotiation,
    ids: list[int],
    functions: list[FunctionSpec],
    shortlists: tuple[Shortlist, ...],
    task_id: str,
    category: str | None = None,
    **cfp_fields,
) -> list[Propose]:
    """The single agent judges these APIs itself, in one bid task, each for the function it serves best; its bids
    become the proposals (of this category, or of the category it names)."""
    requirement = negotiation.request.requirement
    knowledge = ContractorKnowledge(contractor="single-agent", apis=[manager.pool.api_knowledge(i) for i in ids])
    cfp = CallForProposals(sender=MANAGER, receiver=MANAGER, task_id=task_id, requirement=requirement, **cfp_fields)
    task = BidTask(cfp=cfp, knowledge=knowledge, shortlists=shortlists, selection=manager.ranker.scorer.objective)
    decision = manager.reasoner.run(task, negotiation.context)
    names = {k.api_id: k.name for k in knowledge.apis}
    by_text = {f.description: f.id for f in functions}
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
            function_id=by_text.get(d.function or "", functions[0].id if functions else None),
            function=d.function,
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

    def negotiate(self, manager: Manager, negotiation: Negotiation) -> Outcome:
        """The whole negotiation, finished: the protocol's steps, the request's constraints (announcing again for a
        required category the selection missed), then the awards. Nothing after it negotiates."""
        outcome = self.run(manager, negotiation)
        enforce_constraints(manager, negotiation, outcome)
        outcome.awarded = award_of(outcome)
        if self.contract_net:
            manager.award(negotiation, outcome.proposals, outcome.final, outcome.awarded)
        return outcome


PROTOCOLS = cast("dict[str, Protocol]", REGISTRY)  # by name, in the order they are shown


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


def enforce_constraints(manager: Manager, negotiation: Negotiation, outcome: Outcome) -> None:
    """Make the final set honour the request: nothing excluded, an API of every required category
    (announcing again for a category the selection missed), and at most max_apis APIs."""
    request = negotiation.request
    constraints = request.constraints
    catalog = manager.catalog
    by_api = best_proposals(outcome.proposals)
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
        outcome.awards.setdefault(best.api_id, best.function_id or "")
    if constraints.max_apis and len(outcome.final) > constraints.max_apis:
        covering: list[int] = []
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
    requirement = negotiation.request.requirement
    function = FunctionSpec(id=step_id, name=f"a {category} API", description=requirement)
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
    members = [i for i in manager.catalog.apis_in_categories([category]) if i not in negotiation.excluded_apis]
    shortlist = manager.ranker.shortlist(requirement, requirement, exclude=negotiation.excluded_apis, among=members)
    if not PROTOCOLS[negotiation.request.protocol].contract_net:
        offers = _judged_alone(
            manager,
            negotiation,
            [c.item for c in shortlist.candidates],
            [function],
            (shortlist,),
            task_id=step_id,
            category=category,
            categories=[category],
            reserve=0.0,
        )
    else:
        # The category is required: any bid will do, so the manager sets no bar.
        offers = manager.announce(
            negotiation, function=function, categories=[category], steps=["match"], shortlists=(shortlist,), reserve=0.0
        )
        offers = [p for p in offers if category in manager.catalog.get_api(p.api_id).categories]
    offers = [
        p.model_copy(update={"function_id": step_id}) for p in offers if manager.admissible(negotiation, p) is None
    ]
    outcome.proposals.extend(offers)
    if not offers:
        step.status = StepStatus.failed
    return offers


def _unsatisfiable(category: str) -> InvalidRequest:
    return InvalidRequest(
        f"no API of the required category {category!r} fits the requirement or is left after the "
        "exclusions; drop it from required_categories or relax the exclusions"
    )
