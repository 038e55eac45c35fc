"""Prompt files, and how a reasoning task becomes chat messages.

Each file tender/prompts/{role}_{step}.txt (package data) is in the paper's four parts: 1. instructions (role and
constraints), 2. reasoning steps, 3. output format (`$schema`: the JSON Schema of the task's output),
4. the information needed (`$information`). Parts 1-3 become the system message, part 4 the user message.

Part 4 holds only data. Every item sits inside its own element, <requirement>…</requirement>, with
`<`, `>` and `&` escaped, so no requirement or API description can close its element early and pose
as instructions. Read-only: files are read once and cached."""

import json
import string
from functools import cache, singledispatch
from importlib import resources

from pydantic import BaseModel

from tender.catalog import TenderError

from ..tasks import ApiKnowledge, BidTask, DecomposeTask, MapCategoriesTask, SelectTask, Task

PROMPTS = resources.files("tender") / "prompts"
INFORMATION_HEADING = "## 4. Information needed"
# How much of an API's usage history a contractor's prompt shows: the history is the contractor's
# evidence, but a popular API was used by thousands of mashups. The prompt says how many it leaves out.
HISTORY_SHOWN = 8
PAST_USE_CHARS = 240


class PromptError(TenderError):
    pass


@cache
def load_prompt(name: str) -> str:
    """The text of prompts/{name}.txt. Raises PromptError when it is missing."""
    path = PROMPTS / f"{name}.txt"
    if not path.is_file():
        raise PromptError(f"No prompt file {name}.txt in the tender package: reinstall it (pip install --force-reinstall).")
    return path.read_text(encoding="utf-8")


def render_messages(task: Task) -> list[dict]:
    """The system and user messages that ask for `task`'s output."""
    name = f"{task.role}_{task.step}"
    template = load_prompt(name)
    if INFORMATION_HEADING not in template:
        raise PromptError(f"tender/prompts/{name}.txt has no line {INFORMATION_HEADING!r}; the data must come after it.")
    text = string.Template(template).substitute(schema=output_schema(task.output), information=information(task),
                                                **limits(task))
    system, user = text.split(INFORMATION_HEADING, 1)
    return [{"role": "system", "content": system.strip()},
            {"role": "user", "content": (INFORMATION_HEADING + user).strip()}]


def repair_message(problem: str) -> dict:
    """The message that sends a validation error back once."""
    return {"role": "user", "content": string.Template(load_prompt("repair")).substitute(problem=problem).strip()}


def output_schema(model: type[BaseModel]) -> str:
    return json.dumps(model.model_json_schema(), separators=(",", ":"))


def escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def element(tag: str, content: str | dict | list) -> str:
    """One delimited data item. Lists become one JSON object a line; dicts one JSON object."""
    if isinstance(content, list):
        body = "\n".join(json.dumps(item, ensure_ascii=False) for item in content)
    elif isinstance(content, dict):
        body = json.dumps(content, ensure_ascii=False)
    else:
        body = content
    return f"<{tag}>\n{escape(body)}\n</{tag}>"


def limits(task: Task) -> dict[str, str]:
    if isinstance(task, MapCategoriesTask):
        return {"max_categories": str(task.max_categories)}
    if isinstance(task, SelectTask):
        return {"max_apis": f"at most {task.max_apis} APIs" if task.max_apis else "as many APIs as the functions need"}
    return {}


@singledispatch
def information(task: Task) -> str:
    raise PromptError(f"No prompt for the task {type(task).__name__}.")


@information.register
def _decompose(task: DecomposeTask) -> str:
    return element("requirement", task.requirement)


@information.register
def _map(task: MapCategoriesTask) -> str:
    return "\n".join([
        element("requirement", task.requirement),
        element("function", task.function.model_dump(include={"id", "name", "description"})),
        element("candidate_categories", [c.model_dump() for c in task.candidates]),
    ])


@information.register
def _bid(task: BidTask) -> str:
    cfp = task.cfp
    call = {"function_id": cfp.function_id, "function": cfp.function, "categories": cfp.categories,
            "steps": cfp.steps, "round": cfp.round}
    per_api = max(1, HISTORY_SHOWN // len(task.knowledge.apis)) if task.knowledge.apis else HISTORY_SHOWN
    return "\n".join([
        element("call_for_proposals", call),
        element("requirement", cfp.requirement),
        element("your_apis", [api_card(api, per_api) for api in task.knowledge.apis]),
    ])


def api_card(api: ApiKnowledge, history_shown: int) -> dict:
    """What a contractor's prompt says of one of its APIs. Built field by field: no vectors, nothing else."""
    shown = api.history[:history_shown]
    return {
        "api_id": api.api_id, "name": api.name, "categories": api.categories, "description": api.description,
        "used_by_mashups": api.usage_count,
        "past_mashups": [{"name": use.name, "description": clip(use.description, PAST_USE_CHARS),
                          "used_with": use.other_apis[:6]} for use in shown],
        "past_mashups_left_out": max(0, len(api.history) - len(shown)),
    }


@information.register
def _select(task: SelectTask) -> str:
    proposals = [{"api_id": p.api_id, "api_name": p.api_name, "score": p.score, "function_id": p.function_id,
                  "category": p.category, "contractor": p.sender, "rationale": p.rationale} for p in task.proposals]
    return "\n".join([
        element("requirement", task.requirement),
        element("functions", [f.model_dump(include={"id", "name", "description", "depends_on"}) for f in task.functions]),
        element("proposals", proposals),
        element("co_usage", [e.model_dump() for e in task.co_usage]),
    ])


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
