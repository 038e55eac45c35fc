"""Where the A2A tasks of this server are kept: the recent ones in memory, and every recommendation in the runs store.

A task lives in memory on the replica that runs it, the latest kept within a budget of bytes (and of tasks), the
oldest finished ones let go first: a message may hold a requirement of 20,000 characters, and a plan's artifact 32 KB,
so an unbounded store grew by the size of every request. A recommendation's task id is its run's id, and the run is in
the runs store (SQLite, or PostgreSQL shared by every replica): a task no longer, or never, held here is read back
from its run, completed, with its plan as the artifact. So GetTask answers on any replica once a plan is made, as
explaining a run does; a task still running, refused or cancelled is known only to the replica that had it."""

import logging
import re
from collections import OrderedDict

import anyio
from a2a.auth.user import User
from a2a.server.context import ServerCallContext
from a2a.server.owner_resolver import resolve_user_scope
from a2a.server.tasks import InMemoryTaskStore, TaskStore
from a2a.types.a2a_pb2 import Artifact, ListTasksRequest, ListTasksResponse, Task, TaskState, TaskStatus

from tender.answers.brief import recommendation
from tender.answers.runs import StoredRun, UnknownRun
from tender.catalog import TenderError

from .a2a_answers import agent_message, recommendation_parts
from .context import SharedApp

log = logging.getLogger("tender.server")

KEPT_BYTES = 64 * 1024 * 1024
KEPT_TASKS = 5_000  # ListTasks sorts them all: a few thousand keep it in milliseconds
RUN_ID = re.compile(r"[0-9a-f]{32}")  # uuid4().hex, as plans (agents/outcome.py) and tasks (a2a_agent.py) are named
PLAN = "plan"  # the artifact of a recommendation
# The JSON-RPC methods (as the SDK's dispatcher names them in the call's state) that ask for a task by its id: only
# they read a run back. A message being answered looks its new task up twice before making it, and found no run
# there at the cost of two reads of the runs store each.
ASKING = ("GetTask", "CancelTask", "SubscribeToTask")
FINISHED = {
    TaskState.TASK_STATE_COMPLETED,
    TaskState.TASK_STATE_CANCELED,
    TaskState.TASK_STATE_FAILED,
    TaskState.TASK_STATE_REJECTED,
}


class RecentTasks(TaskStore):
    """The SDK's in-memory store within KEPT_BYTES and KEPT_TASKS, falling back on the runs store."""

    def __init__(self, shared: SharedApp, kept_bytes: int = KEPT_BYTES, kept_tasks: int = KEPT_TASKS):
        self._shared = shared
        self._memory = InMemoryTaskStore()
        self._kept_bytes, self._kept_tasks = kept_bytes, kept_tasks
        self._sizes: OrderedDict[tuple[str, str], tuple[int, bool]] = OrderedDict()  # oldest first: (bytes, finished)
        self._bytes = 0

    async def save(self, task: Task, context: ServerCallContext) -> None:
        await self._memory.save(task, context)
        key = (resolve_user_scope(context), task.id)
        size, _ = self._sizes.pop(key, (0, False))
        self._sizes[key] = (task.ByteSize(), task.status.state in FINISHED)
        self._bytes += task.ByteSize() - size
        await self._let_go(context)

    async def _let_go(self, context: ServerCallContext) -> None:
        """Drop the oldest finished tasks while over either budget; a task still running is never dropped."""
        if self._bytes <= self._kept_bytes and len(self._sizes) <= self._kept_tasks:
            return
        for key, (size, finished) in list(self._sizes.items()):
            if self._bytes <= self._kept_bytes and len(self._sizes) <= self._kept_tasks:
                break
            if finished:
                del self._sizes[key]
                self._bytes -= size
                await self._memory.delete(key[1], _as_owner(context, key[0]))

    async def get(self, task_id: str, context: ServerCallContext) -> Task | None:
        task = await self._memory.get(task_id, context)
        if task is not None or not RUN_ID.fullmatch(task_id) or context.state.get("method") not in ASKING:
            return task
        return await anyio.to_thread.run_sync(self._from_run, task_id)

    def _from_run(self, run_id: str) -> Task | None:
        """The completed task of a stored run (blocking: it reads the runs store); None where there is none."""
        app = self._shared.app
        if app is None:
            return None
        try:
            entry = app.runs.entry(run_id)
        except UnknownRun:
            return None
        except TenderError as error:  # a store that cannot be read now: the task is not known, said in the log
            log.warning("Task %s not read back from the runs store: %s", run_id, error)
            return None
        return task_of_run(entry, _catalogue(app, entry))

    async def list(self, params: ListTasksRequest, context: ServerCallContext) -> ListTasksResponse:
        return await self._memory.list(params, context)

    async def delete(self, task_id: str, context: ServerCallContext) -> None:
        key = (resolve_user_scope(context), task_id)
        size, _ = self._sizes.pop(key, (0, False))
        self._bytes -= size
        await self._memory.delete(task_id, context)


def task_of_run(entry: StoredRun, catalog) -> Task:
    """A stored run as the completed task that made it: its plan (summary detail) as the artifact."""
    run_id = entry.run.plan.run_id
    status = TaskStatus(
        state=TaskState.TASK_STATE_COMPLETED,
        message=agent_message(f"Plan {run_id}, read back from the runs store.", run_id, run_id),
    )
    status.timestamp.FromJsonString(entry.created_at.replace("+00:00", "Z"))
    return Task(
        id=run_id,
        context_id=run_id,  # the task's own context is not kept with its run
        status=status,
        artifacts=[
            Artifact(artifact_id=PLAN, name=PLAN, parts=recommendation_parts(recommendation(entry.run, catalog)))
        ],
    )


def _catalogue(app, entry: StoredRun):
    try:
        return app.catalogue_of(entry)
    except TenderError:  # its catalogue is gone or changed: the plan is told without the catalogue's facts
        return None


def _as_owner(context: ServerCallContext, owner: str) -> ServerCallContext:
    """A call context resolving to `owner`: a task is let go by whoever's save went over the budget."""
    return context if resolve_user_scope(context) == owner else ServerCallContext(user=_Owner(owner))


class _Owner(User):
    def __init__(self, name: str):
        self._name = name

    @property
    def is_authenticated(self) -> bool:
        return True

    @property
    def user_name(self) -> str:
        return self._name
