"""One seam for every reasoner: `run(task, context)` turns a reasoning task into its typed output.

The two reasoners are made by factory.build_reasoners, which knows the backends' names."""

from abc import ABC, abstractmethod
from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel

from ..context import RunContext
from ..tasks import Task

Out = TypeVar("Out", bound=BaseModel)


class Reasoner(ABC):
    name: ClassVar[str]  # as transcripts and notes name it ("offline", "llm")
    uses_llm: ClassVar[bool] = False

    @abstractmethod
    def answer(self, task: Task[Any], context: RunContext) -> BaseModel:
        """Answer the task with an instance of `type(task).output`."""

    def run(self, task: Task[Out], context: RunContext) -> Out:
        """The task's answer, typed as the task says (a DecomposeTask gives a Decomposition)."""
        return self.answer(task, context)  # type: ignore[return-value]  # answer() keeps to type(task).output

    def run_batch(self, tasks: list[Task[Out]], context: RunContext) -> list[Out]:
        """Answer several tasks of one step; a reasoner that can answer them together (in one LLM call) does."""
        return [self.run(task, context) for task in tasks]
