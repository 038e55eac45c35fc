"""Two operations of one API (or tools of one MCP server) chosen for the same step are one answer twice: the
plan keeps the better bid. Items of different providers, and siblings serving different steps, all stay."""

from tender.agents.messages import Propose
from tender.agents.siblings import drop_siblings
from tender.catalog import Api
from tests.proposals import propose

ITEMS = {
    1: Api(id=1, name="SendPost", provider="D7SMS", kind="operation", categories=["Messages"]),
    2: Api(id=2, name="SendbatchPost", provider="D7SMS", kind="operation", categories=["Batch"]),
    3: Api(id=3, name="send-an-sms", provider="SMS API", kind="operation"),
    4: Api(id=4, name="BalanceGet", provider="D7SMS", kind="operation"),
    5: Api(id=5, name="Twilio"),
}


def bid(api_id, function_id, score):
    return Propose(
        sender=f"api:{api_id}",
        receiver="manager",
        task_id="t1",
        api_id=api_id,
        api_name=ITEMS[api_id].name,
        score=score,
        rationale="r",
        function_id=function_id,
    )


PROPOSALS = [bid(1, "f1", 0.40), bid(2, "f1", 0.20), bid(3, "f1", 0.23), bid(4, "f2", 0.10), bid(5, "f1", 0.3)]


def test_the_better_of_two_operations_of_one_api_for_the_same_step_is_kept():
    assert drop_siblings([2, 1, 3], PROPOSALS, ITEMS.__getitem__) == [1, 3]


def test_siblings_serving_different_steps_and_apis_of_their_own_all_stay():
    assert drop_siblings([1, 4, 5, 3], PROPOSALS, ITEMS.__getitem__) == [1, 4, 5, 3]


def test_a_sibling_that_alone_carries_a_required_category_stays():
    assert drop_siblings([1, 2], PROPOSALS, ITEMS.__getitem__, required_categories=["Batch"]) == [1, 2]


def test_operations_of_two_apis_named_by_http_method_are_no_near_duplicates():
    from tender.agents.reasoners.embedded import drop_near_duplicates

    # An OpenAPI operation without an operationId is named by its method and path: "GET" says nothing of the job.
    weather = propose(1, "f1", 0.19, name="GET /timeline/{location} (Visual Crossing Weather API)")
    uv = propose(2, "f1", 0.03, name="GET /uv (OpenUV - Global Real-Time UV Index Forecast API)")
    assert drop_near_duplicates([2, 1], [weather, uv]) == [2, 1]
    # The rule still reads a name's first word: Twilio SMS beside Twilio for the same function is one too many.
    twilio, sms = propose(3, "f1", 0.5, name="Twilio"), propose(4, "f1", 0.4, name="Twilio SMS")
    assert drop_near_duplicates([3, 4], [twilio, sms]) == [3]
