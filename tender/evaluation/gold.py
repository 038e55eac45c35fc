"""What a query asks for, what a method answered, and how one answer is scored.

Every dataset is read into the same shape: a query has gold functions, each with the items that would serve it
(`acceptable`). A mashup's gold is one function per API it used ({api} acceptable); a judged suite's is its
functions. Metrics are then function-level, and on mashups they are the usual item-level ones:

- precision: share of the final set acceptable for some function; recall (coverage): share of functions with an
  acceptable item in the final set; F1 from the two. A function nothing serves (a judged suite's "no MCP server
  exists for Venmo") is not counted: no item can cover it, and a plan is right to leave it open, which
  `unserved_open` scores instead.
- R@k: share of functions with an acceptable item in the first k of the ranked list; P@k: acceptable items in the
  first k, over k; NDCG@k: binary gain for an item that covers a function not yet covered, over the ideal
  (min(k, servable functions)); MAP@k as R2API's metric.py computes it (precision at each hit, over the hits).
"""

import math

from pydantic import BaseModel, ConfigDict, Field

KS = (1, 3, 5, 10)


class GoldFunction(BaseModel):
    model_config = ConfigDict(frozen=True)

    need: str = ""
    acceptable: frozenset[int]
    form: str = "any"  # what the judge accepted: 'mcp_server' (servers only), 'web_api' (web APIs only) or any


class Query(BaseModel):
    """One request of a dataset with its gold."""

    model_config = ConfigDict(frozen=True)

    id: str
    text: str
    functions: tuple[GoldFunction, ...] = ()
    irrelevant: frozenset[int] = frozenset()
    expect_nothing: bool = False
    # The needs an assistant would pass for it (written blind, from the request alone), where a dataset has them.
    needs: tuple[str, ...] | None = None
    kind: str | None = None  # the kind the assistant passes with its needs (mcp_server, web_api), where one
    language: str = "en"

    @property
    def servable(self) -> tuple[GoldFunction, ...]:
        """The functions some item serves: those coverage counts."""
        return tuple(f for f in self.functions if f.acceptable)

    @property
    def gold_items(self) -> set[int]:
        return set().union(*(f.acceptable for f in self.functions)) if self.functions else set()


class Answer(BaseModel):
    """What a method returned for one query: its functions, its final set, and its ranking (the final set first,
    then every other candidate it scored, best first)."""

    functions: list[str] = Field(default_factory=list)
    final: list[int] = Field(default_factory=list)
    ranked: list[int] = Field(default_factory=list)
    # Per plan step: its function and the items awarded it.
    steps: list[tuple[str, list[int]]] = Field(default_factory=list)
    scores: dict[int, float] = Field(default_factory=dict)
    candidates: list[int] = Field(default_factory=list)  # the ranking's candidates (about 50 a function)
    verdict: str = "plan"
    latency_ms: float = 0.0
    error: str | None = None
    notes: list[str] = Field(default_factory=list)
    dead: list[int] = Field(default_factory=list)  # the final set's items the catalogue marks deprecated or gone
    servers: list[int] = Field(default_factory=list)  # the final set's MCP servers (and tools of servers)
    installable: list[int] = Field(default_factory=list)  # ... of them, those with an install route


def _covers(item: int, query: Query) -> list[int]:
    return [i for i, f in enumerate(query.servable) if item in f.acceptable]


def recall_at(ranked: list[int], query: Query, k: int) -> float:
    if not query.servable:
        return 0.0
    covered = {i for item in ranked[:k] for i in _covers(item, query)}
    return len(covered) / len(query.servable)


def precision_at(ranked: list[int], query: Query, k: int) -> float:
    """Acceptable items in the first k, over k (a list shorter than k is not rewarded for stopping early)."""
    gold = query.gold_items
    return sum(1 for a in ranked[:k] if a in gold) / k


def ndcg_at(ranked: list[int], query: Query, k: int) -> float:
    covered: set[int] = set()
    dcg = 0.0
    for rank, item in enumerate(ranked[:k]):
        new = set(_covers(item, query)) - covered
        if new:
            covered |= new
            dcg += 1 / math.log2(rank + 2)
    ideal = sum(1 / math.log2(rank + 2) for rank in range(min(k, len(query.servable))))
    return dcg / ideal if ideal else 0.0


def average_precision_at(ranked: list[int], query: Query, k: int) -> float:
    """MAP@k as R2API's metric.py computes it: the precision at each hit in the first k, averaged over the hits."""
    gold = query.gold_items
    hits, total = 0, 0.0
    for rank, item in enumerate(ranked[:k], start=1):
        if item in gold:
            hits += 1
            total += hits / rank
    return total / hits if hits else 0.0


def prf(final: list[int], query: Query) -> tuple[float, float, float]:
    """Precision, recall (function coverage) and F1 of a final set. An empty set scores zero."""
    if not final or not query.servable:
        return 0.0, 0.0, 0.0
    gold = query.gold_items
    precision = sum(1 for a in final if a in gold) / len(final)
    recall = recall_at(final, query, len(final))
    return precision, recall, (2 * precision * recall / (precision + recall) if precision + recall else 0.0)


def metrics(query: Query, answer: Answer) -> dict[str, float]:
    """One query's metrics. A query that expects nothing is scored on whether the method abstained."""
    if query.expect_nothing:
        return {"abstained": float(not answer.final or answer.verdict.startswith("nothing"))}
    precision, recall, f1 = prf(answer.final, query)
    out = {"precision": precision, "recall": recall, "f1": f1}
    for k in KS:
        out[f"r@{k}"] = recall_at(answer.ranked, query, k)
        out[f"p@{k}"] = precision_at(answer.ranked, query, k)
        out[f"ndcg@{k}"] = ndcg_at(answer.ranked, query, k)
    out["map@5"] = average_precision_at(answer.ranked, query, 5)
    if answer.candidates:  # candidate recall: the share of functions an acceptable item of the candidates serves
        out["candidates r"] = recall_at(answer.candidates, query, len(answer.candidates))
    out["all_covered"] = float(recall == 1.0)
    if len(query.servable) < len(query.functions):
        # Left open: nothing awarded beyond what serves the servable functions (an item that serves none may have
        # been awarded for another; it is counted against this, the cautious reading).
        out["unserved_open"] = float(set(answer.final) <= query.gold_items)
    out["clearly_wrong"] = float(bool(set(answer.final) & query.irrelevant))
    out["dead"] = float(bool(answer.dead))
    if answer.final and query.functions and all(f.form == "mcp_server" for f in query.functions):
        out["servers_share"] = len(set(answer.servers) & set(answer.final)) / len(answer.final)
        if answer.servers:
            out["installable_share"] = len(set(answer.installable) & set(answer.servers)) / len(set(answer.servers))
    out["size"] = float(len(answer.final))
    if query.needs is not None:
        out["one_step_per_need"] = float(len(answer.steps) == len(query.needs))
    return {k: round(v, 6) for k, v in out.items()}


def mean(values) -> float:
    values = list(values)
    return sum(values) / len(values) if values else 0.0


def percentile(values: list[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low, high = math.floor(position), math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)
