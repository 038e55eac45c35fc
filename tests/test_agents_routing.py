"""Routing in a catalogue where some items have categories and others none (OpenAPI operations with and without
tags): an announced category cannot rule out an item that has no category."""

from pathlib import Path

import pytest

from tender.agents.messages import CallForProposals
from tender.agents.request import Request
from tender.agents.routing import Router
from tender.agents.service import Tender
from tender.catalog import Catalog, get_embedder
from tender.catalog.build import build_from_sources
from tender.catalog.sources.openapi import load_openapi
from tests.scripted import keep_everything

DOCS = Path(__file__).resolve().parents[2] / "shared" / "data" / "openapi" / "docs"

MIXED = """
openapi: 3.0.3
info: {title: Mixed, version: "1"}
paths:
  /pets: {get: {operationId: listPets, summary: List all pets, tags: [pets]}}
  /orders: {get: {operationId: listOrders, summary: List the orders, tags: [orders]}}
"""

TEXTS = """
openapi: 3.0.3
info: {title: Texts, version: "1"}
paths:
  /sms: {post: {operationId: sendSms, summary: Send an SMS to a phone number}}
"""


@pytest.fixture
def mixed(tmp_path, embedder):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "mixed.yaml").write_text(MIXED)
    (tmp_path / "docs" / "texts.yaml").write_text(TEXTS)
    build_from_sources([load_openapi(tmp_path / "docs")], tmp_path / "mixed.db", embedder)
    catalog = Catalog(tmp_path / "mixed.db", embedder=embedder)
    yield catalog
    catalog.close()


def _reached(catalog: Catalog, organisation: str, categories: list[str], strategy: str = "embedding") -> set[str]:
    cfp = CallForProposals(
        sender="manager",
        receiver="*",
        task_id="t1",
        function="send a text message",
        requirement="send a text message",
        categories=categories,
    )
    ranker = Tender(catalog, scorer=keep_everything()).ranker
    shortlist = ranker.shortlist("send a text message", "send a text message")
    _, contacted = Router(catalog, organisation).route(cfp, (shortlist,), 12, strategy)
    return set(contacted)


@pytest.mark.parametrize("strategy", ["embedding", "broadcast"])
def test_an_item_of_no_category_is_reached_whatever_the_announced_categories(mixed, strategy):
    ids = {a.name.split(" ")[0]: a.id for a in mixed.apis()}
    assert _reached(mixed, "api", ["pets"], strategy) == {f"api:{ids['listPets']}", f"api:{ids['sendSms']}"}
    assert _reached(mixed, "api", [], strategy) == {f"api:{i}" for i in ids.values()}


def test_a_provider_is_reached_through_its_items_of_no_category(mixed):
    assert _reached(mixed, "provider", ["orders"]) == {"provider:Mixed", "provider:Texts"}


def test_a_call_reaches_the_holders_of_the_best_candidates_first(mixed):
    ids = {a.name.split(" ")[0]: a.id for a in mixed.apis()}
    cfp = CallForProposals(
        sender="manager", receiver="*", task_id="t1", function="send an SMS", requirement="send an SMS"
    )
    shortlist = Tender(mixed, scorer=keep_everything()).ranker.shortlist(
        "send an SMS to a phone", "send an SMS to a phone"
    )
    routing, contacted = Router(mixed, "api").route(cfp, (shortlist,), 1)
    assert contacted == [f"api:{ids['sendSms']}"] and routing.eligible == 3


@pytest.mark.real_model
def test_sms_and_weather_providers_both_bid_over_the_forty_documents(tmp_path):
    """Issue 19: 'send an SMS when the weather forecast says it will rain' over the 40 OpenAPI documents got only
    the weather API: the two SMS APIs have no tags, the function was mapped to other documents' tags, and
    routing reached only items inside them."""
    if not DOCS.is_dir():
        pytest.skip(f"{DOCS} is not here")
    embedder = get_embedder("default")
    build_from_sources([load_openapi(DOCS)], tmp_path / "openapi.db", embedder)
    tender = Tender(Catalog(tmp_path / "openapi.db", embedder=embedder))
    run = tender.recommend(
        Request.create("send an SMS when the weather forecast says it will rain", organisation="provider")
    )
    sms = {"D7SMS", "SMS API"}
    bidders = {m.sender for m in run.transcript.messages if m.kind == "propose"}
    assert {"provider:D7SMS", "provider:SMS API"} <= bidders
    assert "provider:Visual Crossing Weather API" in bidders
    assert sms & {api.provider for api in run.plan.apis}
