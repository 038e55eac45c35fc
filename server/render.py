"""Plans as text for a terminal."""

from agents.plan import Plan


def plan_text(plan: Plan) -> str:
    lines = [f"Requirement: {plan.requirement}", f"Protocol: {plan.protocol} ({plan.organisation} contractors)", "", "Plan:"]
    for step in plan.steps:
        after = f"  (after {', '.join(step.depends_on)})" if step.depends_on else ""
        lines.append(f"  {step.id} [{step.status.value}] {step.function}{after}")
        if step.categories:
            lines.append(f"      categories: {', '.join(step.categories)}")
        for award in step.awarded:
            lines.append(f"      -> {award.api_name} (id {award.api_id}, score {award.score:.2f}): {award.rationale}")
    lines += ["", "APIs, best first:"]
    for rank, api in enumerate(plan.apis, start=1):
        lines.append(f"  {rank}. {api.name} [{', '.join(api.categories)}] score {api.score:.2f}")
    if not plan.apis:
        lines.append("  (none: no contractor made an acceptable bid)")
    cost = plan.cost
    lines += ["", f"Cost: {cost.messages} messages, {cost.contractors_contacted} contractors contacted, "
                  f"{cost.tokens.input + cost.tokens.output} LLM tokens; {plan.latency_ms:.0f} ms. Run id: {plan.run_id}"]
    lines += [f"Note: {note}" for note in plan.notes]
    return "\n".join(lines)
