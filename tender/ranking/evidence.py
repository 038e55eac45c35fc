"""What speaks for an item serving a function: one typed record per (function, item), made by one extractor for
bidding and for training alike (`Ranker.shortlist`, `training.ranker`).

Every number is relative where the catalogue sets the scale: a catalogue of short tool descriptions has other
cosine similarities and BM25 scores than one of long API pages, so each is also given against the function's
best in the catalogue. Usage history and popularity are evidence like the rest, never a decision on their own."""

import math

import numpy as np
from pydantic import BaseModel, ConfigDict, Field


class Evidence(BaseModel):
    """Why an item may serve a function."""

    model_config = ConfigDict(frozen=True)

    dense: float = Field(description="Cosine similarity of the function and the item's text (name, description).")
    dense_gap: float = Field(description="The same, less the function's best in the catalogue (0 for the best).")
    dense_rank: int = Field(description="The item's rank by that similarity, 1 for the best.")
    dense_requirement: float = Field(description="Cosine similarity of the whole requirement and the item's text.")
    dense_context: float | None = Field(
        None,
        description="Cosine similarity of the function read where it stands in the requirement (vectors.in_context) "
        "and the item's text; None where it is not the requirement's own words, which the scorer reads as `dense`.",
    )
    dense_context_gap: float | None = Field(None, description="The same, less the function's best in the catalogue.")
    name: float = Field(description="Cosine similarity of the function and the words of the item's own name.")
    name_gap: float = Field(description="The same, less the function's best name in the catalogue.")
    lexical: float = Field(description="BM25 of the function's words in the item, over the function's best (0 to 1).")
    lexical_rank: int = Field(description="The item's rank by BM25, 1 for the best; 0: no word in common.")
    history: float = Field(
        0.0, description="Share of the nearest past mashups' weight (nearest to the function) that used the item."
    )
    history_requirement: float = Field(0.0, description="The same, nearest to the whole requirement.")
    uses: int = Field(0, description="Past mashups that used the item.")
    catalogue_history: bool = Field(False, description="Whether the catalogue has usage history at all.")
    named: float = Field(0.0, description="1 where the requirement names the item, 0.5 by its first words.")
    deprecated: bool = False
    uninstallable: bool = Field(False, description="An MCP server with no route Tender can write to install it.")
    via_tool: str = Field(
        "", description="For an MCP server: the tool of it whose description the numbers above are of ('' its own)."
    )
    high: float = Field(
        0.6,
        description="The score from which the item reads as likely to serve: HIGH where the ranking model was "
        "calibrated on this kind of catalogue, the higher bar it measured on kinds held out of its calibration where "
        "it was not. Not a feature: it changes the words, never the score.",
    )

    def describe(self, score: float) -> list[str]:
        """The bid in plain words, strongest first: what its score means, then facts that are true of the item
        whatever the score (its rank, shared words, past use), never an adjective the score does not back."""
        said = [f"{LEVEL_WORDS[level(score, self.high)]} ({score:.2f})"]
        if self.high > HIGH and score >= HIGH:
            said.append("its score is not calibrated on this kind of catalogue")
        if self.via_tool:
            said.append(f"matched through its tool {self.via_tool!r}")
        if self.named >= 1:
            said.append("the requirement names it")
        if max(self.history, self.history_requirement) >= 0.1:
            share = max(self.history, self.history_requirement)
            said.append(f"similar past mashups used it ({share:.0%} of the nearest)")
        if self.dense_rank == 1:
            said.append("the catalogue's nearest description to the need")
        elif 1 < self.dense_rank <= 3:
            said.append(f"the catalogue's {ORDINALS[self.dense_rank]} nearest description to the need")
        if self.lexical_rank == 1:
            said.append("it shares the need's words most")
        elif self.lexical_rank:
            said.append("it shares some of the need's words")
        if self.uses and max(self.history, self.history_requirement) < 0.1:
            said.append(f"used in {self.uses} past mashup{'s' if self.uses != 1 else ''}")
        if self.uninstallable:
            said.append("no install route known: see its repository")
        return said


# A bid's score is a calibrated probability; its level in a word. On the judged suites' dev parts (three kinds of
# catalogue: ProgrammableWeb APIs, MCP tools, OpenAPI operations) awards scored "high" were right 88-91% of the time,
# "medium" 48-76%, "low" 35-45% (docs/results.md keeps the reliability table per dataset).
HIGH, MEDIUM = 0.6, 0.3
LEVEL_WORDS = {"high": "likely serves the need", "medium": "may serve the need", "low": "a weak match for the need"}
ORDINALS = {2: "second", 3: "third"}


def level(score: float, high: float = HIGH) -> str:
    """The score in a word; `high` the bar for "likely" (Evidence.high: higher on a kind of catalogue the ranking
    model's calibration never saw)."""
    return "high" if score >= high else "medium" if score >= MEDIUM else "low"


# The scorer's inputs, in order: each evidence number, once for a catalogue with usage history and once for one
# without (a learned weight per regime: a description match means more where no history speaks), and the regime.
BASE = (
    "dense",
    "dense_gap",
    "dense_top",
    "dense_requirement",
    "dense_context",
    "dense_context_gap",
    "name",
    "name_gap",
    "lexical",
    "lexical_top",
    "history",
    "history_requirement",
    "named",
)
FEATURES = tuple(f"{name}:{regime}" for regime in ("history", "cold") for name in BASE) + ("history_regime",)


def _top(rank: int) -> float:
    """1 for the first, falling as 1/log2(rank + 1); 0 for no rank."""
    return 1.0 / math.log2(rank + 1) if rank > 0 else 0.0


def vector(e: Evidence, description_only: bool = False) -> np.ndarray:
    """The scorer's input for one piece of evidence, in FEATURES order; `description_only`: as if the catalogue had
    no usage history (the item read by its description alone, scorer.probabilities)."""
    return matrix([e], description_only)[0]


def matrix(evidence: list[Evidence], description_only: bool = False) -> np.ndarray:
    """`vector` of each piece of evidence, a row each, made at once (a shortlist's rows one by one cost more than
    its scoring)."""
    base = np.array(
        [
            [
                e.dense,
                e.dense_gap,
                _top(e.dense_rank),
                e.dense_requirement,
                e.dense if e.dense_context is None else e.dense_context,
                e.dense_gap if e.dense_context_gap is None else e.dense_context_gap,
                e.name,
                e.name_gap,
                e.lexical,
                _top(e.lexical_rank),
                0.0 if description_only else e.history,
                0.0 if description_only else e.history_requirement,
                e.named,
            ]
            for e in evidence
        ],
        dtype=float,
    ).reshape(len(evidence), len(BASE))
    h = np.array([0.0 if description_only else float(e.catalogue_history) for e in evidence])[:, None]
    return np.concatenate([base * h, base * (1 - h), h], axis=1)
