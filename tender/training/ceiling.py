"""How far the ranker's evidence can order a need's candidates: the shipped model against a model fitted on the very
kind of catalogue and request it is scored on (five folds over the requests of a dev part), as logistic
regression and as boosted trees. Where even that fit falls short of a target, the evidence is the limit, not the
fit; docs/tuning.md ("Where this design stops") reads the table.

    python -m tender.training.ceiling            # under a minute on 2 cores; a markdown table on stdout

Each need is scored alone (its candidates from the shortlist, labelled by the need's acceptable items): a
MetaTool single-tool request of a held-out tool, a judged function's need in its requirement (the suites), a
ProgrammableWeb dev mashup read whole with names masked (its gold, the APIs it used)."""

import argparse
import random
import sys
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from tender.evaluation.catalogues import Catalogues
from tender.evaluation.datasets import COLD, DATASETS, DECOMPOSED, MASKED, Paths, Variant
from tender.ranking.evidence import Evidence, vector
from tender.ranking.retrieval import Ranker
from tender.ranking.choice import ranking_model
from tender.ranking.scorer import Scorer
from tender.ranking.vectors import QueryEncoder
from tender.settings import Settings

from .ranker import fit_logistic
from tender.assembly import embedder_for

FOLDS = 5
DEPTH = 5


@dataclass
class Need:
    evidence: list[Evidence]
    right: np.ndarray  # 1 where the candidate is acceptable
    shipped: np.ndarray  # the shipped model's probabilities, as served
    history_only: np.ndarray  # its reading with the usage history alone (no description-only reading beside it)
    gold: int  # acceptable items in all (some may be outside the candidates)


@dataclass(frozen=True)
class Group:
    label: str
    dataset: str
    variant: Variant | None = None  # None: the judged needs, no history
    sample: int | None = None
    whole: bool = False  # the request read whole as one need


GROUPS = (
    Group("MetaTool single-tool requests, held-out tools (600 drawn)", "metatool-single", sample=600, whole=True),
    Group("MCP suite, judged needs", "mcp-suite"),
    Group("OpenAPI suite, judged needs", "openapi-suite"),
    Group("ProgrammableWeb suite, judged needs, no history", "programmableweb-suite"),
    Group("ProgrammableWeb suite, judged needs, history", "programmableweb-suite", DECOMPOSED),
    Group("ProgrammableWeb mashups, masked, no history (300 drawn)", "programmableweb", COLD, 300, True),
    Group("ProgrammableWeb mashups, masked, history (300 drawn)", "programmableweb", MASKED, 300, True),
)


def collect(group: Group, catalogues: Catalogues, paths: Paths, scorer: Scorer, seed: int) -> list[Need]:
    data = DATASETS[group.dataset]
    history = group.variant is not None and group.variant.history and data.has_history
    catalog = catalogues.open(data.catalogue, data.hidden(paths, "dev"), history=history)
    try:
        assert catalog.embedder is not None
        ranker = Ranker(catalog, QueryEncoder(catalog.embedder), scorer)
        queries = data.queries(paths, "dev", catalog, group.variant)
        if group.sample:
            queries = random.Random(seed).sample(queries, min(group.sample, len(queries)))
        jobs = (
            [(q.text, q.text, set(q.gold_items)) for q in queries]
            if group.whole
            else [(f.need, q.text, set(f.acceptable)) for q in queries for f in q.functions]
        )
        needs = []
        for need, requirement, right in jobs:
            candidates = ranker.shortlist(need, requirement).candidates
            evidence = [c.evidence for c in candidates]
            needs.append(
                Need(
                    evidence=evidence,
                    right=np.array([float(c.item in right) for c in candidates]),
                    shipped=np.array([c.score for c in candidates]),
                    history_only=scorer.logits(evidence),
                    gold=len(right),
                )
            )
        return needs
    finally:
        catalog.close()


def measures(needs: list[Need], scores: list[np.ndarray]) -> tuple[float, float]:
    """Top-1 (the first candidate acceptable) and R@5 (acceptable items in the first five, of at most five)."""
    top1 = recall = 0.0
    for need, s in zip(needs, scores):
        order = np.argsort(-s, kind="stable")
        top1 += float(need.right[order[0]]) if len(order) else 0.0
        recall += float(need.right[order[:DEPTH]].sum()) / max(1, min(need.gold, DEPTH))
    return top1 / len(needs), recall / len(needs)


def in_kind(needs: list[Need], seed: int, model: Callable[[np.ndarray, np.ndarray], Callable]) -> list[np.ndarray]:
    """Each need's scores from a model fitted on the other folds' needs of the same group."""
    fold = np.random.default_rng(seed).permutation(len(needs)) % FOLDS
    x = [np.stack([vector(e) for e in n.evidence]) for n in needs]
    out: list[np.ndarray] = [np.zeros(0)] * len(needs)
    for k in range(FOLDS):
        train = [i for i in range(len(needs)) if fold[i] != k]
        predict = model(np.vstack([x[i] for i in train]), np.concatenate([needs[i].right for i in train]))
        for i in range(len(needs)):
            if fold[i] == k:
                out[i] = predict(x[i])
    return out


def logistic(x: np.ndarray, y: np.ndarray) -> Callable:
    w = fit_logistic(x, y, np.ones(len(y)))
    return lambda rows: rows @ w[:-1] + w[-1]


def boosted(x: np.ndarray, y: np.ndarray) -> Callable:
    from sklearn.ensemble import HistGradientBoostingClassifier  # comes with sentence-transformers (train extra)

    model = HistGradientBoostingClassifier(max_iter=200, learning_rate=0.05, random_state=0).fit(x, y)
    return lambda rows: model.predict_proba(rows)[:, 1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tender.training.ceiling", description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    settings = Settings.from_env()
    paths = Paths(settings.data_dir.parent)
    catalogues = Catalogues(settings, paths, progress=False)
    scorer = ranking_model(None, embedder_for(settings))
    print(
        "| dev part | needs | in the candidates | dense | shipped | history reading alone | fitted in kind, "
        "logistic | fitted in kind, boosted trees |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for group in GROUPS:
        needs = collect(group, catalogues, paths, scorer, args.seed)
        pool = sum(float(n.right.sum()) / max(1, n.gold) for n in needs) / len(needs)
        columns = [
            [np.array([e.dense for e in n.evidence]) for n in needs],
            [n.shipped for n in needs],
            [n.history_only for n in needs] if any(e.catalogue_history for e in needs[0].evidence) else None,
            in_kind(needs, args.seed, logistic),
            in_kind(needs, args.seed, boosted),
        ]
        cells = ["–" if c is None else "{:.3f} / {:.3f}".format(*measures(needs, c)) for c in columns]
        print(f"| {group.label} | {len(needs)} | {pool:.3f} | " + " | ".join(cells) + " |", flush=True)
    print("\nEach cell: top-1 / R@5.", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
