"""The local reader: step 1 read by a small language model in this process (agents/local_model.py): the request's
needs, each with the form that serves it, and the parts that are context. Every other step, and a reading that
cannot be used (past its deadline, or not an answer of the schema's shape), is the fallback's: the embedded
reasoner's rules, with a note saying why.

The prompt is tender/prompts/local_reader.txt (instructions) and local_reader_examples.json (worked examples, none
from any suite's test part); both are the start of every prompt, which the model evaluates once."""

import json
import re
import threading
import time
from functools import cache
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..context import RunContext
from ..local_model import Generation, TextModel, load
from ..tasks import DecomposeTask, Decomposition, Task, functions_of
from .base import Reasoner

READ_DEADLINE_S = 10.0  # a reading not done by then is the rules' (a request's own deadline, if sooner, wins)
ANSWER_TOKENS = 160  # the longest answer: a dozen needs of a few words, and the context
REQUIREMENT_CHARS = 3000  # as the LLM backend's decomposition sees it
MAX_NEEDS = 12

NEED_CHARS = 100


class Reading(BaseModel):
    """The answer the model writes: the needs, then the context (which may be left out)."""

    model_config = ConfigDict(extra="forbid")

    needs: list[str] = Field(max_length=MAX_NEEDS)
    context: list[str] = Field(default_factory=list, max_length=MAX_NEEDS)


@cache
def answer_schema() -> dict:
    """Reading's schema, every string bounded (the grammar then ends a runaway need)."""
    schema = Reading.model_json_schema(by_alias=True)
    for prop in schema["properties"].values():
        prop["items"]["maxLength"] = NEED_CHARS
        prop.pop("default", None)
        prop.pop("title", None)
    schema["required"] = ["needs"]
    schema.pop("title", None)
    schema.pop("description", None)
    schema["additionalProperties"] = False  # else the grammar lets the model write keys of its own
    return schema


@cache
def instructions() -> str:
    return (resources.files("tender") / "prompts" / "local_reader.txt").read_text(encoding="utf-8").strip()


@cache
def examples() -> tuple[tuple[str, str], ...]:
    """(request, the answer as the model should write it), in the order the prompt shows them."""
    rows = json.loads((resources.files("tender") / "prompts" / "local_reader_examples.json").read_text("utf-8"))
    return tuple((row["request"], json.dumps(row["answer"], ensure_ascii=False)) for row in rows)


def shared_messages() -> list[dict[str, str]]:
    """The start every prompt shares: the instructions and the worked examples."""
    messages = [{"role": "system", "content": instructions()}]
    for request, answer in examples():
        messages += [{"role": "user", "content": request}, {"role": "assistant", "content": answer}]
    return messages


def messages_for(requirement: str) -> list[dict[str, str]]:
    text = " ".join(requirement.split())
    if len(text) > REQUIREMENT_CHARS:
        text = text[: REQUIREMENT_CHARS - 1] + "…"
    return [*shared_messages(), {"role": "user", "content": text}]


class Unusable(Exception):
    """The model's reading cannot be used; the message says why, for the plan's note."""


def in_request_order(requirement: str, needs: list[str]) -> list[str]:
    """The needs in the order the request says them (the answer groups them by form): each where the first of its
    words the request holds stands (a word's first five letters: "posting" for "post"); one it does not hold last."""
    text = requirement.lower()
    end = len(text) + 1

    def where(need: str) -> int:
        spots = [text.find(word[:5]) for word in re.findall(r"[a-z0-9]{3,}", need.lower())]
        return min((spot for spot in spots if spot >= 0), default=end)

    return sorted(needs, key=where)


def decomposition_of(generation: Generation, requirement: str) -> Decomposition:
    """The model's answer as step 1's output; Unusable where it is cut short or not of the schema's shape."""
    if generation.stopped == "deadline":
        raise Unusable(f"it was not done within its deadline ({generation.seconds:.1f} s)")
    try:
        reading = Reading.model_validate_json(generation.text)
    except ValidationError as error:
        cut = " (cut at its length limit)" if generation.stopped == "length" else ""
        raise Unusable(f"its answer was not of the expected shape{cut}: {_first_error(error)}") from None
    needs: list[str] = []
    seen: set[str] = set()
    for text in in_request_order(requirement, reading.needs):
        need = " ".join(text.split()).strip(" .,;:")
        if need and need.lower() not in seen:
            seen.add(need.lower())
            needs.append(need)
    functions = functions_of(needs)
    if not functions:
        raise Unusable("it found no need in the request")
    context = [c for c in (" ".join(part.split()) for part in reading.context) if c]
    return Decomposition(functions=functions, context=context)


def _first_error(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(p) for p in first.get("loc", ())) or "the answer"
    return f"{where}: {first.get('msg', 'invalid')}"


_WARMING = threading.Lock()
_WARM: dict[Path, TextModel] = {}


def warmed(path: Path, cache_dir: Path | None = None) -> TextModel:
    """The model in this GGUF file, loaded once per process with the start every prompt shares already read (kept
    in `cache_dir` for the next process), also where threads ask for it at once. LocalModelUnavailable where it
    cannot be loaded."""
    with _WARMING:
        if path not in _WARM:
            model = load(path)
            model.warm_up(shared_messages(), cache_dir)
            _WARM[path] = model
        return _WARM[path]


class LocalReader(Reasoner):
    """Step 1 by the local model; the other steps by `fallback`. Named "offline" as the embedded reasoner is: it
    needs no endpoint, and the plan names the reader that read the request (Plan.read_by)."""

    name = "offline"

    def __init__(self, model: TextModel, fallback: Reasoner, deadline_s: float = READ_DEADLINE_S):
        self.model = model
        self.fallback = fallback
        self.deadline_s = deadline_s

    @property
    def reader(self) -> str:
        return f"the local model {self.model.name}"

    def answer(self, task: Task, context: RunContext) -> BaseModel:
        if not isinstance(task, DecomposeTask):
            return self.fallback.answer(task, context)
        context.check()
        deadline = time.monotonic() + self.deadline_s
        if context.deadline is not None:
            deadline = min(deadline, context.deadline)
        generation = self.model.generate(messages_for(task.requirement), answer_schema(), ANSWER_TOKENS, deadline)
        context.add_tokens("manager", generation.prompt_tokens, generation.completion_tokens, step="manager.decompose")
        try:
            decomposition = decomposition_of(generation, task.requirement)
        except Unusable as why:
            context.note(f"The local model {self.model.name} could not read the request ({why}); rules read it.")
            return self.fallback.answer(task, context)
        return decomposition.model_copy(update={"read_by": self.reader})
