"""The ranking: a function's candidates and their evidence, the one scorer, and the one extractor that serving and
training share."""

import json
from pathlib import Path

import numpy as np
import pytest

from tender.catalog import Catalog
from tender.evaluation.datasets import Paths, split
from tender.ranking.evidence import FEATURES, Evidence, vector
from tender.ranking.retrieval import Ranker
from tender.ranking.scorer import MODEL_FILE, Scorer
from tender.ranking.vectors import QueryEncoder
from tests.conftest import ROOT
from tests.fixture_data import mashup_rows


@pytest.fixture
def ranker(catalog, embedder):
    return Ranker(catalog, QueryEncoder(embedder), Scorer.load())


def ids(shortlist, n=50):
    return [c.item for c in shortlist.candidates[:n]]


def test_a_function_s_best_candidate_shares_its_words_and_meaning(ranker):
    assert 18 in ids(ranker.shortlist("send an SMS text message", "send an SMS text message"), 3)  # Twilio


def test_an_item_the_requirement_names_is_always_a_candidate_and_says_so(ranker):
    shortlist = ranker.shortlist("share the pictures", "share the pictures on Vimeo")
    vimeo = shortlist.get(16)
    assert vimeo is not None and vimeo.evidence.named == 1.0


def test_an_excluded_item_is_never_a_candidate(ranker):
    assert 18 not in ids(ranker.shortlist("send an SMS text message", "send an SMS text message", exclude={18}))


def test_evidence_is_read_against_the_function_s_best_in_the_catalogue(ranker):
    shortlist = ranker.shortlist("current weather forecast", "current weather forecast")
    best = max(shortlist.candidates, key=lambda c: c.evidence.dense)
    assert best.evidence.dense_rank == 1 and best.evidence.dense_gap == 0.0
    assert all(c.evidence.dense_gap <= 0 and c.evidence.dense_rank >= 1 for c in shortlist.candidates)
    assert list(shortlist.candidates) == sorted(shortlist.candidates, key=lambda c: -c.score)


def test_only_a_catalogue_with_usage_history_speaks_of_it(catalog_path, embedder):
    every = [m["id"] for m in mashup_rows()]
    cold = Ranker(
        Catalog(catalog_path, embedder=embedder, exclude_mashups=every), QueryEncoder(embedder), Scorer.load()
    )
    shortlist = cold.shortlist("photos on a map", "photos on a map")
    assert not any(c.evidence.catalogue_history or c.evidence.history or c.evidence.uses for c in shortlist.candidates)


def test_a_closer_description_never_scores_lower_all_else_equal():
    scorer = Scorer.load()
    base = dict(dense_rank=3, dense_requirement=0.3, name=0.3, name_gap=-0.1, lexical=0.5, lexical_rank=2)
    for history in (True, False):
        low = Evidence(dense=0.3, dense_gap=-0.2, catalogue_history=history, **base)
        high = Evidence(dense=0.4, dense_gap=-0.1, catalogue_history=history, **base)
        assert scorer.probabilities([high])[0] >= scorer.probabilities([low])[0]


def test_no_past_use_never_counts_against_an_item_that_says_it_does_the_job():
    scorer = Scorer.load()
    matched = dict(dense=0.6, dense_gap=0.0, dense_rank=1, dense_requirement=0.5, name=0.6, name_gap=0.0)
    matched |= dict(lexical=1.0, lexical_rank=1)
    alone = scorer.probabilities([Evidence(catalogue_history=False, **matched)])[0]
    unused = scorer.probabilities([Evidence(catalogue_history=True, **matched)])[0]
    used = scorer.probabilities([Evidence(catalogue_history=True, history=0.8, history_requirement=0.8, **matched)])[0]
    assert unused >= alone  # an item nobody used yet, in a catalogue with history
    assert used >= unused  # past use can lift it


def test_the_scorer_refuses_a_model_fitted_on_other_features(tmp_path):
    data = json.loads(MODEL_FILE.read_text())
    data["features"] = data["features"][:-1]
    with pytest.raises(ValueError, match="tender train ranker"):
        Scorer.model_validate(data)


def test_training_examples_are_the_serving_evidence(catalog, embedder):
    from tender.training.ranker import examples

    text = "restaurant reviews with photos"
    made = examples("t", catalog, [(text, {3})], progress=False)
    served = Ranker(catalog, QueryEncoder(embedder), Scorer.load()).shortlist(text, text)
    assert sorted(tuple(x) for x in made.x) == sorted(tuple(vector(c.evidence)) for c in served.candidates)
    assert sum(made.y) == (1 if served.get(3) else 0)
    assert len(FEATURES) == len(made.x[0])


def test_the_shipped_model_records_what_each_of_its_parts_was_fitted_on():
    fitted = Scorer.load().fitted_on
    assert {"model", "calibration", "objective"} <= set(fitted)
    assert "train" in str(fitted["model"]["parts"]) and "dev" in str(fitted["calibration"]["parts"])
    assert "mcp" not in json.dumps(fitted["model"]).lower()


def test_a_training_source_weighs_its_share_and_one_of_share_zero_is_left_out():
    from tender.training.ranker import Examples, fit

    x = [np.array([1.0]), np.array([-1.0])]
    says_yes = Examples("one", x, [1.0, 0.0], [0, 0])
    says_no = Examples("other", x, [0.0, 1.0], [0, 0])
    alone, _ = fit([says_yes, says_no], l2=0.1, shares=[1.0, 0.0])
    leaning, _ = fit([says_yes, says_no], l2=0.1, shares=[1.0, 0.5])
    assert alone[0] > leaning[0] > 0  # the other source pulls the weight back only as far as its share


def test_training_draws_no_dev_or_test_mashup():
    from tender.training.ranker import train_mashups

    shared = ROOT.parent / "shared" / "data"
    if not (shared / "programmableweb" / "mashups.jsonl").is_file():
        pytest.skip("../shared/data/programmableweb is not beside the clone")
    drawn = {m["id"] for m in train_mashups(Paths(shared))}
    held = set(split("programmableweb")["dev"]) | set(split("programmableweb")["test"])
    assert drawn and not drawn & held


def test_the_model_file_is_package_data():
    assert MODEL_FILE.parent == Path(__file__).resolve().parents[1] / "tender" / "ranking"


def test_every_trained_component_in_the_package_records_what_it_was_fitted_on():
    package = Path(__file__).resolve().parents[1] / "tender"
    for path in [
        *sorted((package / "ranking").glob("model*.json")),
        *sorted((package / "evaluation" / "r2api_models").glob("*.json")),
    ]:
        fitted = json.loads(path.read_text())["fitted_on"]
        assert "train" in json.dumps(fitted["model"]) and "dev" in json.dumps(fitted["calibration"]), path.name
        if path.parent.name == "r2api_models":
            assert f"R2API {path.stem}" in fitted["model"]["parts"], path.name  # its fold left out
    for delta in sorted((package / "catalog" / "assets").glob("*.npz")):
        record = json.loads(delta.with_suffix(".json").read_text())
        assert record["fitted_on"]["parts"], delta.name


def test_on_a_kind_of_catalogue_the_calibration_never_saw_likely_takes_a_higher_score(catalog, embedder):
    from tender.ranking.evidence import HIGH, level

    fitted = Scorer.load().model_copy(update={"calibrated_kinds": ("jsonl", "openapi"), "high_unseen": 0.85})
    assert fitted.high_for({"jsonl"}) == HIGH  # a kind it was calibrated on: the words as they were
    assert fitted.high_for({"jsonl", "toolsdk"}) == 0.85  # any kind it never saw raises the bar
    assert Scorer.load().model_copy(update={"calibrated_kinds": ()}).high_for({"toolsdk"}) == HIGH  # not recorded
    assert level(0.7) == "high" and level(0.7, 0.85) == "medium" and level(0.9, 0.85) == "high"
    said = Evidence(**{**EVIDENCE, "high": 0.85}).describe(0.7)
    assert said[0].startswith("may serve the need") and "not calibrated on this kind of catalogue" in said[1]
    # The catalogue of these tests is built from a JSONL file: a kind this model was calibrated on.
    ranker = Ranker(catalog, QueryEncoder(embedder), fitted)
    shortlist = ranker.shortlist("send an SMS text message", "send an SMS text message")
    assert {c.evidence.high for c in shortlist.candidates} == {HIGH}


EVIDENCE = dict(
    dense=0.5,
    dense_gap=0.0,
    dense_rank=1,
    dense_requirement=0.5,
    name=0.3,
    name_gap=0.0,
    lexical=1.0,
    lexical_rank=1,
)


def test_the_calibration_weighs_each_source_alike_and_finds_the_bar_for_a_kind_it_never_saw():
    from tender.training.ranker import Examples, calibrate, held_out_reliability, unseen_bar

    rng = np.random.default_rng(0)
    scorer = Scorer(weights=tuple([0.0] * (len(FEATURES) - 1) + [0.0]), bias=0.0)

    def source(name, rows, right):
        x = [np.r_[np.zeros(len(FEATURES) - 1), 0.0] for _ in range(rows)]  # a cold catalogue: regime 0
        return Examples(name, x, [float(rng.random() < right) for _ in range(rows)], list(range(rows)))

    # One large source right half the time, one small one right 90%: weighed alike, the calibration sits between.
    slope, intercept = calibrate(scorer, [source("large", 2000, 0.5), source("small", 100, 0.9)])["cold"]
    assert 0.6 < 1 / (1 + np.exp(-intercept)) < 0.8
    rows = held_out_reliability(scorer, [source("a", 200, 0.9), source("b", 200, 0.9)], 0.6)
    assert [r["source"] for r in rows] == ["a", "b"] and all(r["called"] == 200 for r in rows)
    assert 0.6 <= unseen_bar(scorer, [source("a", 200, 0.9), source("b", 200, 0.9)]) <= 0.95


def test_refitting_only_the_words_keeps_every_score_and_records_the_bar_for_unseen_kinds(tmp_path, monkeypatch):
    import argparse

    from tender.training import ranker as training

    rng = np.random.default_rng(1)

    def source(name, rows, right):
        x = [np.r_[rng.normal(size=len(FEATURES) - 1), 0.0] for _ in range(rows)]
        return training.Examples(name, x, [float(rng.random() < right) for _ in range(rows)], list(range(rows)))

    monkeypatch.setattr(training, "dev_examples", lambda *a: [source("judged", 300, 0.7)])
    monkeypatch.setattr(training, "tool_dev_examples", lambda *a: [source("tools", 300, 0.4)])
    monkeypatch.setattr(
        training, "source_kinds", lambda catalogues, name: {"openapi" if name == "openapi" else "jsonl"}
    )
    shipped = Scorer.load()
    out = tmp_path / "model.json"
    out.write_text(shipped.model_dump_json())
    args = argparse.Namespace(out=out, dev=300, seed=0, quiet=True)
    assert training.refit_words(args, None, None, 0.0) == 0
    refitted = Scorer.load(out)
    assert refitted.model_dump(exclude={"calibrated_kinds", "high_unseen", "fitted_on"}) == shipped.model_dump(
        exclude={"calibrated_kinds", "high_unseen", "fitted_on"}
    )
    assert refitted.calibrated_kinds == ("jsonl", "openapi") and refitted.high_unseen is not None
    assert [row["source"] for row in refitted.fitted_on["words"]["held_out"]] == ["judged", "tools"]
    with pytest.raises(SystemExit):
        training.refit_words(argparse.Namespace(out=tmp_path / "none.json", dev=300, seed=0, quiet=True), None, None, 0)


def test_likely_on_a_held_out_kind_is_read_with_a_calibration_that_never_saw_it():
    from tender.evaluation.report import _words
    from tender.training.ranker import Examples
    from tender.training.words import reliability

    rng = np.random.default_rng(2)
    scorer = Scorer(weights=tuple([1.0] + [0.0] * (len(FEATURES) - 1)), bias=0.0)

    def source(name, rows, slope):
        x, y = [], []
        for _ in range(rows):
            v = np.zeros(len(FEATURES))
            v[0] = rng.normal()
            x.append(v)
            y.append(float(rng.random() < 1 / (1 + np.exp(-slope * v[0]))))
        return Examples(name, x, y, list(range(rows)))

    dev = [source("alike dev", 400, 3.0), source("wild dev", 400, 0.2)]
    reported = [source("alike test", 400, 3.0), source("wild test", 400, 0.2)]
    rows = reliability(scorer, dev, reported, [source("never seen test", 200, 3.0)])
    assert [r["source"] for r in rows] == ["alike", "wild", "never seen"]
    assert [r["held_out"] for r in rows] == [True, True, False]
    # Held out, "alike" is read with the calibration of "wild" alone: fitted on a kind that says little.
    assert all(r["at_bar"]["called"] <= r["at_high"]["called"] for r in rows)
    table = _words({"words": {"part": "test", "rows": rows}})
    assert table[0].startswith("## ") and sum(line.startswith("| alike |") for line in table) == 1


def test_a_shortlist_s_feature_rows_made_at_once_are_each_evidence_s_own_vector():
    from tender.ranking.evidence import matrix

    pieces = [
        Evidence(**{**EVIDENCE, "dense_rank": 2, "lexical_rank": 3, "catalogue_history": True}),
        Evidence(**{**EVIDENCE, "dense_context": 0.6, "dense_context_gap": -0.05, "named": 1.0}),
        Evidence(**{**EVIDENCE, "history": 0.4, "history_requirement": 0.1, "catalogue_history": True}),
    ]
    for description_only in (False, True):
        rows = matrix(pieces, description_only)
        assert rows.shape == (3, len(FEATURES))
        for row, piece in zip(rows, pieces):
            assert np.array_equal(row, vector(piece, description_only))
