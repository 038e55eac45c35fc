"""Every tool through the in-memory MCP client: results, schemas, progress, cancellation and errors."""

import json
import threading

import anyio
import pytest
from mcp import Client

from tender.agents.context import Cancelled
from tender.agents.request import MAX_REQUIREMENT_CHARS
from tender.agents.service import Tender
from tender.server.app import AppContext, build_server
from tender.answers.runs import RunStore
from tests.server_support import REQUIREMENT, error_text, ok, server_env, settings  # noqa: F401 (fixtures)

TOOLS = {"recommend_apis", "explain_bids", "compare_protocols", "search_apis", "get_api", "list_categories"}
FOUR_FUNCTIONS = (
    "Weather forecasts on a map. Send an SMS storm alert. Show restaurant reviews. Share photos with friends."
)


def size(result) -> int:
    """What a client receives and may pass on to its model: the text blocks and the structured copy."""
    text = sum(len(block.text.encode()) for block in result.content)
    return text + len(json.dumps(result.structured_content, ensure_ascii=False, separators=(",", ":")).encode())


def connect(settings) -> Client:
    """An in-memory client of a fresh server. Entered inside each test: an async fixture would leave the
    client's task group in another task."""
    return Client(build_server(settings))


async def recommend(client, requirement=REQUIREMENT, **arguments) -> dict:
    return ok(await client.call_tool("recommend_apis", {"requirement": requirement, **arguments}))


# -- the tool list --------------------------------------------------------------------------------
async def test_every_tool_has_a_title_an_output_schema_a_description_and_destroys_nothing(settings):
    async with connect(settings) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(tools) == TOOLS
        for tool in tools.values():
            assert tool.title and tool.title != tool.name, tool.name
            assert tool.output_schema and tool.output_schema["type"] == "object", tool.name
            assert tool.annotations.destructive_hint is not True  # at most a run is added (test_server_metadata)
            assert len(tool.description) > 100, tool.name
            assert "ctx" not in tool.input_schema["properties"]
        schema = tools["recommend_apis"].input_schema
        assert schema["required"] == ["requirement"]
        # The assistant's main tool asks what it can answer; the research knobs are compare_protocols'.
        assert not {"protocol", "organisation", "manager_backend", "contractor_backend", "deadline_s"} & set(
            schema["properties"]
        )
        assert bounds(schema["properties"]["kind"]) == {"enum": ["mcp_server", "web_api", "any"]}
        bench = tools["compare_protocols"].input_schema["properties"]
        assert {"api", "category"} <= set(bench["organisation"]["enum"])
        assert all(schema["properties"][name].get("description") for name in schema["properties"])
        assert "run_id" in tools["recommend_apis"].output_schema["properties"]
        assert "diagram" in tools["explain_bids"].output_schema["properties"]


def bounds(schema: dict) -> dict:
    """A property's bounds, wherever pydantic put them (an optional int nests them in anyOf)."""
    found = {}
    for part in [schema, *schema.get("anyOf", [])]:
        found |= {k: v for k, v in part.items() if k in ("minimum", "maximum", "enum")}
    return found


async def test_numbers_and_choices_are_bounded_in_the_input_schemas(settings):
    async with connect(settings) as client:
        tools = {tool.name: tool.input_schema["properties"] for tool in (await client.list_tools()).tools}
    assert bounds(tools["recommend_apis"]["max_apis"]) == {"minimum": 1, "maximum": 50}
    assert bounds(tools["compare_protocols"]["max_apis"]) == {"minimum": 1, "maximum": 50}
    assert bounds(tools["search_apis"]["limit"]) == {"minimum": 1, "maximum": 100}
    assert bounds(tools["list_categories"]["limit"]) == {"minimum": 1, "maximum": 1000}
    for tool in ("recommend_apis", "explain_bids"):
        assert bounds(tools[tool]["detail"]) == {"enum": ["summary", "full"]}
    assert bounds(tools["compare_protocols"]["manager_backend"]) == {"enum": ["offline", "llm"]}


# -- recommend_apis -------------------------------------------------------------------------------
async def test_recommend_apis_returns_each_function_with_its_apis_and_stores_the_run(settings):
    async with connect(settings) as client:
        plan = await recommend(client)
    assert {"Google Maps", "Yelp"} & set(plan["apis"]), plan
    assert plan["protocol"] == "manager-led" and plan["detail"] == "summary"
    stored = RunStore(settings.runs_path).get(plan["run_id"])
    assert [f["id"] for f in plan["functions"]] == [s.id for s in stored.plan.steps]
    awarded = [api for function in plan["functions"] for api in function.get("apis", [])]
    assert {api["name"] for api in awarded} == set(plan["apis"]) == {a.name for a in stored.plan.apis}
    for api in awarded:
        assert api["does"] and len(api["does"]) <= 120 and "\n" not in api["does"]
        assert api["status"] in ("active", "deprecated", "unknown")
        assert 0 <= api["confidence"] <= 1
        # A reason a person gives, not the bid model's features.
        assert api["why"] and len(api["why"]) <= 100 and "weight" not in api["why"], api["why"]
    assert stored.transcript.messages


async def test_recommend_apis_leaves_the_stage_sets_to_full_detail_and_the_transcript_to_runs(settings):
    async with connect(settings) as client:
        compact = await recommend(client)
        full = await recommend(client, detail="full")
    assert not {"stages", "transcript", "cost", "requirement", "transcript_uri"} & set(compact)
    assert full["detail"] == "full" and full["requirement"] == REQUIREMENT
    assert full["stages"]["final"] == [api["api_id"] for api in full["plan"]]
    assert "transcript" not in full and full["transcript_uri"] == f"runs://{full['run_id']}"
    assert full["backends"] == {"manager": "offline", "contractors": "offline"}
    assert [f.get("apis") for f in full["functions"]] == [f.get("apis") for f in compact["functions"]]


async def test_a_four_function_answer_fits_an_assistants_context(settings):
    """The budgets of issue 21: what a client receives (text and structured copy) for four functions; 5 KB rather
    than 4 since each awarded function lists up to three runners-up an assistant may pick instead (issue 47)."""
    async with connect(settings) as client:
        result = await client.call_tool("recommend_apis", {"requirement": FOUR_FUNCTIONS})
        plan = ok(result)
        assert len(plan["functions"]) == 4
        assert size(result) <= 5120, size(result)
        assert json.loads(result.content[0].text) == plan
        summary = await client.call_tool("explain_bids", {"run_id": plan["run_id"]})
        assert len(ok(summary)["functions"]) == 4
        assert size(summary) <= 8192, size(summary)
        full = await client.call_tool("explain_bids", {"run_id": plan["run_id"], "detail": "full"})
        assert size(full) > 3 * size(summary)  # the drill-down is there when asked for


async def test_recommend_apis_reports_progress_step_by_step(settings):
    async with connect(settings) as client:
        updates = []

        async def on_progress(done, total, message):
            updates.append((done, total, message))

        await client.call_tool("recommend_apis", {"requirement": FOUR_FUNCTIONS}, progress_callback=on_progress)
        assert len(updates) >= 3, updates
        # The MCP specification: one total, and a value that increases with every notification.
        assert {total for _, total, _ in updates} == {100}
        values = [done for done, _, _ in updates]
        assert all(a < b for a, b in zip(values, values[1:])) and values[-1] == 100, values
        assert updates[0][2].startswith("announcing f1")
        assert updates[-1][2] == "plan ready"


async def test_recommend_apis_honours_the_constraints(settings):
    async with connect(settings) as client:
        plan = await recommend(client, max_apis=1)
        assert len(plan["apis"]) == 1
        plan = await recommend(client, excluded_apis=["Google Maps", 3])
        assert not {"Google Maps", "Yelp"} & set(plan["apis"])
        plan = await recommend(client, excluded_categories=["mapping"], detail="full")
        assert all("Mapping" not in api["categories"] for api in plan["plan"])
        assert plan["constraints"]["excluded_categories"] == ["Mapping"]  # the catalogue's spelling


@pytest.mark.parametrize("organisation", ["api", "category", "provider"])
async def test_compare_protocols_runs_every_protocol_in_each_organisation(settings, organisation):
    async with connect(settings) as client:
        compared = ok(
            await client.call_tool("compare_protocols", {"requirement": REQUIREMENT, "organisation": organisation})
        )
    assert [r["protocol"] for r in compared["runs"]] == [
        "manager-led",
        "contractor-led",
        "collaborative",
        "single-agent",
    ]
    assert all(r["apis"] for r in compared["runs"]) and compared["organisation"] == organisation


class RecordingTender(Tender):
    """The real agents, noting each run's context and whether the run stopped on cancellation."""

    def __init__(self, catalog):
        super().__init__(catalog)
        self.contexts = []
        self.stopped = threading.Event()

    def recommend(self, request, context=None):
        self.contexts.append(context)
        try:
            return super().recommend(request, context)
        except Cancelled:
            self.stopped.set()
            raise


async def test_a_cancelled_request_stops_its_run(settings):
    tenders = []

    def open_app():
        app = AppContext.open(settings)
        tenders.append(RecordingTender(app.catalog))
        app.tenders["offline", "offline"] = tenders[0]
        return app

    async with Client(build_server(settings, open_app=open_app)) as client:
        with anyio.CancelScope() as scope:

            async def cancel_on_first_step(done, total, message):
                scope.cancel()

            await client.call_tool(
                "recommend_apis", {"requirement": REQUIREMENT}, progress_callback=cancel_on_first_step
            )
        assert scope.cancelled_caught
        assert await anyio.to_thread.run_sync(tenders[0].stopped.wait, 10)
        assert tenders[0].contexts[0].cancel.is_set()
        assert RunStore(settings.runs_path).count() == 0
        # The server goes on serving.
        assert (await recommend(client))["apis"]


# -- errors: the message says how to fix the call, and the server keeps serving ------------------------
@pytest.mark.parametrize(
    "arguments, hint",
    [
        ({"requirement": "   "}, "describe the app"),
        ({"requirement": "x" * (MAX_REQUIREMENT_CHARS + 1)}, "shorten it"),
        ({"requirement": "\x00\x01\x02"}, "plain text"),
        ({"requirement": REQUIREMENT, "kind": "plugin"}, "'mcp_server', 'web_api' or 'any'"),
        ({"requirement": REQUIREMENT, "max_apis": 0}, "greater than or equal to 1"),
        ({"requirement": REQUIREMENT, "max_apis": 51}, "less than or equal to 50"),
        ({"requirement": REQUIREMENT, "detail": "everything"}, "'summary' or 'full'"),
        ({"requirement": REQUIREMENT, "required_categories": ["Mappng"]}, "Close names: Mapping"),
        ({"requirement": REQUIREMENT, "excluded_categories": ["Nope"]}, "list_categories shows them all"),
        ({"requirement": REQUIREMENT, "excluded_apis": ["Gogle Mapps"]}, "search_apis"),
        ({"requirement": REQUIREMENT, "required_categories": ["Food"], "excluded_categories": ["Food"]}, "drop one"),
        ({}, "requirement"),
    ],
)
async def test_recommend_apis_errors_say_how_to_fix_the_call(settings, arguments, hint):
    async with connect(settings) as client:
        text = error_text(await client.call_tool("recommend_apis", arguments))
        assert hint in text
        assert "Error executing tool recommend_apis:" in text and text != "Error executing tool recommend_apis"
        assert (await recommend(client))["apis"]


# -- explain_bids ---------------------------------------------------------------------------------
async def test_explain_bids_summarises_each_function(settings):
    async with connect(settings) as client:
        plan = await recommend(client, FOUR_FUNCTIONS)
        explanation = ok(await client.call_tool("explain_bids", {"run_id": plan["run_id"]}))
    assert explanation["detail"] == "summary" and "calls" not in explanation
    assert explanation["apis"] == plan["apis"] and explanation["transcript_uri"] == f"runs://{plan['run_id']}"
    assert [f["id"] for f in explanation["functions"]] == [f["id"] for f in plan["functions"]]
    for told, chosen in zip(explanation["functions"], plan["functions"]):
        assert told["sent_to"].split()[0].isdigit() and "contractors" in told["sent_to"]
        assert [w["name"] for w in told.get("winners", [])] == [a["name"] for a in chosen.get("apis", [])]
        assert told["bids"] >= len(told.get("winners", []))
        losing = told.get("best_losing")
        if losing:
            assert losing["name"] not in {w["name"] for w in told.get("winners", [])}
            assert losing["why"] and losing["outcome"]
            assert (
                losing["confidence"] <= max((w["confidence"] for w in told.get("winners", [])), default=1.0)
                or losing["name"] in plan["apis"]
            )
    diagram = explanation["diagram"]
    assert diagram.startswith("sequenceDiagram\n") and "other contractors" in diagram
    assert diagram.count("participant ") <= 8


async def test_explain_bids_in_full_tells_the_exchange_call_by_call(settings):
    async with connect(settings) as client:
        plan = await recommend(client, detail="full")
        explanation = ok(await client.call_tool("explain_bids", {"run_id": plan["run_id"], "detail": "full"}))
        assert explanation["run_id"] == plan["run_id"] and explanation["apis"] == plan["apis"]
        call = explanation["calls"][0]
        assert call["function_id"] == "f1" and call["round"] == 1 and call["categories"]
        assert call["routing_strategy"] == "embedding" and call["eligible"] >= len(call["contacted"]) > 0
        assert all(c["reason"] and "similarity" in c for c in call["contacted"])
        scores = [bid["score"] for bid in call["proposals"]]
        assert scores and scores == sorted(scores, reverse=True)
        assert all(bid["rationale"] for bid in call["proposals"])
        answered = {bid["contractor"] for bid in call["proposals"]} | {
            r["contractor"] for r in call.get("refusals", [])
        }
        assert answered == {c["contractor"] for c in call["contacted"]}
        decisions = [d for c in explanation["calls"] for d in c["decisions"]]
        assert {d["api_id"] for d in decisions if d["outcome"] == "accepted"} == set(plan["stages"]["final"])
        stages = plan["stages"]
        listed = {k: len(v) for k, v in stages.items() if isinstance(v, list)}
        assert explanation["stage_sizes"] == listed | {"category": stages["category_total"]}
        assert explanation["cost"] == plan["cost"]
        assert explanation["diagram"].startswith("sequenceDiagram\n")
        assert "propose" in explanation["diagram"] and "other contractors" not in explanation["diagram"]


async def test_explain_bids_can_keep_to_one_step(settings):
    async with connect(settings) as client:
        plan = await recommend(client, "Weather forecasts on a map. Send an SMS alert when a storm comes.")
        step = plan["functions"][-1]
        summary = ok(await client.call_tool("explain_bids", {"run_id": plan["run_id"], "function": step["id"]}))
        assert summary["function"] == step["id"] and [f["id"] for f in summary["functions"]] == [step["id"]]
        arguments = {"run_id": plan["run_id"], "function": step["id"], "detail": "full"}
        explanation = ok(await client.call_tool("explain_bids", arguments))
        assert explanation["function"] == step["id"]
        assert [s["id"] for s in explanation["steps"]] == [step["id"]]
        assert explanation["calls"] and all(c["function_id"] == step["id"] for c in explanation["calls"])
        by_text = ok(await client.call_tool("explain_bids", arguments | {"function": step["function"]}))
        assert by_text["calls"] == explanation["calls"]


async def test_explain_bids_errors(settings):
    async with connect(settings) as client:
        plan = await recommend(client)
        text = error_text(await client.call_tool("explain_bids", {"run_id": plan["run_id"], "function": "f9"}))
        assert "No step 'f9'" in text and "f1 (" in text
        text = error_text(await client.call_tool("explain_bids", {"run_id": "0123abc"}))
        assert "No run '0123abc'" in text and "recommend_apis" in text
        compared = ok(await client.call_tool("compare_protocols", {"requirement": REQUIREMENT}))
        contractor_led = next(r for r in compared["runs"] if r["protocol"] == "contractor-led")
        text = error_text(
            await client.call_tool("explain_bids", {"run_id": contractor_led["run_id"], "function": "f1"})
        )
        assert "explain the whole run instead" in text


async def test_explain_bids_works_after_a_restart(settings):
    async with Client(build_server(settings)) as first:
        plan = await recommend(first)
    async with Client(build_server(settings)) as second:
        explanation = ok(await second.call_tool("explain_bids", {"run_id": plan["run_id"]}))
    assert explanation["apis"] == plan["apis"] and explanation["functions"]


# -- compare_protocols ----------------------------------------------------------------------------
async def test_compare_protocols_sets_the_four_side_by_side(settings):
    async with connect(settings) as client:
        updates = []

        async def on_progress(done, total, message):
            updates.append((done, total, message))

        comparison = ok(
            await client.call_tool("compare_protocols", {"requirement": REQUIREMENT}, progress_callback=on_progress)
        )
        runs = comparison["runs"]
        assert [r["protocol"] for r in runs] == ["manager-led", "contractor-led", "collaborative", "single-agent"]
        assert len({r["run_id"] for r in runs}) == 4
        store = RunStore(settings.runs_path)
        for row in runs:
            run = store.get(row["run_id"])
            # Each protocol carries its own cost: the messages of its own transcript, not the sum of all four.
            assert row["messages"] == run.plan.cost.messages == len(run.transcript.messages)
            assert row["apis"] and row["latency_ms"] > 0 and row["tokens"] == 0
        assert set(comparison["common_apis"]) <= {a["name"] for a in runs[0]["apis"]}
        values = [done for done, _, _ in updates]
        assert all(a < b for a, b in zip(values, values[1:])) and values[-1] == 100
        assert {total for _, total, _ in updates} == {100}
        assert {message.split(":")[0] for _, _, message in updates} == {r["protocol"] for r in runs}


async def test_compare_protocols_checks_its_arguments(settings):
    async with connect(settings) as client:
        assert "describe the app" in error_text(await client.call_tool("compare_protocols", {"requirement": "  "}))


# -- catalogue tools ------------------------------------------------------------------------------
async def test_get_api_by_id_or_name(settings):
    async with connect(settings) as client:
        by_id = ok(await client.call_tool("get_api", {"api": 0}))
        assert by_id == ok(await client.call_tool("get_api", {"api": "google maps"}))
        assert by_id == ok(await client.call_tool("get_api", {"api": "0"}))
        assert by_id["name"] == "Google Maps" and by_id["categories"] == ["Mapping", "Viewer"]
        assert by_id["usage_count"] == 12  # fixture mashups 0-5, 7, 13, 25, 26, 32 and 33
        top = by_id["co_used"][0]
        assert top["mashups"] >= 1 and 0 < top["weight"] <= 1 and top["name"]
        assert len(by_id["recent_mashups"]) == 5


async def test_get_api_unknown(settings):
    async with connect(settings) as client:
        assert "search_apis" in error_text(await client.call_tool("get_api", {"api": "Nonexistent API"}))


async def test_search_apis(settings):
    async with connect(settings) as client:
        found = ok(await client.call_tool("search_apis", {"query": "send SMS text messages", "limit": 3}))
        assert found["results"][0]["name"] == "Twilio" and len(found["results"]) == 3
        weather = ok(await client.call_tool("search_apis", {"query": "forecast", "categories": ["weather"]}))
        assert weather["categories"] == ["Weather"]
        assert {r["name"] for r in weather["results"]} == {"OpenWeatherMap", "Weather Underground"}


@pytest.mark.parametrize(
    "arguments, hint",
    [
        ({"query": "  "}, "The query is empty"),
        ({"query": "maps", "categories": ["Mappng"]}, "Close names: Mapping"),
        ({"query": "maps", "limit": 0}, "greater than or equal to 1"),
    ],
)
async def test_search_apis_errors(settings, arguments, hint):
    async with connect(settings) as client:
        assert hint in error_text(await client.call_tool("search_apis", arguments))


async def test_list_categories(settings):
    async with connect(settings) as client:
        everything = ok(await client.call_tool("list_categories", {}))
        counts = [c["api_count"] for c in everything["categories"]]
        assert counts == sorted(counts, reverse=True) and everything["categories"][0]["name"] == "Social"
        assert everything["total"] == len(everything["categories"])
        assert all(c.get("similarity") is None for c in everything["categories"])
        ranked = ok(await client.call_tool("list_categories", {"query": "maps and mapping", "limit": 3}))
        assert ranked["categories"][0] == {
            "name": "Mapping",
            "api_count": 3,
            "similarity": ranked["categories"][0]["similarity"],
        }
        assert len(ranked["categories"]) == 3 and ranked["categories"][0]["similarity"] > 0


async def test_tools_run_concurrently_on_one_server(settings):
    async with connect(settings) as client:
        async with anyio.create_task_group() as group:
            for i in range(8):
                group.start_soon(recommend, client, f"{REQUIREMENT} number {i}")
        assert RunStore(settings.runs_path).count() == 8


async def test_recommend_apis_on_an_llm_backend(settings, tmp_path):
    """The server's backend reaches the agents: an LLM manager that never answers in the schema is asked,
    then its steps fall back to the offline reasoner, and the plan says so."""
    from dataclasses import replace

    from tests.llm_fake_server import Answer, FakeLLMServer

    with FakeLLMServer(respond=lambda body: Answer("I would rather not say.")) as llm:
        with_llm = replace(
            settings, llm_base_url=llm.url, llm_model=f"fake-{tmp_path.name}", manager_backend="llm"
        )  # TENDER_MANAGER_BACKEND=llm: the deployment chooses the reasoner
        async with Client(build_server(with_llm)) as client:
            plan = await recommend(client, detail="full")
        assert llm.requests
    assert plan["backends"] == {"manager": "llm", "contractors": "offline"}
    assert plan["cost"]["llm_calls"] >= 1 and plan["cost"]["fallbacks"] >= 1
    assert plan["apis"]


@pytest.mark.parametrize(
    "arguments, said",
    [
        ({"needs": [f"need {i}" for i in range(13)]}, "needs: at most 12 needs"),
        ({"kind": "haggle"}, "kind: 'haggle' is not allowed; use one of"),
    ],
)
async def test_arguments_that_fail_the_schema_are_told_as_what_to_fix_not_as_pydantic_s_report(
    settings, arguments, said
):
    async with connect(settings) as client:
        result = await client.call_tool("recommend_apis", {"requirement": REQUIREMENT, **arguments})
    text = error_text(result)
    assert result.is_error and said in text
    assert "pydantic" not in text and "validation error for" not in text and "type=" not in text
