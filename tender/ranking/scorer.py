"""The one scorer: a logistic model over the evidence (evidence.FEATURES), fitted by `tender train ranker` on
training parts only, then calibrated per regime (catalogues with and without usage history) on dev parts, so that
a score reads as the probability that the item serves the function. The file records what it was fitted on.

With usage history an item scores the larger of its two readings, with the history and of its description alone:
the past mashups' votes can lift an item, never sink one. Fitted on which APIs past mashups used, the model holds
an item nobody used against it; that left a need unserved where search ranked the right API first, and handed it to
the popular API the similar mashups used beside it (docs/tuning.md)."""

import json
from functools import cache, cached_property
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from tender.catalog.encoders import EncoderId, recorded_encoder, same_encoder

from .evidence import FEATURES, Evidence, matrix

MODEL_FILE = Path(__file__).with_name("model.json")
_REGIME = FEATURES.index("history_regime")
SHIPPED_ASSETS = Path(__file__).parent.parent / "catalog" / "assets"


def fitted_models(folder: Path | None = None) -> list[Path]:
    """Every ranking model Tender can pick from: the shipped ones (model.json for the stock all-MiniLM-L6-v2,
    model.<encoder>.json for the others measured) and, for an encoder read from a folder, the ones `tender train
    ranker` wrote beside it (tender-ranking-<fingerprint>.json)."""
    shipped = [MODEL_FILE, *sorted(MODEL_FILE.parent.glob("model.*.json"))]
    return shipped + (sorted(Path(folder).glob("tender-ranking-*.json")) if folder else [])


def ranking_folder(embedder) -> Path | None:
    """Where a ranking model fitted on this encoder's vectors is written and looked for besides the shipped ones:
    the folder of a delta or of a model read from a folder; None for the stock and the shipped encoders."""
    delta = getattr(embedder, "delta", None)
    if delta is not None:
        return None if delta.parent == SHIPPED_ASSETS else delta.parent
    if getattr(embedder, "stock", True):
        return None
    return getattr(getattr(embedder, "folder", None), "path", None)


def beside_encoder(folder: Path, name: str, fingerprint: str) -> Path:
    """Where `tender train ranker` writes the model for a folder encoder, so that it is found by itself."""
    cut = name.partition("@")[2]
    return Path(folder) / f"tender-ranking-{fingerprint}{'@' + cut if cut else ''}.json"


def shipped_model(name: str, fingerprint: str = "", folder: Path | None = None) -> Path | None:
    """The ranking model fitted on this encoder's vectors, picked by its weights' fingerprint (and its Matryoshka
    cut, the `@N` of its name): an encoder folder renamed keeps its model. None where none was fitted for it."""
    loaded = EncoderId(name=name, fingerprint=fingerprint)
    for path in fitted_models(folder):
        recorded = _recorded_encoder(path, path.stat().st_mtime_ns)
        if recorded is not None and same_encoder(recorded, loaded):
            return path
    return None


@cache
def _recorded_encoder(path: Path, modified: int) -> EncoderId | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    return recorded_encoder(str(data.get("encoder", "")), str(data.get("encoder_weights", "")) or None)


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
    # The kinds of catalogue (catalog.source_kinds) the calibration saw, and the bar for "likely" elsewhere: the
    # lowest score whose items were right at least 80% of the time on every dev source held out of the calibration
    # (training/ranker.py). Empty: a model that did not record them, whose words hold the same everywhere.
    calibrated_kinds: tuple[str, ...] = ()
    high_unseen: float | None = None
    fitted_on: dict[str, object] = Field(default_factory=dict, description="What data each part was fitted on.")
    # The paper's task predicts which APIs a 2010s mashup used, where past use is itself the answer: there (and only
    # there: tender.evaluation's mashup datasets) history may lift an item its description does not support.
    history_lifts: bool = Field(False, exclude=True)

    @model_validator(mode="before")
    @classmethod
    def _known_features(cls, data):
        """A model fitted before a feature was added reads as one that gives it no weight: its scores unchanged.
        One that names a feature this version does not extract cannot be read."""
        if not isinstance(data, dict) or "features" not in data:
            return data
        features, weights = tuple(data["features"]), tuple(data.get("weights", ()))
        if len(features) != len(weights) or not set(features) <= set(FEATURES):
            raise ValueError(
                "the ranking model was fitted on other features than this version extracts; refit it with "
                "`tender train ranker`"
            )
        given = dict(zip(features, weights))
        return {**data, "features": FEATURES, "weights": tuple(given.get(f, 0.0) for f in FEATURES)}

    def high_for(self, kinds: set[str]) -> float:
        """The bar for "likely" in a catalogue built from these kinds of source: HIGH where the calibration saw
        every one of them (or the model did not record what it saw), `high_unseen` where it did not."""
        from .evidence import HIGH

        if not self.calibrated_kinds or self.high_unseen is None or kinds <= set(self.calibrated_kinds):
            return HIGH
        return max(HIGH, self.high_unseen)

    @classmethod
    def load(cls, path: Path | str = MODEL_FILE) -> "Scorer":
        return cls.model_validate_json(Path(path).read_text())

    @cached_property
    def _w(self) -> np.ndarray:
        return np.array(self.weights)

    def logits(self, evidence: list[Evidence], description_only: bool = False) -> np.ndarray:
        """The calibrated log-odds; `description_only`: each item read as in a catalogue without usage history."""
        if not evidence:
            return np.zeros(0)
        x = matrix(evidence, description_only)
        z = x @ self._w + self.bias
        history = x[:, _REGIME] == 1.0  # each row's own reading: with usage history or without
        for regime, (slope, intercept) in self.calibration.items():
            rows = history if regime == "history" else ~history
            z = np.where(rows, slope * z + intercept, z)
        return z

    def probabilities(self, evidence: list[Evidence]) -> np.ndarray:
        """Where the catalogue has usage history, two readings: with it, and of the item's description alone (as in
        a catalogue without history). The lack of past use never speaks against an item that says it does the job
        (a new or little-used one, the active substitute of a gone one): it scores the larger. And past use is
        evidence that items went together, not that an item does the job: an item whose description alone would not
        be awarded (below the cost of an item in a catalogue without history) keeps that reading, however often the
        similar past apps used it."""
        with_history = _sigmoid(self.logits(evidence))
        if not any(e.catalogue_history for e in evidence):
            return with_history
        alone = _sigmoid(self.logits(evidence, description_only=True))
        serves = alone >= self.objective.cost_for(False)
        return (
            np.maximum(with_history, alone)
            if self.history_lifts
            else np.where(serves, np.maximum(with_history, alone), alone)
        )


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(z, -40, 40)))


def untrained() -> Scorer:
    """A scorer that ranks by the description's similarity alone: what a first fit starts from."""
    weights = [0.0] * len(FEATURES)
    for regime in ("history", "cold"):
        weights[FEATURES.index(f"dense:{regime}")] = 10.0
    return Scorer(weights=tuple(weights), bias=-5.0, fitted_on={"untrained": True})
