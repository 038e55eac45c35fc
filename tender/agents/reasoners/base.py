"""One seam for every reasoner: `run(task, context)` turns a reasoning task into its typed output.

The two reasoners are made by factory.build_reasoners, which knows the backends' names."""

from abc import ABC, abstractmethod
from typing import ClassVar

from pydantic import BaseModel

from ..context import RunContext
from ..tasks import Task


class Reasoner(ABC):
    name: ClassVar[str]  # as transcripts and notes name it ("offline", "llm")
    uses_llm: ClassVar[bool] = False

    @abstractmethod
    def run(self, task: Task, context: RunContext) -> BaseModel:
        """Answer the task with an instance of `type(task).output`."""

    def run_batch(self, tasks: list[Task], context: RunContext) -> list[BaseModel]:
        """Answer several tasks of one step; a reasoner that can answer them together (in one LLM call) does."""
        return [self.run(task, context) for task in tasks]
