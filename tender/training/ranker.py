"""Fitting the ranking model (tender/ranking/model.json) on training parts only.

Examples are the candidates of a request's shortlist, made by the same Ranker that serves (one extractor), each
labelled by whether it is in the request's gold set:

- MetaTool single-tool requests of the `train` split (their tools never in a dev or test part), over the 199
  plugins, no usage history;
- ProgrammableWeb mashups of the train part, as written and with names masked, with the usage history of the
  other train mashups (five folds: a mashup never sees itself), and without any history.

The two ProgrammableWeb sources weigh the same and the MetaTool requests a quarter of that (`--metatool-weight`,
chosen on dev parts: with an equal share they pulled the no-history weights toward whole one-sentence requests,
and the held-out tools' R@5 was lower; docs/tuning.md). The model is a logistic regression (L2, Newton's method);
it is then calibrated per regime on the dev parts, and the selection's cost is fitted on the dev parts (tender
eval's harness)."""

import argparse
import json
import random
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tqdm import tqdm

from tender.agents.text import mask_names
from tender.catalog import Catalog
from tender.evaluation.catalogues import Catalogues
from tender.evaluation.datasets import Paths, split
from tender.evaluation.kinds import TRAINABLE
from tender.ranking.evidence import FEATURES, vector
from tender.ranking.retrieval import Ranker
from tender.ranking.scorer import MODEL_FILE, Scorer, beside_encoder, ranking_folder, shipped_model, untrained
from tender.ranking.vectors import QueryEncoder
from tender.settings import Settings
from tender.assembly import embedder_for

FOLDS = 5


@dataclass
class Examples:
    """Rows of features, labels, and the request each row came from."""

    source: str
    x: list[np.ndarray]
    y: list[float]
    query: list[int]


def examples(
    source: str,
    catalog: Catalog,
    requests: list[tuple[str, set[int]]],
    progress: bool,
    offset: int = 0,
    functions: bool = False,
) -> Examples:
    """Each request's shortlist, the request read as one function, labelled by the gold set. With `functions`,
    also the shortlist of each function the embedded decomposition finds in it (read in the request's context),
    where a gold item is right only for the function it serves: the one whose text is nearest to the item's (a
    mashup's data says which APIs it used, not for what)."""
    assert catalog.embedder is not None
    ranker = Ranker(catalog, QueryEncoder(catalog.embedder), untrained())
    out = Examples(source, [], [], [])
    for n, (text, gold) in enumerate(tqdm(requests, desc=source, disable=not progress)):
        jobs: list[tuple[str, set[int]]] = [(text, gold)]
        if functions:
            parts = [f for f in decompose(text) if f != text]
            if len(parts) > 1:
                jobs += list(zip(parts, aligned(ranker, parts, gold)))
        for function, right in jobs:
            add(out, ranker, function, text, right, offset + n)
    return out


def add(out: "Examples", ranker: Ranker, function: str, requirement: str, right: set[int], query: int) -> None:
    for candidate in ranker.shortlist(function, requirement).candidates:
        out.x.append(vector(candidate.evidence))
        out.y.append(float(candidate.item in right))
        out.query.append(query)


def aligned(ranker: Ranker, functions: list[str], gold: set[int]) -> list[set[int]]:
    """Each function's share of the gold items: an item goes to the function whose text is nearest to its own."""
    table = ranker.catalog.vectors("api")
    vectors = ranker.encoder.embed(functions)
    out: list[set[int]] = [set() for _ in functions]
    for item in gold:
        if item in table.row:
            out[int(np.argmax(vectors @ table.vector(item)))].add(item)
    return out


def need_examples(source: str, catalog: Catalog, needs: list[tuple[str, str, set[int]]], progress: bool) -> Examples:
    """Examples of stated needs: (need, requirement, the items that serve the need)."""
    assert catalog.embedder is not None
    ranker = Ranker(catalog, QueryEncoder(catalog.embedder), untrained())
    out = Examples(source, [], [], [])
    for n, (need, requirement, right) in enumerate(tqdm(needs, desc=source, disable=not progress)):
        add(out, ranker, need, requirement, right, n)
    return out


def decompose(text: str) -> list[str]:
    """The functions the embedded manager finds in a request."""
    from tender.agents.decomposition import read

    return read(text).needs


def metatool_train(paths: Paths, catalogues: Catalogues, sample: int, seed: int, progress: bool) -> Examples:
    rows = [json.loads(line) for line in paths.need("metatool", "single_tool_queries.jsonl").open()]
    train = [r for r in rows if r["split"] == "train"]
    chosen = random.Random(seed).sample(train, min(sample, len(train)))
    catalog = catalogues.open("metatool")
    try:
        return examples("metatool train", catalog, [(r["description"], set(r["api_ids"])) for r in chosen], progress)
    finally:
        catalog.close()


def train_mashups(paths: Paths) -> list[dict]:
    """The ProgrammableWeb mashups of the train part (outside splits/programmableweb.json's dev and test) that name
    their APIs and say something."""
    mashups = [json.loads(line) for line in paths.need("programmableweb", "mashups.jsonl").open()]
    held = set(split("programmableweb")["dev"]) | set(split("programmableweb")["test"])
    return [m for m in mashups if m["id"] not in held and m["api_ids"] and (m["description"] or m["name"])]


def programmableweb_train(
    paths: Paths,
    catalogues: Catalogues,
    sample: int,
    seed: int,
    progress: bool,
    history: bool,
    outside: Iterable[int] = (),
    functions: bool = True,
) -> Examples:
    """Train-part mashups (none of `outside`), as written and masked, with the usage history of the other train
    mashups (five folds: a mashup never sees itself; `outside` is never in it) or with none."""
    held = set(split("programmableweb")["dev"]) | set(split("programmableweb")["test"]) | set(outside)
    train = [m for m in train_mashups(paths) if m["id"] not in held]
    rng = random.Random(seed)
    chosen = rng.sample(train, min(sample, len(train)))
    source = "programmableweb train, history of the other folds" if history else "programmableweb train, no history"
    out = Examples(source, [], [], [])
    folds = [chosen[k::FOLDS] for k in range(FOLDS)] if history else [chosen]
    for k, fold in enumerate(folds):
        hidden = sorted(held | {m["id"] for m in fold})
        catalog = catalogues.open("programmableweb", hidden, history=history)
        try:
            names = [a.name for a in catalog.apis()]
            requests = []
            for i, m in enumerate(fold):
                text = m["description"] or m["name"]
                if i % 2:  # half with API names masked, as a user who does not know them writes
                    text = mask_names(text, names) or text
                requests.append((text, set(m["api_ids"])))
            part = examples(
                f"{source} ({k + 1}/{len(folds)})",
                catalog,
                requests,
                progress,
                offset=len(out.query) and max(out.query) + 1,
                functions=functions,
            )
            out.x += part.x
            out.y += part.y
            out.query += part.query
        finally:
            catalog.close()
    return out


def r2api_models(args, paths: Paths, catalogues: Catalogues, metatool: Examples, base: Scorer) -> None:
    """One model per R2API fold, its ProgrammableWeb examples drawn and computed with the fold's mashups out of
    everything (their text, their labels, the usage history), so that nothing fitted saw a fold's test mashups.
    The calibration and the selection's cost are the shipped model's (fitted on dev parts): they leave the order
    of a fold's candidates, and so its ranking metrics, as they are."""
    from tender.evaluation.datasets import FOLDS as PARTS
    from tender.evaluation.datasets import fold_ids

    args.r2api_folds.mkdir(parents=True, exist_ok=True)
    for part in PARTS:
        fold = set(fold_ids(paths, part))
        sources = [
            metatool,
            programmableweb_train(paths, catalogues, args.mashups, args.seed, not args.quiet, True, fold, False),
            programmableweb_train(paths, catalogues, args.mashups, args.seed + 1, not args.quiet, False, fold, False),
        ]
        weights, bias, seen = fit_sources(args, sources)
        model = base.model_copy(
            update={
                "weights": tuple(round(float(w), 6) for w in weights),
                "bias": round(bias, 6),
                "fitted_on": {
                    "model": {
                        "sources": seen,
                        "parts": f"MetaTool single-tool split 'train'; ProgrammableWeb train-part mashups outside R2API "
                        f"{part}, whose mashups were hidden from the usage history too",
                    },
                    "calibration": base.fitted_on.get("calibration", {}),
                    "objective": base.fitted_on.get("objective", {}),
                },
            }
        )
        (args.r2api_folds / f"{part}.json").write_text(model.model_dump_json(indent=1) + "\n")
        print(f"Wrote {args.r2api_folds / part}.json", file=sys.stderr)


def fit_logistic(x: np.ndarray, y: np.ndarray, weight: np.ndarray, l2: float = 1.0, steps: int = 50) -> np.ndarray:
    """Weights (bias last) of an L2-penalised logistic regression, by Newton's method."""
    a = np.hstack([x, np.ones((len(x), 1))])
    w = np.zeros(a.shape[1])
    penalty = np.full(a.shape[1], l2)
    penalty[-1] = 0.0  # the bias is not penalised
    for _ in range(steps):
        p = 1 / (1 + np.exp(-np.clip(a @ w, -40, 40)))
        gradient = a.T @ (weight * (p - y)) + penalty * w
        hessian = (a * (weight * p * (1 - p))[:, None]).T @ a + np.diag(penalty)
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w


def fit_sources(args: argparse.Namespace, sources: list[Examples]) -> tuple[np.ndarray, float, list[dict]]:
    """The model over MetaTool's requests and ProgrammableWeb's mashups with and without history (in that order),
    MetaTool at its share, and what each source gave it."""
    shares = [args.metatool_weight, 1.0, 1.0]
    weights, bias = fit(sources, args.l2, shares)
    return weights, bias, [_described(s) | {"share": share} for s, share in zip(sources, shares)]


def fit(sources: list[Examples], l2: float = 1.0, shares: list[float] | None = None) -> tuple[np.ndarray, float]:
    """Each source weighs its share in all (the same where no shares are given), however many rows it has; a
    source of share 0 is left out."""
    kept = [(s, share) for s, share in zip(sources, shares or [1.0] * len(sources)) if share > 0]
    x = np.vstack([np.stack(s.x) for s, _ in kept])
    y = np.concatenate([np.array(s.y) for s, _ in kept])
    total = sum(share for _, share in kept)
    weight = np.concatenate([np.full(len(s.y), len(y) * share / (total * len(s.y))) for s, share in kept])
    w = fit_logistic(x, y, weight, l2)
    return w[:-1], float(w[-1])


def calibrate(scorer: Scorer, sources: list[Examples]) -> dict[str, tuple[float, float]]:
    """Platt scaling per regime: (slope, intercept) on the model's log-odds, fitted on dev examples, so that a score
    reads as the probability that the item serves the function in catalogues with and without usage history. Each
    source weighs the same in its regime, however many rows it gives: a calibration across kinds, not one fitted to
    the kind with the most candidates."""
    w, b = np.array(scorer.weights), scorer.bias
    out = {}
    for regime in ("history", "cold"):
        z_parts, y_parts, weight_parts = [], [], []
        for s in sources:
            rows = [(x, y) for x, y in zip(s.x, s.y) if (x[-1] == 1.0) == (regime == "history")]
            if rows:
                z_parts.append(np.array([x @ w + b for x, _ in rows]))
                y_parts.append(np.array([y for _, y in rows]))
                weight_parts.append(np.full(len(rows), 1.0 / len(rows)))
        if not z_parts:
            continue
        z, y = np.concatenate(z_parts), np.concatenate(y_parts)
        weight = np.concatenate(weight_parts) * len(z) / len(z_parts)
        slope, intercept = fit_logistic(z[:, None], y, weight, l2=1e-6)
        out[regime] = (round(float(slope), 6), round(float(intercept), 6))
    return out


def held_out_probabilities(
    scorer: Scorer, calibrated_on: list[Examples], held: Examples
) -> tuple[np.ndarray, np.ndarray] | None:
    """`held`'s candidates in a catalogue without history, read with a calibration fitted on `calibrated_on` alone:
    (their probabilities, whether each serves the function); None where there is nothing to read or to fit on."""
    rows = [(x, y) for x, y in zip(held.x, held.y) if x[-1] != 1.0]
    if not rows or not calibrated_on:
        return None
    slope, intercept = calibrate(scorer, calibrated_on).get("cold", (1.0, 0.0))
    z = np.array([x @ np.array(scorer.weights) + scorer.bias for x, _ in rows]) * slope + intercept
    return 1 / (1 + np.exp(-np.clip(z, -40, 40))), np.array([y for _, y in rows])


def called_likely(p: np.ndarray, y: np.ndarray, high: float) -> dict:
    """How many candidates score `high` or more, and the share of them that serve the function."""
    called = p >= high
    return {"called": int(called.sum()), "right": round(float(y[called].mean()), 3) if called.any() else None}


def held_out_reliability(scorer: Scorer, sources: list[Examples], high: float) -> list[dict]:
    """Words on a kind the calibration never saw: for each cold source, the calibration fitted on the others, and
    of that source's candidates scored `high` or more, how many there are and the share that serve the function."""
    return [{"source": held.source, **called_likely(*read, high)} for held, read in _held_out(scorer, sources)]


def _held_out(scorer: Scorer, sources: list[Examples]) -> list[tuple[Examples, tuple[np.ndarray, np.ndarray]]]:
    """Each source with its candidates read by a calibration fitted on the others (those with any to read)."""
    read = [(held, held_out_probabilities(scorer, [s for s in sources if s is not held], held)) for held in sources]
    return [(held, r) for held, r in read if r is not None]


def unseen_bar(scorer: Scorer, sources: list[Examples], right: float = 0.8, least: int = 20) -> float:
    """The lowest score (0.60, 0.65, ... 0.95) from which candidates were right at least `right` of the time on every
    cold dev source held out of the calibration (sources with fewer than `least` such candidates not counted): the
    bar for "likely" on a kind of catalogue the calibration never saw."""
    read = [r for _, r in _held_out(scorer, sources)]  # each source's calibration fitted once, read at every bar
    for bar in np.arange(0.60, 0.951, 0.05):
        rows = [called_likely(p, y, float(bar)) for p, y in read]
        if all(r["right"] >= right for r in rows if r["called"] >= least and r["right"] is not None):
            return round(float(bar), 2)
    return 0.95


def source_kinds(catalogues: Catalogues, name: str) -> set[str]:
    catalog = Catalog(catalogues.ensure(name))
    try:
        return catalog.source_kinds()
    finally:
        catalog.close()


def tool_dev_examples(
    paths: Paths,
    catalogues: Catalogues,
    sample: int,
    seed: int,
    progress: bool,
    part: str = "dev",
    sets: Iterable[str] = TRAINABLE,
) -> list[Examples]:
    """Examples from the dev parts of the tool-retrieval sets (kinds the model is never fitted on): each request read
    as functions by the embedded decomposition, each gold tool labelling the function nearest to it. Another part
    (`part`) and other sets only to report on (training/words.py)."""
    from tender.evaluation.kinds import any_dataset

    out = []
    rng = random.Random(seed)
    for name in sets:
        data = any_dataset(f"tools-{name}")
        catalog = catalogues.open(data.catalogue)
        try:
            queries = data.queries(paths, part, catalog)
            queries = rng.sample(queries, min(sample, len(queries)))
            requests = [(q.text, q.gold_items) for q in queries]
            out.append(examples(f"tools-{name} {part}", catalog, requests, progress, functions=True))
        finally:
            catalog.close()
    return out


def dev_examples(
    paths: Paths, catalogues: Catalogues, sample: int, seed: int, progress: bool, part: str = "dev"
) -> list[Examples]:
    """Need-level examples from dev parts (for calibration only): MetaTool's single-tool requests (each a need of
    one held-out tool), the judged suites' functions (their need, in their requirement), and ProgrammableWeb's dev
    mashups read whole (with usage history). Another part (`part`) only to report on (training/words.py)."""
    from tender.evaluation.datasets import DATASETS

    out = []
    rng = random.Random(seed)
    single = DATASETS["metatool-single"]
    catalog = catalogues.open("metatool")
    try:
        queries = rng.sample(single.queries(paths, part, catalog), sample)
        out.append(
            need_examples(
                f"metatool-single {part}", catalog, [(q.text, q.text, q.gold_items) for q in queries], progress
            )
        )
    finally:
        catalog.close()
    for name, history in (("openapi-suite", False), ("programmableweb-suite", False), ("programmableweb-suite", True)):
        data = DATASETS[name]
        catalog = catalogues.open(data.catalogue, data.hidden(paths, part), history=history)
        try:
            needs = [
                (f.need, q.text, set(f.acceptable)) for q in data.queries(paths, part, catalog) for f in q.functions
            ]
            label = f"{name} {part}, judged needs, {'history' if history else 'no history'}"
            out.append(need_examples(label, catalog, needs, progress))
        finally:
            catalog.close()
    data = DATASETS["programmableweb"]
    catalog = catalogues.open(data.catalogue, data.hidden(paths, part), history=True)
    try:
        queries = rng.sample(data.queries(paths, part, catalog), min(sample, 640))
        out.append(
            examples(f"programmableweb {part}, history", catalog, [(q.text, q.gold_items) for q in queries], progress)
        )
    finally:
        catalog.close()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tender train ranker", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--out",
        type=Path,
        help="model file to write (default: the shipped one for the stock encoders; for an encoder read from a "
        "folder, tender-ranking-<fingerprint>.json beside it, where Tender finds it by itself)",
    )
    parser.add_argument("--metatool", type=int, default=4000, help="MetaTool train requests drawn")
    parser.add_argument("--mashups", type=int, default=1500, help="ProgrammableWeb train mashups drawn (each regime)")
    parser.add_argument(
        "--metatool-weight",
        type=float,
        default=0.25,
        help="the MetaTool requests' share of the fit against each ProgrammableWeb source's 1 (0: left out)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--l2", type=float, default=1.0)
    parser.add_argument(
        "--dev", type=int, default=300, help="queries drawn from each dev part for calibration and the objective"
    )
    parser.add_argument(
        "--r2api-folds",
        type=Path,
        help="write one model per R2API fold into this folder instead (their calibration and cost are --out's)",
    )
    parser.add_argument(
        "--examples", type=Path, help="keep the training examples in this .npz (made once, then reused)"
    )
    parser.add_argument("--keep-objective", action="store_true", help="keep the objective of the model at --out")
    parser.add_argument(
        "--kinds-calibration",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="calibrate on the tool-retrieval sets' dev parts too (kinds the model is not fitted on)",
    )
    parser.add_argument(
        "--words-only",
        action="store_true",
        help="keep the model at --out as it is (every score and plan the same) and refit only its words: the bar "
        'for "likely" on a kind of catalogue its calibration never saw',
    )
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    settings = Settings.from_env()
    args.out = args.out or default_out(embedder_for(settings))
    paths = Paths(settings.data_dir.parent)
    catalogues = Catalogues(settings, paths, progress=not args.quiet)
    started = time.perf_counter()
    progress = not args.quiet
    if args.words_only:
        return refit_words(args, paths, catalogues, started)
    if args.r2api_folds:
        cached = load_examples(args.examples) if args.examples and args.examples.is_file() else None
        metatool = cached[0] if cached else metatool_train(paths, catalogues, args.metatool, args.seed, progress)
        r2api_models(args, paths, catalogues, metatool, Scorer.load(args.out))
        return 0
    if args.examples and args.examples.is_file():
        sources = load_examples(args.examples)
    else:
        sources = [
            metatool_train(paths, catalogues, args.metatool, args.seed, progress),
            programmableweb_train(paths, catalogues, args.mashups, args.seed, progress, history=True),
            programmableweb_train(paths, catalogues, args.mashups, args.seed + 1, progress, history=False),
        ]
        if args.examples:
            save_examples(sources, args.examples)
    weights, bias, seen = fit_sources(args, sources)
    previous = Scorer.load(args.out) if args.keep_objective and args.out.is_file() else None
    fitted = Scorer(weights=tuple(round(float(w), 6) for w in weights), bias=round(bias, 6))
    development = dev_examples(paths, catalogues, args.dev, args.seed, progress)
    if args.kinds_calibration:
        development += tool_dev_examples(paths, catalogues, args.dev, args.seed, progress)
    calibration = calibrate(fitted, development)
    calibrated = list(CALIBRATED_ON) + ([f"tools-{name}" for name in TRAINABLE] if args.kinds_calibration else [])
    held_out, bar, kinds = fit_words(fitted, development, catalogues, calibrated)
    scorer = fitted.model_copy(
        update={"calibration": calibration, "calibrated_kinds": tuple(kinds), "high_unseen": bar}
    )
    if not args.keep_objective:
        from .objective import fit_objective

        scorer = scorer.model_copy(
            update={"objective": fit_objective(scorer, catalogues, args.dev, args.seed, progress)}
        )
    elif previous:
        scorer = scorer.model_copy(update={"objective": previous.objective})
    encoder = embedder_for(catalogues.settings).encoder
    scorer = scorer.model_copy(
        update={
            "encoder": encoder.name,
            "encoder_weights": encoder.fingerprint,
            "fitted_on": {
                "model": {
                    "sources": seen,
                    "parts": "MetaTool single-tool split 'train'; ProgrammableWeb mashups outside "
                    "splits/programmableweb.json's dev and test",
                    "seed": args.seed,
                    "l2": args.l2,
                },
                "calibration": {
                    "sources": [_described(s) for s in development],
                    "parts": "dev parts; each source weighs the same",
                    "held_out": held_out,
                },
                "objective": {
                    "parts": "dev parts of programmableweb, metatool-multi, openapi-suite, programmableweb-suite "
                    "(manager-led, every variant); never mcp-suite",
                    "fitted": not args.keep_objective,
                },
            },
        }
    )
    args.out.write_text(scorer.model_dump_json(indent=1) + "\n")
    print(f"Wrote {args.out} in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    for name, w in sorted(zip(FEATURES, weights), key=lambda pair: -abs(pair[1])):
        print(f"  {name:32s} {w:+.3f}", file=sys.stderr)
    return 0


# The kinds of catalogue the shipped calibrations were fitted on (dev_examples' sources).
CALIBRATED_ON = ("metatool", "openapi", "programmableweb")


def fit_words(
    scorer: Scorer, development: list[Examples], catalogues: Catalogues, calibrated: list[str]
) -> tuple[list[dict], float, list[str]]:
    """A model's words: how "likely" (0.6) held on each dev source held out of a calibration, the bar for "likely"
    on a kind the calibration never saw, and the kinds of catalogue the `calibrated` datasets' are."""
    from tender.ranking.evidence import HIGH

    held_out = held_out_reliability(scorer, development, HIGH)
    for row in held_out:
        print(f"  held out of the calibration: {row}", file=sys.stderr)
    bar = unseen_bar(scorer, development)
    kinds = sorted({kind for name in calibrated for kind in source_kinds(catalogues, name)})
    print(f"  calibrated on {kinds}; likely elsewhere from {bar}", file=sys.stderr)
    return held_out, bar, kinds


def refit_words(args: argparse.Namespace, paths: Paths, catalogues: Catalogues, started: float) -> int:
    """The model at args.out with only its words refitted: the kinds its calibration saw, and from what score its
    "likely" held on every dev source held out of a calibration (the tool-retrieval sets' too). Weights,
    calibration and objective are kept, so every score is the same; only where "likely" is said may differ."""
    if not args.out.is_file():
        raise SystemExit(f"--words-only refits a model that exists; {args.out} does not")
    scorer = Scorer.load(args.out)
    progress = not args.quiet
    development = dev_examples(paths, catalogues, args.dev, args.seed, progress)
    development += tool_dev_examples(paths, catalogues, args.dev, args.seed, progress)
    held_out, bar, kinds = fit_words(scorer, development, catalogues, list(CALIBRATED_ON))
    fitted_on = dict(scorer.fitted_on)
    fitted_on["words"] = {
        "sources": [_described(s) for s in development],
        "parts": "dev parts; each held out of a calibration fitted on the others",
        "held_out": held_out,
        "seed": args.seed,
    }
    scorer = scorer.model_copy(update={"calibrated_kinds": tuple(kinds), "high_unseen": bar, "fitted_on": fitted_on})
    args.out.write_text(scorer.model_dump_json(indent=1) + "\n")
    print(f"Wrote {args.out} in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return 0


def default_out(embedder) -> Path:
    """Where a refit goes unless told: over the shipped model of a stock encoder (tender-minilm has its own file),
    else beside the encoder's folder, where ranking_model finds it by the encoder's fingerprint."""
    encoder = embedder.encoder
    folder = ranking_folder(embedder)
    if folder is None:
        return shipped_model(encoder.name, encoder.fingerprint) or MODEL_FILE.with_name(f"model.{encoder.name}.json")
    return beside_encoder(folder, encoder.name, encoder.fingerprint)


def save_examples(sources: list[Examples], path: Path) -> None:
    arrays: dict = {}
    for i, s in enumerate(sources):
        arrays[f"x{i}"], arrays[f"y{i}"], arrays[f"q{i}"] = np.stack(s.x), np.array(s.y), np.array(s.query)
    arrays |= {"names": np.array([s.source for s in sources]), "features": np.array(FEATURES)}
    np.savez_compressed(path, **arrays)


def load_examples(path: Path) -> list[Examples]:
    data = np.load(path)
    if tuple(data["features"]) != FEATURES:
        raise SystemExit(f"{path} holds examples of other features; delete it to make them again")
    return [
        Examples(str(name), list(data[f"x{i}"]), list(data[f"y{i}"]), list(data[f"q{i}"]))
        for i, name in enumerate(data["names"])
    ]


def _described(s: Examples) -> dict:
    return {"source": s.source, "requests": len(set(s.query)), "rows": len(s.y), "positive": int(sum(s.y))}


Sources = Callable[..., Examples]

if __name__ == "__main__":
    sys.exit(main())
