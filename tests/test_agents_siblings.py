"""Two operations of one API (or tools of one MCP server) chosen for the same step are one answer twice: the
plan keeps the better bid. Items of different providers, and siblings serving different steps, all stay."""

import pytest

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


# -- the description vote of an item with siblings ----------------------------------------------------------------
def test_near_alike_operations_of_one_api_do_not_split_its_description_vote():
    import math

    import numpy as np

    from tender.agents.manager import weighed
    from tender.catalog.records import Hit

    # Four "send an email" operations of one API, nearest to the need, and two tools of their own further off.
    similarities = {1: 0.60, 2: 0.60, 3: 0.59, 4: 0.58, 5: 0.55, 6: 0.50}
    provider = {1: "Postmark", 2: "Postmark", 3: "Postmark", 4: "Postmark", 5: "SMS API", 6: "Chat"}
    hits = [Hit(kind="api", id=i, score=s) for i, s in similarities.items()]
    around = weighed(hits, temperature=0.05, provider_of=provider.__getitem__)
    read_alone = weighed(hits, temperature=0.05)

    weight = {i: math.exp((s - 0.60) / 0.05) for i, s in similarities.items()}
    counted_once = weight[1] + weight[5] + weight[6]  # the API by its nearest operation, the tools as they are
    best = around.vote(np.array([0.60]))
    # The API's nearest operation votes as one such operation alone would ...
    assert best == pytest.approx(weight[1] / counted_once, abs=1e-4)
    assert best > 2 * read_alone.vote(np.array([0.60]))  # ... where its siblings would leave it about a quarter
    # ... a farther sibling votes less, by its own weight; the lone tools are no longer outweighed by the API's count.
    assert around.vote(np.array([0.58])) == pytest.approx(weight[4] / counted_once, abs=1e-4)
    assert around.vote(np.array([0.55])) > 2 * read_alone.vote(np.array([0.55]))


def test_a_catalogue_whose_items_are_their_own_providers_votes_as_before():

    from tender.agents.manager import weighed
    from tender.catalog.records import Hit

    hits = [Hit(kind="api", id=i, score=s) for i, s in enumerate([0.7, 0.65, 0.6])]
    alone = weighed(hits, temperature=0.05, provider_of=lambda i: f"api {i}")
    plain = weighed(hits, temperature=0.05)
    assert alone == plain
