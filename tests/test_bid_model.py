"""The bid model: logistic weights over the features and their pairwise products, kept in a file."""

import json

import numpy as np
import pytest
from pydantic import ValidationError

from tender.agents.reasoners.embedded import FEATURES, TERMS, BidModel, probability, terms


def test_terms_are_the_features_then_every_product_of_two():
    x = np.arange(1.0, len(FEATURES) + 1)
    expanded = dict(zip(TERMS, terms(x)))
    assert len(TERMS) == len(FEATURES) + len(FEATURES) * (len(FEATURES) + 1) // 2
    assert expanded["usage_log"] == x[FEATURES.index("usage_log")]
    assert expanded["desc_requirement*named"] == x[0] * x[FEATURES.index("named")]
    assert expanded["clause_vote*clause_vote"] == x[FEATURES.index("clause_vote")] ** 2


def test_terms_of_a_matrix_are_computed_row_by_row():
    x = np.random.default_rng(0).random((3, len(FEATURES)))
    assert np.allclose(terms(x)[1], terms(x[1]))


def test_the_shipped_model_loads_and_says_where_it_came_from():
    model = BidModel.load()
    assert set(model.weights) == set(TERMS)
    assert "tuning mashups" in model.fitted_on


def test_a_model_file_missing_a_term_is_refused_with_the_way_to_refit(tmp_path):
    data = BidModel.load().model_dump()
    del data["weights"]["named"]
    path = tmp_path / "model.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ValidationError, match="tender.training.tune --write"):
        BidModel.load(path)


def test_stronger_evidence_gives_a_higher_bid():
    model = BidModel.load()
    weak = np.zeros(len(FEATURES))
    strong = weak.copy()
    strong[FEATURES.index("neighbour_vote")] = strong[FEATURES.index("clause_vote")] = 0.8
    strong[FEATURES.index("desc_requirement")] = strong[FEATURES.index("desc_function")] = 0.5
    assert 0.0 < probability(weak, model) < probability(strong, model) < 1.0
