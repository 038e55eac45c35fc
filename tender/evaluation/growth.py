"""Growth, measured: synthetic catalogues of N items made from the 16,469 ProgrammableWeb APIs, built and queried.

    python -m tender.evaluation.growth make --items 100000 --base base-16k.db --out growth/
    python -m tender.evaluation.growth bench --db growth/catalog-100000.db --requests 100

The perturbation (seeded, reproducible): items 0..16,468 are apis_large.jsonl as it is; each further item k takes
two distinct real APIs a and b drawn by `random.Random(seed)`, and is named by a's first word and b's last word (a
number added where that name is taken), described by the first half of a's sentences then the second half of b's,
and put in a's categories plus b's first. The 4,493 mashups (usage history of APIs 0..939) are kept.

Vectors: the real APIs, their names, the categories and the mashups are embedded by all-MiniLM-L6-v2 (read from
`--base`, a catalogue built from apis_large.jsonl). Embedding a million synthetic texts on 2 cores would take hours
(`make` measures the encoder's rate and prints the extrapolation), so a synthetic item's vector is derived from its
parents': the unit vector along w·v_a + (1 - w)·v_b + noise, w being the share of its description taken from a,
the noise Gaussian with norm 0.1 (seeded per item); its name's vector likewise from the parents' name vectors, with
w = 1/2. Queries are real: requirements are mashup descriptions embedded by the real encoder at request time."""

import argparse
import json
import random
import re
import resource
import time
from pathlib import Path

import numpy as np

from tender.catalog.build import build_from_sources, capped
from tender.catalog.database import connect_read_only
from tender.catalog.embeddings import text_hash
from tender.catalog.sources import load_jsonl
from tender.settings import Settings
from tender.assembly import embedder_for, reader_for

NOISE = 0.1
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def synthesize(base_rows: list[dict], items: int, seed: int) -> tuple[list[dict], dict[int, tuple[int, int, float]]]:
    """The rows of `items` APIs: the real ones, then synthetic ones; and each synthetic id's recipe (a, b, w)."""
    rng = random.Random(seed)
    rows = list(base_rows)
    names = {row["name"].casefold() for row in rows}
    recipes: dict[int, tuple[int, int, float]] = {}
    next_id = max(row["id"] for row in rows) + 1
    while len(rows) < items:
        a, b = rng.sample(base_rows, 2)
        first, last = (a["name"].split() or ["Item"])[0], (b["name"].split() or ["API"])[-1]
        name, n = f"{first} {last}", 1
        while name.casefold() in names:
            n += 1
            name = f"{first} {last} {n}"
        names.add(name.casefold())
        head = _SENTENCE.split(a["description"] or "")
        tail = _SENTENCE.split(b["description"] or "")
        part_a = " ".join(head[: max(1, (len(head) + 1) // 2)])
        part_b = " ".join(tail[len(tail) // 2 :])
        categories = list(dict.fromkeys([*a["categories"], *b["categories"][:1]]))
        rows.append(
            {
                "id": next_id,
                "name": name,
                "url": "",
                "categories": categories,
                "description": f"{part_a} {part_b}".strip(),
                "source": "synthetic",
            }
        )
        recipes[next_id] = (a["id"], b["id"], len(part_a) / max(1, len(part_a) + len(part_b)))
        next_id += 1
    return rows, recipes


class DerivedEmbedder:
    """Embeds a synthetic item's text by its recipe (see the module's docstring), and nothing else: every other
    text must be in the base catalogue, whose vectors the build reuses. It names the stock encoder, so the catalogue
    is queried with the real all-MiniLM-L6-v2."""

    def __init__(self, encoder, base: dict[str, dict[int, np.ndarray]], recipes: dict[str, tuple], seed: int):
        self.encoder, self.model_name = encoder, encoder.name
        self._base, self._recipes, self._seed = base, recipes, seed

    @property
    def dimension(self) -> int:
        return len(next(iter(self._base["api"].values())))

    def embed(self, texts: list[str], progress: bool = False, role: str = "document") -> np.ndarray:
        out = np.empty((len(texts), self.dimension), np.float32)
        for row, text in enumerate(texts):
            kind, item, a, b, w = self._recipes[text_hash(text)]  # KeyError: a text the base catalogue lacks
            rng = np.random.default_rng([self._seed, item, kind == "name"])
            noise = rng.standard_normal(self.dimension)
            vector = w * self._base[kind][a] + (1 - w) * self._base[kind][b] + NOISE * noise / np.linalg.norm(noise)
            out[row] = vector / np.linalg.norm(vector)
        return out


def base_vectors(path: Path) -> dict[str, dict[int, np.ndarray]]:
    conn = connect_read_only(path)
    try:
        found: dict[str, dict[int, np.ndarray]] = {"api": {}, "name": {}}
        for kind, item, blob in conn.execute(
            "select kind, item_id, vector from embeddings where kind in ('api', 'name')"
        ):
            found[kind][int(item)] = np.frombuffer(blob, np.float32)
    finally:
        conn.close()
    return found


def sample_ids(ids: list[int], n: int, seed: int) -> list[int]:
    """n of the ids, drawn without replacement; the same seed always draws the same ones."""
    return sorted(random.Random(seed).sample(sorted(ids), min(n, len(ids))))


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def make(args) -> None:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    base_rows = [json.loads(line) for line in Path(args.apis).read_text(encoding="utf-8").splitlines() if line]
    rows, recipes = synthesize(base_rows, args.items, args.seed)
    apis_path = out / f"apis-{args.items}.jsonl"
    apis_path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    del base_rows, rows
    started = time.perf_counter()
    loaded = load_jsonl(apis_path, Path(args.mashups))
    by_text: dict[str, tuple] = {}
    for api in loaded.apis:
        if api.id in recipes:
            a, b, w = recipes[api.id]
            for kind, text, weight in (("api", api.text(), w), ("name", api.name_text(), 0.5)):
                by_text[text_hash(capped([(0, text)])[0][0][1])] = (kind, api.id, a, b, weight)
    encoder = embedder_for(Settings.from_env()).encoder
    embedder = DerivedEmbedder(encoder, base_vectors(Path(args.base)), by_text, args.seed)
    db = out / f"catalog-{args.items}.db"
    db.unlink(missing_ok=True)
    db.write_bytes(Path(args.base).read_bytes())  # its vectors are reused by text, as a rebuild reuses them
    prepared = time.perf_counter() - started
    started = time.perf_counter()
    meta = build_from_sources([loaded], db, embedder)  # type: ignore[arg-type]
    built = time.perf_counter() - started
    print(
        json.dumps(
            {
                "items": args.items,
                "seed": args.seed,
                "prepare_s": round(prepared, 1),
                "build_s": round(built, 1),
                "file_mib": round(db.stat().st_size / 2**20, 1),
                "peak_rss_mib": round(peak_mib()),
                "texts_derived": int(meta["texts_embedded"]),
            }
        )
    )


def encoder_rate(args) -> None:
    """Texts a second the real encoder embeds (API descriptions of apis_large.jsonl), one thread as a server."""
    rows = [json.loads(line) for line in Path(args.apis).read_text(encoding="utf-8").splitlines()[: args.texts]]
    embedder = embedder_for(Settings.from_env(), threads=None)
    embedder.embed(["warm up"])
    started = time.perf_counter()
    embedder.embed([f"{r['name']}. {', '.join(r['categories'])}. {r['description']}" for r in rows], role="document")
    rate = len(rows) / (time.perf_counter() - started)
    print(
        json.dumps(
            {"texts": len(rows), "texts_per_s": round(rate, 1), "hours_for_1M_items": round(1e6 / rate / 3600, 1)}
        )
    )


def bench(args) -> None:
    """Warm latency of the default protocol, as tender.evaluation.bench measures it."""
    from tender.agents.request import Request
    from tender.agents.service import Tender
    from tender.catalog import Catalog
    from tender.assembly import one_thread_each

    from .gold import percentile

    started = time.perf_counter()
    catalog = Catalog(args.db, embedder=embedder_for(Settings.from_env(), catalog=args.db))
    opened = time.perf_counter() - started
    reader = reader_for(
        Settings.from_env()
    )  # TENDER_READER_MODEL: its item vectors made on first use (ranking/reader.py)
    tender = Tender(catalog, reader=reader)
    tender.warm_up()
    one_thread_each()  # as the server runs: one core a request
    warm = time.perf_counter() - started
    ids = sample_ids([m.id for m in catalog.mashups()], args.requests, args.seed)
    texts = [catalog.get_mashup(i).description for i in ids]
    for text in texts[:3]:
        tender.recommend(Request.create(text))
    latencies = []
    for text in texts:
        tender.encoder._cache.clear()
        if reader is not None:
            reader.queries._cache.clear()
        t0 = time.perf_counter()
        tender.recommend(Request.create(text))
        latencies.append((time.perf_counter() - t0) * 1000)
    print(
        json.dumps(
            {
                "db": str(args.db),
                "items": len(catalog.api_ids()),
                "open_s": round(opened, 1),
                "open_and_warm_s": round(warm, 1),
                "requests": len(latencies),
                "p50_ms": round(percentile(latencies, 50), 1),
                "p95_ms": round(percentile(latencies, 95), 1),
                "reader": reader.encoder.name if reader is not None else None,
                "peak_rss_mib": round(peak_mib()),
            }
        )
    )


def recall(args) -> None:
    """The approximate index's recall against exact search at the ranking's depth, per kind, on real queries (mashup
    descriptions, embedded by the real encoder); its build time and size, and each search's time. Then the BM25
    index's recall against FTS5 at the same depth, on the same queries, and the time of each."""
    from tender.catalog import Catalog
    from tender.catalog.ann import Similarities, build_key, index_path
    from tender.ranking.lexical import query_terms
    from tender.ranking.retrieval import DEPTH

    catalog = Catalog(args.db, embedder=embedder_for(Settings.from_env(), catalog=args.db))
    ids = sample_ids([m.id for m in catalog.mashups()], args.queries, args.seed)
    queries = catalog.embed([catalog.get_mashup(i).description for i in ids])
    result: dict = {"db": str(args.db), "items": len(catalog.api_ids()), "queries": len(ids), "depth": DEPTH}
    for kind in ("api", "name"):
        started = time.perf_counter()
        search = catalog.dense_search(kind)
        result[f"{kind}_index_s"] = round(time.perf_counter() - started, 1)
        path = index_path(catalog.path, build_key(catalog.meta), kind)
        result[f"{kind}_index_mib"] = round(path.stat().st_size / 2**20, 1) if path.is_file() else None
        matrix, everyone = catalog.vectors(kind).matrix, np.ones(len(catalog.api_ids()), dtype=bool)
        found, exact_ms, ann_ms = [], [], []
        for query in queries:
            t0 = time.perf_counter()
            depth = min(DEPTH, len(matrix))
            exact = set(np.argpartition(-(matrix @ query), depth - 1)[:depth].tolist())
            exact_ms.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            similarities = search.similarities(query)
            nearest = search.nearest(similarities, everyone, DEPTH)
            ann_ms.append((time.perf_counter() - t0) * 1000)
            assert isinstance(similarities, Similarities), "a catalogue under 50,000 items is searched exactly"
            found.append(len(exact.intersection(nearest)) / depth)
        result[f"{kind}_recall_at_{DEPTH}"] = round(float(np.mean(found)), 4)
        result[f"{kind}_exact_ms_p50"] = round(float(np.median(exact_ms)), 1)
        result[f"{kind}_index_ms_p50"] = round(float(np.median(ann_ms)), 2)
    started = time.perf_counter()
    catalog.lexical(["index"])  # the BM25 index, built on first use
    result["lexical_index_s"] = round(time.perf_counter() - started, 1)
    found, fts5_ms, index_ms = [], [], []
    for i in ids:
        words = query_terms(catalog.get_mashup(i).description)
        t0 = time.perf_counter()
        exact = {h.id for h in catalog.fts5(words, DEPTH) if h.score > 1e-3}  # FTS5 lists word-less rows near 0
        fts5_ms.append((time.perf_counter() - t0) * 1000)
        t0 = time.perf_counter()
        indexed = {h.id for h in catalog.lexical(words, DEPTH)}
        index_ms.append((time.perf_counter() - t0) * 1000)
        found.append(len(exact & indexed) / len(exact) if exact else 1.0)
    result[f"lexical_recall_at_{DEPTH}"] = round(float(np.mean(found)), 4)
    result["lexical_fts5_ms_p50"] = round(float(np.median(fts5_ms)), 1)
    result["lexical_index_ms_p50"] = round(float(np.median(index_ms)), 2)
    result["peak_rss_mib"] = round(peak_mib())
    print(json.dumps(result))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    steps = parser.add_subparsers(dest="step", required=True)
    data = Settings.from_env().data_dir
    made = steps.add_parser(
        "make", help="Write the synthetic JSONL and build its catalogue; prints the build's figures."
    )
    made.add_argument("--items", type=int, required=True)
    made.add_argument("--base", required=True, help="A catalogue built from apis_large.jsonl (its real vectors).")
    made.add_argument("--apis", default=str(data / "apis_large.jsonl"))
    made.add_argument("--mashups", default=str(data / "mashups.jsonl"))
    made.add_argument("--seed", type=int, default=39)
    made.add_argument("--out", required=True)
    rate = steps.add_parser("rate", help="The real encoder's rate on API descriptions.")
    rate.add_argument("--apis", default=str(data / "apis_large.jsonl"))
    rate.add_argument("--texts", type=int, default=500)
    timed = steps.add_parser("bench", help="Warm p50/p95 of the default protocol on a catalogue.")
    timed.add_argument("--db", required=True)
    timed.add_argument("--requests", type=int, default=100)
    timed.add_argument("--seed", type=int, default=7)
    measured = steps.add_parser("recall", help="The index's recall against exact search, and their times.")
    measured.add_argument("--db", required=True)
    measured.add_argument("--queries", type=int, default=200)
    measured.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    {"make": make, "rate": encoder_rate, "bench": bench, "recall": recall}[args.step](args)


if __name__ == "__main__":
    main()
