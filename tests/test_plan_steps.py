"""How the plan's steps read the selection: which API serves each step, and why a step is left unserved."""

from tender.agents.plan import PlanStep, StepStatus
from tender.agents.outcome import Outcome, fill_steps
from tests.proposals import propose

NAMES = {1: "Maps", 2: "Reviews"}


def outcome(bid_of_maps_for_reviews: float) -> Outcome:
    steps = [PlanStep(id="f1", function="show places on a map"), PlanStep(id="f2", function="their reviews")]
    proposals = [
        propose(1, "f1", 0.9, "Maps"),
        propose(1, "f2", bid_of_maps_for_reviews, "Maps"),
        propose(2, "f2", 0.95, "Reviews"),
    ]
    return Outcome(steps=steps, final=[1], proposals=proposals, awards={1: "f1"})


def test_a_step_the_chosen_apis_already_serve_is_shown_served_by_them():
    result = outcome(0.8)  # the selection left Reviews out because Maps already covers the step
    fill_steps(result, {1: result.proposals[0]}, NAMES)
    reviews = result.steps[1]
    assert reviews.status == StepStatus.awarded
    assert [a.api_name for a in reviews.awarded] == ["Maps"] and reviews.awarded[0].score == 0.8
    assert "Chosen for f1" in reviews.awarded[0].rationale


def test_a_step_the_chosen_apis_do_not_serve_is_unserved_with_its_best_bid():
    result = outcome(0.1)
    fill_steps(result, {1: result.proposals[0]}, NAMES)
    reviews = result.steps[1]
    assert reviews.status == StepStatus.unserved and not reviews.awarded
    assert "Reviews" in (reviews.reason or "")
