"""Agent runs on worker threads, shared by the MCP tools (tools.py) and the A2A agent (a2a_agent.py): one way to admit
a run, report its progress, cancel it and keep it in the runs store, whichever protocol asked for it."""

import time
from collections.abc import Callable
from typing import TypeVar

import anyio

from tender.agents.context import RunContext
from tender.agents.plan import Run
from tender.agents.request import Request
from tender.answers.runs import keep

from .context import AppContext

T = TypeVar("T")
Progress = Callable[[float, float, str], None]


async def on_worker(
    work: Callable[[RunContext], T],
    limiter: anyio.CapacityLimiter,
    deadline_s: float | None = None,
    progress: Progress | None = None,
) -> T:
    """Run blocking agent work on a worker thread, when `limiter` admits it, reporting to `progress` (called on the
    worker). If the caller is cancelled, whether the run waits or runs, its cancel event stops it at its next step."""
    context = RunContext(progress=progress, deadline_s=deadline_s)  # the deadline counts the wait too

    def run() -> T:
        context.started = time.perf_counter()  # a plan's latency is its run's, not its wait for a worker
        return work(context)

    try:
        return await anyio.to_thread.run_sync(run, abandon_on_cancel=True, limiter=limiter)
    except anyio.get_cancelled_exc_class():
        context.cancel.set()
        raise


def recommend_work(app: AppContext, tender, request: Request, said: str = "", run_id: str | None = None):
    """The work of one recommendation on `tender`'s agents: the plan noted as the server must (a reader that is off, a
    catalogue republished meanwhile) and kept in the runs store with the catalogue it was made on. `run_id` names the
    run where the caller has already named it (an A2A task is its run)."""

    def work(context: RunContext) -> Run:
        if said:
            context.note(said)
        run = tender.recommend(request, context)
        if run_id is not None:
            run.plan.run_id = run_id
        if app.reader_off:
            run.plan.notes.append(app.reader_off)
        if rebuilt := app.rebuilt(tender.catalog):
            run.plan.notes.append(rebuilt)
        # the catalogue the run was made on, whatever is published meanwhile
        keep(app.runs, run, tender.catalog)
        return run

    return work
