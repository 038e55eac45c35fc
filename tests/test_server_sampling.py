"""Needs stated by the caller, and by the caller's own model through MCP sampling: a client that offers it is asked
once, within bounds; one that does not, or answers badly, gets Tender's own decomposition and a note, never an
error."""

import json
import time

import anyio
import pytest
from mcp import Client, types

from tender.server import sampling
from tender.server.app import build_server
from tender.server.sampling import Unusable, parse_needs
from tests.server_support import REQUIREMENT, http_server, ok, server_env, settings  # noqa: F401

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
def test_an_answer_of_a_megabyte_is_refused_at_once_whatever_it_holds(answer):
    started = time.monotonic()
    with pytest.raises(Unusable, match="over the"):
        parse_needs(answer)
    assert time.monotonic() - started < 1


@pytest.mark.parametrize("answer", ["\n" * 15_000, "[" * 15_000, "1" * 15_000, " \t" * 7_000 + "x"])
def test_the_longest_answer_read_is_read_in_one_linear_pass(answer):
    started = time.monotonic()
    with pytest.raises(Unusable):
        parse_needs(answer)
    assert time.monotonic() - started < 1


async def test_a_client_answering_a_megabyte_of_newlines_never_holds_up_another_client(server_env, tmp_path):  # noqa: F811
    """The probe's stall, over a real HTTP server: one client's model answers with a megabyte of newlines while a
    second client asks for the catalogue's categories; the second is answered at once, the first gets a plan."""
    asked = anyio.Event()

    async def flood(context, params):
        asked.set()
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="\n" * 1_000_000), model="flood"
        )

    with http_server({**server_env, "TENDER_MANAGER_BACKEND": "client"}, tmp_path / "http.log") as server:
        plans: list[dict] = []

        async def flooding_client():
            async with Client(server.url, mode="legacy", sampling_callback=flood) as client:
                plans.append(await recommend(client))

        async with Client(server.url) as other:
            await other.call_tool("list_categories", {})  # warm: the first call loads the catalogue
            async with anyio.create_task_group() as group:
                group.start_soon(flooding_client)
                with anyio.fail_after(60):
                    await asked.wait()
                delays = []
                for _ in range(10):
                    started = time.monotonic()
                    with anyio.move_on_after(5):
                        ok(await other.call_tool("list_categories", {}))
                    delays.append(time.monotonic() - started)
                    if delays[-1] >= 5:
                        group.cancel_scope.cancel()  # the server is stalled: no plan will come
                        break
                    await anyio.sleep(0.05)
    assert max(delays) < 1, delays
    assert plans and plans[0]["functions"]
    assert any("could not be used" in n and "1,000,000 characters" in n for n in plans[0]["notes"])


async def test_needs_from_the_client_s_model_are_told_once_never_as_the_request_s_own(settings):  # noqa: F811
    async with Client(
        build_server(asking(settings)), mode="legacy", sampling_callback=answering(json.dumps(NEEDS))
    ) as client:
        plan = await recommend(client)
    about_needs = [n for n in plan["notes"] if "need" in n and "step" in n]
    assert len(about_needs) == 1 and "MCP sampling" in about_needs[0], plan["notes"]
