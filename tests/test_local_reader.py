"""The local reader (issue 61): where the caller states no needs, a small language model in this process reads the
request into needs, each with the form that serves it, and the parts that are context; a reading past its deadline
or not of the schema's shape is the rules', with a note; the caller's needs and kind still win; the plan says which
reader read the request. A scripted stand-in takes the model's place (the same small interface, local_model.TextModel);
tests/test_local_model.py runs the real one where it is installed."""

import json
import time
from importlib import resources
from pathlib import Path

import pytest

from tender.agents.context import RunContext
from tender.agents.reasoners.embedded import EmbeddedReasoner
from tender.agents.reasoners.factory import build_reasoners
from tender.agents.reasoners.local import (
    LocalReader,
    Reading,
    answer_schema,
    examples,
    messages_for,
    shared_messages,
)
from tender.agents.request import Request
from tender.agents.service import Tender
from tender.agents.tasks import DecomposeTask
from tender.answers.render import plan_text
from tender.catalog import Catalog
from tender.catalog.build import build_from_sources
from tender.catalog.sources.base import Loaded, SourceInfo
from tests.scripted import ScriptedModel
from tests.test_assistant_forms import ITEMS

MIXED = "let Claude read my Google Calendar. Our club site needs weather forecasts"
READING = {"needs": ["read Google Calendar events", "weather forecasts for a city"], "context": ["our club site"]}


@pytest.fixture(scope="module")
def catalog(tmp_path_factory, embedder):
    path = tmp_path_factory.mktemp("mixed") / "mixed.db"
    build_from_sources([Loaded(info=SourceInfo(kind="fixture", name="fixture"), apis=ITEMS)], path, embedder)
    return Catalog(path, embedder=embedder)


def tender_reading_with(catalog, model, deadline_s: float | None = None) -> Tender:
    manager, contractors = build_reasoners(text_model=model)
    if deadline_s is not None:
        manager.deadline_s = deadline_s  # type: ignore[attr-defined]
    return Tender(catalog, manager=manager, contractors=contractors)


def test_the_model_s_needs_are_the_plan_s_steps_each_in_the_form_its_words_say(catalog):
    model = ScriptedModel(json.dumps(READING))
    plan = tender_reading_with(catalog, model).recommend(Request.create(MIXED)).plan
    assert [s.function for s in plan.steps] == ["read Google Calendar events", "weather forecasts for a city"]
    assert [s.form for s in plan.steps] == ["mcp_server", "web_api"]  # "Claude" in the first sentence, "site" next
    assert plan.context == ["our club site"]
    assert plan.read_by == "the local model Scripted-1B"
    assert not any("rules read it" in note for note in plan.notes)
    kinds = {catalog.get_api(a.api_id).kind for a in plan.apis}
    assert kinds == {"server", "api"}, [a.name for a in plan.apis]
    text = plan_text(plan)
    assert "Read by the local model Scripted-1B; context, not needs: our club site" in text


def test_the_model_is_asked_for_the_request_after_the_shared_instructions_and_examples(catalog):
    model = ScriptedModel(json.dumps(READING))
    tender_reading_with(catalog, model).recommend(Request.create(MIXED))
    messages, schema, _, deadline = model.asked[0]
    assert messages[: len(shared_messages())] == shared_messages()
    assert messages[-1] == {"role": "user", "content": MIXED}
    assert schema == answer_schema() and deadline is not None


def test_past_its_deadline_the_rules_read_the_request_and_the_plan_says_why(catalog):
    model = ScriptedModel(json.dumps(READING))
    plan = tender_reading_with(catalog, model, deadline_s=0.0).recommend(Request.create(MIXED)).plan
    rules = EmbeddedReasoner().run(DecomposeTask(requirement=MIXED), RunContext())
    assert [s.function for s in plan.steps] == [f.description for f in rules.functions]
    assert plan.read_by == "rules"
    assert any("not done within its deadline" in n and "rules read it" in n for n in plan.notes), plan.notes


def test_the_request_s_own_deadline_bounds_the_reading():
    model = ScriptedModel(json.dumps(READING))
    context = RunContext(deadline=time.monotonic() - 1.0)  # the request's time is spent already
    reading = LocalReader(model, EmbeddedReasoner()).run(DecomposeTask(requirement=MIXED), context)
    assert model.asked[0][3] == context.deadline
    assert reading.read_by == "rules" and context.notes


@pytest.mark.parametrize(
    "answer, said",
    [
        ('{"needs": ["read my calendar"', "not of the expected shape"),  # cut short
        ('{"needs": ["read my calendar"], "for": "assistant"}', "not of the expected shape"),  # no such key
        ('{"needs": "read my calendar"}', "not of the expected shape"),
        ('{"needs": [], "context": ["hello"]}', "found no need"),
        ("I cannot help with that.", "not of the expected shape"),
    ],
)
def test_an_answer_that_cannot_be_used_falls_back_to_the_rules_with_a_note(catalog, answer, said):
    plan = tender_reading_with(catalog, ScriptedModel(answer)).recommend(Request.create(MIXED)).plan
    assert plan.read_by == "rules" and plan.steps
    assert any(said in n and "Scripted-1B" in n for n in plan.notes), plan.notes


def test_the_caller_s_needs_are_not_read_again_and_its_kind_wins(catalog):
    model = ScriptedModel(json.dumps(READING))
    tender = tender_reading_with(catalog, model)
    given = tender.recommend(Request.create(MIXED, needs=["Google Calendar events"])).plan
    assert model.asked == [] and given.read_by == "the caller"
    assert [s.function for s in given.steps] == ["Google Calendar events"]
    kind = tender.recommend(Request.create(MIXED, kind="web_api")).plan
    assert kind.read_by == "the local model Scripted-1B"
    assert [s.form for s in kind.steps] == ["web_api", "web_api"]


def test_repeated_needs_are_one_step_and_a_showing_need_depends_on_what_it_shows():
    answer = {"needs": ["show the quakes on a map", "fetch earthquake data", "Fetch earthquake data."]}
    reading = LocalReader(ScriptedModel(json.dumps(answer)), EmbeddedReasoner()).run(
        DecomposeTask(requirement="a site that fetches recent earthquakes and shows them on a map"), RunContext()
    )
    assert [f.description for f in reading.functions] == ["fetch earthquake data", "show the quakes on a map"]
    assert reading.functions[1].depends_on == ["f1"]


def test_needs_come_back_in_the_order_the_request_says_them():
    answer = {"needs": ["post the summary to Slack", "stock prices", "news about the stocks", "a chart"]}
    requirement = "our dashboard shows stock prices and related news, and Claude posts a summary to Slack"
    reading = LocalReader(ScriptedModel(json.dumps(answer)), EmbeddedReasoner()).run(
        DecomposeTask(requirement=requirement), RunContext()
    )
    assert [f.description for f in reading.functions] == [
        "stock prices",
        "news about the stocks",
        "post the summary to Slack",  # "posts": its word's first letters
        "a chart",  # not in the request's words: last
    ]


def test_without_a_model_the_plan_says_rules_read_the_request(catalog):
    plan = Tender(catalog).recommend(Request.create(MIXED)).plan
    assert plan.read_by == "rules" and "Read by rules" in plan_text(plan)
    manager, _ = build_reasoners()
    assert isinstance(manager, EmbeddedReasoner)


def test_the_other_steps_are_the_rules_and_the_reader_is_offline():
    model = ScriptedModel(json.dumps(READING))
    manager, contractors = build_reasoners(text_model=model)
    assert isinstance(manager, LocalReader) and isinstance(contractors, EmbeddedReasoner)
    assert manager.name == "offline" and not manager.uses_llm


def test_a_long_request_is_clipped_before_the_model_reads_it():
    text = messages_for("word " * 2000)[-1]["content"]
    assert len(text) <= 3000 and text.endswith("…")


def test_the_answer_schema_asks_for_needs_allows_context_and_no_other_key():
    schema = answer_schema()
    assert list(schema["properties"]) == ["needs", "context"] and schema["required"] == ["needs"]
    assert schema["additionalProperties"] is False
    assert all(p["items"]["maxLength"] <= 100 for p in schema["properties"].values())


SUITES = Path(str(resources.files("tender") / "evaluation" / "suites"))


def test_the_worked_examples_are_answers_of_the_schema_and_from_no_suite():
    suites = " ".join(" ".join(p.read_text(encoding="utf-8").lower().split()) for p in SUITES.rglob("*.jsonl"))
    assert len(examples()) >= 4
    for request, answer in examples():
        Reading.model_validate_json(answer)
        assert " ".join(request.lower().split()) not in suites, request
