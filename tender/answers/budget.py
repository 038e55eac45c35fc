"""How much one answer may weigh in an assistant's context, and the helpers that keep to it.

A tool result reaches the model twice, as its text block and as its structured copy, so both count. Where there
is more than fits, an answer says how to get the rest: the next page, or the narrower call that holds it."""

import json
from collections.abc import Callable, Sequence
from typing import TypeVar

from pydantic import BaseModel

RESULT_BYTES = 32_000  # one tool result: its text block and its structured copy together
RESOURCE_BYTES = 32_000  # one resource read (a single copy)
STAGE_IDS = 200  # ids listed per stage in a full answer; StageSizes gives the true counts

T = TypeVar("T")


def compact(data) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def result_bytes(model: BaseModel) -> int:
    """What `model` weighs as a tool result (server/tools.py `result_of`): twice its lean, compact JSON."""
    return 2 * len(compact(lean(model)).encode())


def fitting(items: Sequence[T], render: Callable[[Sequence[T]], BaseModel], budget: int = RESULT_BYTES) -> int:
    """The most leading items whose rendering weighs at most `budget` (at least 1 where there are items, so a
    caller always makes progress; that one is the caller's to trim)."""
    low, high = 1, len(items)
    if high == 0 or result_bytes(render(items)) <= budget:
        return high
    while low < high:  # the largest n that fits, by bisection: a rendering's weight grows with n
        middle = (low + high + 1) // 2
        if result_bytes(render(items[:middle])) <= budget:
            low = middle
        else:
            high = middle - 1
    return low


def pages_of(items: Sequence[T], weigh: Callable[[Sequence[T]], int], budget: int) -> list[list[T]]:
    """`items` cut into consecutive pages each weighing at most `budget` (by `weigh`), a page of one where a
    single item alone is over it."""
    pages: list[list[T]] = []
    current: list[T] = []
    for item in items:
        if current and weigh([*current, item]) > budget:
            pages.append(current)
            current = []
        current.append(item)
    if current or not pages:
        pages.append(current)
    return pages


def lean(model: BaseModel) -> dict:
    """The model as JSON-ready data without the optional fields left empty (None or []): an assistant
    reads every byte of a result, and an empty field says nothing."""
    data = model.model_dump(mode="json")
    return _drop_empty(model, data)


def _drop_empty(model: BaseModel, data: dict) -> dict:
    fields = type(model).model_fields
    kept = {}
    for name, value in data.items():
        field = fields.get(name)
        if field is not None and not field.is_required() and (value is None or value == []):
            continue
        attr = getattr(model, name, None)
        if isinstance(attr, BaseModel) and isinstance(value, dict):
            value = _drop_empty(attr, value)
        elif isinstance(attr, list) and isinstance(value, list):
            value = [
                _drop_empty(a, v) if isinstance(a, BaseModel) and isinstance(v, dict) else v
                for a, v in zip(attr, value)
            ]
        kept[name] = value
    return kept
