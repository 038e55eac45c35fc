"""What one run carries through the agents: its cost, its notes, cancellation and progress."""

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from tender.catalog import TenderError

from .plan import Cost


class Cancelled(TenderError):
    def __init__(self):
        super().__init__("The request was cancelled.")


@dataclass
class RunContext:
    cost: Cost = field(default_factory=Cost)
    notes: list[str] = field(default_factory=list)
    cancel: threading.Event = field(default_factory=threading.Event)
    # progress(done, total, message): called between reasoning steps.
    progress: Callable[[float, float, str], None] | None = None
    max_tokens: int | None = None
    started: float = field(default_factory=time.perf_counter)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def elapsed_ms(self) -> float:
        return (time.perf_counter() - self.started) * 1000

    def check(self) -> None:
        if self.cancel.is_set():
            raise Cancelled()

    def report(self, done: float, total: float, message: str) -> None:
        self.check()
        if self.progress:
            self.progress(done, total, message)

    def note(self, text: str) -> None:
        with self._lock:
            self.notes.append(text)

    def add_tokens(self, role: str, prompt: int, completion: int) -> None:
        with self._lock:
            self.cost.add_tokens(role, prompt, completion)
            self.cost.llm_calls += 1

    def over_budget(self) -> bool:
        total = self.cost.tokens.input + self.cost.tokens.output
        return self.max_tokens is not None and total >= self.max_tokens
