"""The readable plan names the awarded APIs and, below them, the best bids that were not selected."""

from tender.agents.plan import PlanStep, StepStatus
from tender.agents.request import Constraints, Request
from tender.agents.service import Tender
from tender.catalog import Catalog
from tender.answers.render import plan_text
from tests.scripted import keep_everything


def test_the_readable_plan_lists_runners_up_best_first_without_the_selected(catalog_path, embedder):
    tender = Tender(Catalog(catalog_path, embedder=embedder), scorer=keep_everything())
    run = tender.recommend(
        Request.create(
            "Show nearby restaurants on a map with their reviews and photos.", constraints=Constraints(max_apis=1)
        )
    )
    chosen = {api.api_id for api in run.plan.apis}
    bids = {}
    for bid in run.transcript.of_kind("propose"):
        if bid.api_id not in chosen:
            bids[bid.api_id] = max(bids.get(bid.api_id, 0.0), bid.score)
    assert len(chosen) == 1 and bids

    text = plan_text(run.plan, run.transcript, runners_up=3)

    listed = text.split("Also bid, not selected")[1].splitlines()[1:4]
    best = sorted(bids.items(), key=lambda item: (-item[1], item[0]))[:3]
    assert [f"(id {api_id}) score {score:.2f}" in line for line, (api_id, score) in zip(listed, best)] == [True] * len(
        best
    )
    assert not any(f"(id {api_id})" in "\n".join(listed) for api_id in chosen)


def test_without_a_transcript_or_other_bids_there_is_no_runners_up_section(catalog_path, embedder):
    run = Tender(Catalog(catalog_path, embedder=embedder)).recommend(Request.create("a map of places"))
    assert "Also bid" not in plan_text(run.plan)


def test_an_unserved_step_says_why_under_its_function(catalog_path, embedder):
    run = Tender(Catalog(catalog_path, embedder=embedder)).recommend(Request.create("a map of places"))
    reason = "no credible bid for 'weather': the best, Weather Channel at 0.08, fell short"
    run.plan.steps.append(PlanStep(id="f9", function="weather", status=StepStatus.unserved, reason=reason))

    text = plan_text(run.plan, run.transcript)

    step = text.split("f9 [unserved] weather")[1].splitlines()
    assert step[1].strip() == f"no API: {reason}"
