"""Tender as an A2A agent: the executor the SDK's request handler runs for each message.

A message is read as a recommendation or as the explanation of a past run (a2a_asks.py). A recommendation runs on a
worker as recommend_apis' does (workers.py): admitted by the same limiter, kept in the same runs store, its progress
published as `working` status updates (what a streaming client sees), stopped at its next step when the task is
cancelled. The task's id is its run's id: the plan it returns, explain_bids over MCP and `tender explain` name the
same run. A request that cannot be read is `rejected` with what to fix; a fault of the server is `failed` with a
message that says so, never a stack trace (that goes to the log)."""

import asyncio
import concurrent.futures
import logging
import uuid
from dataclasses import dataclass

import anyio
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.id_generator import IDGenerator, IDGeneratorContext
from a2a.server.tasks import TaskUpdater
from a2a.types.a2a_pb2 import Message, Part, Task, TaskState, TaskStatus

from tender.agents.context import RunContext
from tender.answers.brief import recommendation
from tender.answers.schemas import Recommendation
from tender.catalog import TenderError
from tender.errors import InputToFix
from tender.safety import redact

from .a2a_answers import agent_message, explanation_parts, recommendation_parts
from .a2a_asks import Explain, Recommend, ask_of
from .a2a_tasks import PLAN
from .context import AppContext, SharedApp
from .tools import explanation_of
from .workers import Progress, on_worker, recommend_work

log = logging.getLogger("tender.server")

PROGRESS_TOTAL = 100
NO_SAMPLING = (
    "This server's manager asks an MCP client's model for the needs (TENDER_MANAGER_BACKEND=client), which an A2A "
    "caller has none of: state them in the data part's `needs`. Tender's embedded reader decomposed the requirement."
)
FAULT = (
    "Tender could not answer this request: a fault on the server, written to its log. Try again; if it persists, "
    "tell the server's operator."
)


class RunIds(IDGenerator):
    """Task ids in the form of run ids, so that a task and the run it makes have one id."""

    def generate(self, context: IDGeneratorContext) -> str:
        return uuid.uuid4().hex


@dataclass
class Running:
    """A task this agent is answering: its updater (one per task, so a cancel and a completion cannot both end it)."""

    updater: TaskUpdater
    # Whether anyone sees the task before it ends: a stream, or a caller that asked not to wait (and polls). A blocking
    # SendMessage sees only the end, so its run reports no progress: each update is an event the SDK stores, copies
    # and fans out, for nobody.
    watched: bool = True
    cancelled: bool = False


class TenderAgent(AgentExecutor):
    def __init__(self, shared: SharedApp):
        self._shared = shared
        self._running: dict[str, Running] = {}

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task_id, context_id = str(context.task_id), str(context.context_id)
        running = Running(TaskUpdater(event_queue, task_id, context_id), watched=_watched(context))
        if context.current_task is None:
            history = [context.message] if context.message is not None else []
            task = Task(id=task_id, context_id=context_id, status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED))
            task.history.extend(history)
            await event_queue.enqueue_event(task)
        self._running[task_id] = running
        try:
            await self._answer(context, running)
        finally:
            self._running.pop(task_id, None)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Say the task is cancelled; the SDK then cancels execute(), whose run stops at its next step."""
        running = self._running.get(str(context.task_id))
        if running is None:  # already answered: the SDK closes the task out itself
            return
        running.cancelled = True
        await _end(running, TaskState.TASK_STATE_CANCELED, "Cancelled at the caller's request.")

    async def _answer(self, context: RequestContext, running: Running) -> None:
        updater = running.updater
        try:
            if context.message is None:
                raise InputToFix("The request has no message: send the requirement as a text part.")
            ask = ask_of(context.message)
            app = self._shared.current()
            if isinstance(ask, Explain):
                parts, name = await self._explain(app, ask), "explanation"
            else:
                parts, name = await self._recommend(app, ask, running), PLAN
        except InputToFix as error:
            await _end(running, TaskState.TASK_STATE_REJECTED, redact(str(error)))
            return
        except TenderError as error:  # the server's to fix (a runs store down), told as it is
            await _end(running, TaskState.TASK_STATE_FAILED, redact(str(error)))
            return
        except Exception:
            log.exception("A2A task %s failed", updater.task_id)
            await _end(running, TaskState.TASK_STATE_FAILED, FAULT)
            return
        if running.cancelled:
            return
        await updater.add_artifact(parts, artifact_id=name, name=name)
        await _end(running, TaskState.TASK_STATE_COMPLETED, None)

    async def _recommend(self, app: AppContext, ask: Recommend, running: Running) -> list[Part]:
        settings = app.settings
        manager, said = settings.manager_backend, ""
        # MCP sampling has no A2A counterpart: the caller states the needs, or Tender reads them itself.
        if manager == "client":
            manager, said = "offline", "" if ask.request.needs else NO_SAMPLING
        tender = app.tender(manager, settings.contractor_backend)
        work = recommend_work(app, tender, ask.request, said, run_id=running.updater.task_id)

        def answer(context: RunContext) -> Recommendation:
            return recommendation(work(context), tender.catalog, ask.detail)

        sent: list[concurrent.futures.Future] = []
        progress = None
        if running.watched:
            await running.updater.start_work()
            progress = _progress_to(running, asyncio.get_running_loop(), sent)
        told = await on_worker(answer, app.limiter(manager, settings.contractor_backend), settings.deadline_s, progress)
        await asyncio.gather(*(asyncio.wrap_future(future) for future in sent))  # its progress before its plan
        return recommendation_parts(told)

    async def _explain(self, app: AppContext, ask: Explain) -> list[Part]:
        told = await anyio.to_thread.run_sync(explanation_of, app, ask.run_id, ask.function, ask.detail, ask.page)
        return explanation_parts(told)


def _watched(context: RequestContext) -> bool:
    streaming = context.call_context.state.get("method") != "SendMessage"  # the JSON-RPC method (SDK's dispatcher)
    return streaming or bool(context.configuration and context.configuration.return_immediately)


def _progress_to(running: Running, loop: asyncio.AbstractEventLoop, sent: list) -> Progress:
    """The run's progress (reported on its worker) as `working` status updates, as a share that only goes up."""
    last = [-1]

    def report(done: float, total: float, message: str) -> None:
        value = round(min(1.0, max(0.0, done / total if total else 1.0)) * PROGRESS_TOTAL)
        if value <= last[0]:
            return
        last[0] = value
        update = _working(running, f"{value}%: {message}", value)
        try:
            sent.append(asyncio.run_coroutine_threadsafe(update, loop))
        except RuntimeError:  # the loop has closed (the server is stopping): the run goes on unreported
            update.close()

    return report


async def _working(running: Running, text: str, value: int) -> None:
    updater = running.updater
    try:
        await updater.update_status(
            TaskState.TASK_STATE_WORKING, message=_said(updater, text), metadata={"progress": value}
        )
    except RuntimeError:  # the task ended meanwhile (cancelled): its progress no longer matters
        pass


async def _end(running: Running, state: TaskState, text: str | None) -> None:
    """End the task in `state`, with a message where there is something to say; once, whoever ends it first."""
    updater = running.updater
    try:
        await updater.update_status(state, message=_said(updater, text) if text else None)
    except RuntimeError:  # a cancel and a completion crossed: the first one stands
        pass


def _said(updater: TaskUpdater, text: str) -> Message:
    return agent_message(text, updater.task_id, updater.context_id)
