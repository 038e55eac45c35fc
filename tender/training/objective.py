"""Fitting the selection objective's two numbers (the cost of an item, the cost of a second item of one provider for
one function) on dev parts: manager-led runs keep every bid once, then each setting of a grid re-selects from the
same bids (the selection alone is cheap) and is scored by F1, a query that expects nothing by abstaining. The
setting of the best mean over the dev groups wins. The MCP suite is never used: it judges what carries to a
catalogue nobody fitted anything on."""

import random
from dataclasses import dataclass

from tqdm import tqdm

from tender.agents.request import Request
from tender.agents.service import Tender
from tender.evaluation.catalogues import Catalogues
from tender.evaluation.datasets import DATASETS
from tender.evaluation.gold import Query, mean, prf
from tender.evaluation.runner import needs_of
from tender.ranking.scorer import Objective, Scorer
from tender.ranking.selection import Option, choose

GROUPS = (
    ("programmableweb", "as written"),
    ("programmableweb", "masked"),
    ("programmableweb", "no history, masked"),
    ("metatool-multi", "decomposed"),
    ("metatool-multi", "needs given"),
    ("openapi-suite", "decomposed"),
    ("openapi-suite", "needs given"),
    ("programmableweb-suite", "decomposed"),
    ("programmableweb-suite", "no history"),
    ("programmableweb-suite", "needs given"),
)
COSTS = (0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5)
REDUNDANCIES = (0.0, 0.05, 0.1, 0.2)


@dataclass
class Bids:
    query: Query
    functions: list[str]
    options: list[Option]
    providers: dict[int, str]
    deprecated: set[int]
    history: bool = True  # bid in a catalogue with usage history


def collect(scorer: Scorer, catalogues: Catalogues, sample: int, seed: int, progress: bool) -> dict[str, list[Bids]]:
    """Every group's dev queries (a sample) with the bids a manager-led run received, all of them kept."""
    keep_all = scorer.model_copy(update={"objective": Objective(cost=0.0, redundancy=0.0)})
    out: dict[str, list[Bids]] = {}
    for name, variant_name in GROUPS:
        data = DATASETS[name]
        variant = next(v for v in data.variants if v.name == variant_name)
        catalog = catalogues.open(data.catalogue, data.hidden(catalogues.paths, "dev"), history=variant.history)
        try:
            tender = Tender(catalog, scorer=keep_all)
            queries = data.queries(catalogues.paths, "dev", catalog, variant)
            queries = random.Random(seed).sample(queries, min(sample, len(queries)))
            rows = []
            for query in tqdm(queries, desc=f"{name}, {variant_name}", disable=not progress):
                needs = needs_of(query, variant)
                if variant.needs and not needs:
                    continue
                run = tender.recommend(Request.create(query.text, needs=list(needs) if needs else None))
                proposals = run.transcript.of_kind("propose")
                rows.append(
                    Bids(
                        query=query,
                        functions=[s.id for s in run.plan.steps],
                        options=[Option(p.api_id, p.function_id or "", p.score) for p in proposals],
                        providers={p.api_id: catalog.get_api(p.api_id).provider_name for p in proposals},
                        deprecated={p.api_id for p in proposals if catalog.get_api(p.api_id).gone},
                        history=data.has_history and variant.history,
                    )
                )
            out[f"{name} | {variant_name}"] = rows
        finally:
            catalog.close()
    return out


def quality(rows: list[Bids], objective: Objective) -> float:
    scores = []
    for b in rows:
        chosen = choose(
            b.options,
            b.functions,
            cost=objective.cost_for(b.history),
            redundancy=objective.redundancy,
            provider=lambda item: b.providers.get(item, str(item)),  # noqa: B023 - used before the loop moves on
            deprecated=b.deprecated.__contains__,
        ).items
        scores.append(float(not chosen) if b.query.expect_nothing else prf(chosen, b.query)[2])
    return mean(scores)


def fit_objective(scorer: Scorer, catalogues: Catalogues, sample: int, seed: int, progress: bool) -> Objective:
    """The grid's best: the costs with and without history apart (each regime's groups decide its own), then the
    redundancy cost with them."""
    groups = collect(scorer, catalogues, sample, seed, progress)

    def score(o: Objective, history: bool | None = None) -> float:
        chosen = [rows for rows in groups.values() if history is None or (rows and rows[0].history == history)]
        return mean(quality(rows, o) for rows in chosen)

    warm = max(COSTS, key=lambda c: (score(Objective(cost=c, redundancy=0.0), True), -c))
    cold = max(COSTS, key=lambda c: (score(Objective(cost=warm, cost_cold=c, redundancy=0.0), False), -c))
    grid = [Objective(cost=warm, cost_cold=cold, redundancy=r) for r in REDUNDANCIES]
    return max(grid, key=lambda o: (score(o), -o.redundancy))
