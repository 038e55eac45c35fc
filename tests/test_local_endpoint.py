"""TENDER_LLM_BASE_URL=local: the LLM backend's chat completions answered in this process by the local model, under
the same client, so the LLM steps, their schema and their token counts behave as with a server."""

import json

import pytest

from tender.agents.context import RunContext
from tender.agents.reasoners.factory import LLMNotConfigured, LLMSettings, build_llm_reasoner
from tender.agents.reasoners.local_endpoint import schema_of
from tender.agents.reasoners.prompts import answer_schema
from tender.agents.tasks import DecomposeTask, Decomposition
from tests.llm_fake_server import ScriptedFallback
from tests.scripted import ScriptedModel

DECOMPOSITION = {
    "functions": [
        {"id": "f1", "name": "stock prices", "description": "current stock prices", "depends_on": []},
        {"id": "f2", "name": "news", "description": "news about the stocks", "depends_on": []},
    ]
}


def local_reasoner(model, **options):
    settings = LLMSettings(base_url="local", max_retries=0, timeout_s=5.0, **options)
    return build_llm_reasoner(settings, fallback=ScriptedFallback(), endpoint_model=model)


def test_a_step_is_answered_by_the_local_model_held_to_the_step_s_schema():
    model = ScriptedModel(json.dumps(DECOMPOSITION))
    context = RunContext()
    task = DecomposeTask(requirement="A dashboard of stock prices with the related news")

    output = local_reasoner(model).run(task, context)

    assert output == Decomposition.model_validate(DECOMPOSITION)
    ((messages, schema, _, deadline),) = model.asked
    assert "stock prices" in messages[-1]["content"]
    assert schema == answer_schema(task)
    assert deadline is not None  # the call's timeout bounds the generation


def test_the_tokens_counted_are_the_whole_prompt_as_a_server_bills_it():
    context = RunContext()
    answer = json.dumps(DECOMPOSITION)
    local_reasoner(ScriptedModel(answer)).run(DecomposeTask(requirement="stock news"), context)
    # the model's whole prompt (1,000 tokens), not the 40 it had not read before
    assert context.cost.tokens.input == 1000 and context.cost.tokens.output == len(answer.split())


def test_a_reply_past_the_call_s_timeout_falls_back_to_the_rules_with_a_note():
    fallback_task = DecomposeTask(requirement="stock news")
    context = RunContext()
    output = local_reasoner(ScriptedModel("", stopped="deadline")).run(fallback_task, context)
    assert output == ScriptedFallback().outputs[DecomposeTask]
    assert context.cost.fallbacks == 1
    assert any("local model ran past" in note for note in context.notes)


def test_local_without_a_model_says_how_to_get_one():
    with pytest.raises(LLMNotConfigured, match="tender models pull"):
        build_llm_reasoner(LLMSettings(base_url="local"), fallback=ScriptedFallback(), endpoint_model=None)


@pytest.mark.parametrize(
    "response_format, schema",
    [
        ({"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "array"}}}, {"type": "array"}),
        ({"type": "json_object", "schema": {"type": "string"}}, {"type": "string"}),
        ({"type": "json_object"}, {"type": "object"}),
        (None, {"type": "object"}),
    ],
)
def test_the_schema_is_read_from_either_way_of_asking_for_json(response_format, schema):
    assert schema_of(response_format) == schema
