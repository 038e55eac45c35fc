"""Plans as text for a terminal."""

from collections.abc import Collection, Mapping

from tender.agents.messages import Transcript
from tender.agents.plan import Plan, Run
from tender.catalog import Catalog

from . import brief
from .install import verification
from tender.catalog.records import is_gone
from tender.safety import clean


FORM_SHOWN = {"mcp_server": "  (for the assistant: MCP servers)", "web_api": "  (for an app: web APIs)"}


def plan_text(
    plan: Plan,
    transcript: Transcript | None = None,
    runners_up: int = 5,
    categories: Collection[str] | None = None,
    installs: Mapping[int, str] | None = None,
    catalog: Catalog | None = None,
) -> str:
    """The plan for a terminal. `categories` are the ones worth showing (Catalog.real_categories: a directory's,
    not an OpenAPI document's tags, which read as nonsense on an unrelated step); None shows every one.
    `installs` gives an MCP registry server's install line by its id (install.install_line)."""

    def shown(names: list[str]) -> list[str]:
        return names if categories is None else [c for c in names if c in categories]

    lines = [
        f"Requirement: {plan.requirement}",
        f"Protocol: {plan.protocol} ({plan.organisation} contractors)",
        f"Read by {plan.read_by}" + (f"; context, not needs: {'; '.join(plan.context)}" if plan.context else ""),
        "",
        "Plan:",
    ]
    for step in plan.steps:
        after = f"  (after {', '.join(step.depends_on)})" if step.depends_on else ""
        form = FORM_SHOWN.get(getattr(step, "form", "any"), "")
        lines.append(f"  {step.id} [{step.status.value}] {step.function}{after}{form}")
        if shown(step.categories):
            lines.append(f"      categories: {', '.join(shown(step.categories))}")
        for award in step.awarded:
            dead = " DEPRECATED" if is_gone(award.status) else ""
            lines.append(
                f"      -> {award.api_name}{dead} (id {award.api_id}, score {award.score:.2f}): {award.rationale}"
            )
        if step.reason and not step.awarded:  # an unserved or failed step says why, and who came closest
            lines.append(f"      no API: {step.reason}")
    lines += ["", "APIs, best first:"]
    for rank, api in enumerate(plan.apis, start=1):
        groups = f" [{', '.join(shown(api.categories))}]" if shown(api.categories) else ""
        lines.append(f"  {rank}. {api.name}{groups} score {api.score:.2f}")
        if api.tool:
            lines.append(f"     call: tool {api.tool!r} on MCP server {api.server!r}")
        if installs and api.api_id in installs:
            lines.append(f"     {installs[api.api_id]}")
        item = brief.api_or_none(catalog, api.api_id)
        if item is not None and item.kind == "server":
            lines.append(f"     tools: {verification(item)}")
        if item is not None and (said := brief.access(item)):
            lines.append(f"     {said}")
        if item is not None and (note := brief.title_note(item)):
            lines.append(f"     note: {note}")
        if is_gone(api.status):
            lines.append(f"     DEPRECATED ({api.status_source or 'by its source'})")
        if api.link:
            lines.append(f"     {api.link}")
    if not plan.apis:
        lines.append("  (none: no contractor made an acceptable bid)")
    others = brief.runners_up(Run(plan=plan, transcript=transcript), None, catalog, runners_up) if transcript else []
    if others:  # what a reader would otherwise ask: who else bid, and how close they came
        lines += ["", "Also bid, not selected (--json shows every message):"]
        lines += [f"  - {o.name} (id {o.api_id}) score {o.confidence:.2f}" for o in others]
    cost = plan.cost
    lines += [
        "",
        f"Cost: {cost.messages} messages, {cost.contractors_contacted} contractors contacted, "
        f"{cost.tokens.input + cost.tokens.output} LLM tokens; {plan.latency_ms:.0f} ms. Run id: {plan.run_id}",
    ]
    lines += [f"Note: {note}" for note in plan.notes]
    return clean("\n".join(lines))  # an LLM's rationale is nobody's to send escape codes to a terminal
