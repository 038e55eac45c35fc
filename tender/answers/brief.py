"""The compact plan recommend_apis returns: per function, the awarded APIs in a line or two each.

An assistant's context is small, so the default answer carries what it acts on (name, what the API
does, link, status, confidence, why) and nothing it would have to skip; `detail="full"` adds the
stage sets and the transcript."""

import re


from tender.agents.messages import Propose, Transcript
from tender.agents.plan import Award, Run
from tender.agents.outcome import best_proposals
from tender.catalog import ApiNotFound, Catalog
from tender.ranking.evidence import Evidence

from tender.catalog.servers import routes_of

from .budget import RESULT_BYTES, STAGE_IDS, fitting, result_bytes
from .install import plan_client_config, verification
from .schemas import ApiChoice, Detail, FunctionChoice, Recommendation, RunnerUp

DOES_CHARS = 120
WHY_CHARS = 100
_SENTENCE_END = re.compile(r"(?<=[a-z0-9)\]][.!?])\s+(?=[A-Z])")
_EDITOR_NOTE = re.compile(r"^(?:from their (?:site|website)|from the (?:site|website))\s*:\s*", re.I)


def one_line(description: str, limit: int = DOES_CHARS) -> str:
    """The first sentence of a description, shortened to `limit` characters."""
    text = " ".join(description.split())
    if (
        text.startswith("[") and "]" in text
    ):  # an editor's note first ("[This API is no longer available. ...]"): status says it
        text = text[text.index("]") + 1 :].lstrip() or text
    text = _EDITOR_NOTE.sub("", text)
    first = _SENTENCE_END.split(text, maxsplit=1)[0]
    return first if len(first) <= limit else first[: limit - 1].rsplit(" ", 1)[0].rstrip(",;:") + "…"


def why(evidence: Evidence | None, rationale: str, usage: int | None = None, score: float | None = None) -> str:
    """A bid's case in words a person uses: the embedded reasoner's evidence told by the one verbaliser
    (Evidence.describe, which starts with what the score means); any other reasoner's rationale (an LLM's, say) is
    already prose, so its first clause is kept."""
    parts = []
    if evidence is not None and score is not None:
        parts = evidence.describe(score)
    if not parts:
        clause = re.split(r"[;.]\s", " ".join(rationale.split()), maxsplit=1)[0].rstrip(".")
        parts.append(clause[:1].lower() + clause[1:] if clause else "the best bid received")
    counted = bool(usage) and not any("past mashup" in p for p in parts)
    if counted:
        parts.append(f"used in {usage} past mashup{'s' if usage != 1 else ''}")
    while len(parts) > 1 and len("; ".join(parts)) > WHY_CHARS:  # whole reasons, never half of one
        parts.pop(-2 if counted and len(parts) > 2 else -1)  # the usage count stays: it is the shortest
    text = "; ".join(parts)
    text = text[:1].upper() + text[1:]
    return text if len(text) <= WHY_CHARS else text[: WHY_CHARS - 1].rsplit(" ", 1)[0] + "…"


def winning_bid(transcript: Transcript, api_id: int, step_id: str | None) -> Propose | None:
    """The highest proposal of `api_id` for the step (any step when the step has none)."""
    bids = [m for m in transcript.of_kind("propose") if m.api_id == api_id]
    own = [m for m in bids if m.function_id == step_id] or bids
    return max(own, key=lambda m: m.score, default=None)


def api_or_none(catalog: Catalog | None, api_id: int):
    """The catalogue's item, or None where there is no catalogue or it lacks the item (a run made on another)."""
    if catalog is None:
        return None
    try:
        return catalog.get_api(api_id)
    except ApiNotFound:
        return None


def api_choice(award: Award, bid: Propose | None, catalog: Catalog | None) -> ApiChoice:
    """An award as the assistant reads it. Catalogue fields are read with defaults: older catalogues
    (and runs made on another catalogue) lack status, link and provider."""
    api = api_or_none(catalog, award.api_id)
    usage = catalog.usage_count(award.api_id) if catalog is not None and api is not None else None
    provider = getattr(api, "provider", "") or None
    return ApiChoice(
        api_id=award.api_id,
        name=award.api_name,
        does=does(api) if api is not None else "",
        link=getattr(api, "link", "") or None,
        status=getattr(api, "status", "") or getattr(award, "status", "") or "unknown",
        provider=provider if provider and provider != award.api_name else None,
        server=getattr(api, "server", "") or None,
        tool=getattr(api, "tool", "") or None,
        install=_route(api),
        verified=verification(api) if api is not None and api.kind == "server" else None,
        access=access(api),
        note=title_note(api),
        confidence=round(_confidence(award), 2),
        why=why(bid.evidence if bid else None, bid.rationale if bid else award.rationale, usage, award.score),
    )


def _route(api) -> dict | None:
    """A server's best install route, as checked data (answers/install.py); None for anything else."""
    routes = routes_of(getattr(api, "details", None) or {}) if api is not None else []
    return routes[0].model_dump(mode="json") if routes else None


def access(api) -> str | None:
    """A web API's auth, HTTPS and CORS as its directory (public-apis) says."""
    details = getattr(api, "details", None) or {}
    if api is None or api.kind != "api" or "auth" not in details:
        return None
    auth = details.get("auth") or "none"
    https = "HTTPS" if details.get("https") else "no HTTPS"
    return f"auth: {auth}; {https}; CORS: {details.get('cors', 'unknown')}"


def title_note(api) -> str | None:
    """A server whose title others share says so, naming them (a record titled "GitHub" outside GitHub's namespace)."""
    others = (getattr(api, "details", None) or {}).get("same_title_as") if api is not None else None
    if not others:
        return None
    return f"titled like {', '.join(str(o) for o in others[:3])}, which it is not: check its namespace"


def does(api) -> str:
    """What an item does: its description's first sentence. A tool's title is a label, not what it does;
    catalogues built before titles were kept apart begin the description with it ("Read Graph. Read the ...")."""
    text = api.description or ""
    title = str(getattr(api, "details", {}).get("title") or "")
    if title and text.startswith(f"{title}. "):
        text = text[len(title) + 2 :]
    return one_line(text) if text else ""


def _confidence(award: Award) -> float:
    value = getattr(award, "confidence", None)
    return award.score if value is None else value


def step_reason(step) -> str | None:
    """Why a step has no API, where the plan says so (read defensively: not every plan carries it)."""
    if step.awarded:
        return None
    return getattr(step, "reason", None) or None


RUNNERS_UP = 3
# A runner-up this near the award is a close call. Chosen, not fitted: the scores are calibrated probabilities, and a
# tenth is the width of a band of the reliability table (docs/results.md), within which rightness is not told apart.
CLOSE_CALL = 0.1
RUNNER_UP_DOES = 60


def runners_up(run: Run, step, catalog: Catalog | None, limit: int = RUNNERS_UP) -> list[RunnerUp]:
    """The best bids that were not awarded, one per item, best first: the step's (with `step`), else the whole
    plan's (items outside its final set); items marked gone only where the request included them. What the MCP
    answer and the terminal both show."""
    if step is not None:
        awarded = {a.api_id for a in step.awarded}
        bids = (p for p in run.transcript.of_kind("propose") if p.function_id == step.id and p.api_id not in awarded)
    else:
        final = {a.api_id for a in run.plan.apis}
        bids = (p for p in run.transcript.of_kind("propose") if p.api_id not in final)
    include_dead = bool(getattr(run.plan.constraints, "include_deprecated", False))
    best = best_proposals(bids)
    out = []
    for p in sorted(best.values(), key=lambda p: (-p.score, p.api_id)):
        api = api_or_none(catalog, p.api_id)
        if catalog is not None and api is None:
            continue  # not in this catalogue
        if api is not None and api.gone and not include_dead:
            continue
        line = does(api) if api is not None else ""
        out.append(
            RunnerUp(
                api_id=p.api_id,
                name=p.api_name,
                does=line if len(line) <= RUNNER_UP_DOES else one_line(line, RUNNER_UP_DOES),
                confidence=round(p.score, 2),
            )
        )
        if len(out) == limit:
            break
    return out


def close_call(apis: list[ApiChoice], others: list[RunnerUp]) -> bool | None:
    if not apis or not others:
        return None
    return others[0].confidence >= min(a.confidence for a in apis) - CLOSE_CALL


def recommendation(run: Run, catalog: Catalog | None = None, detail: Detail = "summary") -> Recommendation:
    """The plan an assistant acts on; `detail="full"` adds the stage sets, the cost and the bid model's
    rationales. Every message is left to explain_bids and runs://{run_id}: with them, a plan of four functions
    weighed 78 KB. A plan of more functions than fit the result budget lists those that fit and says where the
    rest are."""

    plan, transcript = run.plan, run.transcript
    functions = []
    for step in plan.steps:
        apis = [api_choice(a, winning_bid(transcript, a.api_id, step.id), catalog) for a in step.awarded]
        others = runners_up(run, step, catalog) if apis else []  # an unserved step's reason names its near misses
        functions.append(
            FunctionChoice(
                id=step.id,
                function=step.function,
                status=_status(step),
                form=getattr(step, "form", None) if getattr(step, "form", "any") != "any" else None,
                reason=step_reason(step),
                apis=apis,
                close_call=close_call(apis, others),
                runners_up=others,
            )
        )
    result = Recommendation(
        run_id=plan.run_id,
        protocol=plan.protocol,
        functions=functions,
        apis=[a.name for a in plan.apis],
        client_config=config.model_dump(mode="json")
        if catalog is not None and (config := plan_client_config(plan, catalog))
        else None,
        notes=plan.notes,
    )
    if detail == "full":
        result = result.model_copy(
            update=dict(
                detail="full",
                requirement=plan.requirement,
                organisation=plan.organisation,
                stages=plan.stages.capped(STAGE_IDS),
                cost=plan.cost,
                latency_ms=plan.latency_ms,
                constraints=plan.constraints,
                backends=plan.backends,
                plan=plan.apis,
                transcript_uri=f"runs://{plan.run_id}",
            )
        )
    if result_bytes(result) > RESULT_BYTES - 400:  # the runners-up go first: explain_bids has them too
        functions = [f.model_copy(update=dict(runners_up=[], close_call=None)) for f in functions]
        result = result.model_copy(update=dict(functions=functions))
    if result_bytes(result) > RESULT_BYTES - 400 and result.client_config:
        # each server's own route next: the client configuration holds it (and get_api has it whole)
        functions = [
            f.model_copy(update=dict(apis=[a.model_copy(update=dict(install=None)) for a in f.apis])) for f in functions
        ]
        result = result.model_copy(update=dict(functions=functions))
    if result_bytes(result) > RESULT_BYTES - 400 and result.client_config:
        fitted = _fitted_config(result.client_config, result)
        note = _config_note(result.client_config, fitted)
        result = result.model_copy(update=dict(client_config=fitted, notes=[*result.notes, *([note] if note else [])]))
    kept = fitting(functions, lambda shown: result.model_copy(update=dict(functions=list(shown))), RESULT_BYTES - 400)
    if kept < len(functions):
        rest = functions[kept:]
        note = (
            f"Functions {rest[0].id} to {rest[-1].id} are left out of this answer to keep it short: "
            f"explain_bids(run_id, function=...) tells each, and runs://{plan.run_id} holds the whole plan."
        )
        result = result.model_copy(update=dict(functions=functions[:kept], notes=[*result.notes, note]))
    return result


def _fitted_config(config: dict, result: Recommendation) -> dict | None:
    """A client configuration cut to fit the answer: the variables' descriptions first, then every client but
    Claude Desktop's, then the servers from the last (each server's card, get_api, has its route whole); the
    answer's notes say what was left out."""
    lighter = {**config, "variables": [{**v, "description": ""} for v in config.get("variables", [])]}
    desktop = {k: lighter[k] for k in ("claude_desktop", "variables") if k in lighter}
    servers = list(desktop.get("claude_desktop", {}).get("mcpServers", {}))

    def fits(candidate: dict) -> bool:
        return result_bytes(result.model_copy(update=dict(client_config=candidate))) <= RESULT_BYTES - 600

    for candidate in (lighter, desktop):
        if fits(candidate):
            return candidate
    for keep in range(len(servers) - 1, 0, -1):
        kept = servers[:keep]
        candidate = {
            "claude_desktop": {"mcpServers": {k: desktop["claude_desktop"]["mcpServers"][k] for k in kept}},
            "variables": [v for v in desktop.get("variables", []) if v.get("server") in kept],
        }
        if fits(candidate):
            return candidate
    return None


def _config_note(before: dict | None, after: dict | None) -> str | None:
    """What the answer left out of the client configuration to keep within its budget, and where it is."""
    if before == after or before is None:
        return None
    left = [
        k
        for k in before.get("claude_desktop", {}).get("mcpServers", {})
        if k not in (after or {}).get("claude_desktop", {}).get("mcpServers", {})
    ]
    if left:
        return (
            f"The client configuration leaves out {', '.join(left)} to keep this answer short: get_api gives each "
            "server's route, and `tender recommend --json` the whole configuration."
        )
    return "The client configuration is shortened (Claude Desktop's only, without the variables' descriptions)."


def _status(step) -> str:
    return getattr(step.status, "value", step.status)
