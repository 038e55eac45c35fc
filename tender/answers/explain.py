"""A stored run, told call by call: what explain_bids returns."""

from tender.agents.diagram import sequence_diagram
from tender.agents.messages import Transcript
from tender.agents.plan import Run
from tender.catalog import TenderError

from .schemas import Bid, CallExplained, Decision, Explanation, Refusal, StageSizes


class UnknownFunction(TenderError):
    pass


def explain(run: Run, function: str | None = None, names: dict[str, str] | None = None) -> Explanation:
    """Group the transcript by call for proposals; with `function` (a step id such as 'f1', or its
    text), keep only the calls announcing that step. `names` labels contractors in the diagram.
    Raises UnknownFunction naming the valid steps."""
    plan, transcript = run.plan, run.transcript
    step_id = _step_id(run, function) if function else None
    if step_id:
        tasks = {m.task_id for m in transcript.of_kind("cfp") if m.function_id == step_id}
        transcript = Transcript(
            messages=[m for m in transcript.messages if m.task_id in tasks],
            routing=[r for r in transcript.routing if r.task_id in tasks],
            backtracking=[b for b in transcript.backtracking if b.function_id == step_id],
        )
    return Explanation(
        run_id=plan.run_id,
        requirement=plan.requirement,
        protocol=plan.protocol,
        organisation=plan.organisation,
        function=step_id,
        steps=[s for s in plan.steps if step_id in (None, s.id)],
        apis=plan.apis,
        calls=_calls(transcript),
        backtracking=transcript.backtracking,
        stages=plan.stages,
        stage_sizes=StageSizes(category=len(plan.stages.category), bidding=len(plan.stages.bidding),
                               final=len(plan.stages.final)),
        cost=plan.cost,
        notes=transcript.notes or plan.notes,
        diagram=sequence_diagram(transcript, names=names),
    )


def _step_id(run: Run, function: str) -> str:
    wanted = function.strip().casefold()
    for step in run.plan.steps:
        if wanted in (step.id.casefold(), step.function.strip().casefold()):
            if not any(m.function_id == step.id for m in run.transcript.of_kind("cfp")):
                raise UnknownFunction(
                    f"Step {step.id} was not announced on its own under the {run.plan.protocol} protocol "
                    "(the whole requirement was); call explain_bids without `function`."
                )
            return step.id
    steps = ", ".join(f"{s.id} ({s.function[:60]})" for s in run.plan.steps) or "none"
    raise UnknownFunction(f"No step {function!r} in run {run.plan.run_id}. Its steps: {steps}.")


def _calls(transcript: Transcript) -> list[CallExplained]:
    routing = {r.task_id: r for r in transcript.routing}
    calls: dict[str, CallExplained] = {}
    for message in transcript.messages:
        if message.kind == "cfp":
            if message.task_id not in calls:
                route = routing.get(message.task_id)
                calls[message.task_id] = CallExplained(
                    task_id=message.task_id, function_id=message.function_id, function=message.function,
                    round=message.round, categories=message.categories, reasoning_steps=list(message.steps),
                    routing_strategy=route.strategy if route else None, eligible=route.eligible if route else None,
                    contacted=route.contacted if route else [],
                )
            continue
        call = calls.get(message.task_id)
        if call is None:
            continue
        match message.kind:
            case "propose":
                call.proposals.append(Bid(contractor=message.sender, api_id=message.api_id, api_name=message.api_name,
                                          score=message.score, rationale=message.rationale, category=message.category,
                                          evidence=message.evidence))
            case "refuse":
                call.refusals.append(Refusal(contractor=message.sender, reason=message.reason))
            case "accept" | "reject":
                call.decisions.append(Decision(api_id=message.api_id, contractor=message.receiver,
                                               outcome="accepted" if message.kind == "accept" else "rejected",
                                               reason=message.reason))
            case "inform":
                call.confirmations.append(f"{message.sender}: {message.result}")
            case "failure":
                call.failures.append(message.reason)
    for call in calls.values():
        call.proposals.sort(key=lambda bid: -bid.score)
    return list(calls.values())
