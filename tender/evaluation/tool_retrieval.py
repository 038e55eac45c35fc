"""Flat dense retrieval over tool data of many kinds (kinds.py): each request ranks its set's whole catalogue by
cosine to the request, as the encoder serves it (items embedded as documents, requests as queries), and is scored
by R@5 (the share of its gold items in the first five), NDCG@5 and top-1. No ranking model, BM25 or history: what
the encoder's similarities give, the measure for judging an encoder on a kind it never saw.

    python -m tender.evaluation.tool_retrieval --encoder FOLDER_OR_NAME --part dev --out DIR
    python -m tender.evaluation.tool_retrieval --compare A/records.jsonl B/records.jsonl

Records are `tender eval`'s (dataset, part, variant, id, metrics), so runs pair query by query."""

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from tender.assembly import model_spec
from tender.agents.text import mask_names
from tender.settings import Settings

from .compare import bootstrap
from .datasets import Paths
from .kinds import EVAL_ONLY, TRAINABLE, ToolSet, read_set

# Every set judged, with the parts it has: the tool-retrieval sets, MetaTool's held-out single-tool and two-tool
# requests, ProgrammableWeb's mashups (as written and with the API names masked).
JUDGED = (*TRAINABLE, "metatool", "metatool-multi", "programmableweb", *EVAL_ONLY)
METRICS = ("r@5", "ndcg@5", "top-1")
K = 5


def ranked_scores(item_vectors: np.ndarray, query_vectors: np.ndarray, k: int = K) -> np.ndarray:
    """Each query's first k items (row indices), best first."""
    scores = query_vectors @ item_vectors.T
    top = np.argpartition(-scores, min(k, scores.shape[1] - 1), axis=1)[:, :k]
    order = np.take_along_axis(scores, top, axis=1).argsort(axis=1)[:, ::-1]
    return np.take_along_axis(top, order, axis=1)


def metrics(ranked: list[int], gold: set[int]) -> dict[str, float]:
    hits = [item in gold for item in ranked[:K]]
    dcg = sum(1 / np.log2(rank + 2) for rank, hit in enumerate(hits) if hit)
    ideal = sum(1 / np.log2(rank + 2) for rank in range(min(K, len(gold))))
    return {
        "r@5": sum(hits) / len(gold),
        "ndcg@5": float(dcg / ideal) if ideal else 0.0,
        "top-1": float(bool(hits) and hits[0]),
    }


def variants(tool_set: ToolSet) -> list[str]:
    return ["as written", "masked"] if tool_set.maskable else ["whole request"]


def judge(embedder, tool_set: ToolSet, part: str) -> list[dict]:
    """One record per request of the part (and per variant)."""
    queries = tool_set.part(part)
    if not queries:
        return []
    item_ids = np.array([a.id for a in tool_set.items])
    items = embedder.embed([a.text() for a in tool_set.items], role="document")
    names = [a.name for a in tool_set.items]
    out = []
    for variant in variants(tool_set):
        texts = [q.text if variant != "masked" else (mask_names(q.text, names) or q.text) for q in queries]
        ranked = ranked_scores(items, embedder.embed(texts, role="query"))
        for query, rows in zip(queries, ranked):
            out.append(
                {
                    "dataset": tool_set.name,
                    "part": part,
                    "variant": variant,
                    "id": query.id,
                    "method": "dense",
                    "expect_nothing": False,
                    "ranked": [int(i) for i in item_ids[rows]],
                    "metrics": metrics([int(i) for i in item_ids[rows]], set(query.gold)),
                }
            )
    return out


def run(embedder, paths: Paths, part: str, sets: tuple[str, ...] = JUDGED) -> list[dict]:
    """Records of every set that has this part (the eval-only sets have only `test`)."""
    records = []
    for name in sets:
        records += judge(embedder, read_set(paths, name), part)
    return records


def summary(records: list[dict]) -> dict[tuple[str, str, str], dict[str, float]]:
    groups: dict[tuple[str, str, str], list[dict]] = {}
    for r in records:
        groups.setdefault((r["dataset"], r["part"], r["variant"]), []).append(r)
    return {
        key: {"queries": len(rows), **{m: float(np.mean([r["metrics"][m] for r in rows])) for m in METRICS}}
        for key, rows in groups.items()
    }


def paired(a: list[dict], b: list[dict], metric: str = "r@5") -> dict[tuple[str, str, str], dict]:
    """Per (set, part, variant): A's and B's mean, B - A and its paired bootstrap 95% interval."""
    index = {(r["dataset"], r["part"], r["variant"], r["id"]): r for r in b}
    groups: dict[tuple[str, str, str], list[tuple[float, float]]] = {}
    for r in a:
        other = index.get((r["dataset"], r["part"], r["variant"], r["id"]))
        if other is not None:
            pair = (r["metrics"][metric], other["metrics"][metric])
            groups.setdefault((r["dataset"], r["part"], r["variant"]), []).append(pair)
    out = {}
    for key, pairs in groups.items():
        x = np.array(pairs)
        low, high = bootstrap(x[:, 1] - x[:, 0])
        out[key] = {
            "queries": len(x),
            "a": float(x[:, 0].mean()),
            "b": float(x[:, 1].mean()),
            "delta": float((x[:, 1] - x[:, 0]).mean()),
            "low": low,
            "high": high,
        }
    return out


def kind_of_set(name: str) -> str:
    from .kinds import kind_of

    return kind_of({"metatool-multi": "metatool"}.get(name, name)) or name


def by_kind(a: list[dict], b: list[dict], metric: str = "r@5") -> dict[str, dict]:
    """Per kind (kinds.KINDS; the eval-only sets each their own): every request of its sets and variants pooled, A's
    and B's mean, B - A and its paired bootstrap 95% interval."""
    index = {(r["dataset"], r["part"], r["variant"], r["id"]): r for r in b}
    pooled: dict[str, list[tuple[float, float]]] = {}
    for r in a:
        other = index.get((r["dataset"], r["part"], r["variant"], r["id"]))
        if other is not None:
            kind = kind_of_set(r["dataset"])
            kind = r["dataset"] if kind == "eval-only" else kind
            pooled.setdefault(kind, []).append((r["metrics"][metric], other["metrics"][metric]))
    out = {}
    for kind, pairs in pooled.items():
        x = np.array(pairs)
        low, high = bootstrap(x[:, 1] - x[:, 0])
        out[kind] = {
            "queries": len(x),
            "a": float(x[:, 0].mean()),
            "b": float(x[:, 1].mean()),
            "low": low,
            "high": high,
        }
    return out


def comparison_table(a: list[dict], b: list[dict], metrics_shown: tuple[str, ...] = ("r@5", "top-1")) -> str:
    lines = [
        "| set | part | variant | queries | " + " | ".join(f"{m} A → B, B − A [95%]" for m in metrics_shown) + " |",
        "|---|---|---|---:|" + "---|" * len(metrics_shown),
    ]
    tables = {m: paired(a, b, m) for m in metrics_shown}
    for key in tables[metrics_shown[0]]:
        cells = []
        for m in metrics_shown:
            d = tables[m][key]
            cells.append(f"{d['a']:.3f} → {d['b']:.3f}, {d['delta']:+.3f} [{d['low']:+.3f}, {d['high']:+.3f}]")
        lines.append(
            f"| {key[0]} | {key[1]} | {key[2]} | {tables[metrics_shown[0]][key]['queries']} | {' | '.join(cells)} |"
        )
    return "\n".join(lines)


def read_records(path: Path) -> list[dict]:
    return [json.loads(line) for line in Path(path).open(encoding="utf-8")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--encoder", help="all-MiniLM-L6-v2 (default), tender-minilm, tender-matcher or a folder")
    parser.add_argument("--part", default="dev", choices=("dev", "test"))
    parser.add_argument("--sets", default=",".join(JUDGED), help="comma-separated sets (default: every one)")
    parser.add_argument("--out", type=Path, help="folder to write records.jsonl and summary.json into")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("A", "B"), help="pair two runs' records")
    parser.add_argument("--by-kind", action="store_true", help="with --compare: each kind's requests pooled")
    args = parser.parse_args(argv)
    if args.compare:
        a, b = read_records(args.compare[0]), read_records(args.compare[1])
        if args.by_kind:
            for metric in ("r@5", "top-1"):
                for kind, d in by_kind(a, b, metric).items():
                    print(
                        f"{kind:20s} {metric:6s} {d['queries']:5d}  {d['a']:.3f} -> {d['b']:.3f}  "
                        f"{d['b'] - d['a']:+.3f} [{d['low']:+.3f}, {d['high']:+.3f}]"
                    )
            return 0
        print(comparison_table(a, b))
        return 0
    settings = Settings.from_env()
    from tender.catalog import get_embedder

    spec = model_spec(settings, args.encoder, "--encoder") if args.encoder else None
    embedder = get_embedder(spec, threads=None, runtime="onnx", cache_dir=settings.cache_dir)
    started = time.perf_counter()
    records = run(embedder, Paths(settings.data_dir.parent), args.part, tuple(args.sets.split(",")))
    table = summary(records)
    for (name, part, variant), row in table.items():
        print(
            f"{name:18s} {part:4s} {variant:14s} {row['queries']:5d}  "
            + "  ".join(f"{m} {row[m]:.3f}" for m in METRICS)
        )
    print(f"{embedder.encoder} in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        with (args.out / "records.jsonl").open("w", encoding="utf-8") as handle:
            for r in records:
                handle.write(json.dumps(r) + "\n")
        rows = [{"set": k[0], "part": k[1], "variant": k[2], **v} for k, v in table.items()]
        meta = {"encoder": embedder.encoder.name, "weights": embedder.encoder.fingerprint, "part": args.part}
        (args.out / "summary.json").write_text(json.dumps({**meta, "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
