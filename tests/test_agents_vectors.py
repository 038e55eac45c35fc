"""Query vectors: a clause read in the context of its requirement keeps that vector to itself."""

import numpy as np

from tender.agents.request import Request
from tender.agents.service import Tender
from tender.ranking.vectors import QueryEncoder
from tender.catalog import Catalog, HashingEmbedder


class ReadsInContext(HashingEmbedder):
    """Like the MiniLM embedders' embed_parts: a part's vector depends on the text around it."""

    def embed_parts(self, text, parts):
        return self.embed([text])[0], list(self.embed([f"{part} {text}" for part in parts]))


SMS_AFTER_HOTELS = "Find hotels in a city, and send an SMS text message reminder"
SMS_AFTER_TWEETS = "Plot tweets on a map, and send an SMS text message reminder"
SMS = "send an SMS text message reminder"


def test_a_clause_read_in_one_requirement_does_not_lend_its_vector_to_another():
    encoder = QueryEncoder(ReadsInContext(256))
    encoder.embed_requirement(SMS_AFTER_HOTELS, ["Find hotels in a city", SMS])
    after_hotels = encoder.one(SMS, context=SMS_AFTER_HOTELS)
    encoder.embed_requirement(SMS_AFTER_TWEETS, ["Plot tweets on a map", SMS])
    after_tweets = encoder.one(SMS, context=SMS_AFTER_TWEETS)
    assert not np.allclose(after_hotels, after_tweets)
    assert np.allclose(after_hotels, encoder.one(SMS, context=SMS_AFTER_HOTELS))
    # Asked for on its own, the clause has its own plain vector.
    assert np.allclose(encoder.one(SMS), HashingEmbedder(256).embed([SMS])[0])


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
