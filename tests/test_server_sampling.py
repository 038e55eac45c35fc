"""Needs stated by the caller, and by the caller's own model through MCP sampling: a client that offers it is asked
once, within bounds; one that does not, or answers badly, gets Tender's own decomposition and a note, never an
error."""

import json
import threading

import anyio
import pytest
from mcp import Client, types

from tender.server import sampling
from tender.server.app import build_server
from tender.server.sampling import Unusable, parse_needs
from tests.guards import ends_in_a_process_of_its_own
from tests.server_support import REQUIREMENT, ok, settings  # noqa: F401

NEEDS = ["find nearby restaurants", "show places on a map", "get restaurant reviews"]


def answering(text: str, seen: list | None = None):
    async def callback(context, params: types.CreateMessageRequestParams):
        if seen is not None:
            seen.append(params)
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text=text), model="scripted-model"
        )

    return callback


def asking(settings):  # noqa: F811
    """A server whose deployment lets the client's model state the needs (TENDER_MANAGER_BACKEND=client)."""
    from dataclasses import replace

    return replace(settings, manager_backend="client")


async def recommend(client, **arguments) -> dict:
    return ok(await client.call_tool("recommend_apis", {"requirement": REQUIREMENT, "detail": "full", **arguments}))


def steps(plan: dict) -> list[str]:
    return [f["function"] for f in plan["functions"]]


async def test_needs_given_by_the_caller_are_the_plan_s_steps_one_each(settings):  # noqa: F811
    async with Client(build_server(asking(settings))) as client:
        plan = await recommend(client, needs=NEEDS)
    assert steps(plan) == NEEDS
    assert any("stated with the request" in n for n in plan["notes"])


async def test_a_client_s_model_states_the_needs_through_sampling_asked_once_within_bounds(settings):  # noqa: F811
    seen: list = []
    callback = answering("Here you are:\n```json\n" + json.dumps(NEEDS) + "\n```", seen)
    async with Client(build_server(asking(settings)), mode="legacy", sampling_callback=callback) as client:
        plan = await recommend(client)
    assert steps(plan) == NEEDS
    assert len(seen) == 1 and seen[0].max_tokens <= sampling.MAX_TOKENS
    assert REQUIREMENT in seen[0].messages[0].content.text
    assert any("scripted-model stated through MCP sampling" in n for n in plan["notes"])


async def test_a_client_without_sampling_gets_tender_s_own_decomposition_and_a_note(settings):  # noqa: F811
    async with Client(build_server(asking(settings)), mode="legacy") as client:
        plan = await recommend(client)
    assert plan["functions"]
    assert any("does not offer MCP sampling" in n for n in plan["notes"])


async def test_a_client_of_the_protocol_without_server_requests_gets_tender_s_decomposition_and_a_note(settings):  # noqa: F811
    async with Client(build_server(asking(settings)), sampling_callback=answering(json.dumps(NEEDS))) as client:
        plan = await recommend(client)
    assert plan["functions"] and any("lets no server ask its model" in n for n in plan["notes"])


@pytest.mark.parametrize(
    "answer, said",
    [("I would rather not.", "could not be used"), ('["' + "x" * 400 + '"]', "could not be used")],
)
async def test_an_answer_that_is_no_list_of_needs_falls_back_with_a_note(settings, answer, said):  # noqa: F811
    async with Client(build_server(asking(settings)), mode="legacy", sampling_callback=answering(answer)) as client:
        plan = await recommend(client)
    assert plan["functions"] and any(said in n and "embedded reader" in n for n in plan["notes"])


async def test_a_client_that_refuses_falls_back_with_a_note(settings):  # noqa: F811
    async def refuse(context, params):
        return types.ErrorData(code=types.INVALID_REQUEST, message="the user declined")

    async with Client(build_server(asking(settings)), mode="legacy", sampling_callback=refuse) as client:
        plan = await recommend(client)
    assert any("the user declined" in n for n in plan["notes"])


async def test_a_client_that_hangs_costs_the_timeout_then_falls_back(settings, monkeypatch):  # noqa: F811
    monkeypatch.setattr(sampling, "TIMEOUT_S", 0.5)

    async def hang(context, params):
        await anyio.sleep(30)

    async with Client(build_server(asking(settings)), mode="legacy", sampling_callback=hang) as client:
        with anyio.fail_after(20):
            plan = await recommend(client)
    assert any("did not answer within 0.5 s" in n for n in plan["notes"])


async def test_a_server_that_never_asks_says_so(settings):  # noqa: F811
    from dataclasses import replace

    async with Client(
        build_server(replace(settings, sampling=False, manager_backend="client")),
        mode="legacy",
        sampling_callback=answering("[]"),
    ) as client:
        plan = await recommend(client)
    assert any("TENDER_SAMPLING=off" in n for n in plan["notes"])


def test_needs_are_read_from_json_or_a_list_and_anything_else_is_refused():
    assert parse_needs('["a", "b"]') == ["a", "b"]
    assert parse_needs("1. find hotels\n2. show a map") == ["find hotels", "show a map"]
    with pytest.raises(Unusable):
        parse_needs("no idea")
    with pytest.raises(Unusable):
        parse_needs(json.dumps([f"need {i}" for i in range(13)]))


@pytest.mark.parametrize("answer", ["\n" * 1_000_000, "[" * 1_000_000, " 1" * 500_000])
def test_an_answer_of_a_megabyte_is_refused_by_its_length_whatever_it_holds(answer):
    with pytest.raises(Unusable, match=f"1,000,000 characters, over the {sampling.MAX_ANSWER_CHARS:,}"):
        parse_needs(answer)


# Each answer's shape at 1,500,000 characters, read with the limit on an answer's length lifted: the patterns read
# before took 4 s for 15,000 newlines and 0.1 s for 15,000 `[`, and grew as the square (hours at this length).
READ = """
import json, sys
from tender.server import sampling
sampling.MAX_ANSWER_CHARS = 10**9
for answer in json.loads(sys.stdin.read()):
    try:
        sampling.parse_needs(answer)
    except sampling.Unusable:
        pass
"""


def test_an_answer_is_read_in_one_linear_pass():
    shapes = ["\n" * 1_500_000, "[" * 1_500_000, "1" * 1_500_000, " \t" * 750_000 + "x"]
    ends_in_a_process_of_its_own(READ, json.dumps(shapes))


async def test_a_client_answering_a_megabyte_of_newlines_never_holds_up_another_client(settings, monkeypatch):  # noqa: F811
    """The probe's stall (one client's model answered a megabyte of newlines, and every client of the shared server
    waited): an answer is read off the event loop, so another client is served while it is being read. Here the
    reading of the answer waits until the other client has been served; read on the event loop, it would wait in
    vain, and say so."""
    asked, reading, served = anyio.Event(), threading.Event(), threading.Event()
    read_while_others_were_served: list[bool] = []
    parse = sampling.parse_needs

    def slow_reader(text: str) -> list[str]:
        reading.set()
        read_while_others_were_served.append(served.wait(20))  # a guard against hanging
        return parse(text)

    monkeypatch.setattr(sampling, "parse_needs", slow_reader)

    async def flood(context, params):
        asked.set()
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="\n" * 1_000_000), model="flood"
        )

    server = build_server(asking(settings))
    plans: list[dict] = []

    async def flooding_client():
        async with Client(server, mode="legacy", sampling_callback=flood) as client:
            plans.append(await recommend(client))

    async with Client(server) as other:
        await other.call_tool("list_categories", {})  # warm: the first call loads the catalogue
        async with anyio.create_task_group() as group:
            group.start_soon(flooding_client)
            with anyio.fail_after(60):
                await asked.wait()
                await anyio.to_thread.run_sync(reading.wait)
                ok(await other.call_tool("list_categories", {}))
            served.set()

    assert read_while_others_were_served == [True]
    assert plans and plans[0]["functions"]
    assert any("could not be used" in n and "1,000,000 characters" in n for n in plans[0]["notes"])


async def test_needs_from_the_client_s_model_are_told_once_never_as_the_request_s_own(settings):  # noqa: F811
    async with Client(
        build_server(asking(settings)), mode="legacy", sampling_callback=answering(json.dumps(NEEDS))
    ) as client:
        plan = await recommend(client)
    about_needs = [n for n in plan["notes"] if "need" in n and "step" in n]
    assert len(about_needs) == 1 and "MCP sampling" in about_needs[0], plan["notes"]
