"""Fit the embedded reasoner's bid model and selection policy on tuning mashups.

The tuning mashups are drawn with their own seed, never include the mashups of a reported test sample
(`--report-seed`, `--report-sample`), and are left out of the catalogue while tuning, exactly as test
mashups are during an evaluation. Queries are used both as written and with API names masked.

    python -m tender.training.tune --db catalog.db           # prints the fitted model and policy
    python -m tender.training.tune --db catalog.db --write   # and writes the model to agents/reasoners/bid_model.json
    python -m tender.training.tune --db catalog.db --cold-db metatool.db \
        --cold-requests ../shared/data/metatool/queries.jsonl --write    # the cold model also learns from MetaTool
"""

import argparse
from pathlib import Path
import itertools
import json
from dataclasses import replace

import numpy as np
from tqdm import tqdm

from tender.settings import Settings
from tender.agents.context import RunContext
from tender.agents.manager import Manager, Negotiation
from tender.agents.reasoners.embedded import (
    COLD_FEATURES,
    FEATURES,
    MODEL_FILE,
    TERMS,
    BidModel,
    ColdBidModel,
    EmbeddedReasoner,
    Policy,
    clause_vectors,
    features,
    shipped_model_file,
    terms,
)
from tender.agents.request import Request
from tender.agents.service import Tender
from tender.agents.tasks import CoUsageEdge, SelectTask
from tender.agents.lexicon import common_terms
from tender.agents.lexicon import terms as words
from tender.agents.text import clauses, mask_names
from tender.catalog import Catalog

from tender.evaluation.datasets import Paths, fold_ids
from tender.evaluation.metrics import mean, prf
from tender.evaluation.split import REPORT_SAMPLE, REPORT_SEED, TUNING_SAMPLE, TUNING_SEED, sample_ids, tuning_ids


def fit_logistic(
    x: np.ndarray, y: np.ndarray, l2: float = 1.0, iterations: int = 50, offset: np.ndarray | None = None
) -> np.ndarray:
    """Newton's method for L2-regularised logistic regression; returns [bias, *weights]. With `offset` (log-odds
    per row), the fit learns what to add to it, with no bias of its own (returned as 0)."""
    with_bias = offset is None
    design = np.hstack([np.ones((len(x), 1)), x]) if with_bias else x
    w = np.zeros(design.shape[1])
    base = np.zeros(len(x)) if offset is None else offset
    penalty = np.eye(len(w)) * l2
    if with_bias:
        penalty[0, 0] = 0.0  # the bias is not shrunk
    for _ in range(iterations):
        p = 1 / (1 + np.exp(-np.clip(base + design @ w, -40, 40)))
        gradient = design.T @ (p - y) + penalty @ w
        hessian = design.T @ (design * (p * (1 - p))[:, None]) + penalty
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-6:
            break
    return w if with_bias else np.concatenate([[0.0], w])


def fit_bid_model(x: np.ndarray, y: np.ndarray, l2: float = 30.0, fitted_on: str = "") -> BidModel:
    """Logistic regression over the terms of the features, fitted on standardised terms (so that one
    penalty suits terms of every scale) and returned in raw units."""
    design = terms(x)
    mean, scale = design.mean(axis=0), design.std(axis=0) + 1e-9
    w = fit_logistic((design - mean) / scale, y, l2=l2)
    raw = w[1:] / scale
    return BidModel(
        bias=float(w[0] - raw @ mean), weights={name: float(v) for name, v in zip(TERMS, raw)}, fitted_on=fitted_on
    )


# Fitted after the rest, on top of them: jointly, a name matching the function took weight from the description,
# and every API named for a brand (Twilio, Eventbrite), whose name matches nothing, lost bids (docs/tuning.md).
COLD_ON_TOP = ("name_words",)


def fit_cold_model(x: np.ndarray, y: np.ndarray, l2: float = 1.0, fitted_on: str = "") -> ColdBidModel:
    """Logistic regression over COLD_FEATURES with no weight below zero: a feature that comes out negative is
    dropped (weight 0) and the rest refitted, so that more similarity never lowers a bid. The features of
    COLD_ON_TOP are fitted afterwards, added to the others' log-odds with no bias of their own: a name that
    matches nothing adds nothing."""
    design = x[:, [FEATURES.index(name) for name in COLD_FEATURES]]
    on_top = [COLD_FEATURES.index(name) for name in COLD_ON_TOP]
    raw = np.zeros(len(COLD_FEATURES))
    bias, weights = _fit_nonnegative(design, y, [i for i in range(len(COLD_FEATURES)) if i not in on_top], l2)
    raw += weights
    _, weights = _fit_nonnegative(design, y, on_top, l2, offset=bias + design @ raw)
    raw += weights
    return ColdBidModel(bias=bias, weights={name: float(v) for name, v in zip(COLD_FEATURES, raw)}, fitted_on=fitted_on)


def _fit_nonnegative(
    design: np.ndarray, y: np.ndarray, columns: list[int], l2: float, offset: np.ndarray | None = None
) -> tuple[float, np.ndarray]:
    """Bias and weights (raw units, one per column of `design`, 0 outside `columns`) of a logistic fit over
    `columns`, refitted without any that comes out negative. Standardised, with a bias; on top of an `offset`,
    as they are and with none."""
    mean, scale = design.mean(axis=0), design.std(axis=0) + 1e-9
    if offset is not None:
        mean, scale = np.zeros_like(mean), np.ones_like(scale)
    kept = list(columns)
    raw = np.zeros(design.shape[1])
    while kept:
        w = fit_logistic((design[:, kept] - mean[kept]) / scale[kept], y, l2=l2, offset=offset)
        negative = [kept[i] for i, v in enumerate(w[1:]) if v < 0]
        if not negative:
            raw[kept] = w[1:] / scale[kept]
            return float(w[0] - raw[kept] @ mean[kept]), raw
        kept = [k for k in kept if k not in negative]
    return 0.0, raw


def tuning_queries(full: Catalog, n: int, seed: int, report_seed: int, report_sample: int, held_out=()):
    """The tuning mashups' ids, the reported sample's ids (with `held_out`, e.g. an R2API test fold: never tuned
    on, always left out of the catalogue) and the tuning queries as written and masked."""
    all_ids = [m.id for m in full.mashups()]
    never_tuned = set(held_out)
    reported = sorted(set(sample_ids(all_ids, report_sample, report_seed)) | never_tuned)
    ids = [i for i in tuning_ids(all_ids, n, seed, report_sample, report_seed) if i not in never_tuned]
    names = [a.name for a in full.apis()]
    queries = []
    for i in ids:
        mashup = full.get_mashup(i)
        for text in (mashup.description, mask_names(mashup.description, names)):
            if any(ch.isalpha() for ch in text):
                queries.append((text, set(mashup.api_ids)))
    return ids, reported, queries


def collect_features(tender: Tender, queries, shortlist: int = 30, hide_history_every: int = 2):
    """Candidate bids with their features and labels, as a manager-led run would produce them: the requirement's
    functions from the manager's decomposition, each API judged against its closest function. Every
    `hide_history_every`-th query is judged as on a catalogue without usage history (no history, no past
    mashups announced), so that the model learns to bid from what an API does when that is all there is."""
    pool, router = tender._directory("api")
    manager = Manager(
        tender.catalog,
        tender.encoder,
        tender.manager_reasoner,
        router,
        pool,
        tender.contractor_reasoner,
        lexicon=tender.lexicon,
    )
    table = tender.catalog.vectors("api")
    temperature = BidModel.model_fields["temperature"].default
    rows, labels = [], []
    for n, (text, truth) in enumerate(tqdm(queries, desc="features")):
        hidden = hide_history_every and n % hide_history_every == 1
        q, *rest = tender.encoder.embed_requirement(text, clauses(text))  # as a run embeds them
        announced = manager.neighbourhoods(text)
        around = None if hidden else announced["neighbourhood"]
        by_clause = [] if hidden else clause_vectors(tender.encoder, text, announced["clause_neighbourhoods"])
        functions = manager.decompose(Request.create(text), RunContext())
        f_vectors = tender.encoder.embed([f.description for f in functions], context=text)
        f_terms = [words(f.description) for f in functions]
        f_asked = [common_terms(f.description) for f in functions]
        f_around = [manager.function_descriptions(text, f) for f in functions]
        if hidden:
            scores = table.matrix @ q + 0.3 * tender.lexicon.scores(text)
            ids = {int(table.ids[r]) for r in np.argsort(-scores)[:shortlist]} | router.named(text)
        else:
            scores = router.profile_scores(q)
            ids = {int(router.api_ids[r]) for r in np.argsort(-scores)[:shortlist]} | router.named(text)
        for api_id in ids:
            api = pool.api_knowledge(api_id)
            if hidden:
                api = api.model_copy(update={"history": [], "usage_count": 0, "history_vectors": None})
            k = int(np.argmax(f_vectors @ api.vector)) if api.vector is not None else 0
            lexical = tender.lexicon.coverage(f_terms[k], api.terms)
            rows.append(
                features(
                    api,
                    q,
                    f_vectors[k],
                    text,
                    temperature,
                    around,
                    by_clause,
                    announced["descriptions"],
                    f_around[k],
                    lexical,
                    tender.lexicon.coverage(words(text), api.terms),
                    tender.lexicon.name_coverage(api.name, f_asked[k]),
                )
            )
            labels.append(api_id in truth)
    return np.array(rows), np.array(labels, dtype=float)


def selection_grid(tender: Tender, queries, reasoner: EmbeddedReasoner):
    """Run manager-led and collaborative once per query, then search the selection thresholds offline."""
    cached = []
    for text, truth in tqdm(queries, desc="proposals"):
        request = Request.create(text)
        negotiation = Negotiation(request, RunContext(), set())
        pool, router = tender._directory("api")
        manager = Manager(tender.catalog, tender.encoder, reasoner, router, pool, reasoner)
        from tender.agents import protocols

        outcome = protocols.manager_led(manager, negotiation)
        ids = list(dict.fromkeys(p.api_id for p in outcome.proposals))
        edges = [
            CoUsageEdge(a=a, b=b, weight=w)
            for i, a in enumerate(ids)
            for b in ids[i + 1 :]
            if (w := tender.catalog.co_usage_weight(a, b)) > 0
        ]
        collab = protocols.collaborative(manager, Negotiation(request, RunContext(), set()))
        cached.append((text, truth, outcome.proposals, edges, collab.proposals))
    best = None
    for missing, bonus in itertools.product((0.0, 0.3, 0.5, 0.8, 1.2), (0.0, 0.1, 0.25, 0.5)):
        policy = replace(reasoner.policy, expected_missing=missing, co_usage_bonus=bonus)
        judge = EmbeddedReasoner(tender.encoder, reasoner.model, policy)
        f1 = mean(
            prf(judge.select(SelectTask(requirement=t, functions=[], proposals=p, co_usage=e)).api_ids, truth)[2]
            for t, truth, p, e, _ in cached
        )
        if best is None or f1 > best[0]:
            best = (f1, missing, bonus)
    collab_best = max(
        (
            (mean(prf({p.api_id for p in c if p.score >= t}, truth)[2] for _, truth, _, _, c in cached), t)
            for t in (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
        ),
        key=lambda x: x[0],
    )
    return best, collab_best


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", default=str(Settings.from_env().catalog_path))
    parser.add_argument("--sample", type=int, default=TUNING_SAMPLE, help="tuning mashups")
    parser.add_argument("--seed", type=int, default=TUNING_SEED)
    parser.add_argument("--report-seed", type=int, default=REPORT_SEED)
    parser.add_argument("--report-sample", type=int, default=REPORT_SAMPLE)
    parser.add_argument(
        "--cold-db",
        help="a catalogue without usage history whose requests also teach the cold "
        "model (e.g. MetaTool's), with --cold-requests",
    )
    parser.add_argument(
        "--cold-requests",
        help="its requests (JSONL with description and api_ids); only the even ids (the tune half) are used",
    )
    parser.add_argument(
        "--exclude-r2api-fold",
        type=int,
        metavar="K",
        help="leave the R2API paper's test fold K out of the tuning and the catalogue (for "
        "`tender eval --r2api-fold K` with TENDER_BID_MODEL set to the --out file)",
    )
    parser.add_argument(
        "--write", action="store_true", help=f"write the fitted bid model to {MODEL_FILE} (or the encoder's own)"
    )
    parser.add_argument(
        "--out", type=Path, help="write the fitted bid model here instead (use it with TENDER_BID_MODEL)"
    )
    parser.add_argument(
        "--cold-only",
        action="store_true",
        help="refit only the cold model (APIs without history) and keep the written model's pairwise weights; "
        "a term they lack weighs nothing",
    )
    parser.add_argument("--no-selection", action="store_true", help="skip the search of selection thresholds")
    # 0.35: see docs/tuning.md
    parser.add_argument(
        "--description-share",
        type=float,
        default=0.35,
        help="how much of a bid with usage history is the description's bid (log-odds)",
    )
    args = parser.parse_args(argv)
    settings = Settings.from_env()
    embedder = settings.embedder(catalog=args.db)
    full = Catalog(args.db)
    held_out = (
        fold_ids(Paths(settings.data_dir.parent), f"fold-{args.exclude_r2api_fold}") if args.exclude_r2api_fold else []
    )
    ids, reported, queries = tuning_queries(
        full, args.sample, args.seed, args.report_seed, args.report_sample, held_out
    )
    catalog = Catalog(args.db, embedder=embedder, exclude_mashups=set(ids) | set(reported))
    tender = Tender(catalog)
    x, y = collect_features(tender, queries)
    # Each model learns from the bids it will judge: the pairwise one from APIs with usage history, the cold one
    # from those without (the hidden-history queries, and any history-free catalogue given).
    warm = x[:, FEATURES.index("has_history")] == 1
    cold_x, cold_y, cold_from = x[~warm], y[~warm], f"{len(ids)} tuning mashups without history"
    if args.cold_db and args.cold_requests:
        extra = [json.loads(line) for line in open(args.cold_requests) if line.strip()]
        extra = [(r["description"], set(r["api_ids"])) for r in extra if r["id"] % 2 == 0]
        ex, ey = collect_features(Tender(Catalog(args.cold_db, embedder=embedder)), extra, hide_history_every=0)
        cold_x, cold_y = np.vstack([cold_x, ex]), np.concatenate([cold_y, ey])
        cold_from += f" and {len(extra)} requests of {args.cold_requests} (even ids)"
    cold = fit_cold_model(cold_x, cold_y, fitted_on=f"{cold_from}, {len(cold_y)} candidate bids")
    if args.cold_only:
        kept = json.loads(shipped_model_file(embedder.encoder.name).read_text())
        kept["weights"] = {name: kept["weights"].get(name, 0.0) for name in TERMS}
        model = BidModel.model_validate({**kept, "cold": cold.model_dump()})
    else:
        model = fit_bid_model(
            x[warm],
            y[warm],
            fitted_on=f"{len(ids)} tuning mashups (seed {args.seed}) as written and "
            f"masked, {int(warm.sum())} candidate bids of APIs with history; "
            "`python -m tender.training.tune --write`",
        )
        # The encoder the features came from: Tender refuses the model with any other (see catalog/encoders.py).
        model = model.model_copy(
            update={"encoder": embedder.encoder, "cold": cold, "description_share": args.description_share}
        )
    print(
        "bid model:", json.dumps({"bias": round(model.bias, 3), **{k: round(v, 3) for k, v in model.weights.items()}})
    )
    print(
        "cold bid model:",
        json.dumps({"bias": round(cold.bias, 3), **{k: round(v, 3) for k, v in cold.weights.items()}}),
    )
    if args.write or args.out:
        target = args.out or shipped_model_file(embedder.encoder.name)
        target.write_text(model.model_dump_json(indent=2) + "\n")
        print(f"written to {target}")
    if args.no_selection:
        return
    reasoner = EmbeddedReasoner(tender.encoder, model, replace(Policy(), self_select_at=0.02))
    (f1, missing, bonus), (collab_f1, collab_t) = selection_grid(tender, queries, reasoner)
    print(f"selection: expected_missing={missing} co_usage_bonus={bonus} (tuning F1 {f1:.3f})")
    print(f"collaborative: self_select_at={collab_t} (tuning F1 {collab_f1:.3f})")


if __name__ == "__main__":
    main()
