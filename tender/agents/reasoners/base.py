"""One seam for every reasoner: `run(task, context)` turns a reasoning task into its typed output.

Reasoners are registered by name; `get_reasoner(name, ...)` builds one and its error lists the names."""

from abc import ABC, abstractmethod
from typing import ClassVar

from pydantic import BaseModel

from tender.catalog import TenderError

from ..context import RunContext
from ..tasks import Task

_REGISTRY: dict[str, type["Reasoner"]] = {}


class UnknownReasoner(TenderError):
    pass


class Reasoner(ABC):
    name: ClassVar[str]
    uses_llm: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if getattr(cls, "name", None):
            _REGISTRY[cls.name] = cls

    @abstractmethod
    def run(self, task: Task, context: RunContext) -> BaseModel:
        """Answer the task with an instance of `type(task).output`."""


def reasoner_names() -> list[str]:
    return sorted(_REGISTRY)


def get_reasoner(name: str, **dependencies) -> Reasoner:
    if name not in _REGISTRY:
        raise UnknownReasoner(f"Unknown reasoner backend {name!r}; known: {', '.join(reasoner_names())}.")
    return _REGISTRY[name](**dependencies)
