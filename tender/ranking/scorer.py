"""The one scorer: a logistic model over the evidence (evidence.FEATURES), fitted by `tender train ranker` on
training parts only, then calibrated per regime (catalogues with and without usage history) on dev parts, so that
a score reads as the probability that the item serves the function. The file records what it was fitted on.

With usage history an item scores the larger of its two readings, with the history and of its description alone:
the past mashups' votes can lift an item, never sink one. Fitted on which APIs past mashups used, the model holds
an item nobody used against it; that left a need unserved where search ranked the right API first, and handed it to
the popular API the similar mashups used beside it (docs/tuning.md)."""

from functools import cached_property
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from .evidence import FEATURES, Evidence, vector

MODEL_FILE = Path(__file__).with_name("model.json")


def shipped_model(encoder: str) -> Path:
    """The shipped model fitted on this encoder's vectors: model.<encoder>.json where one ships (the tuned
    tender-minilm), else model.json (the stock all-MiniLM-L6-v2)."""
    fitted = MODEL_FILE.with_name(f"model.{encoder}.json")
    return fitted if fitted.is_file() else MODEL_FILE


class Objective(BaseModel):
    """The selection objective's numbers, fitted on dev parts (training/objective.py): what an item costs a plan
    against the expected coverage it adds, in a catalogue with usage history and in one without (their
    probabilities are calibrated apart, and what a plan gains by one more item differs), and what a second item
    of the same provider for the same function costs."""

    model_config = ConfigDict(frozen=True)

    cost: float = Field(0.3, description="What an item costs, in a catalogue with usage history.")
    cost_cold: float | None = Field(None, description="... in one without; None: the same.")
    redundancy: float = Field(0.1, description="What a second item of the same provider for the same function costs.")

    def cost_for(self, history: bool) -> float:
        return self.cost if history or self.cost_cold is None else self.cost_cold


class Scorer(BaseModel):
    model_config = ConfigDict(frozen=True)

    features: tuple[str, ...] = FEATURES
    weights: tuple[float, ...]
    bias: float
    # Per regime ("history", "cold"): (slope, intercept) applied to the model's log-odds (Platt scaling).
    calibration: dict[str, tuple[float, float]] = Field(default_factory=dict)
    objective: Objective = Field(default_factory=Objective)
    encoder: str = ""
    encoder_weights: str = Field("", description="The fingerprint of the encoder's weights (catalog.encoders).")
    fitted_on: dict[str, object] = Field(default_factory=dict, description="What data each part was fitted on.")

    @model_validator(mode="after")
    def _same_features(self):
        if tuple(self.features) != FEATURES or len(self.weights) != len(FEATURES):
            raise ValueError(
                "the ranking model was fitted on other features than this version extracts; refit it with "
                "`tender train ranker`"
            )
        return self

    @classmethod
    def load(cls, path: Path | str = MODEL_FILE) -> "Scorer":
        return cls.model_validate_json(Path(path).read_text())

    @cached_property
    def _w(self) -> np.ndarray:
        return np.array(self.weights)

    def logits(self, evidence: list[Evidence]) -> np.ndarray:
        if not evidence:
            return np.zeros(0)
        x = np.stack([vector(e) for e in evidence])
        z = x @ self._w + self.bias
        for regime, (slope, intercept) in self.calibration.items():
            rows = np.array([(e.catalogue_history == (regime == "history")) for e in evidence])
            z = np.where(rows, slope * z + intercept, z)
        return z

    def probabilities(self, evidence: list[Evidence]) -> np.ndarray:
        """Where the catalogue has usage history, the larger of two readings: with it, and of the item's
        description alone (as in a catalogue without history), so that the lack of past use never speaks against an
        item that says it does the job (a new or little-used one, the active substitute of a gone one)."""
        with_history = _sigmoid(self.logits(evidence))
        if not any(e.catalogue_history for e in evidence):
            return with_history
        alone = _sigmoid(self.logits([_description_only(e) for e in evidence]))
        return np.maximum(with_history, alone)


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(z, -40, 40)))


def _description_only(e: Evidence) -> Evidence:
    return e.model_copy(update={"catalogue_history": False, "history": 0.0, "history_requirement": 0.0})


def untrained() -> Scorer:
    """A scorer that ranks by the description's similarity alone: what a first fit starts from."""
    weights = [0.0] * len(FEATURES)
    for regime in ("history", "cold"):
        weights[FEATURES.index(f"dense:{regime}")] = 10.0
    return Scorer(weights=tuple(weights), bias=-5.0, fitted_on={"untrained": True})
