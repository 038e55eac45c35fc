"""The matcher: what it learns from (train parts only, of the kinds asked for), how its batches and loss treat the
items that serve a request, and that the delta it writes is served by the stock ONNX graph."""

import json
import random

import numpy as np
import pytest

from tender.catalog.records import Api
from tender.evaluation.kinds import KINDS, ToolQuery, ToolSet, sets_of
from tender.training.matcher import Pair, batches, loss_mask, mine_negatives, need_pairs, whole_request_pairs


def tool_set(name="toy", maskable=False) -> ToolSet:
    items = [
        Api(id=0, name="get_weather", description="Current weather for a city.", kind="tool"),
        Api(id=1, name="get_forecast", description="Weather forecast for the next days.", kind="tool"),
        Api(id=2, name="send_email", description="Send an email message to someone.", kind="tool"),
        Api(id=3, name="book_flight", description="Book a flight between two airports.", kind="tool"),
        Api(id=4, name="find_hotel", description="Find hotels in a city.", kind="tool"),
    ]
    queries = [
        ToolQuery("a", "What is the weather in Paris? Then email it to my boss.", (0, 2), "train"),
        ToolQuery("b", "Is it going to rain in Oslo this week?", (1,), "train"),
        ToolQuery("c", "Book me a flight to Rome and find a hotel near the station.", (3, 4), "dev"),
        ToolQuery("d", "Find a hotel in Lyon.", (4,), "test"),
    ]
    return ToolSet(name, items, queries, maskable=maskable)


class WordEmbedder:
    """Bag of words, enough to rank the toy items."""

    def embed(self, texts, progress=False, role="query"):
        vocabulary = sorted({w for t in tool_set().items for w in t.text().lower().replace(".", " ").split()})
        rows = np.array([[float(w in t.lower()) for w in vocabulary] for t in texts]) + 1e-3
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_only_train_requests_and_their_items_are_learned_from():
    pairs = whole_request_pairs(tool_set(), random.Random(0))
    assert {p.query for p in pairs} == {q.text for q in tool_set().part("train")}
    assert {p.key for p in pairs} == {"toy:0", "toy:1", "toy:2"}  # the dev and test requests' items never
    composite = [p for p in pairs if p.query.startswith("What is the weather")]
    assert len(composite) == 2 and all(p.gold == ("toy:0", "toy:2") for p in composite)


def test_a_hard_negative_is_a_train_item_that_serves_nothing_the_request_asks():
    pairs = mine_negatives(
        tool_set(), whole_request_pairs(tool_set(), random.Random(0)), WordEmbedder(), random.Random(0)
    )
    for pair in pairs:
        assert pair.negative_key not in pair.gold and pair.negative_key in {"toy:0", "toy:1", "toy:2", ""}
        assert pair.negative != pair.item
    assert any(p.negative for p in pairs)


def test_a_need_of_a_composite_request_is_paired_with_the_item_it_asks_for():
    pairs = need_pairs(tool_set(), WordEmbedder(), random.Random(0), limit=10)
    assert pairs and all(p.need for p in pairs)
    by_need = {p.query: p.key for p in pairs}
    assert any("weather" in need.lower() and key == "toy:0" for need, key in by_need.items())
    assert all(p.key in p.gold for p in pairs)


def test_a_batch_holds_one_set_and_never_one_item_or_request_twice():
    pairs = [
        Pair(f"q{n % 7}", f"item {n % 5}", f"{source}:{n % 5}", source, (f"{source}:{n % 5}",))
        for source in ("a", "b")
        for n in range(40)
    ]
    plan = batches(pairs, 4, random.Random(0))
    for batch in plan:
        chosen = [pairs[n] for n in batch]
        assert len({p.source for p in chosen}) == 1
        assert len({p.key for p in chosen}) == len(chosen) and len({p.query for p in chosen}) == len(chosen)


def test_an_item_that_serves_the_request_is_neither_right_nor_wrong_in_the_loss():
    weather = Pair(
        "weather then email", "weather item", "s:0", "s", ("s:0", "s:2"), negative="flight", negative_key="s:3"
    )
    email = Pair("send an email", "email item", "s:2", "s", ("s:2",), negative="hotel", negative_key="s:4")
    mask = loss_mask([weather, email])
    # Columns: the two items, then the two negatives. The email item serves the first request too.
    assert mask.tolist() == [[False, True, False, False], [False, False, False, False]]


def test_every_kind_has_sets_and_none_is_a_judged_suite():
    assert sets_of(list(KINDS)) and len(sets_of(list(KINDS))) == len({s for sets in KINDS.values() for s in sets})
    judged = {"mcp-suite", "today-suite", "assistant-suite", "openapi-suite", "programmableweb-suite"}
    assert judged.isdisjoint(sets_of(list(KINDS)))
    with pytest.raises(KeyError):
        sets_of(["nestful"])  # an eval-only set is no kind to train on


@pytest.mark.real_model
def test_a_delta_folder_is_served_by_the_stock_graph_under_its_own_name(tmp_path):
    from tender.catalog import get_embedder
    from tender.catalog.encoders import DELTA_FILE, stock_encoder
    from tender.catalog.onnx_embedder import OnnxEmbedder

    folder = tmp_path / "matcher-x"
    folder.mkdir()
    name = "model.layers.5.mlp.fc2.MatMul.weight"
    rng = np.random.default_rng(0)
    np.savez(
        folder / DELTA_FILE,
        **{
            f"{name}|in": rng.normal(size=(1536, 2)).astype(np.float16),
            f"{name}|out": rng.normal(size=(2, 384)).astype(np.float16),
        },
    )
    (folder / "delta.json").write_text(json.dumps({"fitted_on": {}}))
    embedder = get_embedder(str(folder))
    assert isinstance(embedder, OnnxEmbedder) and embedder.encoder.name == "matcher-x"
    assert embedder.encoder.fingerprint != stock_encoder().fingerprint
    moved = embedder.embed(["send an email"])[0] @ get_embedder().embed(["send an email"])[0]
    assert moved < 0.999  # the delta changes the vectors


def test_flat_retrieval_scores_the_share_of_gold_items_in_the_first_five():
    from tender.evaluation.tool_retrieval import metrics, ranked_scores

    assert metrics([3, 1, 2, 9, 8], {1, 7}) == {
        "r@5": 0.5,
        "ndcg@5": pytest.approx((1 / np.log2(3)) / (1 + 1 / np.log2(3))),
        "top-1": 0.0,
    }
    assert metrics([7, 1], {7})["top-1"] == 1.0
    items = np.eye(6)
    query = np.array([[0.1, 0.9, 0.0, 0.5, 0.0, 0.0]])
    assert ranked_scores(items, query, k=2).tolist() == [[1, 3]]


def test_a_tool_retrieval_set_is_a_dataset_of_its_own_catalogue_with_one_function_per_gold_tool():
    from pathlib import Path

    from tender.evaluation.kinds import TOOL_DATASETS, any_dataset

    data = any_dataset("tools-toolalpaca")
    assert data.catalogue == "tools-toolalpaca" and data.parts == ("dev", "test")
    assert any_dataset("tools-nestful").parts == ("test",)  # eval-only: judged, never trained or tuned on
    assert "tools-bfcl" in TOOL_DATASETS
    from tender.evaluation.datasets import Paths

    paths = Paths(Path(__file__).resolve().parents[2] / "shared" / "data")
    if (paths.shared / "tool-retrieval" / "toolalpaca").is_dir():
        queries = data.queries(paths, "dev", catalog=None)
        assert queries and all(len(q.functions) == len(q.gold_items) for q in queries)
