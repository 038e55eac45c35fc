"""Choosing a backend per role: offline by default, an LLM where asked, errors that say what to set."""

import pytest

from agents.reasoners.embedded import EmbeddedReasoner
from agents.reasoners.factory import LLMNotConfigured, LLMSettings, build_reasoners
from agents.reasoners.llm import LLMReasoner
from catalog import TenderError

ENDPOINT = LLMSettings(base_url="http://127.0.0.1:8080/v1", model="smollm2", max_in_flight=6)


def test_offline_is_the_default_for_both_roles(embedder):
    manager, contractors = build_reasoners(embedder)

    assert isinstance(manager, EmbeddedReasoner) and contractors is manager
    assert not manager.uses_llm


def test_an_llm_manager_can_work_with_offline_contractors(embedder):
    manager, contractors = build_reasoners(embedder, manager_backend="llm", llm=ENDPOINT)

    assert isinstance(manager, LLMReasoner) and isinstance(contractors, EmbeddedReasoner)
    assert manager.fallback is contractors  # a step the LLM cannot answer goes to the embedded reasoner
    assert manager.model == "smollm2" and manager.base_url == "http://127.0.0.1:8080/v1"


def test_both_roles_on_the_llm_share_one_reasoner_and_its_limit(embedder, tmp_path):
    settings = LLMSettings(base_url="http://h/v1", model="m", cache_path=tmp_path / "cache.db", max_in_flight=6)

    manager, contractors = build_reasoners(embedder, "llm", "llm", settings)

    assert manager is contractors and contractors.uses_llm and contractors.max_in_flight == 6
    assert contractors.cache is not None and contractors.cache.path == tmp_path / "cache.db"
    assert isinstance(contractors.fallback, EmbeddedReasoner)


def test_no_cache_without_a_path_or_with_no_cache(embedder, tmp_path):
    off = LLMSettings(base_url="http://h/v1", model="m", cache_path=tmp_path / "cache.db", use_cache=False)

    assert build_reasoners(embedder, "llm", llm=off)[0].cache is None
    assert build_reasoners(embedder, "llm", llm=LLMSettings(base_url="http://h/v1", model="m"))[0].cache is None


def test_an_llm_without_an_endpoint_says_which_variable_or_flag_to_set(embedder):
    with pytest.raises(LLMNotConfigured, match="set TENDER_LLM_BASE_URL or pass --llm-base-url"):
        build_reasoners(embedder, contractor_backend="llm")
    with pytest.raises(LLMNotConfigured, match="set TENDER_LLM_MODEL or pass --llm-model"):
        build_reasoners(embedder, manager_backend="llm", llm=LLMSettings(base_url="http://h/v1"))


def test_an_unknown_backend_lists_the_known_ones(embedder):
    with pytest.raises(TenderError, match="Unknown manager backend 'gpt'; use one of: offline, llm"):
        build_reasoners(embedder, manager_backend="gpt")
