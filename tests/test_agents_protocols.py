"""The contract net, protocol by protocol: well-formed transcripts, bounded routing, determinism."""

import pytest

from tender.agents.context import Cancelled, RunContext
from tender.agents.messages import transcript_adapter
from tender.agents.protocols import PROTOCOLS
from tender.agents.request import Request
from tender.agents.service import Tender
from tender.catalog import Catalog
from tender.agents.tasks import BidTask
from tests.scripted import ScriptedReasoner

REQUIREMENT = "Show nearby restaurants on a map with their reviews, and send an SMS text message reminder."


# What the contractors bid is scripted, so that refitting the bid model never changes these tests: the map and
# review sites and the SMS API fit the requirement, a second map API a little.
BIDS = {"Google Maps": 0.9, "Yelp": 0.8, "Twilio": 0.75, "Zomato": 0.6, "Bing Maps": 0.3}
BIDS_IDS = {0, 3, 18, 4, 2}


@pytest.fixture
def reasoner(embedder):
    return ScriptedReasoner(embedder, bids=BIDS)


@pytest.fixture
def tender(catalog_path, embedder, reasoner):
    return Tender(Catalog(catalog_path, embedder=embedder), manager=reasoner, contractors=reasoner)


def run(tender, requirement=REQUIREMENT, **fields):
    return tender.recommend(Request.create(requirement, **fields))


@pytest.mark.parametrize("organisation", ["api", "category"])
@pytest.mark.parametrize("protocol", [p.name for p in PROTOCOLS.values() if p.contract_net])
def test_every_call_for_proposals_is_answered_by_each_contractor_it_reached(tender, protocol, organisation):
    result = run(tender, protocol=protocol, organisation=organisation, top_n=4)
    transcript = result.transcript
    cfps = transcript.of_kind("cfp")
    assert cfps
    for cfp in cfps:
        routing = next(r for r in transcript.routing if r.task_id == cfp.task_id)
        reached = {c.contractor for c in routing.contacted}
        answered = {m.sender for m in transcript.for_task(cfp.task_id) if m.kind in ("propose", "refuse")}
        assert answered == reached


@pytest.mark.parametrize("protocol", [p.name for p in PROTOCOLS.values() if p.contract_net])
def test_every_proposal_is_accepted_or_rejected_and_winners_inform(tender, protocol):
    transcript = run(tender, protocol=protocol).transcript
    decided = {(m.task_id, m.receiver, m.api_id) for m in transcript.messages if m.kind in ("accept", "reject")}
    proposals = transcript.of_kind("propose")
    assert proposals
    assert {(p.task_id, p.sender, p.api_id) for p in proposals} == decided
    accepted = {m.api_id for m in transcript.of_kind("accept")}
    assert accepted == {m.api_id for m in transcript.of_kind("inform")}


@pytest.mark.parametrize("protocol", list(PROTOCOLS))
def test_plan_is_well_formed(tender, protocol):
    result = run(tender, protocol=protocol)
    plan = result.plan
    assert plan.apis, "the fixture requirement has an obvious answer"
    assert [a.api_id for a in plan.apis] == plan.stages.final
    assert set(plan.stages.final) <= set(plan.stages.bidding)
    if protocol != "single-agent":
        assert plan.stages.category, "the manager mapped the functions to categories"
        # The bidding stage is what was proposed: no more, no less, and only by contractors scripted to bid.
        assert set(plan.stages.bidding) == {p.api_id for p in result.transcript.of_kind("propose")}
        assert set(plan.stages.bidding) <= BIDS_IDS
        # Best bid first, so that the APIs after the plan's are ranked by what they bid.
        best = {}
        for p in result.transcript.of_kind("propose"):
            best[p.api_id] = max(p.score, best.get(p.api_id, 0.0))
        assert [best[a] for a in plan.stages.bidding] == sorted(best.values(), reverse=True)
        assert plan.cost.messages > 0 and plan.cost.contractors_contacted > 0
    assert plan.cost.tokens.input == plan.cost.tokens.output == 0  # offline
    assert all(0 <= a.score <= 1 for a in plan.apis)
    step_ids = {s.id for s in plan.steps}
    assert all(set(s.depends_on) <= step_ids for s in plan.steps)
    assert all(a.steps for a in plan.apis)


def test_manager_led_finds_the_map_and_the_reviews(catalog_path, embedder):
    def bids(api: str, function: str) -> float | None:  # the map serves the map, the review sites the reviews
        if "review" in function:
            return {"Yelp": 0.8, "Zomato": 0.6, "Google Maps": 0.1}.get(api)
        return {"Google Maps": 0.9, "Bing Maps": 0.3, "Yelp": 0.2}.get(api)

    reasoner = ScriptedReasoner(bids=bids)
    tender = Tender(Catalog(catalog_path, embedder=embedder), manager=reasoner, contractors=reasoner)
    result = run(tender, "Show restaurants on a map, and read restaurant reviews and ratings.")
    plan = result.plan
    assert len(plan.steps) == 2
    assert {"Google Maps", "Yelp"} <= {a.name for a in plan.apis}
    # The reviews step was announced to the review sites, and they bid for it.
    reviews = plan.steps[1]
    asked = {
        api.name
        for task in reasoner.asked_for(BidTask)
        if task.cfp.function_id == reviews.id
        for api in task.knowledge.apis
    }
    assert {"Yelp", "Zomato"} <= asked
    assert {p.api_name for p in result.transcript.of_kind("propose") if p.function_id == reviews.id} >= {"Yelp"}


@pytest.mark.parametrize("organisation", ["api", "category"])
@pytest.mark.parametrize("protocol", [p.name for p in PROTOCOLS.values() if p.contract_net])
def test_routing_reaches_at_most_top_n_contractors_per_call(tender, protocol, organisation):
    transcript = run(tender, protocol=protocol, organisation=organisation, top_n=3).transcript
    assert transcript.routing
    for routing in transcript.routing:
        assert len(routing.contacted) <= 3
        assert routing.eligible >= len(routing.contacted)
        assert all(c.reason for c in routing.contacted)


def test_broadcast_reaches_every_eligible_contractor(tender):
    transcript = run(tender, protocol="contractor-led", routing="broadcast").transcript
    (routing,) = transcript.routing
    assert len(routing.contacted) == routing.eligible == 24


def test_contractors_named_in_the_requirement_are_reached_first(tender):
    transcript = run(tender, "Post Eventbrite events to a channel.", protocol="contractor-led", top_n=2).transcript
    assert transcript.routing[0].contacted[0].contractor == "api:20"
    assert transcript.routing[0].contacted[0].reason == "holds an item the requirement names"


def test_calls_for_proposals_stay_inside_the_announced_categories(tender):
    transcript = run(tender, protocol="manager-led").transcript
    for cfp in transcript.of_kind("cfp"):
        for proposal in (m for m in transcript.for_task(cfp.task_id) if m.kind == "propose"):
            api = tender.catalog.get_api(proposal.api_id)
            assert set(api.categories) & set(cfp.categories)


@pytest.mark.parametrize("protocol", list(PROTOCOLS))
def test_the_same_input_gives_the_same_output(protocol, catalog_path, embedder):
    # The embedded reasoner, not the scripted one: its own determinism is what is tested.
    first = run(Tender(Catalog(catalog_path, embedder=embedder)), protocol=protocol)
    again = run(Tender(Catalog(catalog_path, embedder=embedder)), protocol=protocol)
    assert first.plan.model_dump(exclude={"run_id", "latency_ms"}) == again.plan.model_dump(
        exclude={"run_id", "latency_ms"}
    )

    def messages(run):
        return [m.model_dump(exclude={"at_ms"}) for m in run.transcript.messages]

    assert messages(first) == messages(again)


def test_the_same_input_gives_the_same_output_in_another_process(catalog_path):
    # Python orders sets of strings differently in each process; no tie may be broken by that order.
    import json
    import os
    import subprocess
    import sys

    def volatile(value):
        if isinstance(value, dict):
            return {
                k: volatile(v) for k, v in value.items() if k not in {"run_id", "latency_ms", "at_ms", "elapsed_ms"}
            }
        return [volatile(v) for v in value] if isinstance(value, list) else value

    outputs = []
    for hash_seed in ("1", "2", "3"):
        env = {
            **os.environ,
            "TENDER_CATALOG": str(catalog_path),
            "TENDER_EMBEDDING_MODEL": "hashing",
            "PYTHONHASHSEED": hash_seed,
        }
        result = subprocess.run(
            [sys.executable, "-m", "tender", "recommend", REQUIREMENT, "--json"],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert result.returncode == 0, result.stderr
        outputs.append(volatile(json.loads(result.stdout)))
    assert outputs[0] == outputs[1] == outputs[2]


def test_category_candidates_come_in_the_same_order_in_every_process(catalog_path):
    # Their order reaches an LLM manager's prompt; categories with equal votes once came in set order.
    import os
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from tender.agents.manager import Manager\n"
        "from tender.agents.service import Tender\n"
        "from tender.agents.tasks import FunctionSpec\n"
        "from tender.catalog import Catalog, HashingEmbedder\n"
        "from tender.agents.manager import Negotiation\n"
        "from tender.agents.context import RunContext\n"
        "from tender.agents.request import Request\n"
        "tender = Tender(Catalog(sys.argv[1], embedder=HashingEmbedder(256)))\n"
        "pool, router = tender._directory('api')\n"
        "manager = Manager(tender.catalog, tender.ranker, tender.manager_reasoner, router, pool, tender.contractor_reasoner)\n"
        "negotiation = Negotiation(Request.create(sys.argv[2]), RunContext(), set())\n"
        "function = FunctionSpec(id='f1', name='map', description=sys.argv[2])\n"
        "task = manager._map_task(negotiation, function, manager.shortlist(negotiation, sys.argv[2]))\n"
        "print([c.name for c in task.candidates])\n"
    )
    orders = {
        subprocess.run(
            [sys.executable, "-c", script, str(catalog_path), REQUIREMENT],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
            timeout=120,
            check=True,
        ).stdout
        for seed in ("1", "2", "3", "4", "5")
    }
    assert len(orders) == 1, orders


def test_transcript_round_trips_through_json(tender):
    transcript = run(tender).transcript
    assert transcript_adapter.validate_json(transcript_adapter.dump_json(transcript)) == transcript


def test_a_cancelled_run_stops(tender):
    context = RunContext()
    context.cancel.set()
    with pytest.raises(Cancelled):
        tender.recommend(Request.create(REQUIREMENT), context)


def test_progress_is_reported_step_by_step(tender):
    seen = []
    context = RunContext(progress=lambda done, total, message: seen.append((done, total, message)))
    tender.recommend(Request.create(REQUIREMENT), context)
    assert len(seen) >= 3 and seen[-1][0] == seen[-1][1]
    assert any("announcing" in m for *_, m in seen)


def test_a_requirement_names_an_api_in_full_in_any_case_and_by_its_first_words_only_as_written():
    from tender.ranking.names import mentions

    assert mentions("Google Maps", "plot them on google maps") == 1.0
    assert mentions("Internet Archive", "search the Internet Archive") == 1.0
    assert mentions("Internet Archive", "books from the Internet") == 0.5
    # In lower case the first word is an ordinary word, as masking treats it.
    assert mentions("Internet Archive", "books from the internet") == 0.0
    # Short names are common words: only as written.
    assert mentions("Box", "a box of photos") == 0.0 and mentions("Box", "files in Box") == 1.0


def test_a_plan_lists_the_first_apis_of_its_mapped_categories_and_counts_them_all(tender, monkeypatch):
    """At a million items the mapped categories hold hundreds of thousands of APIs: a plan (and every stored run)
    listing them all cost more than the rest of the request."""
    from tender.agents import outcome

    monkeypatch.setattr(outcome, "CATEGORY_IDS", 2)
    plan = run(tender).plan
    assert len(plan.stages.category) == 2
    assert plan.stages.category_total is not None and plan.stages.category_total > 2
    assert plan.stages.sizes()["category"] == plan.stages.category_total
    assert plan.stages.capped(1).sizes()["category"] == plan.stages.category_total
