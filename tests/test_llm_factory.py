"""Choosing a backend per role: offline by default, an LLM where asked, errors that say what to set."""

import pytest

from tender.agents.context import RunContext
from tender.agents.reasoners.embedded import EmbeddedReasoner
from tender.agents.reasoners.factory import LLMNotConfigured, LLMSettings, build_reasoners
from tender.agents.reasoners.llm import LLMReasoner
from tender.agents.tasks import DecomposeTask
from tender.catalog import TenderError
from tests.llm_fake_server import Answer, FakeLLMServer

ENDPOINT = LLMSettings(base_url="http://127.0.0.1:8080/v1", model="smollm2", max_in_flight=6)


def test_offline_is_the_default_for_both_roles(embedder):
    manager, contractors = build_reasoners()

    assert isinstance(manager, EmbeddedReasoner) and contractors is manager
    assert not manager.uses_llm


def test_an_llm_manager_can_work_with_offline_contractors(embedder):
    manager, contractors = build_reasoners(manager_backend="llm", llm=ENDPOINT)

    assert isinstance(manager, LLMReasoner) and isinstance(contractors, EmbeddedReasoner)
    assert manager.fallback is contractors  # a step the LLM cannot answer goes to the embedded reasoner
    assert manager.model == "smollm2" and manager.base_url == "http://127.0.0.1:8080/v1"


def test_both_roles_on_the_llm_share_one_reasoner_and_its_limit(embedder, tmp_path):
    settings = LLMSettings(base_url="http://h/v1", model="m", cache_path=tmp_path / "cache.db", max_in_flight=6)

    manager, contractors = build_reasoners("llm", "llm", settings)

    assert manager is contractors and contractors.uses_llm and contractors.max_in_flight == 6
    assert contractors.cache is not None and contractors.cache.path == tmp_path / "cache.db"
    assert isinstance(contractors.fallback, EmbeddedReasoner)


def test_no_cache_without_a_path_or_with_no_cache(embedder, tmp_path):
    off = LLMSettings(base_url="http://h/v1", model="m", cache_path=tmp_path / "cache.db", use_cache=False)

    assert build_reasoners("llm", llm=off)[0].cache is None
    assert build_reasoners("llm", llm=LLMSettings(base_url="http://h/v1", model="m"))[0].cache is None


def test_an_llm_without_an_endpoint_says_which_variable_or_flag_to_set(embedder):
    with pytest.raises(LLMNotConfigured, match="set TENDER_LLM_BASE_URL or pass --llm-base-url"):
        build_reasoners(contractor_backend="llm")
    with pytest.raises(LLMNotConfigured, match="set TENDER_LLM_MODEL or pass --llm-model"):
        build_reasoners(manager_backend="llm", llm=LLMSettings(base_url="http://h/v1"))


def test_an_unknown_backend_lists_the_known_ones(embedder):
    with pytest.raises(TenderError, match="Unknown manager backend 'gpt'; use one of: offline, llm"):
        build_reasoners(manager_backend="gpt")


def test_the_token_budget_setting_applies_where_the_run_sets_none(embedder):
    decomposition = {"functions": [{"id": "f1", "name": "map", "description": "a map"}]}
    with FakeLLMServer() as server:
        server.enqueue(*[Answer(decomposition, prompt_tokens=100, completion_tokens=20)] * 3)
        settings = LLMSettings(base_url=server.url, model="m", max_tokens_per_request=100, timeout_s=1, max_retries=0)
        manager, _ = build_reasoners("llm", llm=settings)
        task = DecomposeTask(requirement="A map of cafés")

        spent = RunContext()
        manager.run(task, spent)
        manager.run(task, spent)  # past 100 tokens: the embedded reasoner answers
        generous = RunContext(max_tokens=10_000)  # a run's own budget wins
        manager.run(task, generous)
        manager.run(task, generous)

    assert len(server.requests) == 3  # one for the first run, two for the second
    assert spent.cost.fallbacks == 1 and generous.cost.fallbacks == 0
    assert "Token budget of 100 per request reached: the remaining steps use the offline reasoner." in spent.notes


def test_the_cli_passes_the_timeout_and_the_calls_in_flight_to_the_llm_reasoner(catalog, tmp_path):
    from tender.cli import make_tender
    from tender.settings import Settings

    settings = Settings(catalog_path=tmp_path / "catalog.db", llm_base_url="http://h/v1", llm_model="m")
    tender = make_tender(
        settings,
        catalog,
        {"manager_backend": "llm", "contractor_backend": "llm", "llm_timeout": 300.0, "llm_in_flight": 1},
    )

    assert tender.manager_reasoner.timeout_s == 300 and tender.manager_reasoner.max_in_flight == 1
