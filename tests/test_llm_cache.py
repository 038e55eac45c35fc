"""The response cache: an identical request is answered from SQLite, without HTTP, and still counted."""

from tender.agents.context import RunContext
from tender.agents.reasoners.cache import Completion, ResponseCache
from tender.agents.reasoners.factory import LLMSettings, build_llm_reasoner
from tender.agents.reasoners.llm import LLMReasoner
from tender.agents.tasks import DecomposeTask, Decomposition
from tests.llm_fake_server import Answer, ScriptedFallback, llm_reasoner
from tests.llm_fake_server import server  # noqa: F401 (fixture)

DECOMPOSITION = {"functions": [{"id": "f1", "name": "map", "description": "show restaurants on a map"}]}
TASK = DecomposeTask(requirement="A map of nearby restaurants")


def reasoner(server, cache, model="fake-model") -> LLMReasoner:
    return llm_reasoner(server, cache=cache, model=model)


def test_a_second_identical_call_makes_no_http_request(server, tmp_path):
    server.enqueue(Answer(DECOMPOSITION, prompt_tokens=250, completion_tokens=30))
    llm = reasoner(server, ResponseCache(tmp_path / "cache.db"))
    first, second = RunContext(), RunContext()

    assert llm.run(TASK, first) == llm.run(TASK, second) == Decomposition.model_validate(DECOMPOSITION)

    assert len(server.requests) == 1
    assert (first.cost.cache_hits, second.cost.cache_hits) == (0, 1)
    # A cached reply still counts what the step needed, so an evaluation reports the same tokens twice.
    assert second.cost.tokens == first.cost.tokens and second.cost.tokens.input == 250
    assert second.cost.llm_calls == 1


def test_the_cache_outlives_the_process(server, tmp_path):
    server.enqueue(Answer(DECOMPOSITION))
    reasoner(server, ResponseCache(tmp_path / "cache.db")).run(TASK, RunContext())

    later = RunContext()
    reasoner(server, ResponseCache(tmp_path / "cache.db")).run(TASK, later)

    assert len(server.requests) == 1 and later.cost.cache_hits == 1


def test_the_model_and_the_messages_are_part_of_the_key(server, tmp_path):
    cache = ResponseCache(tmp_path / "cache.db")
    server.enqueue(Answer(DECOMPOSITION), Answer(DECOMPOSITION), Answer(DECOMPOSITION))

    reasoner(server, cache).run(TASK, RunContext())
    reasoner(server, cache, model="another-model").run(TASK, RunContext())
    reasoner(server, cache).run(DecomposeTask(requirement="A map of nearby cafés"), RunContext())

    assert len(server.requests) == 3 and len(cache) == 3


def test_an_invalid_answer_is_never_cached_but_its_valid_repair_is(server, tmp_path):
    server.enqueue(Answer("not json"), Answer(DECOMPOSITION), Answer(DECOMPOSITION))
    cache = ResponseCache(tmp_path / "cache.db")
    llm = reasoner(server, cache)
    first, again = RunContext(), RunContext()

    llm.run(TASK, first)
    assert len(server.requests) == 2 and len(cache) == 1  # the repair's reply only
    llm.run(TASK, again)  # the first question is asked anew, not answered by the invalid reply

    assert len(server.requests) == 3
    assert again.notes == [] and again.cost.cache_hits == 0


def test_an_invalid_answer_found_in_the_cache_is_dropped(server, tmp_path):
    server.enqueue(Answer(DECOMPOSITION), Answer(DECOMPOSITION), Answer(DECOMPOSITION))
    cache = ResponseCache(tmp_path / "cache.db")
    llm = reasoner(server, cache)
    llm.run(TASK, RunContext())
    # As an older Tender left it: the first question's reply, invalid.
    cache.put({"base_url": llm.base_url, **server.requests[0]}, Completion("not json", 10, 2))

    replayed = RunContext()
    assert llm.run(TASK, replayed) == Decomposition.model_validate(DECOMPOSITION)  # repaired by the server
    assert replayed.cost.cache_hits == 1 and len(server.requests) == 2
    later = RunContext()
    llm.run(TASK, later)  # the invalid reply is gone: the first question goes to the server again
    assert later.notes == [] and later.cost.cache_hits == 0 and len(server.requests) == 3


def test_no_cache_asks_the_server_every_time(server, tmp_path):
    server.enqueue(Answer(DECOMPOSITION), Answer(DECOMPOSITION))
    settings = LLMSettings(
        base_url=server.url,
        model="fake-model",
        cache_path=tmp_path / "cache.db",
        use_cache=False,
        timeout_s=1,
        max_retries=0,
    )
    llm = build_llm_reasoner(settings, fallback=ScriptedFallback())

    llm.run(TASK, RunContext())
    llm.run(TASK, RunContext())

    assert len(server.requests) == 2
    assert not (tmp_path / "cache.db").exists()


def test_keys_do_not_depend_on_dict_order(tmp_path):
    cache = ResponseCache(tmp_path / "cache.db")
    cache.put({"model": "m", "messages": [{"role": "user", "content": "hi"}], "temperature": 0}, Completion("{}", 3, 1))

    assert cache.get({"temperature": 0, "messages": [{"content": "hi", "role": "user"}], "model": "m"}) == Completion(
        "{}", 3, 1
    )
    assert cache.get({"temperature": 0.5, "messages": [{"content": "hi", "role": "user"}], "model": "m"}) is None
