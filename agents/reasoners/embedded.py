"""The embedded reasoner: every reasoning step from embeddings and catalogue statistics, with no LLM.

Deterministic and offline. A bid is a logistic model over a contractor's local evidence: how close the
requirement is to its API's description and to the mashups that used it, how often it was used, and
whether the requirement names it. The weights were fitted with `python -m evaluation.tune` on mashups
outside every reported test sample (see evaluation/tune.py)."""

import math
from dataclasses import asdict, dataclass

import numpy as np

from ..context import RunContext
from ..messages import Neighbourhood
from ..tasks import (ApiKnowledge, BidDecision, BidDraft, BidTask, CategoryMapping, DecomposeTask, Decomposition,
                     FunctionSpec, MapCategoriesTask, Selection, SelectTask, Task)
from ..text import clauses, is_presentation, mentions, short_name
from ..vectors import QueryEncoder
from .base import Reasoner

FEATURES = ("desc_requirement", "desc_function", "history_max", "history_soft", "usage_log", "named", "neighbour_share")


@dataclass(frozen=True)
class BidModel:
    """Logistic weights over FEATURES, fitted by `python -m evaluation.tune --sample 1000` (1,000 tuning mashups
    of seed 1, queries as written and masked; the seed-0 test sample excluded and left out of the catalogue)."""

    bias: float = -6.955
    desc_requirement: float = 1.686
    desc_function: float = 4.092
    history_max: float = -0.93
    history_soft: float = 1.174
    usage_log: float = 0.292
    named: float = 2.289
    neighbour_share: float = 6.143
    temperature: float = 0.05  # of the soft maximum over the history's similarities

    def weights(self) -> np.ndarray:
        return np.array([getattr(self, name) for name in FEATURES])


@dataclass(frozen=True)
class Policy:
    """Thresholds of the embedded reasoner's decisions. Selection and self-selection from evaluation/tune.py;
    category mapping from a sweep on the seed-1 sample (never the reported seed-0 sample)."""

    propose_at: float = 0.02  # a contractor refuses below this
    self_select_at: float = 0.2  # collaborative: a contractor proposes only what it would select
    select_at: float = 0.15  # manager: absolute floor of an accepted bid
    select_ratio: float = 0.3  # manager: an accepted bid is at least this share of the best one
    # manager: weight of the tool graph when completing a set. The tuner found it neutral on this data
    # (0.0 and 0.5 within 0.004 F1); kept so that, between equal bids, APIs used together win.
    co_usage_bonus: float = 0.5
    category_votes: float = 3.0  # category mapping: weight of past mashups' categories against similarity
    category_ratio: float = 0.4  # category mapping: keep categories scoring at least this share of the best
    max_bids_per_contractor: int = 3  # a category contractor offers at most this many APIs


def features(api: ApiKnowledge, requirement_vector: np.ndarray, function_vector: np.ndarray | None,
             requirement: str, temperature: float, neighbourhood: Neighbourhood | None = None) -> np.ndarray:
    """A contractor's evidence for one API, from its own knowledge only (and the neighbourhood the
    manager announced: its share is how much of the nearest past mashups' similarity its history holds)."""
    if api.vector is not None:
        desc_q = float(api.vector @ requirement_vector)
        desc_f = float(api.vector @ function_vector) if function_vector is not None else desc_q
    else:
        desc_q = desc_f = 0.0
    if api.history_vectors is not None and len(api.history_vectors):
        sims = api.history_vectors @ requirement_vector
        h_max = float(sims.max())
        h_soft = float(h_max + temperature * math.log(np.exp((sims - h_max) / temperature).sum()))
        share = float(sims[sims >= neighbourhood.radius].sum() / neighbourhood.mass) if neighbourhood and neighbourhood.mass > 0 else 0.0
    else:
        h_max = h_soft = share = 0.0
    return np.array([desc_q, desc_f, h_max, h_soft, math.log1p(api.usage_count), mentions(api.name, requirement), min(share, 1.0)])


def probability(x: np.ndarray, model: BidModel) -> float:
    z = float(model.bias + x @ model.weights())
    return 1.0 / (1.0 + math.exp(-max(-40.0, min(40.0, z))))


class EmbeddedReasoner(Reasoner):
    name = "offline"

    def __init__(self, embedder, model: BidModel | None = None, policy: Policy | None = None):
        self.encoder = QueryEncoder.wrap(embedder)
        self.model = model or BidModel()
        self.policy = policy or Policy()

    def run(self, task: Task, context: RunContext):
        context.check()
        handler = {DecomposeTask: self.decompose, MapCategoriesTask: self.map_categories,
                   BidTask: self.bid, SelectTask: self.select}[type(task)]
        return handler(task)

    # 1 ------------------------------------------------------------------------------------------
    def decompose(self, task: DecomposeTask) -> Decomposition:
        parts = clauses(task.requirement)
        functions = []
        for i, part in enumerate(parts, start=1):
            earlier = [f.id for f in functions if not is_presentation(f.description)]
            functions.append(FunctionSpec(
                id=f"f{i}", name=short_name(part), description=part,
                depends_on=earlier if is_presentation(part) else [],
            ))
        return Decomposition(functions=functions)

    # 2 ------------------------------------------------------------------------------------------
    def map_categories(self, task: MapCategoriesTask) -> CategoryMapping:
        if not task.candidates:
            return CategoryMapping(categories=[], rationale="no candidate categories")
        scored = sorted(((c.similarity + self.policy.category_votes * c.neighbour_votes, c.name) for c in task.candidates),
                        reverse=True)
        best = scored[0][0]
        chosen = [name for score, name in scored if score >= self.policy.category_ratio * best][: task.max_categories]
        return CategoryMapping(categories=chosen, rationale=f"closest categories by description and by the APIs of similar past mashups (best {best:.2f})")

    # 3 ------------------------------------------------------------------------------------------
    def bid(self, task: BidTask) -> BidDecision:
        cfp = task.cfp
        steps = set(cfp.steps)
        q = self.encoder.one(cfp.requirement)
        parts = clauses(cfp.requirement) if "decompose" in steps or not cfp.function else [cfp.function]
        part_vectors = self.encoder.embed(parts)
        threshold = self.policy.self_select_at if "select" in steps else self.policy.propose_at
        if cfp.reserve is not None:
            threshold = cfp.reserve
        drafts = []
        for api in task.knowledge.apis:
            # The function it would serve: the announced one, or (decomposing itself) its closest clause.
            k = int(np.argmax(part_vectors @ api.vector)) if api.vector is not None and len(parts) > 1 else 0
            x = features(api, q, part_vectors[k], cfp.requirement, self.model.temperature, cfp.neighbourhood)
            p = probability(x, self.model)
            if p < threshold:
                continue
            category = self._category(api, cfp.categories, part_vectors[k])
            drafts.append(BidDraft(
                api_id=api.api_id, score=round(p, 4), function=parts[k] if "decompose" in steps else None,
                category=category, rationale=self._rationale(api, x),
                evidence={name: round(float(v), 4) for name, v in zip(FEATURES, x)},
            ))
        drafts.sort(key=lambda d: -d.score)
        if task.knowledge.category:
            drafts = drafts[: self.policy.max_bids_per_contractor]
        if not drafts:
            return BidDecision(refusal=f"no API of {task.knowledge.contractor} fits well enough (below {threshold:.2f})")
        return BidDecision(proposals=drafts)

    def _category(self, api: ApiKnowledge, announced: list[str], function_vector: np.ndarray) -> str | None:
        inside = [c for c in api.categories if c in announced]
        return (inside or api.categories or [None])[0]

    @staticmethod
    def _rationale(api: ApiKnowledge, x: np.ndarray) -> str:
        desc_q, _, h_max, _, _, named, share = x
        reasons = []
        if named >= 1:
            reasons.append(f"the requirement names {api.name}")
        elif named > 0:
            reasons.append(f"the requirement names part of '{api.name}'")
        if share > 0:
            reasons.append(f"mashups that used it hold {share:.0%} of the similarity of the nearest past mashups")
        if api.history and h_max > 0:
            reasons.append(f"a past mashup that used it is similar ({h_max:.2f}) and it served {api.usage_count} mashups")
        reasons.append(f"its description matches the requirement ({desc_q:.2f})")
        return "; ".join(reasons).capitalize() + "."

    # 4 ------------------------------------------------------------------------------------------
    def select(self, task: SelectTask) -> Selection:
        best: dict[int, float] = {}
        for proposal in task.proposals:
            best[proposal.api_id] = max(best.get(proposal.api_id, 0.0), proposal.score)
        if not best:
            return Selection(api_ids=[], rationale="no proposals")
        edges: dict[tuple[int, int], float] = {}
        for edge in task.co_usage:
            edges[(edge.a, edge.b)] = edges[(edge.b, edge.a)] = edge.weight
        ranked = sorted(best.items(), key=lambda item: (-item[1], item[0]))
        top = ranked[0][1]
        chosen = [ranked[0][0]]
        policy = self.policy
        for api_id, score in ranked[1:]:
            bonus = policy.co_usage_bonus * max(edges.get((api_id, other), 0.0) for other in chosen)
            if score + bonus >= policy.select_at and score + bonus >= policy.select_ratio * top:
                chosen.append(api_id)
        if task.max_apis:
            chosen = chosen[: task.max_apis]
        return Selection(api_ids=chosen, rationale=f"kept bids within {policy.select_ratio:.0%} of the best ({top:.2f}), helped by co-usage")


def describe(reasoner: EmbeddedReasoner) -> dict:
    return {"model": asdict(reasoner.model), "policy": asdict(reasoner.policy)}
