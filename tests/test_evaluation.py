"""The evaluation: metric code on hand-made cases, the leave-out, and the report's schema."""

import json
import math
import os
import subprocess
import sys

import pytest

from tender.agents.service import Tender
from tender.catalog import Catalog
from tender.evaluation.metrics import average_precision_at, ndcg_at, percentile, precision_at, prf, recall_at
from tender.evaluation.runner import METHODS, EvalConfig, LeakError, NothingToValidate, calibration, evaluate
from tender.evaluation.split import folds, sample_ids, tuning_ids, validation_pool


def test_a_perfect_answer_scores_one():
    assert prf([1, 2], [2, 1]) == (1.0, 1.0, 1.0)
    assert ndcg_at([1, 2], [1, 2], 5) == 1.0


def test_an_empty_or_wrong_answer_scores_zero():
    assert prf([], [1]) == (0.0, 0.0, 0.0)
    assert prf([3], [1]) == (0.0, 0.0, 0.0)
    assert ndcg_at([], [1], 3) == 0.0 and precision_at([], [1], 1) == 0.0


def test_known_partial_cases():
    precision, recall, f1 = prf([1, 2, 3, 4], [1, 5])
    assert (precision, recall) == (0.25, 0.5)
    assert f1 == pytest.approx(2 * 0.25 * 0.5 / 0.75)
    assert precision_at([1, 9, 2], [1, 2], 3) == pytest.approx(2 / 3)
    assert precision_at([1], [1, 2], 5) == pytest.approx(1 / 5)  # stopping early is not rewarded
    assert recall_at([9, 1], [1, 2], 1) == 0.0 and recall_at([9, 1], [1, 2], 2) == 0.5


def test_ndcg_against_a_worked_example():
    # Hits at ranks 1 and 3 out of a true set of two: DCG = 1 + 1/log2(4) = 1.5, ideal = 1 + 1/log2(3).
    assert ndcg_at([1, 5, 2], [1, 2], 3) == pytest.approx(1.5 / (1 + 1 / math.log2(3)))
    assert ndcg_at([1, 5, 2], [1, 2], 3) == pytest.approx(0.9197, abs=1e-4)


def test_map_averages_the_precision_at_each_hit_over_the_hits_as_r2api_does():
    # Hits at ranks 1 and 3: (1/1 + 2/3) / 2 hits, though three APIs were right (R2API's metric.py divides by hits).
    assert average_precision_at([1, 5, 2, 7], [1, 2, 9], 5) == pytest.approx((1 + 2 / 3) / 2)
    assert average_precision_at([5, 6], [1], 5) == 0.0


def test_percentiles_interpolate():
    assert percentile([1, 2, 3, 4], 50) == 2.5
    assert percentile([10], 95) == 10


def test_samples_and_folds_are_reproducible_and_disjoint():
    ids = list(range(50))
    assert sample_ids(ids, 10, 0) == sample_ids(ids, 10, 0) != sample_ids(ids, 10, 1)
    parts = folds(ids, 5, 0)
    assert sorted(i for part in parts for i in part) == ids
    assert all(len(part) == 10 for part in parts)


def test_tuning_and_validation_mashups_never_include_a_reported_one():
    ids = list(range(4493))
    reported = set(sample_ids(ids, 100, 0))
    tuning = set(tuning_ids(ids))
    validation = set(validation_pool(ids))
    assert len(tuning) == 1000 and not tuning & reported
    assert not validation & (reported | tuning)
    assert validation | tuning | reported == set(ids)


def test_a_catalogue_too_small_to_validate_on_says_so(catalog_path, embedder):
    # 40 mashups: the reported sample of 100 takes them all.
    with pytest.raises(NothingToValidate, match="no mashups outside"):
        evaluate(
            EvalConfig(db=catalog_path, methods=["baseline-knn"], sample=5, seed=2, validation=True),
            lambda left_out: Catalog(catalog_path, embedder=embedder, exclude_mashups=left_out),
            Tender,
            progress=False,
        )


def test_validation_does_not_go_with_folds(catalog_path):
    env = {**os.environ, "TENDER_CATALOG": str(catalog_path), "TENDER_EMBEDDING_MODEL": "hashing"}
    result = subprocess.run(
        [sys.executable, "-m", "tender", "eval", "--validation", "--folds", "3", "--quiet"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert result.returncode == 2 and "--validation" in result.stderr


def test_test_mashups_are_absent_from_the_catalogue_the_agents_use(catalog_path, embedder):
    seen = []

    def open_catalog(left_out):
        cat = Catalog(catalog_path, embedder=embedder, exclude_mashups=left_out)
        seen.append((set(left_out), cat))
        return cat

    class Watching(Tender):
        def recommend(self, request, context=None):
            run = super().recommend(request, context)
            # No call for proposals carried a neighbourhood built from a test mashup, and no contractor holds one.
            for pool in self._pools.values():
                for knowledge in pool._api_knowledge.values():
                    assert not test_ids & {use.mashup_id for use in knowledge.history}
            return run

    config = EvalConfig(db=catalog_path, methods=list(METHODS), sample=8, seed=3)
    test_ids = set(sample_ids(list(range(40)), 8, 3))
    result = evaluate(config, open_catalog, Watching, progress=False)
    ((left_out, cat),) = [(ids, c) for ids, c in seen if ids]
    assert left_out == test_ids
    assert not test_ids & {m.id for m in cat.mashups()}
    assert not test_ids & set(cat.vectors("mashup").ids)
    assert result["config"]["leave_out_checked"] is True
    assert result["config"]["test_mashups"] == 8


def test_a_catalogue_that_still_holds_the_test_mashups_stops_the_run(catalog_path, embedder):
    config = EvalConfig(db=catalog_path, methods=["baseline-knn"], sample=5, seed=0)
    with pytest.raises(LeakError):
        evaluate(config, lambda left_out: Catalog(catalog_path, embedder=embedder), Tender, progress=False)


def test_tender_eval_writes_the_documented_json_and_a_figure(catalog_path, tmp_path):
    env = {**os.environ, "TENDER_CATALOG": str(catalog_path), "TENDER_EMBEDDING_MODEL": "hashing"}
    out, png = tmp_path / "out.json", tmp_path / "out.png"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "tender",
            "eval",
            "--protocol",
            "all",
            "--sample",
            "6",
            "--json",
            str(out),
            "--plot",
            str(png),
            "--quiet",
            "--mask-api-names",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "| manager-led | final |" in result.stdout
    data = json.loads(out.read_text())
    assert set(data) == {"config", "results"}
    assert set(data["results"]) == {
        "manager-led",
        "contractor-led",
        "collaborative",
        "single-agent",
        "baseline-popularity",
        "baseline-embedding",
        "baseline-knn",
    }
    manager = data["results"]["manager-led"]
    assert set(manager["stages"]) == {"category", "bidding", "final"}
    assert set(manager["stages"]["final"]) == {"precision", "recall", "f1"}
    assert {"p@1", "r@1", "ndcg@1", "p@10", "r@10", "ndcg@10"} <= set(manager["ranking"])
    assert set(manager["tokens"]) == {"input", "output"} and set(manager["latency_ms"]) == {"p50", "p95"}
    assert "avg_apis" in manager and "contractors_contacted" in manager
    assert manager["llm"] == {"calls": 0, "cache_hits": 0, "fallbacks": 0}
    assert "LLM calls a request" not in result.stdout  # that table appears only when an LLM took part
    assert set(data["results"]["single-agent"]["stages"]) == {"final"}
    assert set(data["results"]["baseline-knn"]["stages"]) == {"final"}
    assert png.read_bytes()[:4] == b"\x89PNG"
    assert data["config"]["mask_api_names"] is True


def test_masking_removes_api_names_as_a_user_would_not_know_them():
    from tender.agents.text import mask_names

    text = "This app uses the Yelp Fusion API and Google Maps to show Yelp reviews on a map."
    masked = mask_names(text, ["Yelp Fusion", "Google Maps", "Twitter"])
    assert "Yelp" not in masked and "Google" not in masked and "API" not in masked
    assert "reviews on a map" in masked


def test_masking_keeps_ordinary_words_that_begin_an_api_name():
    from tender.agents.text import mask_names

    names = ["Travel Deals", "Internet Archive", "Twitter"]
    masked = mask_names("Travel Deals and twitter feed your travel plans from the internet. Travel well.", names)
    assert "Deals" not in masked and "twitter" not in masked
    assert "travel plans from the internet" in masked
    # Written as in the name, the first words are the name.
    assert "Travel well" not in masked


def test_the_report_says_how_much_of_each_run_an_llm_answered():
    from tender.evaluation.report import markdown

    run = {
        "stages": {"final": {"precision": 1, "recall": 1, "f1": 1}},
        "avg_apis": 1.0,
        "ranking": {"p@1": 1, "r@5": 1, "ndcg@5": 1, "ndcg@10": 1},
        "tokens": {"input": 900, "output": 40},
        "contractors_contacted": 12,
        "messages": 20,
        "latency_ms": {"p50": 1, "p95": 2},
        "llm": {"calls": 13.0, "cache_hits": 4.0, "fallbacks": 1.5},
    }
    table = markdown({"results": {"contractor-led": run}})
    assert "| contractor-led | 13.0 | 4.0 | 0.0 | 0.0 | 1.5 | 0 | - |" in table


def test_runs_with_fallbacks_are_told_apart_and_tokens_are_given_per_step():
    from tender.evaluation.report import markdown
    from tender.evaluation.runner import Observation, summarise

    def run(mashup_id, final, fallbacks):
        return Observation(
            stages={"category": final, "bidding": final, "final": final},
            ranked=final,
            truth=[1],
            latency_ms=1.0,
            tokens=(1000, 50),
            llm=(10, 0, fallbacks),
            mashup_id=mashup_id,
            tokens_by_step={"manager.decompose": (200, 20), "contractor.bid": (800, 30)},
            repairs=1,
            tidied=2,
            fallback_notes=["manager, select: the LLM endpoint failed (x); the offline reasoner answered this step."]
            if fallbacks
            else [],
        )

    summary = summarise("manager-led", [run(7, [1], 0), run(8, [2], 1)])

    llm = summary["llm"]
    assert llm["runs_with_fallbacks"] == [8] and list(llm["fallback_notes"]) == ["8"]
    assert llm["llm_only"]["runs"] == 1 and llm["llm_only"]["mashups"] == [7]
    assert llm["llm_only"]["stages"]["final"]["f1"] == 1.0 and summary["stages"]["final"]["f1"] == 0.5
    assert llm["tokens_by_step"] == {
        "contractor.bid": {"input": 800, "output": 30},
        "manager.decompose": {"input": 200, "output": 20},
    }
    assert llm["repairs"] == 1 and llm["tidied"] == 2
    assert "| manager-led | 10.0 | 0.0 | 1.0 | 2.0 | 0.5 | 1 | 1.000 |" in markdown(
        {"results": {"manager-led": summary}}
    )


def test_calibration_counts_the_recommended_apis_and_the_share_right_per_band_of_confidence():
    bands = calibration([(0.05, False), (0.08, True), (0.6, True), (0.65, True), (0.66, False), (1.0, True)])
    assert bands == [
        {"confidence": "0.0-0.1", "apis": 2, "right": 0.5},
        {"confidence": "0.5-0.7", "apis": 3, "right": 0.667},
        {"confidence": "0.7-1.0", "apis": 1, "right": 1.0},
    ]
