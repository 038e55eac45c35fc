"""Query vectors: a clause read where it stands in its requirement keeps that vector to itself."""

import re

import numpy as np

from tender.agents.request import Request
from tender.agents.service import Tender
from tender.ranking.vectors import QueryEncoder
from tender.catalog import Catalog, HashingEmbedder


class ReadsInContext(HashingEmbedder):
    """Like the MiniLM embedders' tokens: each word's vector depends on the text around it."""

    def tokens(self, text):
        spans = [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]
        return spans, np.stack([self.embed([text[a:b]])[0] + self.embed([text])[0] for a, b in spans])


SMS_AFTER_HOTELS = "Find hotels in a city, and send an SMS text message reminder"
SMS_AFTER_TWEETS = "Plot tweets on a map, and send an SMS text message reminder"
SMS = "send an SMS text message reminder"


def test_a_clause_read_in_one_requirement_does_not_lend_its_vector_to_another():
    encoder = QueryEncoder(ReadsInContext(256))
    after_hotels = encoder.in_context(SMS, SMS_AFTER_HOTELS)
    after_tweets = encoder.in_context(SMS, SMS_AFTER_TWEETS)
    assert after_hotels is not None and after_tweets is not None
    assert not np.allclose(after_hotels, after_tweets)
    assert np.allclose(after_hotels, encoder.in_context(SMS, SMS_AFTER_HOTELS))
    # Asked for on its own, the clause has its own plain vector.
    assert np.allclose(encoder.one(SMS), HashingEmbedder(256).embed([SMS])[0])


def test_the_whole_requirement_or_an_embedder_that_cannot_gives_no_vector_in_context():
    encoder = QueryEncoder(ReadsInContext(256))
    assert encoder.in_context(SMS_AFTER_HOTELS, SMS_AFTER_HOTELS) is None  # the whole requirement
    assert QueryEncoder(HashingEmbedder(256)).in_context(SMS, SMS_AFTER_HOTELS) is None  # cannot read in context


def test_a_plan_does_not_depend_on_the_requests_before_it(catalog_path):
    def plan(tender, text):
        run = tender.recommend(Request.create(text))
        return (
            run.plan.stages.model_dump(),
            [(a.api_id, a.score) for a in run.plan.apis],
            [m.model_dump(exclude={"at_ms"}) for m in run.transcript.messages],
        )

    fresh = Tender(Catalog(catalog_path, embedder=ReadsInContext(256)))
    used = Tender(Catalog(catalog_path, embedder=ReadsInContext(256)))
    plan(used, SMS_AFTER_HOTELS)
    assert plan(used, SMS_AFTER_TWEETS) == plan(fresh, SMS_AFTER_TWEETS)


def test_a_function_in_the_requirements_words_is_also_read_where_it_stands(catalog_path):
    ranker = Tender(Catalog(catalog_path, embedder=ReadsInContext(256))).ranker
    cut = ranker.shortlist(SMS, SMS_AFTER_HOTELS).candidates
    stated = ranker.shortlist("text a reminder to my phone", SMS_AFTER_HOTELS).candidates
    assert cut and all(c.evidence.dense_context is not None for c in cut)
    # A need the caller states in its own words has no place in the requirement: its own reading stands alone.
    assert stated and all(c.evidence.dense_context is None for c in stated)
