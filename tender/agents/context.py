"""What one run carries through the agents: its cost, its notes, cancellation, progress and deadline."""

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
    # Seconds the run's LLM steps may take, from when the context is made (a request's arrival); past it,
    # the remaining steps run on the embedded reasoner. `deadline` is the moment (time.monotonic); pass it
    # on to share one deadline between contexts.
    deadline_s: float | None = None
    deadline: float | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self):
        if self.deadline is None and self.deadline_s is not None:
            self.deadline = time.monotonic() + self.deadline_s

    def remaining_s(self) -> float | None:
        """Seconds left before the deadline (0 once past it); None without one."""
        return None if self.deadline is None else max(0.0, self.deadline - time.monotonic())

    def past_deadline(self) -> bool:
        return self.deadline is not None and time.monotonic() >= self.deadline

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

    def add_tokens(
        self, role: str, prompt: int, completion: int, step: str | None = None, cached: bool = False
    ) -> None:
        with self._lock:
            self.cost.add_tokens(role, prompt, completion, step, cached)
            self.cost.llm_calls += 1
