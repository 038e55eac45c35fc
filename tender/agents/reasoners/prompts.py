"""Prompt files, and how a reasoning task becomes chat messages.

Each file tender/prompts/{role}_{step}.txt (package data) is in the paper's four parts: 1. instructions (role and
constraints), 2. reasoning steps, 3. output format (`$schema`: the JSON Schema of the task's output),
4. the information needed (`$information`). Parts 1-3 become the system message, part 4 the user message.

Part 4 holds only data. Every item sits inside its own element, <requirement>…</requirement>, with
`<`, `>` and `&` escaped, so no requirement or API description can close its element early and pose
as instructions. Read-only: files are read once and cached.

Every step has a budget (BUDGET_CHARS, checked by tests/test_prompt_budgets.py): a contractor's prompt carries
its API card (name, one or two sentences of description, categories, at most a few of its past uses most like
the requirement, one line each), the announced function and the requirement, and nothing else; the manager's
prompts carry candidates and proposals as compact lines. Part 3 gives the answer's shape in one line (`$schema`);
the full JSON Schema of the answer (answer_schema: enums of the ids and names offered, lengths bounded) goes to
the server as the response format, which constrains a local model's output to it."""

import json
import math
import string
from functools import cache, singledispatch
from importlib import resources

from tender.catalog import TenderError

from tender.ranking.lexical import query_terms as terms
from ..tasks import ApiKnowledge, BidTask, DecomposeTask, MapAllTask, MapCategoriesTask, SelectTask, Task

PROMPTS = resources.files("tender") / "prompts"
INFORMATION_HEADING = "## 4. Information needed"

# What each prompt may hold. The requirement is clipped (with an ellipsis) where a step needs only its gist;
# the decomposition sees the most of it.
REQUIREMENT_CHARS = {"decompose": 3000, "map": 400, "map_all": 600, "bid": 400, "select": 400}
FUNCTION_CHARS = 200
DESCRIPTION_CHARS = 180  # one or two sentences of an API's description
PAST_USES_SHOWN = 2  # a contractor's past uses most like the requirement, one line each
PAST_USE_CHARS = 50
CARDS_SHOWN = 5  # a category or provider contractor's APIs, those nearest to the call first
SHORTLIST_SHOWN = 40  # the single agent's shortlist, one line an API
SHORTLIST_DESCRIPTION_CHARS = 110
CANDIDATES_SHOWN = 6
NAME_CHARS = 50  # an API's or a category's name  # categories offered for one function
PROPOSALS_SHOWN = 20  # proposals offered for selection, best first
CO_USAGE_SHOWN = 6
RATIONALE_CHARS = 150  # an answer's sentence
SCORES = [round(i / 10, 1) for i in range(11)]  # a bid's score: 0, 0.1, ..., 1

# Each step's prompt, system and user messages together, stays within these characters for any requirement and
# any catalogue (tests/test_prompt_budgets.py); SmolLM2's tokenizer counts about one token for 3.5 of them.
BUDGET_CHARS = {
    "manager_decompose": 4000,
    "manager_map": 1800,
    "manager_map_all": 6000,
    "contractor_bid": 2400,
    "contractor_bid_group": 5000,
    "contractor_bid_single_agent": 11000,
    "manager_select": 5600,
}


class PromptError(TenderError):
    pass


@cache
def load_prompt(name: str) -> str:
    """The text of prompts/{name}.txt. Raises PromptError when it is missing."""
    path = PROMPTS / f"{name}.txt"
    if not path.is_file():
        raise PromptError(
            f"No prompt file {name}.txt in the tender package: reinstall it (pip install --force-reinstall)."
        )
    return path.read_text(encoding="utf-8")


def render_messages(task: Task) -> list[dict]:
    """The system and user messages that ask for `task`'s output."""
    name = f"{task.role}_{task.step}"
    template = load_prompt(name)
    if INFORMATION_HEADING not in template:
        raise PromptError(
            f"tender/prompts/{name}.txt has no line {INFORMATION_HEADING!r}; the data must come after it."
        )
    text = string.Template(template).substitute(schema=shape(task), information=information(task), **limits(task))
    system, user = text.split(INFORMATION_HEADING, 1)
    return [
        {"role": "system", "content": system.strip()},
        {"role": "user", "content": (INFORMATION_HEADING + user).strip()},
    ]


def repair_message(problem: str, task: Task) -> dict:
    """The message that sends a validation error back once: the error and the answer's shape, nothing else."""
    return {
        "role": "user",
        "content": string.Template(load_prompt("repair")).substitute(problem=problem, schema=shape(task)).strip(),
    }


def prompt_chars(messages: list[dict]) -> int:
    return sum(len(m["content"]) for m in messages)


def budget_name(task: Task) -> str:
    """The BUDGET_CHARS entry for a task's prompt."""
    if isinstance(task, BidTask) and task.knowledge.contractor == "single-agent":
        return "contractor_bid_single_agent"
    if isinstance(task, BidTask) and len(task.knowledge.apis) > 1:
        return "contractor_bid_group"  # a category's or a provider's APIs, in one call
    return f"{task.role}_{task.step}"


def escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def element(tag: str, content: str | dict | list) -> str:
    """One delimited data item. Lists become one line an item (JSON for dicts); dicts one JSON object."""
    if isinstance(content, list):
        body = "\n".join(item if isinstance(item, str) else json.dumps(item, ensure_ascii=False) for item in content)
    elif isinstance(content, dict):
        body = json.dumps(content, ensure_ascii=False)
    else:
        body = content
    return f"<{tag}>\n{escape(body)}\n</{tag}>"


def limits(task: Task) -> dict[str, str]:
    if isinstance(task, MapCategoriesTask):
        return {"max_categories": str(task.max_categories)}
    if isinstance(task, MapAllTask):
        return {"max_categories": str(task.items[0].max_categories)}
    if isinstance(task, SelectTask):
        return {"max_apis": f"at most {task.max_apis} APIs" if task.max_apis else "as many APIs as the functions need"}
    if isinstance(task, BidTask):
        return {"asked": asked(task)}
    return {}


def requirement(task: Task, text: str) -> str:
    return element("requirement", clip(text, REQUIREMENT_CHARS[task.step]))


# -- what each step is shown ---------------------------------------------------------------------
@singledispatch
def information(task: Task) -> str:
    raise PromptError(f"No prompt for the task {type(task).__name__}.")


@information.register
def _decompose(task: DecomposeTask) -> str:
    return requirement(task, task.requirement)


def shown_candidates(task: MapCategoriesTask) -> list:
    return sorted(task.candidates, key=lambda c: -(c.similarity + c.neighbour_votes))[:CANDIDATES_SHOWN]


def candidate_line(task: MapCategoriesTask) -> list[str]:
    return [f"{clip(c.name, NAME_CHARS)} ({c.similarity:.2f}, {c.neighbour_votes:.2f})" for c in shown_candidates(task)]


def function_line(function) -> str:
    return f"{function.id}: {clip(function.description or function.name, FUNCTION_CHARS)}"


@information.register
def _map(task: MapCategoriesTask) -> str:
    return "\n".join(
        [
            requirement(task, task.requirement),
            element("function", function_line(task.function)),
            element("candidate_categories", candidate_line(task)),
        ]
    )


@information.register
def _map_all(task: MapAllTask) -> str:
    first = task.items[0]
    parts = [requirement(task, first.requirement)]
    for item in task.items:
        parts.append(element("function", function_line(item.function)))
        parts.append(element("candidate_categories", candidate_line(item)))
    return "\n".join(parts)


@information.register
def _bid(task: BidTask) -> str:
    cfp = task.cfp
    parts = [requirement(task, cfp.requirement)]
    if cfp.function:
        parts.append(element("function", clip(cfp.function, FUNCTION_CHARS)))
    apis, left_out = shown_apis(task)
    if task.knowledge.contractor == "single-agent":
        lines = [shortlist_line(api) for api in apis]
    else:
        query = set(terms(f"{cfp.requirement} {cfp.function or ''}"))
        lines = [line for api in apis for line in api_card(api, query)]
    if left_out:
        lines.append(f"({left_out} more of your APIs fit the call less well and are not shown)")
    parts.append(element("your_apis", lines))
    return "\n".join(parts)


def shown_apis(task: BidTask) -> tuple[list[ApiKnowledge], int]:
    """The contractor's APIs its prompt shows: all of one API's contractor; a category's or a provider's nearest
    to the call (by the words they share with it, then use); the single agent's shortlist as retrieved."""
    apis = task.knowledge.apis
    if task.knowledge.contractor == "single-agent":
        return apis[:SHORTLIST_SHOWN], max(0, len(apis) - SHORTLIST_SHOWN)
    if len(apis) <= CARDS_SHOWN:
        return apis, 0
    query = set(terms(f"{task.cfp.requirement} {task.cfp.function or ''} {task.cfp.function or ''}"))
    ranked = sorted(
        apis,
        key=lambda a: (
            -len(query & set(terms(f"{a.name} {a.description}"))),
            -a.usage_count,
            a.api_id,
        ),
    )
    return ranked[:CARDS_SHOWN], len(apis) - CARDS_SHOWN


def api_card(api: ApiKnowledge, query: set[str]) -> list[str]:
    """What a contractor's prompt says of one of its APIs, in at most three lines: name and categories, one or two
    sentences of description, and a few past uses most like the call. No vectors, nothing else."""
    lines = [
        f"api_id {api.api_id}: {clip(api.name, NAME_CHARS)} [{', '.join(clip(c, 30) for c in api.categories[:3])}]",
        f"  {sentences(api.description, DESCRIPTION_CHARS)}",
    ]
    if api.history:
        uses = sorted(api.history, key=lambda u: -len(query & set(terms(f"{u.name} {u.description}"))))
        shown = "; ".join(f'"{u.name}": {clip(u.description, PAST_USE_CHARS)}' for u in uses[:PAST_USES_SHOWN])
        lines.append(f"  in {api.usage_count} past mashup{'s' if api.usage_count != 1 else ''}, e.g. {shown}")
    return lines


def shortlist_line(api: ApiKnowledge) -> str:
    return (
        f"api_id {api.api_id}: {clip(api.name, NAME_CHARS)} [{', '.join(clip(c, 30) for c in api.categories[:2])}] "
        f"{sentences(api.description, SHORTLIST_DESCRIPTION_CHARS)}"
    )


@information.register
def _select(task: SelectTask) -> str:
    proposals = sorted(task.proposals, key=lambda p: -p.score)[:PROPOSALS_SHOWN]
    lines = [
        f"{p.function_id or '-'} | api_id {p.api_id} {clip(p.api_name, NAME_CHARS)} | {p.score:.2f} | {clip(p.rationale, 60)}"
        for p in proposals
    ]
    if len(task.proposals) > len(proposals):
        lines.append(f"({len(task.proposals) - len(proposals)} weaker proposals not shown)")
    shown = {p.api_id for p in proposals}
    edges = sorted((e for e in task.co_usage if e.a in shown and e.b in shown), key=lambda e: -e.weight)[
        :CO_USAGE_SHOWN
    ]
    parts = [
        requirement(task, task.requirement),
        element("functions", [function_line(f) for f in task.functions]),
        element("proposals", lines),
    ]
    if edges:
        parts.append(element("co_usage", [f"{e.a} + {e.b}: {e.weight:.2f}" for e in edges]))
    return "\n".join(parts)


# -- the answer: its shape in the prompt, its JSON Schema for the server -------------------------------
def asked(task: BidTask) -> str:
    """What the call's steps ask of a contractor beyond matching, as instruction lines."""
    steps = task.cfp.steps
    lines = []
    if "decompose" in steps:
        lines.append('No function is announced: put in "function" the words of the requirement your API would realise.')
    if "map" in steps:
        lines.append('Put in "category" the one of your API\'s categories you bid under.')
    if "select" in steps:
        lines.append("Propose an API only if you would choose it for the final set yourself (score 0.5 or more).")
    return "\n".join(lines)


@singledispatch
def shape(task: Task) -> str:
    """The answer's shape in one line, for part 3 of the prompt and for a repair."""
    raise PromptError(f"No answer shape for the task {type(task).__name__}.")


@shape.register
def _decompose_shape(task: DecomposeTask) -> str:
    return (
        '{"functions": [{"id": "f1", "name": "<short name>", "description": "<the words of the requirement it '
        'realises>", "depends_on": ["<ids of functions whose output it uses>"]}, ...]}'
    )


@shape.register
def _map_shape(task: MapCategoriesTask) -> str:
    return '{"categories": ["<candidate category>", ...]}'


@shape.register
def _map_all_shape(task: MapAllTask) -> str:
    return (
        '{"'
        + '": ["<candidate category>", ...], "'.join(i.function.id for i in task.items)
        + '": ["<candidate category>", ...]}'
    )


@shape.register
def _bid_shape(task: BidTask) -> str:
    extra = ""
    if "decompose" in task.cfp.steps:
        extra += ', "function": "<words of the requirement>"'
    if "map" in task.cfp.steps:
        extra += ', "category": "<one of its categories>"'
    return (
        '{"proposals": [{"api_id": <id>, "score": <0 to 1>, "rationale": "<one sentence>"'
        + extra
        + '}], "refusal": "<why none fits>"}'
    )


@shape.register
def _select_shape(task: SelectTask) -> str:
    return '{"api_ids": [<proposed api_id>, ...]}'


def text(max_length: int) -> dict:
    return {"type": "string", "maxLength": max_length}


def obj(properties: dict, required: list[str]) -> dict:
    return {"type": "object", "properties": properties, "required": required}


@singledispatch
def answer_schema(task: Task) -> dict:
    """The JSON Schema the answer must follow: only the fields the step needs, ids and names limited to those
    offered (a grammar-constrained server cannot answer anything else), strings and lists bounded."""
    raise PromptError(f"No answer schema for the task {type(task).__name__}.")


@answer_schema.register
def _decompose_schema(task: DecomposeTask) -> dict:
    ids = [f"f{i}" for i in range(1, 9)]
    function = obj(
        {
            "id": {"enum": ids},
            "name": text(60),
            "description": text(240),
            "depends_on": {"type": "array", "items": {"enum": ids}, "maxItems": 7},
        },
        ["id", "name", "description"],
    )
    return obj({"functions": {"type": "array", "items": function, "minItems": 1, "maxItems": 8}}, ["functions"])


def categories_schema(task: MapCategoriesTask) -> dict:
    names = [c.name for c in shown_candidates(task)]
    return {"type": "array", "items": {"enum": names}, "minItems": 1 if names else 0, "maxItems": task.max_categories}


@answer_schema.register
def _map_schema(task: MapCategoriesTask) -> dict:
    return obj({"categories": categories_schema(task)}, ["categories"])


@answer_schema.register
def _map_all_schema(task: MapAllTask) -> dict:
    return obj({i.function.id: categories_schema(i) for i in task.items}, [i.function.id for i in task.items])


@answer_schema.register
def _bid_schema(task: BidTask) -> dict:
    apis, _ = shown_apis(task)
    draft = {
        "api_id": {"enum": [a.api_id for a in apis]},
        "score": {"enum": SCORES},
        "rationale": text(RATIONALE_CHARS),
    }
    required = ["api_id", "score", "rationale"]
    if "decompose" in task.cfp.steps:
        draft["function"] = text(FUNCTION_CHARS)
        required.append("function")
    if "map" in task.cfp.steps:
        draft["category"] = (
            {"enum": list(dict.fromkeys(c for a in apis for c in a.categories[:3]))}
            if any(a.categories for a in apis)
            else text(60)
        )
    proposals = {"type": "array", "items": obj(draft, required), "maxItems": max(1, len(apis))}
    return obj({"proposals": proposals, "refusal": text(RATIONALE_CHARS)}, ["proposals"])


@answer_schema.register
def _select_schema(task: SelectTask) -> dict:
    ids = list(dict.fromkeys(p.api_id for p in sorted(task.proposals, key=lambda p: -p.score)[:PROPOSALS_SHOWN]))
    return obj(
        {"api_ids": {"type": "array", "items": {"enum": ids}, "maxItems": task.max_apis or len(ids)}}, ["api_ids"]
    )


# -- text ------------------------------------------------------------------------------------------
def sentences(text: str, limit: int) -> str:
    """The first one or two sentences of a text, within `limit` characters."""
    text = " ".join(text.split())
    ends = [i + 1 for i, ch in enumerate(text[:limit]) if ch in ".!?" and (i + 1 == len(text) or text[i + 1] == " ")]
    if len(ends) >= 2 and ends[1] <= limit:
        return text[: ends[1]]
    if ends and len(text) > limit:
        return text[: ends[0]] if ends[0] >= limit // 3 else clip(text, limit)
    return clip(text, limit)


def clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def estimate_tokens(chars: int) -> int:
    """About how many tokens a prompt of `chars` characters costs (SmolLM2's tokenizer on these prompts)."""
    return math.ceil(chars / 3.5)
