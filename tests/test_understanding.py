"""What the embedded reasoner understands of a requirement, with or without usage history and categories:
one function per need, bids from what an API does, every function served or reported, and no plan where
nothing fits."""

from types import SimpleNamespace

import numpy as np
import pytest

from tender.agents.context import RunContext
from tender.agents.grounding import Grounding, drop_ungrounded
from tender.agents.language import language
from tender.agents.lexicon import Lexicon, common_terms
from tender.agents.plan import StepStatus
from tender.agents.reasoners.embedded import (
    COLD_FEATURES,
    FEATURES,
    BidModel,
    EmbeddedReasoner,
    Policy,
    features,
    probability,
)
from tender.agents.protocols import PROTOCOLS, unserved_reason
from tender.agents.request import Request
from tender.agents.reasoners.factory import build_reasoners
from tender.agents.service import Tender
from tender.agents.messages import CallForProposals, Neighbourhood
from tender.agents.tasks import (
    ApiKnowledge,
    BidTask,
    ContractorKnowledge,
    DecomposeTask,
    FunctionSpec,
    Part,
    SelectTask,
)
from tender.agents.text import clauses, fragments, opens_request
from tender.catalog import Catalog, HashingEmbedder, TenderError, build_catalog
from tender.training.tune import fit_cold_model
from tests.conftest import write_jsonl
from tests.fixture_data import api_rows
from tests.proposals import described, propose


@pytest.fixture(scope="module")
def cold_catalog_path(tmp_path_factory, embedder):
    """The fixture's APIs with no categories and no usage history: a catalogue a user brings."""
    folder = tmp_path_factory.mktemp("cold")
    apis = [dict(row, categories=[]) for row in api_rows()]
    path = folder / "catalog.db"
    build_catalog(write_jsonl(folder / "apis.jsonl", apis), write_jsonl(folder / "mashups.jsonl", []), path, embedder)
    return path


@pytest.fixture(scope="module")
def cold(cold_catalog_path, embedder):
    return Tender(Catalog(cold_catalog_path, embedder=embedder))


def plan_of(tender: Tender, text: str, **fields):
    return tender.recommend(Request.create(text, **fields), RunContext()).plan


@pytest.mark.parametrize(
    "text, pieces",
    [
        ("a dashboard of stock prices and related news", ["a dashboard of stock prices", "related news"]),
        ("an app that texts me when my package ships", ["an app texts me", "my package ships"]),
        (
            "a site that shows nearby restaurants on a map with their reviews",
            ["a site shows nearby restaurants", "map", "their reviews"],
        ),
        ("weather", ["weather"]),
    ],
)
def test_a_requirement_is_cut_into_pieces_that_each_carry_a_content_word(text, pieces):
    assert fragments(text) == pieces


@pytest.mark.parametrize(
    "text, pieces",
    [
        (
            "Can you calculate the interest for a $10,000 loan, and check for discounts?",
            ["Can you calculate the interest for a $10,000 loan", "check for discounts"],
        ),
        (
            "Get stock quotes. Additionally, can you find job offers?",
            ["Get stock quotes", "Additionally can you find job offers"],
        ),
        (
            "Remember that my sister's birthday is in May and list the files in my documents folder",
            ["Remember my sister's birthday is in May", "list the files in my documents folder"],
        ),
        (
            "I want to learn about the stock market. Any suggestions?",
            ["I want to learn about the stock market Any suggestions"],
        ),
    ],
)
def test_numbers_and_words_of_asking_are_not_needs_of_their_own(text, pieces):
    assert fragments(text) == pieces


def test_a_tool_named_in_camel_case_is_found_by_the_words_of_its_name():
    from tender.agents.lexicon import Lexicon

    lexicon = Lexicon(["WeatherForecast. Stay ahead of the skies.", "get_current_time. The current time."], [1, 2])
    assert lexicon.scores("the weather forecast for Paris").tolist()[0] > 0
    # ... and by its name written whole.
    assert lexicon.scores("ask WeatherForecast about Paris").tolist()[0] > lexicon.scores("ask about Paris")[0]
    assert lexicon.scores("what is the current time")[1] > 0


def test_a_need_does_not_begin_with_the_conjunction_that_joined_it():
    # The function is announced, and read in its requirement's context, as the clause it is.
    assert fragments("What time is it in Tokyo, and fetch the weather page for Tokyo") == [
        "What time is it in Tokyo",
        "fetch the weather page for Tokyo",
    ]
    assert fragments("a dashboard of stock prices, and then related news") == [
        "a dashboard of stock prices",
        "related news",
    ]


def test_without_history_a_closer_description_never_lowers_a_bid():
    model = BidModel.load()
    assert model.cold is not None and all(w >= 0 for w in model.cold.weights.values())
    evidence = dict.fromkeys(FEATURES, 0.0) | {
        "desc_requirement": 0.4,
        "desc_function": 0.4,
        "lexical": 0.2,
        "function_vote": 0.2,
        "description_vote": 0.2,
    }
    for name in COLD_FEATURES:
        lower, higher = (np.array(list((evidence | {name: v}).values())) for v in (0.3, 0.6))
        assert probability(higher, model) >= probability(lower, model), name


def test_the_cold_model_fit_keeps_no_weight_below_zero():
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 1, size=(400, len(FEATURES)))
    # Labels follow desc_function up and lexical down: lexical must come out at zero, not negative.
    z = 6 * x[:, FEATURES.index("desc_function")] - 4 * x[:, FEATURES.index("lexical")] - 1
    y = (rng.uniform(0, 1, 400) < 1 / (1 + np.exp(-z))).astype(float)
    cold = fit_cold_model(x, y)
    assert cold.weights["lexical"] == 0.0 and cold.weights["desc_function"] > 0


def test_a_name_says_what_an_api_is_for_in_the_common_words_a_function_asks_with():
    lexicon = Lexicon(["CourseTool online courses", "Google Maps maps", "Zorblax online courses"], ids=[1, 2, 3])
    asked = common_terms("Can you find me a course about data analysis?")
    assert lexicon.name_coverage("CourseTool", asked) == 1.0
    assert lexicon.name_coverage("Zorblax", asked) == 0.0
    # "Google" written as a name names a maker, which `named` weighs: of the name, only the map is asked for.
    assert 0 < lexicon.name_coverage("Google Maps", common_terms("Put them on a map from Google")) < 1
    assert lexicon.name_coverage("Google Maps", common_terms("put them on google maps")) == 1.0


def test_a_sentence_opens_with_a_capital_that_names_no_maker():
    assert common_terms("Weather for Tokyo. Texts via Twilio") == {"weath", "text"}


def test_without_history_a_tool_named_for_what_is_asked_outbids_its_twin_named_for_a_brand(embedder, tmp_path):
    description = "Online courses, lessons and tutorials from many providers."  # the same words for both
    apis = [
        {"id": 1, "name": "Zorblax", "categories": [], "description": description, "source": "test"},
        {"id": 2, "name": "CourseTool", "categories": [], "description": description, "source": "test"},
    ]
    path = tmp_path / "catalog.db"
    build_catalog(write_jsonl(tmp_path / "apis.jsonl", apis), write_jsonl(tmp_path / "m.jsonl", []), path, embedder)
    result = Tender(Catalog(path, embedder=embedder)).recommend(Request.create("Find me a course on statistics"))
    bids = {m.api_name: m for m in result.transcript.messages if m.kind == "propose"}
    assert bids["CourseTool"].evidence["name_words"] == 1.0
    assert "Zorblax" not in bids or bids["Zorblax"].score < bids["CourseTool"].score / 2
    assert "its name says course" in bids["CourseTool"].rationale
    assert result.plan.apis[0].name == "CourseTool"


def test_the_cold_model_weighs_the_name_on_top_of_the_description_so_a_brand_name_costs_nothing():
    rng = np.random.default_rng(1)
    x = rng.uniform(0, 1, size=(600, len(FEATURES)))
    z = 5 * x[:, FEATURES.index("desc_function")] - 3
    y = (rng.uniform(0, 1, 600) < 1 / (1 + np.exp(-z))).astype(float)
    named_for_the_need = y * (rng.uniform(0, 1, 600) < 0.5)  # a name matches only for some right APIs
    x[:, FEATURES.index("name_words")] = named_for_the_need
    without = x.copy()
    without[:, FEATURES.index("name_words")] = 0.0
    cold, baseline = fit_cold_model(x, y), fit_cold_model(without, y)
    assert cold.weights["name_words"] > 0
    # An API whose name matches nothing bids as it would have without the feature.
    assert cold.bias == pytest.approx(baseline.bias)
    for name in COLD_FEATURES:
        if name != "name_words":
            assert cold.weights[name] == pytest.approx(baseline.weights[name]), name


def decomposed(*pieces: tuple[str, list[int]], policy: Policy | None = None):
    """The functions the embedded manager makes of these pieces, each with the APIs that best explain it."""
    parts = [Part(text=text, apis=apis) for text, apis in pieces]
    reasoner = EmbeddedReasoner(HashingEmbedder(), policy=policy or Policy())
    return reasoner.decompose(DecomposeTask(requirement="", parts=parts)).functions


def test_pieces_explained_by_the_same_apis_are_one_function_and_the_others_their_own():
    functions = decomposed(("nearby restaurants", [3, 4, 23]), ("map", [0, 2, 1]), ("their reviews", [4, 3, 22]))
    assert [f.description for f in functions] == ["nearby restaurants, their reviews", "map"]
    assert functions[1].depends_on == ["f1"]  # the map shows what the first function finds


def test_a_piece_that_refers_back_joins_the_need_it_refers_to_even_when_no_api_explains_both():
    functions = decomposed(
        ("a site shows nearby restaurants", [3, 4, 23]), ("map", [0, 2, 1]), ("their reviews", [7, 8, 9])
    )
    assert [f.description for f in functions] == ["a site shows nearby restaurants, their reviews", "map"]


def test_a_piece_that_puts_a_request_of_its_own_is_a_need_of_its_own_though_the_same_apis_explain_it():
    # "I need the weather for the next three days. Additionally, are there any news articles about extreme
    # weather lately?": a weather API explains both, but the user asked for two things.
    weather = ("I need the weather conditions for the next three days", [5, 6, 7])
    news = ("Additionally are there any news articles about extreme weather lately", [5, 9, 6])
    assert len(decomposed(weather, news)) == 2
    # Prose that goes on describing one need stays one function.
    assert len(decomposed(weather, ("The forecast is shown for every hour", [5, 9, 6]))) == 1


def test_a_piece_opens_a_request_with_the_words_a_user_asks_with():
    assert opens_request("Could you also recommend some songs") and opens_request("Additionally are there any")
    assert not opens_request("The site shows the restaurants on a map")


def test_a_one_need_requirement_stays_one_function():
    assert len(decomposed(("send SMS", [18, 19]), ("text messages", [18, 7]))) == 1


def test_a_plan_has_at_most_max_functions_functions():
    assert len(decomposed(*((f"need {i}", [i]) for i in range(7)), policy=Policy(max_functions=4))) == 4


def test_the_manager_splits_two_needs_served_by_different_apis(cold):
    plan = plan_of(cold, "an app that sends SMS text messages when a new video is uploaded to YouTube")
    assert len(plan.steps) == 2
    awarded = {a.api_name for step in plan.steps for a in step.awarded}
    assert {"Twilio", "YouTube"} <= awarded


@pytest.mark.parametrize("protocol", list(PROTOCOLS))
def test_a_catalogue_without_categories_or_history_works_for_every_protocol(cold, protocol):
    plan = plan_of(cold, "send SMS text messages to my customers", protocol=protocol)
    assert "Twilio" in [api.name for api in plan.apis]


def test_history_free_bids_are_credible_for_an_api_that_does_what_is_asked(cold):
    plan = plan_of(cold, "send SMS text messages to my customers")
    twilio = next(api for api in plan.apis if api.name == "Twilio")
    assert twilio.score >= 0.3


def test_a_function_with_no_credible_bid_is_reported_unserved_with_its_reason(cold):
    # The tests' hashing encoder finds likeness in shared letters: a long piece of nonsense resembles some
    # description of the fixture's few APIs; a short one resembles none.
    plan = plan_of(cold, "send SMS text messages, and grow wings")
    unserved = [s for s in plan.steps if s.status == StepStatus.unserved]
    assert unserved, [(s.function, s.status) for s in plan.steps]
    assert all(s.reason and s.function in s.reason for s in unserved)
    assert "Twilio" in [api.name for api in plan.apis]


def test_gibberish_gets_nothing_fits_not_a_plan(cold):
    plan = plan_of(cold, "asdkjh qwe zzz")
    assert plan.verdict == "nothing fits" and plan.apis == []
    assert any("Nothing in the catalogue fits" in note for note in plan.notes)


def test_near_duplicates_serving_the_same_function_are_not_both_selected(cold):
    plan = plan_of(cold, "show an interactive map of the city")
    mapping = [api.name for api in plan.apis if api.name in ("Bing Maps", "Bing Search")]
    assert len(mapping) <= 1


def test_a_requirement_in_another_language_gets_a_note_that_the_catalogue_is_english(cold):
    assert language("una aplicación para reservar vuelos y hoteles") == "es"
    assert language("a dashboard of stock prices and related news") == "en"
    plan = plan_of(cold, "una aplicación para enviar mensajes de texto a mis clientes")
    assert any("Spanish" in note and "English" in note for note in plan.notes)


def test_a_refitted_bid_model_file_is_used_where_one_is_given(cold_catalog_path, embedder, tmp_path):
    shipped = BidModel.load()
    refusing = shipped.model_copy(update={"cold": shipped.cold.model_copy(update={"bias": -40.0})})
    path = tmp_path / "bids.json"
    path.write_text(refusing.model_dump_json())
    manager, contractors = build_reasoners(embedder, bid_model=path)
    tender = Tender(Catalog(cold_catalog_path, embedder=embedder), manager=manager, contractors=contractors)

    plan = plan_of(tender, "send SMS text messages to my customers")

    assert plan.apis == [] and plan.stages.bidding == []


def test_an_unreadable_bid_model_file_is_refused_naming_the_setting(embedder, tmp_path):
    (tmp_path / "bids.json").write_text("{}")
    with pytest.raises(TenderError, match="TENDER_BID_MODEL"):
        build_reasoners(embedder, bid_model=tmp_path / "bids.json")


def test_reasoners_made_before_the_catalogue_learn_its_words(cold_catalog_path, embedder):
    # The LLM backend falls back on an embedded reasoner the factory made without a catalogue at hand.
    manager, contractors = build_reasoners(embedder)
    tender = Tender(Catalog(cold_catalog_path, embedder=embedder), manager=manager, contractors=contractors)
    assert tender.manager_reasoner.lexicon is tender.lexicon


def test_with_history_a_bid_still_weighs_what_the_description_says():
    model = BidModel.load()
    assert 0 < model.description_share < 1
    # Two APIs equally used by similar past apps; only one's description matches the function.
    history = dict.fromkeys(FEATURES, 0.0) | {
        "history_max": 0.6,
        "history_soft": 0.6,
        "usage_log": 5.0,
        "neighbour_vote": 0.3,
        "clause_vote": 0.3,
        "history_centroid": 0.4,
        "has_history": 1.0,
    }
    described = history | {
        "desc_requirement": 0.6,
        "desc_function": 0.6,
        "lexical": 0.5,
        "function_vote": 0.4,
        "description_vote": 0.4,
    }
    undescribed = history | {"desc_requirement": 0.05, "desc_function": 0.05}
    as_vector = lambda evidence: np.array([evidence[name] for name in FEATURES])  # noqa: E731
    assert probability(as_vector(described), model) > probability(as_vector(undescribed), model)


@pytest.mark.parametrize("organisation", ["category", "provider"])
def test_a_contractor_for_many_apis_offers_at_most_its_cap(embedder, organisation):
    reasoner = EmbeddedReasoner(embedder, policy=Policy(max_bids_per_contractor=2))
    apis = [
        ApiKnowledge(
            api_id=i,
            name=f"SMS sender {i}",
            categories=[],
            description="Send SMS text messages to phones.",
            vector=embedder.embed(["Send SMS text messages to phones."])[0],
        )
        for i in range(5)
    ]
    knowledge = ContractorKnowledge(contractor=f"{organisation}:Acme", apis=apis, **{organisation: "Acme"})
    cfp = CallForProposals(
        sender="manager",
        receiver="*",
        task_id="t1",
        requirement="text my customers",
        function_id="f1",
        function="send SMS text messages",
        reserve=0.0,
    )

    decision = reasoner.run(BidTask(cfp=cfp, knowledge=knowledge), RunContext())

    assert len(decision.proposals) == 2


def test_an_api_chosen_on_history_alone_gives_way_to_one_whose_description_matches():
    def bid(api_id, function_id, desc_function, lexical=0.0):
        return SimpleNamespace(
            api_id=api_id,
            function_id=function_id,
            evidence={"desc_function": desc_function, "lexical": lexical, "named": 0.0},
        )

    maps, weather, news = 370, 866, 214
    proposals = [bid(maps, "f1", 0.13), bid(weather, "f1", 0.50, lexical=1.0), bid(news, "f2", 0.12)]

    assert drop_ungrounded([maps, weather, news], proposals, Grounding(proposals, margin=0.3)) == [weather, news]
    # Nothing else matches f2 better, so its only API stays; and margin 0 keeps everything.
    assert drop_ungrounded([maps, weather, news], proposals, Grounding(proposals, margin=0.0)) == [maps, weather, news]


def test_a_function_whose_low_best_bid_clearly_leads_the_rest_is_still_served(embedder):
    functions = [
        FunctionSpec(id="f1", name="time", description="what time is it in Tokyo"),
        FunctionSpec(id="f2", name="fetch", description="fetch the weather page"),
    ]
    task = SelectTask(
        requirement="What time is it in Tokyo, and fetch the weather page",
        functions=functions,
        proposals=[propose(2, "f2", 0.81), propose(0, "f1", 0.07), propose(1, "f1", 0.03)],
    )

    assert 0 in EmbeddedReasoner(embedder).select(task).api_ids
    assert 0 not in EmbeddedReasoner(embedder, policy=Policy(cover_lead=0.0)).select(task).api_ids


def test_a_function_is_served_by_the_api_whose_description_matches_it_though_its_history_drags_its_bid(embedder):
    # Payment Vision Pay's description is the nearest to "pay by credit card", but its one past mashup was about
    # something else and its bid fell to 0.046, under every threshold; on its description alone it would bid 0.14.
    def bid(api_id, score, desc_function, function_vote, lexical):
        return propose(api_id, "f1", score, evidence=described(desc_function, function_vote, lexical))

    def task(*proposals):
        return SelectTask(
            requirement="Let customers pay for their orders by credit card",
            functions=[FunctionSpec(id="f1", name="pay", description="pay for their orders by credit card")],
            proposals=list(proposals),
        )

    reasoner = EmbeddedReasoner(embedder)
    matching, popular = bid(614, 0.046, 0.50, 0.28, 0.51), bid(824, 0.036, 0.10, 0.0, 0.0)
    assert reasoner._description_bid(matching) >= Policy().cover_steps_at
    assert reasoner.select(task(matching, popular)).api_ids == [614]
    # A description that does not match either leaves the function unserved: nothing fits.
    assert reasoner.select(task(bid(614, 0.046, 0.20, 0.02, 0.0), popular)).api_ids == []


def test_an_unserved_step_whose_best_bidder_serves_another_says_so_and_names_the_next():
    bids = [propose(370, "f3", 0.55, name="Google Maps"), propose(918, "f3", 0.07, name="Yelp Fusion")]

    assert unserved_reason("their reviews", bids, {370: "f2"}) == (
        "no credible bid for 'their reviews' of its own: the best, Google Maps (0.55), serves f2; "
        "the next, Yelp Fusion at 0.07, fell short"
    )
    assert unserved_reason("their reviews", bids, {}) == (
        "no credible bid for 'their reviews': the best, Google Maps at 0.55, fell short"
    )


def test_an_unserved_step_also_names_the_bidder_whose_description_matches_it_best():
    def bid(api_id, name, score, desc_function):
        return propose(api_id, "f1", score, name=name, evidence={"desc_function": desc_function})

    bids = [bid(370, "Google Maps", 0.51, 0.15), bid(6, "8coupons", 0.053, 0.38), bid(665, "Qype", 0.049, 0.48)]

    assert unserved_reason("nearby restaurants, their reviews", bids, {370: "f2"}) == (
        "no credible bid for 'nearby restaurants, their reviews' of its own: the best, Google Maps (0.51), serves "
        "f2; the next, 8coupons at 0.05, fell short; closest in description: Qype (similarity 0.48, bid 0.05)"
    )
    # Already named as the best that fell short: not named twice.
    assert "closest" not in unserved_reason("reviews", bids[2:], {})


def test_a_bid_s_reasons_quote_the_function_s_words_as_written(cold):
    requirement = "Sending SMS Messages to my Customers"
    run = cold.recommend(Request.create(requirement), RunContext())
    reasons = [m.rationale for m in run.transcript.of_kind("propose") if "it mentions" in m.rationale]

    assert reasons
    for reason in reasons:
        mentioned = reason.split("it mentions ")[1].split(";")[0].rstrip(".").split(", ")
        assert set(mentioned) <= set(requirement.split()), reason


def test_without_history_the_descriptions_nearest_to_a_task_are_ranked_by_its_words_too(cold, catalog):
    def announced(tender):
        run = tender.recommend(Request.create("send SMS alerts and show the weather forecast"), RunContext())
        calls = run.transcript.of_kind("cfp")
        return [n for m in calls for n in (m.function_descriptions, m.descriptions) if n]

    assert announced(cold) and all(n.words > 0 for n in announced(cold))
    with_history = announced(Tender(catalog))
    assert with_history and all(n.words == 0 for n in with_history)


def test_a_description_sharing_the_task_s_words_holds_more_of_its_vote():
    api = ApiKnowledge(api_id=1, name="Texts", categories=[], description="Send SMS", vector=np.array([1.0, 0.0]))
    function = np.array([0.6, 0.8])
    around = Neighbourhood(k=20, nearest=0.9, radius=0.5, temperature=0.05, mass=3.0, words=0.3)
    vote = FEATURES.index("function_vote")

    def function_vote(lexical, neighbourhood=around):
        x = features(api, function, function, "send sms", 0.05, function_descriptions=neighbourhood, lexical=lexical)
        return x[vote]

    assert function_vote(1.0) > function_vote(0.0) > 0
    assert function_vote(1.0, around.model_copy(update={"words": 0.0})) == function_vote(0.0)

    def description_vote(requirement_lexical):
        x = features(
            api, function, None, "send sms", 0.05, descriptions=around, requirement_lexical=requirement_lexical
        )
        return x[FEATURES.index("description_vote")]

    assert description_vote(1.0) > description_vote(0.0) > 0


def test_a_plan_from_a_catalogue_without_history_says_its_scores_are_a_ranking(cold, catalog):
    def notes(tender):
        return " ".join(plan_of(tender, "send SMS text messages to customers").notes)

    assert "no usage history" in notes(cold) and "ranking" in notes(cold)
    assert "no usage history" not in notes(Tender(catalog))


def test_announcing_the_whole_requirement_to_a_catalogue_without_history_tells_each_clause_s_nearest_descriptions(
    cold,
):
    text = "send SMS text messages to my customers, and show the weather forecast for their city"
    run = cold.recommend(Request.create(text, protocol="contractor-led"), RunContext())
    cfp = next(m for m in run.transcript.messages if m.kind == "cfp")

    assert [n.about for n in cfp.clause_descriptions] == clauses(text)
    # Each clause has descriptions of its own nearest: the SMS clause's are not the forecast's.
    assert cfp.clause_descriptions[0].nearest != cfp.clause_descriptions[1].nearest


def test_the_single_agent_judges_each_clause_against_that_clause_s_nearest_descriptions(cold, monkeypatch):
    from tender.agents.reasoners.embedded import EmbeddedReasoner

    text = "send SMS text messages to my customers, and show the weather forecast for their city"
    calls = []
    judge = EmbeddedReasoner.bid
    monkeypatch.setattr(EmbeddedReasoner, "bid", lambda self, task: calls.append(task.cfp) or judge(self, task))

    cold.recommend(Request.create(text, protocol="single-agent"), RunContext())

    assert calls and [n.about for n in calls[0].clause_descriptions] == clauses(text)


def test_a_contractor_bidding_for_its_own_clause_votes_against_that_clause_s_nearest_descriptions(cold):
    # The forecast clause's API would otherwise be judged against the descriptions nearest the whole requirement,
    # which the SMS clause dominates.
    text = "send SMS text messages to my customers, and show the weather forecast for their city"
    run = cold.recommend(Request.create(text, protocol="contractor-led"), RunContext())
    bids = [m for m in run.transcript.messages if m.kind == "propose"]
    forecast = [p for p in bids if p.evidence.get("function") == clauses(text)[1]]

    assert forecast
    assert all(p.evidence["function_vote"] != p.evidence["description_vote"] for p in forecast)


def test_a_catalogue_with_usage_history_announces_no_clause_descriptions(catalog):
    run = Tender(catalog).recommend(
        Request.create("send SMS text messages, and show the weather forecast", protocol="contractor-led")
    )
    assert all(m.clause_descriptions == [] for m in run.transcript.messages if m.kind == "cfp")
