"""A misbehaving LLM endpoint: whatever it does, the step falls back with a note that says what happened,
and a request with a deadline hangs up on the endpoint at that deadline. What is asserted is what the client did
(the fake endpoint counts the replies it hung up on, and those it waited out) and what it said, never how long
it took: the endpoint's hangs and trickles last longer than the deadline and shorter than the client's own
timeout, so that only a client keeping the deadline hangs up on them."""

import pytest

from tender.agents.context import RunContext
from tender.agents.reasoners.embedded import EmbeddedReasoner
from tender.agents.reasoners.llm import LLMReasoner
from tender.agents.request import Request
from tender.agents.service import Tender
from tender.agents.tasks import DecomposeTask
from tests.llm_fake_server import Answer, Body, FakeLLMServer, Hang, Trickle, llm_reasoner
from tests.llm_fake_server import fallback, server  # noqa: F401 (fixtures)

DECOMPOSITION = {"functions": [{"id": "f1", "name": "map", "description": "show restaurants on a map"}]}
TASK = DecomposeTask(requirement="A map of nearby restaurants")
REQUIREMENT = "A site that shows nearby restaurants on a map with their reviews"


def reasoner(server, fallback, **options) -> LLMReasoner:
    return llm_reasoner(server, fallback, **{"timeout_s": 2, **options})


@pytest.mark.parametrize(
    "body",
    [
        Body("<html><body><h1>502 Bad Gateway</h1></body></html>"),  # a proxy's page
        Body("garbage{", content_type="application/json"),
        Body(
            '{"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": []}',
            content_type="application/json",
        ),
    ],
    ids=["html", "garbage-as-json", "no-choices"],
)
def test_an_http_200_that_is_no_chat_completion_falls_back_with_a_note(server, fallback, body):
    server.enqueue(body)
    context = RunContext()

    output = reasoner(server, fallback).run(TASK, context)

    assert output == fallback.outputs[DecomposeTask]
    (note,) = context.notes
    assert note.startswith("manager, decompose: the LLM endpoint failed (HTTP 200 with ")
    assert "the test-scripted-fallback reasoner answered this step" in note
    assert "repaired" not in note  # no repair was tried
    assert context.cost.fallbacks == 1


def test_the_still_invalid_note_comes_only_after_a_repair(server, fallback):
    server.enqueue(Answer("not json"), Answer("still not json"))
    context = RunContext()

    reasoner(server, fallback).run(TASK, context)

    assert len(server.requests) == 2
    assert "sent it back once to be repaired" in context.notes[0]
    assert "the repaired answer was still invalid" in context.notes[1]


def test_a_trickled_reply_is_cut_at_the_timeout_not_at_each_read(server, fallback):
    server.enqueue(Trickle(DECOMPOSITION, interval_s=0.2))  # a byte every 0.2 s: about 80 s for the whole body
    context = RunContext()

    output = reasoner(server, fallback, timeout_s=1).run(TASK, context)

    assert output == fallback.outputs[DecomposeTask]  # read a byte at a time to its end, it would be the answer
    assert "no answer within 1 s" in context.notes[0]
    assert server.settled() and (server.abandoned, server.outlasted) == (1, 0)


def test_a_request_deadline_holds_against_a_hanging_endpoint(server, fallback):
    # Each hang outlasts the deadline (1.5 s) but not the client's timeout (30 s): only the deadline ends it early.
    server.enqueue(Hang(20), Hang(20), Hang(20), Hang(20))
    llm = reasoner(server, fallback, timeout_s=30, max_retries=3)
    context = RunContext(deadline_s=1.5)

    first = llm.run(TASK, context)
    asked = len(server.requests)
    later = llm.run(TASK, context)

    assert first == later == fallback.outputs[DecomposeTask]
    assert server.settled() and server.abandoned == asked >= 1 and server.outlasted == 0  # hung up at the deadline
    assert len(server.requests) == asked  # past the deadline the endpoint is not asked again
    assert "the request's deadline of 1.5 s passed" in context.notes[0]
    assert (
        "The request's deadline of 1.5 s passed: the remaining steps use the test-scripted-fallback reasoner."
        in context.notes
    )


def test_a_whole_run_with_a_deadline_returns_a_plan_whatever_the_endpoint_does(catalog, embedder):
    offline = EmbeddedReasoner()
    # Every reply trickled over about 19 s (374 bytes): within the client's timeout (60 s), past the deadline (2 s).
    slow = Trickle(DECOMPOSITION, interval_s=0.05)
    with FakeLLMServer(respond=lambda body: slow) as server:
        llm = LLMReasoner(base_url=server.url, model="fake", fallback=offline, timeout_s=60, max_retries=3)
        run = Tender(catalog, manager=llm, contractors=llm).recommend(
            Request.create(REQUIREMENT), RunContext(deadline_s=2)
        )
        assert server.settled()

    assert run.plan.apis
    assert any("deadline of 2 s passed" in note for note in run.plan.notes)
    assert server.abandoned >= 1 and server.outlasted == 0  # no reply was waited for past the deadline


def test_contexts_can_share_one_deadline():
    first = RunContext(deadline_s=30)
    second = RunContext(deadline=first.deadline)

    assert second.deadline == first.deadline and 0 < second.remaining_s() <= 30
    assert not second.past_deadline() and RunContext().remaining_s() is None
    assert RunContext(deadline_s=0).past_deadline()


# -- an empty plan says why ------------------------------------------------------------------------------
def test_a_plan_with_every_api_excluded_is_empty_and_says_why(catalog):
    request = Request.create(REQUIREMENT, constraints={"excluded_apis": catalog.api_ids()})

    plan = Tender(catalog).recommend(request).plan

    assert plan.apis == []
    assert any("excluded" in note for note in plan.notes), plan.notes


def test_a_plan_with_every_category_excluded_is_empty_and_has_a_note(catalog):
    request = Request.create(REQUIREMENT, constraints={"excluded_categories": [c.name for c in catalog.categories()]})

    plan = Tender(catalog).recommend(request).plan

    assert plan.apis == [] and plan.notes
