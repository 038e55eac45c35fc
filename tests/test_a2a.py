"""Tender as an A2A agent (`tender serve --transport http --a2a`), called with the official SDK's client as another
agent would: it finds Tender by its card, sends a requirement and gets a task whose artifact is the plan (what
recommend_apis returns), streams the run's progress, cancels, and is told what to fix when a message cannot be read.
The runs land in the runs store that MCP and the CLI explain from; replicas over one PostgreSQL answer for each
other's runs."""

import dataclasses
import json
import os
import subprocess
import threading
import time

import anyio
import httpx
import pytest

pytest.importorskip("a2a.server", reason="the a2a extra is not installed: pip install 'tender-mcp[a2a]'")

from a2a.client import A2ACardResolver, A2AClientError  # noqa: E402
from a2a.server.context import ServerCallContext  # noqa: E402
from a2a.types.a2a_pb2 import CancelTaskRequest, GetTaskRequest, Message, Part, Task, TaskState, TaskStatus  # noqa: E402
from a2a.utils.errors import InvalidRequestError  # noqa: E402
from mcp import Client as McpClient  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from tender.agents.context import Cancelled  # noqa: E402
from tender.agents.service import Tender  # noqa: E402
from tender.agents.request import Request  # noqa: E402
from tender.answers.runs import keep  # noqa: E402
from tender.answers.stores import open_store  # noqa: E402
from tender.server.a2a_asks import Explain, InvalidAsk, Recommend, ask_of  # noqa: E402
from tender.server.a2a_tasks import RecentTasks  # noqa: E402
from tender.server.context import AppContext, SharedApp  # noqa: E402
from tests.a2a_support import (  # noqa: E402
    artifact_data,
    artifact_text,
    connect,
    data,
    events,
    request,
    said,
    send,
    served_here,
    text,
)
from tests.conftest import write_jsonl  # noqa: E402
from tests.fixture_data import api_rows, mashup_rows  # noqa: E402
from tests.server_support import REQUIREMENT, TENDER, http_server, ok, settings  # noqa: E402, F401

TOKEN = "a2a-s3cret"
NEEDS = ["find nearby restaurants", "show places on a map", "get restaurant reviews"]
COMPLETED, REJECTED, CANCELED = (
    TaskState.TASK_STATE_COMPLETED,
    TaskState.TASK_STATE_REJECTED,
    TaskState.TASK_STATE_CANCELED,
)


def serve_env(catalog, runs, **more: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TENDER_")}
    return env | {
        "TENDER_CATALOG": str(catalog),
        "TENDER_RUNS": str(runs),
        "TENDER_EMBEDDING_MODEL": "hashing",
        **more,
    }


@dataclasses.dataclass
class Agent:
    base: str
    env: dict[str, str]

    @property
    def mcp(self) -> str:
        return f"{self.base}/mcp"


@pytest.fixture(scope="module")
def agent(catalog_path, tmp_path_factory):
    """`tender serve --transport http --a2a` with a bearer token, on the fixture catalogue."""
    folder = tmp_path_factory.mktemp("a2a")
    env = serve_env(catalog_path, folder / "runs.db", TENDER_HTTP_TOKEN=TOKEN)
    with http_server(env, folder / "server.log", "--a2a") as server:
        yield Agent(f"http://127.0.0.1:{server.port}", env)


# -- discovery: the card says what this server serves, and how to call it --------------------------------------------
async def test_the_card_describes_the_catalogue_served_and_the_token_it_takes(agent):
    async with httpx.AsyncClient() as http:
        card = await A2ACardResolver(http, agent.base).get_agent_card()
    assert card.name == "Tender" and card.version
    assert "24 Web APIs" in card.description and "40 past mashups" in card.description
    assert {skill.id for skill in card.skills} == {"recommend", "explain"}
    recommend = next(skill for skill in card.skills if skill.id == "recommend")
    assert {"web-apis", "manager-led", "collaborative"} <= set(recommend.tags)
    assert "needs" in recommend.description and recommend.examples
    assert card.supported_interfaces[0].url == f"{agent.base}/a2a"
    assert card.supported_interfaces[0].protocol_binding == "JSONRPC"
    assert card.capabilities.streaming and not card.capabilities.push_notifications
    assert card.security_schemes["bearer"].http_auth_security_scheme.scheme == "Bearer"
    assert "bearer" in card.security_requirements[0].schemes
    assert "text/plain" in card.default_input_modes and "application/json" in card.default_output_modes


async def test_an_agent_finds_tender_by_its_card_and_gets_the_plan_recommend_apis_gives(agent):
    asked = {"needs": NEEDS, "kind": "web_api", "max_apis": 3}
    async with await connect(agent.base, TOKEN) as client:
        task = await send(client, text(REQUIREMENT), data(asked))
    assert task.status.state == COMPLETED
    plan = artifact_data(task)
    assert plan["run_id"] == task.id  # the task is its run
    assert [f["function"] for f in plan["functions"]] == NEEDS and 0 < len(plan["apis"]) <= 3
    assert task.id in artifact_text(task) and plan["apis"][0] in artifact_text(task)

    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with httpx.AsyncClient(headers=headers, timeout=60) as http:
        async with McpClient(streamable_http_client(agent.mcp, http_client=http)) as mcp:
            same = ok(await mcp.call_tool("recommend_apis", {"requirement": REQUIREMENT, **asked}))
            told = ok(await mcp.call_tool("explain_bids", {"run_id": task.id}))
    # The same schema and, the run id aside, the same plan: JSON numbers come back as floats, equal all the same.
    assert {k: v for k, v in plan.items() if k != "run_id"} == {k: v for k, v in same.items() if k != "run_id"}
    assert told["run_id"] == task.id and told["apis"] == plan["apis"]
    cli = subprocess.run([TENDER, "explain", task.id], env=agent.env, capture_output=True, text=True, timeout=60)
    assert cli.returncode == 0 and task.id in cli.stdout, cli.stderr


async def test_a_past_run_is_explained_by_its_run_id(agent):
    async with await connect(agent.base, TOKEN) as client:
        task = await send(client, text(REQUIREMENT))
        told = await send(client, data({"run_id": task.id, "function": "f1"}))
        unknown = await send(client, data({"run_id": "0" * 32}))
    assert told.status.state == COMPLETED
    explanation = artifact_data(told)
    assert explanation["run_id"] == task.id and explanation["function"] == "f1" and "diagram" in explanation
    assert "bids" in artifact_text(told)
    assert unknown.status.state == REJECTED and "No run '000" in said(unknown)


async def test_streaming_shows_the_runs_progress_then_its_plan(agent):
    async with await connect(agent.base, TOKEN, streaming=True) as client:
        streamed = await events(client, text(REQUIREMENT))
    kinds = [event.WhichOneof("payload") for event in streamed]
    assert kinds[0] == "task" and kinds[-2:] == ["artifact_update", "status_update"]
    updates = [event.status_update for event in streamed if event.HasField("status_update")]
    progress = [u.metadata["progress"] for u in updates if "progress" in u.metadata]
    assert len(progress) >= 2 and progress == sorted(progress) and progress[-1] == 100
    assert all(u.status.state == TaskState.TASK_STATE_WORKING for u in updates[:-1])
    assert updates[-1].status.state == COMPLETED
    assert streamed[-2].artifact_update.artifact.name == "plan"


# -- what an agent gets wrong is told, as a rejected task saying what to fix -----------------------------------------
@pytest.mark.parametrize(
    "parts, hint",
    [
        ([Part(raw=b"%PDF-1.7")], "Tender reads no files"),
        ([Part(url="https://example.org/spec.pdf")], "Tender reads no files"),
        ([Part()], "no text, data, raw or url content"),
        ([text(REQUIREMENT), data({"needs": [f"need {i}" for i in range(1000)]})], "at most 12 needs"),
        ([text(REQUIREMENT), data({"kind": "plugin"})], "'mcp_server', 'web_api' or 'any'"),
        ([text(REQUIREMENT), data({"max_apis": "ten"})], "max_apis: Input should be a valid integer"),
        ([text(REQUIREMENT), data({"protocol": "auction"})], "is not a protocol; use one of manager-led"),
        ([text(REQUIREMENT), data({"apis_wanted": 3})], "a field Tender does not take: 'apis_wanted'"),
        ([text(REQUIREMENT), data(["maps"])], "not a JSON object"),
        ([text(REQUIREMENT), data({"needs": NEEDS}), data({"kind": "web_api"})], "put every field in one"),
        ([text(REQUIREMENT), data({"requirement": REQUIREMENT})], "given twice"),
        ([text(REQUIREMENT), data({"run_id": "abc"})], "Send a recommendation and an explanation as two messages"),
        ([data({"needs": NEEDS})], "the requirement is empty"),
        ([text(REQUIREMENT), data({"detail": "everything"})], "'summary' or 'full'"),
        ([text(REQUIREMENT), data({"required_categories": ["Mappng"]})], "Close names: Mapping"),
    ],
)
async def test_a_message_that_cannot_be_read_is_rejected_saying_what_to_fix(agent, parts, hint):
    async with await connect(agent.base, TOKEN) as client:
        task = await send(client, *parts)
        after = await send(client, text(REQUIREMENT))
    assert task.status.state == REJECTED and not task.artifacts
    assert hint in said(task) and "Traceback" not in said(task)
    assert after.status.state == COMPLETED  # and the server goes on serving


async def test_without_the_token_or_with_a_wrong_one_nothing_is_served_but_the_card(agent):
    for token in (None, "guess"):
        async with await connect(agent.base, token) as client:  # the card is public: the client is made
            with pytest.raises(A2AClientError, match="401"):
                await send(client, text(REQUIREMENT))


async def test_a2a_is_guarded_as_mcp_is_a_foreign_host_or_origin_and_a_body_not_json_are_refused(agent):
    url, token = f"{agent.base}/a2a", {"Authorization": f"Bearer {TOKEN}"}
    body = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}}
    async with httpx.AsyncClient(headers=token) as http:
        assert (await http.post(url, json=body, headers={"Host": "evil.example"})).status_code == 421
        assert (await http.post(url, json=body, headers={"Origin": "http://evil.example"})).status_code == 403
        assert (
            await http.post(url, content=json.dumps(body), headers={"Content-Type": "text/plain"})
        ).status_code == 400
        allowed = await http.post(url, json=body, headers={"A2A-Version": "1.0"})
    assert allowed.status_code == 200 and allowed.json()["error"]["code"] == -32001  # task not found: it got through


# -- bad input is answered at once, and the others are served meanwhile ---------------------------------------------
async def test_bad_input_is_answered_within_a_second_while_others_are_served(agent):
    headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json", "A2A-Version": "1.0"}
    url = f"{agent.base}/a2a"
    served: list[str] = []
    answered: dict[str, float] = {}
    done = anyio.Event()

    async def others() -> None:
        async with await connect(agent.base, TOKEN) as client:
            while not done.is_set():
                served.append(TaskState.Name((await send(client, text(REQUIREMENT))).status.state))

    def rpc(params_or_body) -> bytes:
        if isinstance(params_or_body, bytes):
            return params_or_body
        return json.dumps({"jsonrpc": "2.0", "id": 7, "method": "SendMessage", "params": params_or_body}).encode()

    message = {"messageId": "m1", "role": "ROLE_USER"}
    raw = {
        "invalid JSON": rpc(b'{"jsonrpc": "2.0", "id": 1, "method": '),
        "a JSON-RPC version not 2.0": rpc(b'{"jsonrpc": "1.0", "id": 1, "method": "SendMessage", "params": {}}'),
        "an unknown method": rpc(b'{"jsonrpc": "2.0", "id": 1, "method": "SellMeSomething", "params": {}}'),
        "an unknown part kind": rpc({"message": message | {"parts": [{"hologram": {"uri": "x"}}]}}),
        "1,000 needs": rpc({"message": message | {"parts": [{"text": "maps"}, {"data": {"needs": ["a"] * 1000}}]}}),
    }
    async with anyio.create_task_group() as group:
        group.start_soon(others)
        async with await connect(agent.base, TOKEN) as client, httpx.AsyncClient(timeout=30) as http:
            await anyio.sleep(0.5)
            started = time.perf_counter()
            with pytest.raises(InvalidRequestError, match="over 1,048,576 bytes"):
                await send(client, text("x" * 10_000_000))
            answered["a 10 MB part"] = time.perf_counter() - started
            for name, body in raw.items():
                started = time.perf_counter()
                reply = (await http.post(url, content=body, headers=headers)).json()
                answered[name] = time.perf_counter() - started
                if "error" not in reply:  # read, then refused as a task
                    assert reply["result"]["task"]["status"]["state"] == "TASK_STATE_REJECTED", (name, reply)
        done.set()
    # The bound is the behaviour (a second); the margin is for a busy test machine.
    assert max(answered.values()) < 3, answered
    assert served and set(served) == {"TASK_STATE_COMPLETED"}


# -- cancel: the task ends cancelled and its run stops at its next step ----------------------------------------------
class GatedTender(Tender):
    """The real agents, whose run waits to be cancelled before it starts (so a cancel finds it running)."""

    def __init__(self, catalog):
        super().__init__(catalog)
        self.started, self.stopped = threading.Event(), threading.Event()
        self.contexts: list = []

    def recommend(self, request, context=None):
        self.contexts.append(context)
        if len(self.contexts) == 1:
            self.started.set()
            context.cancel.wait(30)
        try:
            return super().recommend(request, context)
        except Cancelled:
            self.stopped.set()
            raise


async def test_a_cancelled_task_ends_cancelled_and_its_run_stops(settings):  # noqa: F811
    tenders: list[GatedTender] = []

    def open_app():
        app = AppContext.open(settings)
        tenders.append(GatedTender(app.catalog))
        app.tenders["offline", "offline"] = tenders[0]
        return app

    async with served_here(settings, open_app) as base, await connect(base) as client:
        task = await send(client, text(REQUIREMENT), return_immediately=True)
        assert task.status.state in (TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING)
        assert await anyio.to_thread.run_sync(tenders[0].started.wait, 10)
        cancelled = await client.cancel_task(CancelTaskRequest(id=task.id))
        assert cancelled.status.state == CANCELED
        assert await anyio.to_thread.run_sync(tenders[0].stopped.wait, 10)
        assert (await client.get_task(GetTaskRequest(id=task.id))).status.state == CANCELED
        after = await send(client, text(REQUIREMENT))
    assert tenders[0].contexts[0].cancel.is_set()
    assert after.status.state == COMPLETED
    store = open_store(settings.runs_path)
    assert [run["run_id"] for run in store.recent()] == [after.id]  # the cancelled run was never kept
    store.close()


# -- the card follows the catalogue ----------------------------------------------------------------------------------
async def test_the_card_changes_when_the_catalogue_is_republished(tmp_path):
    from tender.catalog import HashingEmbedder, build_catalog

    db = tmp_path / "catalog.db"
    apis, mashups = write_jsonl(tmp_path / "apis.jsonl", api_rows()), write_jsonl(tmp_path / "m.jsonl", mashup_rows())
    build_catalog(apis, mashups, db, HashingEmbedder(256))
    with http_server(serve_env(db, tmp_path / "runs.db"), tmp_path / "server.log", "--a2a") as server:
        base = f"http://127.0.0.1:{server.port}"
        async with httpx.AsyncClient() as http:
            resolver = A2ACardResolver(http, base)
            before = await resolver.get_agent_card()
            build_catalog(write_jsonl(tmp_path / "twelve.jsonl", api_rows()[12:]), None, db, HashingEmbedder(256))
            deadline = time.monotonic() + 30
            while "12 Web APIs" not in (after := await resolver.get_agent_card()).description:
                assert time.monotonic() < deadline, "the card never told the catalogue published"
                await anyio.sleep(0.2)
    assert "24 Web APIs" in before.description and "past mashups" in before.description
    assert not before.security_schemes and not before.security_requirements  # on loopback, without a token
    assert (
        "without usage history" in after.description
        and "of this catalogue's 12 Web APIs" in after.skills[0].description
    )


# -- replicas: two servers over one PostgreSQL answer for each other's runs ------------------------------------------
async def test_two_replicas_on_one_postgresql_each_explain_the_others_run(catalog_path, postgres_url, tmp_path):
    env = serve_env(catalog_path, postgres_url, TENDER_HTTP_TOKEN=TOKEN)
    with http_server(env, tmp_path / "a.log", "--a2a") as a, http_server(env, tmp_path / "b.log", "--a2a") as b:
        bases = [f"http://127.0.0.1:{a.port}", f"http://127.0.0.1:{b.port}"]
        tasks = []
        for base in bases:
            async with await connect(base, TOKEN) as client:
                tasks.append(await send(client, text(REQUIREMENT), data({"needs": NEEDS})))
        told = []
        for base, task in zip(bases, reversed(tasks)):  # each replica, the other one's run
            async with await connect(base, TOKEN) as client:
                told.append(await send(client, data({"run_id": task.id})))
                read_back = await client.get_task(GetTaskRequest(id=task.id))
            assert (
                read_back.status.state == COMPLETED and artifact_data(read_back)["apis"] == artifact_data(task)["apis"]
            )
    assert [t.status.state for t in tasks + told] == [COMPLETED] * 4
    assert [artifact_data(t)["run_id"] for t in told] == [tasks[1].id, tasks[0].id]
    store = open_store(postgres_url)
    assert sorted(run["run_id"] for run in store.recent()) == sorted(t.id for t in tasks)  # no run lost, none doubled
    store.close()


# -- reading a message, and keeping tasks: the parts, without a server -----------------------------------------------
def test_a_data_part_carries_recommend_apis_fields_to_the_one_request_model():
    fields = {
        "needs": NEEDS,
        "kind": "web_api",
        "protocol": "collaborative",
        "organisation": "category",
        "max_apis": 3,  # a JSON number: a float once through protobuf's Value
        "excluded_apis": [7, "Flickr"],
        "include_deprecated": True,
        "detail": "full",
    }
    ask = ask_of(request(text("A site of nearby restaurants"), text("on a map"), data(fields)).message)
    assert isinstance(ask, Recommend) and ask.detail == "full"
    asked = ask.request
    assert asked.requirement == "A site of nearby restaurants\non a map" and asked.needs == NEEDS
    assert (asked.kind, asked.protocol, asked.organisation) == ("web_api", "collaborative", "category")
    assert asked.constraints.max_apis == 3 and type(asked.constraints.max_apis) is int
    assert asked.constraints.excluded_apis == [7, "Flickr"] and asked.constraints.include_deprecated
    alone = ask_of(request(data({"requirement": REQUIREMENT})).message)
    assert isinstance(alone, Recommend) and alone.request.requirement == REQUIREMENT


def test_a_run_id_alone_asks_for_the_runs_explanation():
    ask = ask_of(request(data({"run_id": "ab" * 16, "function": "f2", "page": 2})).message)
    assert ask == Explain(run_id="ab" * 16, function="f2", page=2)
    with pytest.raises(InvalidAsk, match="page: Input should be greater than or equal to 1"):
        ask_of(request(data({"run_id": "ab" * 16, "page": 0})).message)


def finished(task_id: str, state=COMPLETED, history_bytes: int = 0) -> Task:
    task = Task(id=task_id, context_id="c", status=TaskStatus(state=state))
    if history_bytes:
        task.history.append(Message(message_id="m", parts=[text("x" * history_bytes)]))
    return task


@pytest.mark.parametrize("budget", [{"kept_tasks": 3}, {"kept_bytes": 3_500}])
async def test_recent_tasks_let_the_oldest_finished_go_and_never_a_running_one(budget):
    tasks = RecentTasks(SharedApp(lambda: None), **budget)  # type: ignore[arg-type, return-value]
    context = ServerCallContext()
    await tasks.save(finished("t0", TaskState.TASK_STATE_WORKING, 1_000), context)
    for number in range(1, 6):
        await tasks.save(finished(f"t{number}", history_bytes=1_000), context)
    kept = [number for number in range(6) if await tasks.get(f"t{number}", context) is not None]
    assert kept == [0, 4, 5]


async def test_a_task_not_held_is_read_back_from_its_run(settings):  # noqa: F811
    shared = SharedApp(lambda: AppContext.open(settings))
    async with shared.lifespan(None) as app:
        run = app.tender().recommend(Request.create(REQUIREMENT))
        keep(app.runs, run, app.catalog)
        tasks, context = RecentTasks(shared), ServerCallContext(state={"method": "GetTask"})
        task = await tasks.get(run.plan.run_id, context)
        unknown, junk = await tasks.get("f" * 32, context), await tasks.get("not a run id", context)
        # A message being answered looks up the task it is making: that is never a run to read back.
        making = await tasks.get(run.plan.run_id, ServerCallContext(state={"method": "SendMessage"}))
    assert task is not None and task.status.state == COMPLETED and making is None
    assert artifact_data(task)["run_id"] == run.plan.run_id and artifact_data(task)["apis"] == [
        api.name for api in run.plan.apis
    ]
    assert unknown is None and junk is None
