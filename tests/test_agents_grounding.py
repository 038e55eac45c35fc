"""A popular API bids for every function of a requirement on its usage history. Such a bid neither serves the
function (another API whose description matches it is chosen too) nor is the step the API is awarded for."""

from tender.agents.grounding import Grounding, award_bids
from tender.agents.reasoners.embedded import EmbeddedReasoner, Policy
from tender.agents.tasks import FunctionSpec, SelectTask
from tests.proposals import described, propose

MAPS, FLIGHTS = 370, 612
MONITOR = "monitor what people say about our brand on Twitter"

FUNCTIONS = [
    FunctionSpec(id="f1", name="map", description="show the destination on a map"),
    FunctionSpec(id="f2", name="flights", description="book flights"),
]


def bid(api_id, function_id, score, desc_function, lexical=0.0, function_vote=0.0, name=None):
    return propose(api_id, function_id, score, name, described(desc_function, function_vote, lexical))


def needs(*texts):
    """The functions f1, f2, ... of a requirement, by their texts."""
    return [FunctionSpec(id=f"f{i}", name=text.split()[0], description=text) for i, text in enumerate(texts, 1)]


def named_in_requirement(*proposals):
    """The requirement names these proposals' APIs (for one need or another)."""
    for p in proposals:
        p.evidence["named"] = 1.0


# Google Maps matches the map in description and words, and bids as high for the flights on its history alone;
# the flight API's description and words match 'book flights', but its own thin history drags its bid to 0.12.
PROPOSALS = [
    bid(MAPS, "f1", 0.38, desc_function=0.50, lexical=1.0, name="Google Maps"),
    bid(MAPS, "f2", 0.40, desc_function=0.09, name="Google Maps"),
    bid(FLIGHTS, "f2", 0.12, desc_function=0.50, lexical=0.51, function_vote=0.28, name="Flight Portal"),
]


def task(proposals=PROPOSALS):
    return SelectTask(requirement="A travel planner that books flights", functions=FUNCTIONS, proposals=proposals)


def test_a_bid_on_history_alone_is_not_grounded_and_one_on_the_api_s_own_text_is():
    grounded = Grounding(PROPOSALS)

    assert [grounded(p) for p in PROPOSALS] == [True, False, True]
    assert all(Grounding(PROPOSALS, margin=0.0)(p) for p in PROPOSALS)


def test_a_function_served_only_by_a_bid_on_history_also_gets_the_api_whose_description_matches(embedder):
    reasoner = EmbeddedReasoner(embedder)
    assert reasoner._description_bid(PROPOSALS[2]) >= Policy().cover_steps_at

    chosen = reasoner.select(task()).api_ids

    assert FLIGHTS in chosen
    assert MAPS in chosen  # it still serves the map


def test_beside_an_api_chosen_on_its_history_a_description_match_needs_a_bid_of_its_own(embedder):
    # Past apps like this one used Google Maps for this need; a flight API bidding 0.03 overall is too little
    # to add beside it, 0.08 is enough.
    faint = [*PROPOSALS[:2], PROPOSALS[2].model_copy(update={"score": 0.03})]
    reasoner = EmbeddedReasoner(embedder)

    assert reasoner.select(task(faint)).api_ids == [MAPS]
    assert FLIGHTS in EmbeddedReasoner(embedder, policy=Policy(loose_cover_at=0.03)).select(task(faint)).api_ids


def test_a_bid_lifted_by_a_name_written_for_another_need_holds_nothing(embedder):
    # 'post to Twitter, take payments': Twitter bids high for the payments because it is named; the payment API's
    # description matches, at a low bid, and is chosen all the same.
    twitter, payments = 827, 614
    functions = needs("post to Twitter", "take payments")
    proposals = [
        bid(twitter, "f1", 0.81, desc_function=0.54, lexical=1.0, name="Twitter"),
        bid(twitter, "f2", 0.72, desc_function=0.05, name="Twitter"),
        bid(payments, "f2", 0.03, desc_function=0.53, lexical=0.6, function_vote=0.3, name="Payment Vision Pay"),
    ]
    named_in_requirement(*proposals[:2])
    select = SelectTask(requirement="post to Twitter, take payments", functions=functions, proposals=proposals)

    assert payments in EmbeddedReasoner(embedder).select(select).api_ids


def test_without_grounding_a_popular_api_s_bid_counts_as_serving_every_function_it_bid_for(embedder):
    reasoner = EmbeddedReasoner(embedder, policy=Policy(ungrounded_margin=0.0))

    assert reasoner.select(task()).api_ids == [MAPS]


def test_an_api_is_awarded_the_step_its_own_text_matches_not_its_highest_bid():
    awarded = award_bids(PROPOSALS)

    assert awarded[MAPS].function_id == "f1"  # 0.38 for the map, not 0.40 for the flights
    assert awarded[FLIGHTS].function_id == "f2"


def test_an_api_with_no_grounded_bid_is_awarded_its_highest():
    only_history = [bid(MAPS, "f1", 0.2, desc_function=0.05), bid(MAPS, "f2", 0.3, desc_function=0.05)]
    rival = bid(FLIGHTS, "f1", 0.1, desc_function=0.6, lexical=1.0)
    rival2 = bid(FLIGHTS, "f2", 0.1, desc_function=0.6, lexical=1.0)

    assert award_bids([*only_history, rival, rival2])[MAPS].function_id == "f2"


def test_an_api_whose_description_matches_nothing_asked_needs_a_confident_bid_to_stay(embedder):
    # An online course platform: a video host matches 'host the lecture videos'; Google Maps bids 0.06 for it on
    # past apps alone, its description far from every function.
    video, maps = 907, MAPS
    functions = [FunctionSpec(id="f1", name="videos", description="host the lecture videos")]
    proposals = [
        bid(video, "f1", 0.07, desc_function=0.28, lexical=0.23, name="YouTube"),
        bid(maps, "f1", 0.06, desc_function=0.04, name="Google Maps"),
    ]
    select = SelectTask(requirement="An online course platform", functions=functions, proposals=proposals)

    assert EmbeddedReasoner(embedder).select(select).api_ids == [video]
    assert maps in EmbeddedReasoner(embedder, policy=Policy(history_alone_at=0.0)).select(select).api_ids
    # Confident enough on its history, it stays: past apps like this one used it.
    confident = [proposals[0], bid(maps, "f1", 0.35, desc_function=0.04, name="Google Maps")]
    assert maps in EmbeddedReasoner(embedder).select(select.model_copy(update={"proposals": confident})).api_ids


def test_one_common_word_shared_with_a_function_is_no_match_of_what_the_api_does(embedder):
    # 'search scientific papers': YouTube's text says 'search' too (a word share of 0.13), nothing else matches.
    papers, youtube = 640, 907
    functions = [FunctionSpec(id="f1", name="papers", description="search scientific papers")]
    proposals = [
        bid(papers, "f1", 0.07, desc_function=0.45, lexical=0.6, name="Paper Index"),
        bid(youtube, "f1", 0.06, desc_function=0.08, lexical=0.13, name="YouTube"),
    ]
    select = SelectTask(requirement="A reading list builder", functions=functions, proposals=proposals)

    assert EmbeddedReasoner(embedder).select(select).api_ids == [papers]
    # Counted as a match, the shared word would keep the popular API beside the right one.
    assert youtube in EmbeddedReasoner(embedder, policy=Policy(incidental_words_below=0.0)).select(select).api_ids


def test_an_api_named_for_one_function_is_not_grounded_for_the_others_by_its_name():
    twitter, slack = 827, 760
    functions = {"f1": MONITOR, "f2": "post a summary to our Slack channel"}
    proposals = [
        bid(twitter, "f1", 0.9, desc_function=0.35, name="Twitter"),
        bid(twitter, "f2", 0.9, desc_function=0.10, name="Twitter"),
        bid(slack, "f2", 0.04, desc_function=0.55, lexical=0.55, name="Slack Web"),
    ]
    named_in_requirement(*proposals[:2])  # the requirement names Twitter

    grounded = Grounding(proposals, functions=functions)

    assert [grounded(p) for p in proposals] == [True, False, True]
    # Without the functions' texts, a name anywhere in the requirement counts.
    assert Grounding(proposals)(proposals[1])


def test_an_api_awarded_another_step_does_not_serve_a_function_by_a_description_merely_near_the_best(embedder):
    # 'Find local volunteering opportunities and post the ones I sign up for on Facebook': Facebook, named for the
    # posting, bids 0.76 for the volunteering too with a description within the margin of the best; it is awarded
    # the posting, so the volunteering API whose description matches is chosen for the other step.
    facebook, volunteering = 279, 754
    functions = needs("Find local volunteering opportunities", "post the ones I sign up for on Facebook")
    proposals = [
        bid(facebook, "f1", 0.76, desc_function=0.20, name="Facebook"),
        bid(facebook, "f2", 0.83, desc_function=0.40, lexical=0.5, name="Facebook"),
        bid(volunteering, "f1", 0.14, desc_function=0.45, lexical=0.4, function_vote=0.3, name="Social Actions"),
    ]
    named_in_requirement(*proposals[:2])
    select = SelectTask(requirement="volunteering, post on Facebook", functions=functions, proposals=proposals)
    assert Grounding(proposals, functions={f.id: f.description for f in functions})(proposals[0])

    assert EmbeddedReasoner(embedder).select(select).api_ids == [facebook, volunteering]


def test_an_api_whose_text_shares_the_function_s_words_serves_it_though_awarded_another_step(embedder):
    # 'Sends SMS': the SMS API awarded the first piece also serves the second, whose words it shares; no second
    # SMS API is added beside it.
    sms, other_sms = 500, 748
    functions = needs("utilise SMS for social activism", "sends SMS to subscribers")
    proposals = [
        bid(sms, "f1", 0.60, desc_function=0.45, lexical=0.5, name="Nexmo SMS"),
        bid(sms, "f2", 0.55, desc_function=0.40, lexical=0.5, name="Nexmo SMS"),
        bid(other_sms, "f2", 0.12, desc_function=0.50, lexical=0.5, function_vote=0.3, name="Text It"),
    ]
    select = SelectTask(requirement="SMS for activism", functions=functions, proposals=proposals)

    assert EmbeddedReasoner(embedder).select(select).api_ids == [sms]


def test_an_api_is_awarded_the_step_whose_text_names_it_before_a_higher_bid_its_name_lifted():
    twitter = 827
    texts = {f.id: f.description for f in needs(MONITOR, "score the sentiment of each mention")}
    monitoring, scoring = bid(twitter, "f1", 0.90, 0.35, name="Twitter"), bid(twitter, "f2", 0.91, 0.30, name="Twitter")
    named_in_requirement(monitoring, scoring)
    proposals = [monitoring, scoring]

    assert award_bids(proposals, texts)[twitter].function_id == "f1"
    assert award_bids(proposals)[twitter].function_id == "f2"  # not knowing the functions' texts


def test_a_function_s_clear_winner_is_not_pre_empted_by_a_chosen_api_s_faint_bid_on_a_shared_word(embedder):
    # 'Which cities saw property prices rise? Additionally, news articles about these cities': the property API,
    # chosen for the first need, shares 'cities' with the second and bids 0.03 for it; the news tool bids 0.07,
    # more than twice anything else there, and serves it.
    prices, news = 8, 63
    functions = needs("cities with rising property prices", "news articles about these cities")
    proposals = [
        propose(prices, "f1", 0.48, "Property Prices", described(0.34, 0.5, lexical=0.2) | {"has_history": 0.0}),
        propose(prices, "f2", 0.03, "Property Prices", described(0.21, 0.0, lexical=0.24) | {"has_history": 0.0}),
        propose(news, "f2", 0.07, "News Tool", described(0.32, 0.2, lexical=0.2) | {"has_history": 0.0}),
    ]
    select = SelectTask(requirement="property prices; news", functions=functions, proposals=proposals)

    assert EmbeddedReasoner(embedder).select(select).api_ids == [prices, news]
    # A bid of its own at half the winner's or more holds the function.
    held = [*proposals[:1], proposals[1].model_copy(update={"score": 0.04}), proposals[2]]
    assert EmbeddedReasoner(embedder).select(select.model_copy(update={"proposals": held})).api_ids == [prices]
