"""The embedded reasoner: every reasoning step from embeddings and catalogue statistics, with no LLM.

Deterministic and offline. A bid is a logistic model over a contractor's local evidence (how close the
requirement is to its API's description and to the mashups that used it, how often it was used, whether
the requirement names it, how its description ranks among the catalogue's) and the products of each pair of
those. The weights were fitted with `python -m tender.training.tune --write` on mashups outside every reported test
sample (see evaluation/tune.py), on the vectors of the fine-tuned encoder (evaluation/encoder.py): refit them
whenever the encoder changes."""

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from functools import cached_property
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from tender.catalog.encoders import STOCK_NAME, TUNED_NAME, EncoderId, check_encoder, recorded_encoder

from ..context import RunContext
from ..grounding import UNGROUNDED_MARGIN, Grounding, award_bids, drop_ungrounded
from ..messages import Neighbourhood
from ..tasks import (
    ApiKnowledge,
    BidDecision,
    BidDraft,
    BidTask,
    CategoryMapping,
    DecomposeTask,
    Decomposition,
    FunctionSpec,
    MapCategoriesTask,
    Selection,
    SelectTask,
    Task,
)
from ..lexicon import Lexicon, as_written, common_terms, name_terms
from ..lexicon import terms as words
from ..text import clauses, is_presentation, mentions, names_a_thing, opens_request, refers_back, short_name
from ..vectors import QueryEncoder
from .base import Reasoner

FEATURES = (
    "desc_requirement",
    "desc_function",
    "history_max",
    "history_soft",
    "usage_log",
    "named",
    "neighbour_vote",
    "clause_vote",
    "description_vote",
    "history_centroid",
    "lexical",
    "function_vote",
    "has_history",
    "name_words",
)
# lexical (the function's words in the API's text, weighted by rarity), function_vote (its description's share
# among those nearest to the announced function) and has_history let a bid stand on what the API does;
# description_vote is the description's share among the 20 nearest to the requirement, history_centroid the
# similarity to the centre of its past mashups. What each added: docs/tuning.md.


# The terms a bid weighs: each feature and each product of two (squares included). The products let
# evidence count differently in company: a description match matters more for an API without history,
# a neighbour vote less for a very popular one (docs/tuning.md).
TERMS = FEATURES + tuple(f"{a}*{b}" for i, a in enumerate(FEATURES) for b in FEATURES[i:])
MODEL_FILE = Path(__file__).with_name("bid_model.json")
# The shipped bid model for each encoder it was fitted on, other than the stock one.
MODEL_FILES = {TUNED_NAME: Path(__file__).with_name(f"bid_model.{TUNED_NAME}.json")}


def shipped_model_file(encoder_name: str) -> Path:
    """The bid model Tender ships for vectors of this encoder (the stock one's for any other)."""
    return MODEL_FILES.get(encoder_name, MODEL_FILE)


_PAIRS = np.triu_indices(len(FEATURES))
# An API without usage history is judged by what it says it does, on a model of its own: linear in these, every
# weight at least zero (more similarity never lowers a bid). The pairwise model, fitted where history speaks
# loudest, read description evidence through products with it and could rank a closer description lower.
COLD_FEATURES = (
    "desc_requirement",
    "desc_function",
    "named",
    "description_vote",
    "lexical",
    "function_vote",
    "name_words",
)
_COLD = [FEATURES.index(name) for name in COLD_FEATURES]
_HAS_HISTORY = FEATURES.index("has_history")
_NAMED = FEATURES.index("named")


def terms(x: np.ndarray) -> np.ndarray:
    """The features followed by their pairwise products, in TERMS order (rows of a matrix, or one vector)."""
    x = np.atleast_2d(x)
    expanded = np.hstack([x, x[:, _PAIRS[0]] * x[:, _PAIRS[1]]])
    return expanded[0] if expanded.shape[0] == 1 else expanded


def _require_weights(what: str, weights: dict[str, float], names: Sequence[str]) -> None:
    missing = set(names) - set(weights)
    if missing:
        raise ValueError(
            f"{what} lacks weights for {sorted(missing)}; refit with `python -m tender.training.tune --write`"
        )


class ColdBidModel(BaseModel):
    """Logistic weights over COLD_FEATURES, for APIs without usage history."""

    model_config = ConfigDict(frozen=True)

    bias: float
    weights: dict[str, float] = Field(description="One weight per name of COLD_FEATURES, none below zero.")
    fitted_on: str = ""

    @model_validator(mode="after")
    def _every_feature(self):
        _require_weights("cold bid model", self.weights, COLD_FEATURES)
        return self

    @cached_property
    def vector(self) -> np.ndarray:
        return np.array([self.weights[name] for name in COLD_FEATURES])

    @cached_property
    def vector_with_history(self) -> np.ndarray:
        """The weights for an API with usage history: the name's words weigh nothing there."""
        weights = self.vector.copy()
        weights[COLD_FEATURES.index("name_words")] = 0.0
        return weights

    def logit(self, x: np.ndarray) -> float:
        """The log-odds of a bid on the description and words alone, from a full FEATURES vector. The name's words
        count for an API without usage history only: the share of this bid in one with history was chosen without
        them, and with them a name's common word lifted every API of a family ("Maps") where history already
        speaks (docs/tuning.md)."""
        return float(self.bias + x[_COLD] @ (self.vector_with_history if x[_HAS_HISTORY] else self.vector))


class BidModel(BaseModel):
    """Logistic weights over TERMS, fitted by `python -m tender.training.tune --write` on the tuning mashups (seed 1,
    queries as written and masked; the seed-0 test sample excluded and left out of the catalogue) and kept in
    bid_model.json beside this module; with `cold`, the model for APIs without usage history."""

    model_config = ConfigDict(frozen=True)

    bias: float
    weights: dict[str, float] = Field(description="One weight per term of TERMS.")
    cold: ColdBidModel | None = None
    # How much of an API's bid with usage history is its description's (cold) bid, on the log-odds scale: the
    # history-only bid crowned popular APIs for requirements their descriptions do not touch.
    description_share: float = 0.0
    temperature: float = 0.05  # of the soft maximum over the history's similarities
    fitted_on: str = ""
    # The encoder whose vectors it was fitted on; a file without it was fitted on the stock encoder.
    encoder: EncoderId | None = None

    @model_validator(mode="after")
    def _every_term(self):
        _require_weights("bid model", self.weights, TERMS)
        return self

    @classmethod
    def load(cls, path: Path = MODEL_FILE) -> "BidModel":
        return cls.model_validate_json(Path(path).read_text())

    @cached_property
    def vector(self) -> np.ndarray:
        """The weights in TERMS order, built once: every bid multiplies by them."""
        return np.array([self.weights[name] for name in TERMS])


@dataclass(frozen=True)
class Policy:
    """Thresholds of the embedded reasoner's decisions, chosen on tuning and validation samples, never on the
    reported ones: how each was chosen is in docs/tuning.md."""

    propose_at: float = 0.02  # a contractor refuses below this
    self_select_at: float = 0.2  # collaborative: a contractor proposes only what it would select
    # ... and for an API without usage history, whose bids run lower (the cold model is surer of less, and a
    # server of many like tools splits the description vote between them)
    self_select_cold_at: float = 0.05
    # manager: the final set is the prefix of the ranked bids that maximises the expected F1 (bids read as
    # probabilities); `expected_missing` is how many right APIs it expects no contractor to have bid for.
    expected_missing: float = 1.2
    # manager: the tool graph lifts an API used together with a better-ranked one by this much of the edge
    # weight. Off: past co-usage already speaks through the neighbour vote. The LLM manager still sees the edges.
    co_usage_bonus: float = 0.0
    # manager: a plan step left without an award gets its best bid if at least this good, so that every
    # function the requirement names is served when a contractor can; failing that, the API whose bid on its
    # description alone (the cold model) is best, if that is at least this good (a thin, unrelated history
    # otherwise drags a matching description under every threshold).
    cover_steps_at: float = 0.1
    # ... or if its best bid, though lower, leads the function's next by this factor (a small catalogue of
    # history-free tools bids low, but its right tool stands out)
    cover_lead: float = 2.0
    category_votes: float = 3.0  # category mapping: weight of past mashups' categories against similarity
    category_ratio: float = 0.15  # category mapping: keep categories scoring at least this share of the best
    max_bids_per_contractor: int = 3  # a category or provider contractor offers at most this many APIs
    # decomposition: pieces whose best API is among each other's `explained_by` best are one need; at most
    # `max_functions` needs a plan
    explained_by: int = 3
    max_functions: int = 4
    # selection: below this everywhere, the catalogue has nothing for the requirement (a plan would be a guess)
    nothing_below: float = 0.05
    # selection: an API whose description trails the best for each of its functions by more than this (and
    # shares no word with them) gives way where another chosen API's description does match them
    ungrounded_margin: float = UNGROUNDED_MARGIN
    # selection: an API whose description matches none of its functions (similarity under `described_at`, none of
    # their words, not named) stays only with a bid of at least `history_alone_at`
    described_at: float = 0.2
    history_alone_at: float = 0.1
    # ... and a share of the functions' words under this is no match: one shared common word ("search" in
    # YouTube's text for "search scientific papers", 0.13) says nothing of what the API does
    incidental_words_below: float = 0.15
    # selection: a function held by a chosen API on its history alone gets the API whose description matches it
    # only if that one bids at least this (past apps like this one used the chosen API; a description match
    # with nothing else behind it is often a fragment's noise). A bid lifted by the API's name written for
    # another need holds nothing: there the usual cover applies.
    loose_cover_at: float = 0.08


def features(
    api: ApiKnowledge,
    requirement_vector: np.ndarray,
    function_vector: np.ndarray | None,
    requirement: str,
    temperature: float,
    neighbourhood: Neighbourhood | None = None,
    clause_neighbourhoods: Sequence[tuple[np.ndarray, Neighbourhood]] = (),
    descriptions: Neighbourhood | None = None,
    function_descriptions: Neighbourhood | None = None,
    lexical: float = 0.0,
    requirement_lexical: float = 0.0,
    name_words: float = 0.0,
) -> np.ndarray:
    """A contractor's evidence for one API, from its own knowledge only (and what the manager announced: its
    vote is how much of the nearest past mashups' weight its history holds, its clause vote the largest such
    share among the clauses' neighbourhoods, each clause given as its vector, and its description vote its
    description's share among the API descriptions nearest to the requirement)."""
    if api.vector is not None:
        desc_q = float(api.vector @ requirement_vector)
        desc_f = float(api.vector @ function_vector) if function_vector is not None else desc_q
        description_vote = (
            descriptions.vote(np.array([desc_q + descriptions.words * requirement_lexical])) if descriptions else 0.0
        )
        function_vote = (
            function_descriptions.vote(np.array([desc_f + function_descriptions.words * lexical]))
            if function_descriptions
            else description_vote
        )
    else:
        desc_q = desc_f = description_vote = function_vote = 0.0
    if api.history_vectors is not None and len(api.history_vectors):
        sims = api.history_vectors @ requirement_vector
        h_max = float(sims.max())
        h_soft = float(h_max + temperature * math.log(np.exp((sims - h_max) / temperature).sum()))
        # Similarity to the history's centre: what the API is typically used for, where h_max is its one
        # closest use.
        h_centre = float(api.history_centre @ requirement_vector)
        vote = neighbourhood.vote(sims) if neighbourhood else 0.0
        clause_vote = max((around.vote(api.history_vectors @ v) for v, around in clause_neighbourhoods), default=vote)
    else:
        h_max = h_soft = h_centre = vote = clause_vote = 0.0
    has_history = 1.0 if api.history_vectors is not None and len(api.history_vectors) else 0.0
    return np.array(
        [
            desc_q,
            desc_f,
            h_max,
            h_soft,
            math.log1p(api.usage_count),
            mentions(api.name, requirement),
            vote,
            clause_vote,
            description_vote,
            h_centre,
            lexical,
            function_vote,
            has_history,
            name_words,
        ]
    )


def clause_vectors(
    encoder: QueryEncoder, requirement: str, neighbourhoods: Sequence[Neighbourhood]
) -> list[tuple[np.ndarray, Neighbourhood]]:
    """Each announced clause neighbourhood with its clause's vector, read in the context of the requirement:
    what `features` weighs a contractor's history against."""
    return [(encoder.one(n.about, context=requirement), n) for n in neighbourhoods if n.about]


def sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-40.0, min(40.0, z))))


def probability(x: np.ndarray, model: BidModel) -> float:
    if model.cold is None:
        z = float(model.bias + terms(x) @ model.vector)
    elif x[_HAS_HISTORY] == 0:
        z = model.cold.logit(x)
    else:
        warm = float(model.bias + terms(x) @ model.vector)
        z = (1 - model.description_share) * warm + model.description_share * model.cold.logit(x)
    return sigmoid(z)


def check_bid_model(model: BidModel, embedder, name: str = MODEL_FILE.name) -> None:
    """Raise EncoderMismatch if the shipped bid model was fitted on another encoder's vectors than `embedder`'s.
    The hashing embedder is exempt: it exists for tests, which run the shipped model on it knowingly."""
    if embedder.encoder.name.startswith("hashing"):
        return
    recorded = model.encoder or recorded_encoder(STOCK_NAME, None)
    check_encoder(
        f"The bid model {name}",
        recorded,
        embedder.encoder,
        "Use the encoder it was fitted on (unset TENDER_EMBEDDING_MODEL for the stock one), or refit it for "
        "this encoder: `python -m tender.training.tune --db <catalogue built with it> --write`.",
    )


class EmbeddedReasoner(Reasoner):
    name = "offline"

    def __init__(
        self, embedder, model: BidModel | None = None, policy: Policy | None = None, lexicon: Lexicon | None = None
    ):
        self.encoder = QueryEncoder.wrap(embedder)
        self._model = model
        self.policy = policy or Policy()
        # The catalogue's word statistics (for lexical evidence); without them a bid weighs no words.
        self.lexicon = lexicon

    def know_catalogue(self, lexicon, encoder=None) -> None:
        # A reasoner built by the factory meets its catalogue here; one given words of its own keeps them.
        if self.lexicon is None:
            self.lexicon = lexicon
        # The manager reads a clause in the context of its requirement (a vector cached in its encoder); a
        # contractor with an encoder of its own read it alone and weighed its description against a different
        # vector than the one the manager's function neighbourhood was found with.
        if encoder is not None and encoder.model_name == self.encoder.model_name:
            self.encoder = encoder

    @property
    def model(self) -> BidModel:
        # Loaded at the first bid, not here: `tender.training.tune --write` builds a Tender to refit a model file
        # that no longer loads (after a feature was added).
        if self._model is None:
            shipped = shipped_model_file(self.encoder.embedder.encoder.name)
            model = BidModel.load(shipped)
            check_bid_model(model, self.encoder.embedder, shipped.name)
            self._model = model
        return self._model

    def run(self, task: Task, context: RunContext):
        context.check()
        handler = {
            DecomposeTask: self.decompose,
            MapCategoriesTask: self.map_categories,
            BidTask: self.bid,
            SelectTask: self.select,
        }[type(task)]
        return handler(task)

    # 1 ------------------------------------------------------------------------------------------
    def decompose(self, task: DecomposeTask) -> Decomposition:
        """One function per need: the requirement's pieces (task.parts, with the APIs that explain each), merged
        where the same APIs explain them ('nearby restaurants' and 'their reviews' are one need if one API
        serves both), at most `max_functions`. Without parts, the clauses."""
        groups = self._group(task.parts) if task.parts else [[part] for part in clauses(task.requirement)]
        functions = []
        for i, group in enumerate(groups, start=1):
            text = ", ".join(dict.fromkeys(group))
            earlier = [f.id for f in functions if not is_presentation(f.description)]
            functions.append(
                FunctionSpec(
                    id=f"f{i}",
                    name=short_name(text),
                    description=text,
                    depends_on=earlier if is_presentation(text) and earlier else [],
                )
            )
        return Decomposition(functions=functions)

    def _group(self, parts) -> list[list[str]]:
        top = self.policy.explained_by
        groups: list[list[int]] = []
        for i, part in enumerate(parts):
            # "their reviews" belongs to the need it refers back to (the nearest earlier piece naming a thing).
            home = None
            if refers_back(part.text):
                home = next((g for g in reversed(groups) if any(names_a_thing(parts[j].text) for j in g)), None)
            if home is not None:
                home.append(i)
            else:
                groups.append([i])

        def explained(g):  # the APIs that best explain a group's pieces
            return {a for i in g for a in parts[i].apis[:top]}

        def asked_apart(g, h):  # a later piece that puts a request of its own ("Additionally, ...") is a need apart
            return opens_request(parts[max(min(g), min(h))].text)

        def firsts(g):
            return {parts[i].apis[0] for i in g if parts[i].apis}

        merged = True
        while merged:
            merged = False
            for x in range(len(groups)):
                for y in range(x + 1, len(groups)):
                    # Mutual: each group's best API is among the other's best.
                    if (
                        firsts(groups[x]) & explained(groups[y])
                        and firsts(groups[y]) & explained(groups[x])
                        and not asked_apart(groups[x], groups[y])
                    ):
                        groups[x] = sorted(groups[x] + groups[y])
                        del groups[y]
                        merged = True
                        break
                if merged:
                    break
        while len(groups) > self.policy.max_functions:
            # Too many needs for one plan: join the neighbouring pair that shares the most explaining APIs.
            k = max(
                range(len(groups) - 1),
                key=lambda j: (
                    len(explained(groups[j]) & explained(groups[j + 1])),
                    -len(groups[j]) - len(groups[j + 1]),
                ),
            )
            groups[k : k + 2] = [sorted(groups[k] + groups[k + 1])]
        groups.sort(key=lambda g: g[0])
        return [[parts[i].text for i in g] for g in groups]

    # 2 ------------------------------------------------------------------------------------------
    def map_categories(self, task: MapCategoriesTask) -> CategoryMapping:
        if not task.candidates:
            return CategoryMapping(categories=[], rationale="no candidate categories")
        scored = sorted(
            ((c.similarity + self.policy.category_votes * c.neighbour_votes, c.name) for c in task.candidates),
            reverse=True,
        )
        best = scored[0][0]
        chosen = [name for score, name in scored if score >= self.policy.category_ratio * best][: task.max_categories]
        return CategoryMapping(
            categories=chosen,
            rationale=f"closest categories by description and by the APIs of similar past mashups (best {best:.2f})",
        )

    # 3 ------------------------------------------------------------------------------------------
    def bid(self, task: BidTask) -> BidDecision:
        cfp = task.cfp
        steps = set(cfp.steps)
        q = self.encoder.one(cfp.requirement)
        parts = clauses(cfp.requirement) if "decompose" in steps or not cfp.function else [cfp.function]
        part_vectors = self.encoder.embed(parts, context=cfp.requirement)
        part_terms = [words(part) for part in parts]
        part_asked = [common_terms(part) for part in parts]  # for the name's words
        weigh_words = bool(cfp.descriptions and cfp.descriptions.words)  # the description vote weighs words too
        requirement_terms = words(cfp.requirement) if weigh_words else []
        around = clause_vectors(self.encoder, cfp.requirement, cfp.clause_neighbourhoods)
        # Announcing no function, the manager may tell each clause's nearest descriptions.
        by_clause = {n.about: n for n in cfp.clause_descriptions}
        threshold = self.policy.self_select_at if "select" in steps else self.policy.propose_at
        if cfp.reserve is not None:
            threshold = cfp.reserve
        # An API without usage history self-selects from a lower score (its bids run lower).
        cold_threshold = threshold
        if "select" in steps and cfp.reserve is None:
            cold_threshold = min(threshold, self.policy.self_select_cold_at)
        drafts = []
        for api in task.knowledge.apis:
            # The function it would serve: the announced one, or (decomposing itself) its closest clause.
            k = int(np.argmax(part_vectors @ api.vector)) if api.vector is not None and len(parts) > 1 else 0
            lexical = self.lexicon.coverage(part_terms[k], api.terms) if self.lexicon else 0.0
            x = features(
                api,
                q,
                part_vectors[k],
                cfp.requirement,
                self.model.temperature,
                cfp.neighbourhood,
                around,
                cfp.descriptions,
                cfp.function_descriptions if cfp.function else by_clause.get(parts[k]),
                lexical,
                self.lexicon.coverage(requirement_terms, api.terms) if self.lexicon and weigh_words else 0.0,
                self.lexicon.name_coverage(api.name, part_asked[k]) if self.lexicon else 0.0,
            )
            p = probability(x, self.model)
            if p < (cold_threshold if x[_HAS_HISTORY] == 0 else threshold):
                continue
            category = self._category(api, cfp.categories, part_vectors[k])
            drafts.append(
                BidDraft(
                    api_id=api.api_id,
                    score=round(p, 4),
                    function=parts[k] if "decompose" in steps else None,
                    category=category,
                    rationale=self._rationale(api, x, parts[k], part_terms[k], part_asked[k]),
                    evidence={name: round(float(v), 4) for name, v in zip(FEATURES, x)},
                )
            )
        drafts.sort(key=lambda d: -d.score)
        if task.knowledge.category or task.knowledge.provider:
            drafts = drafts[: self.policy.max_bids_per_contractor]
        if not drafts:
            return BidDecision(
                refusal=f"no API of {task.knowledge.contractor} fits well enough (below {threshold:.2f})"
            )
        return BidDecision(proposals=drafts)

    def _category(self, api: ApiKnowledge, announced: list[str], function_vector: np.ndarray) -> str | None:
        inside = [c for c in api.categories if c in announced]
        return (inside or api.categories or [None])[0]

    @staticmethod
    def _rationale(api: ApiKnowledge, x: np.ndarray, function: str, wanted: list[str], asked: frozenset[str]) -> str:
        """Why, in plain words: what of the function its description and words match, and its track record."""
        desc_q, desc_f, h_max, _, _, named, vote, clause_vote, _, _, lexical, function_vote, _, _ = x
        reasons = []
        if named >= 1:
            reasons.append(f"the requirement names {api.name}")
        elif named > 0:
            reasons.append(f"the requirement names part of '{api.name}'")
        written = as_written(function)  # quote the function's words, not their stems
        shared = sorted({written.get(t, t) for t in wanted if t in api.terms})
        strength = "closely" if desc_f >= 0.5 or function_vote >= 0.3 else "partly" if desc_f >= 0.3 else "loosely"
        reasons.append(f"its description {strength} matches '{short_name(function, 10)}' ({desc_f:.2f})")
        if shared:
            reasons.append(f"it mentions {', '.join(shared[:4])}")
        in_name = sorted({written.get(t, t) for t in name_terms(api.name) & asked})
        if in_name and named < 1 and not x[_HAS_HISTORY]:  # weighed only without history (ColdBidModel.logit)
            reasons.append(f"its name says {', '.join(in_name[:3])}")
        if max(vote, clause_vote) >= 0.1:
            reasons.append(f"similar past apps used it ({max(vote, clause_vote):.0%} of the nearest)")
        elif api.usage_count:
            reasons.append(f"used by {api.usage_count} past app{'s' if api.usage_count != 1 else ''}")
        said = "; ".join(reasons)
        return said[:1].upper() + said[1:] + "."  # names and the function keep their capitals

    def _description_bid(self, proposal, named: bool = True) -> float:
        """What the proposal's API would have bid on its description and words alone (the cold model); with
        `named` False, as if the requirement did not name it (it names it for another need)."""
        cold = self.model.cold
        if cold is None or not proposal.evidence:
            return 0.0
        x = np.array([float(proposal.evidence.get(name, 0.0)) for name in FEATURES])
        if not named:
            x[_NAMED] = 0.0
        return sigmoid(cold.logit(x))

    def _clear_winner(self, best: float, others: list[float]) -> bool:
        """A function's best bid, though low, stands well clear of the rest for it: `cover_lead` times the next."""
        lead = self.policy.cover_lead
        return lead > 0 and best >= self.policy.nothing_below and best >= lead * max(others, default=0.0)

    def _on_history_alone(self, bids) -> bool:
        """An API whose description matches none of the functions it bid for (not named, their words barely in
        its text, similarity under `described_at`) and whose best bid is under `history_alone_at`: chosen only
        because past apps used it, and not even confidently."""
        return (
            bool(bids)
            and max(p.score for p in bids) < self.policy.history_alone_at
            and all(
                p.evidence.get("named", 0) == 0
                and p.evidence.get("lexical", 0) < self.policy.incidental_words_below
                and float(p.evidence.get("desc_function", 1.0)) < self.policy.described_at
                for p in bids
            )
        )

    # 4 ------------------------------------------------------------------------------------------
    def select(self, task: SelectTask) -> Selection:
        """Each function's best credible bid, then the ranked bids up to the set of highest expected F1 (bids read
        as probabilities); a near-duplicate of an API already chosen for the same function (Twilio, Twilio SMS)
        is left out; a function still unserved gets its best description-only bid if that reaches `cover_steps_at`
        (and, beside a chosen API's bid on history alone, if its own bid reaches `loose_cover_at`);
        with every bid below `nothing_below` and no such description, nothing is chosen."""
        best: dict[int, float] = {}
        for proposal in task.proposals:
            best[proposal.api_id] = max(best.get(proposal.api_id, 0.0), proposal.score)
        texts = {f.id: f.description for f in task.functions}
        grounded = Grounding(task.proposals, self.policy.ungrounded_margin, texts)
        # each proposal's description-only bid; a name written for another need is no description of this one
        described = [self._description_bid(p, named=grounded.named(p)) for p in task.proposals]
        # Bids all under nothing_below leave only a function's description-grounded cover (below), if any.
        credible = bool(best) and max(best.values()) >= self.policy.nothing_below
        if not credible and max(described, default=0.0) < self.policy.cover_steps_at:
            return Selection(api_ids=[], rationale="no bid is credible" if best else "no proposals")
        if self.lexicon is not None and self.lexicon.known_share(task.requirement) == 0.0:
            # Not one word of the requirement appears in any API's text: whatever bid, it bid on noise.
            return Selection(api_ids=[], rationale="no word of the requirement is known to the catalogue")
        edges: dict[tuple[int, int], float] = {}
        for edge in task.co_usage:
            edges[(edge.a, edge.b)] = edges[(edge.b, edge.a)] = edge.weight
        ranked = sorted(best.items(), key=lambda item: (-item[1], item[0]))
        lifted = {
            api_id: min(
                1.0,
                score
                + self.policy.co_usage_bonus
                * max([edges.get((api_id, other), 0.0) for other, _ in ranked[:i]] or [0.0]),
            )
            for i, (api_id, score) in enumerate(ranked)
        }
        order = sorted(lifted, key=lambda a: (-lifted[a], a))
        size, f1 = expected_f1_size([lifted[a] for a in order], self.policy.expected_missing)
        chosen = order[:size] if credible else []
        awarded_first = {
            p.function_id
            for api_id, p in award_bids(task.proposals, texts, self.policy.ungrounded_margin).items()
            if api_id in chosen
        }
        for function_id, (api_id, score) in best_per_function(task.proposals).items():
            # ... or by a chosen API whose text the function points to, unless its bid there is dwarfed by the best
            served = function_id in awarded_first or any(
                p.function_id == function_id
                and p.api_id in chosen
                and grounded.pointed_to(p)
                and p.score * self.policy.cover_lead >= score
                for p in task.proposals
            )
            if (
                not served
                and api_id not in chosen
                and (
                    score >= self.policy.cover_steps_at
                    or self._clear_winner(
                        score, [p.score for p in task.proposals if p.function_id == function_id and p.api_id != api_id]
                    )
                )
            ):
                chosen.append(api_id)
        # A function is served by the chosen API awarded it, or by one its own text names or shares words with;
        # an API awarded another step does not serve this one by a description merely near the best.
        held = {
            p.function_id
            for api_id, p in award_bids(task.proposals, texts, self.policy.ungrounded_margin).items()
            if api_id in chosen
        }
        for function_id in dict.fromkeys(p.function_id for p in task.proposals if p.function_id):
            own = [(d, p) for d, p in zip(described, task.proposals) if p.function_id == function_id]
            if function_id not in held and not any(p.api_id in chosen and grounded.pointed_to(p) for _, p in own):
                bid, closest = max(own, key=lambda pair: pair[0])
                held_on_history = any(
                    p.api_id in chosen and p.evidence.get("has_history") and not p.evidence.get("named") for _, p in own
                )
                if bid >= self.policy.cover_steps_at and (
                    not held_on_history or closest.score >= self.policy.loose_cover_at
                ):
                    chosen.append(closest.api_id)
        chosen = drop_near_duplicates(chosen, task.proposals)
        chosen = drop_ungrounded(chosen, task.proposals, grounded)
        chosen = [a for a in chosen if not self._on_history_alone([p for p in task.proposals if p.api_id == a])]
        if task.max_apis:
            chosen = chosen[: task.max_apis]
        return Selection(
            api_ids=chosen,
            rationale=(
                f"kept the {size} best bid(s), the set with the highest expected F1 ({f1:.2f}), and each function's best "
                "credible bid"
            ),
        )


# An OpenAPI operation without an operationId is named "GET /path (API)": the method names no job.
HTTP_METHODS = frozenset({"get", "put", "post", "delete", "patch", "head", "options", "trace"})


def lead_word(name: str) -> str:
    """The word a name begins with, past an HTTP method."""
    words = name.split()
    if len(words) > 1 and words[0].casefold() in HTTP_METHODS:
        words = words[1:]
    return words[0].casefold() if words else ""


def drop_near_duplicates(chosen: list[int], proposals) -> list[int]:
    """Leave out an API whose name begins like a better one's and that was bid for a function the better one was
    bid for too (Twilio SMS beside Twilio): one of them serves the function."""
    leads = {p.api_id: lead_word(p.api_name) for p in proposals}
    functions: dict[int, set] = {}
    for p in proposals:
        functions.setdefault(p.api_id, set()).add(p.function_id)
    kept: list[int] = []
    for api_id in chosen:
        first = leads.get(api_id, "")
        twin = (
            any(leads.get(k) == first and functions.get(k, set()) & functions.get(api_id, set()) for k in kept)
            if len(first) > 2
            else False
        )
        if not twin:
            kept.append(api_id)
    return kept


def best_per_function(proposals) -> dict[str, tuple[int, float]]:
    best: dict[str, tuple[int, float]] = {}
    for p in proposals:
        if p.function_id and (p.function_id not in best or p.score > best[p.function_id][1]):
            best[p.function_id] = (p.api_id, p.score)
    return best


def expected_f1_size(probabilities: list[float], missing: float) -> tuple[int, float]:
    """How many of the ranked bids to keep: with bids read as the probabilities that each API is right,
    keeping the first k has expected F1 of about 2 * sum(p[:k]) / (k + sum(p) + missing)."""
    expected_right = sum(probabilities) + missing
    best_k, best_f1, kept = 1, -1.0, 0.0
    for k, p in enumerate(probabilities, start=1):
        kept += p
        f1 = 2 * kept / (k + expected_right)
        if f1 > best_f1:
            best_k, best_f1 = k, f1
    return best_k, best_f1


def describe(reasoner: EmbeddedReasoner) -> dict:
    return {"model": reasoner.model.model_dump(), "policy": asdict(reasoner.policy)}
