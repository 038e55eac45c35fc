"""Warm latency of `recommend` per protocol, embedded reasoner, on a catalogue; and peak memory.

    python -m tender.evaluation.bench --requests 100

Requirements are mashup descriptions (seed-fixed), each embedded afresh: the query encoder's cache is
cleared before every request so that the model call is part of every measured latency."""

import argparse
import resource
import time

from tender.settings import Settings
from tender.agents.protocols import PROTOCOLS
from tender.agents.request import Request
from tender.assembly import assemble, embedder_for
from tender.catalog import Catalog

from .gold import percentile


def requirements(settings: Settings, n: int, seed: int) -> list[str]:
    """n mashup descriptions of the ProgrammableWeb data (TENDER_DATA), drawn with the seed: the requirements timed,
    whatever catalogue they are timed on."""
    import random

    from tender.catalog import Mashup, read_jsonl

    mashups = [m for m in read_jsonl(settings.data_file("mashups.jsonl"), Mashup) if m.description]
    return [m.description for m in random.Random(seed).sample(mashups, min(n, len(mashups)))]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", default=str(Settings.from_env().catalog_path))
    parser.add_argument("--requests", type=int, default=100)
    parser.add_argument("--organisation", choices=["api", "category"], default="api")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    settings = Settings.from_env()
    catalog = Catalog(args.db, embedder=embedder_for(settings, catalog=args.db))
    tender = assemble(settings, catalog)  # as `tender serve` assembles it
    tender.warm_up()
    print(f"catalogue {args.db}: {len(catalog.apis())} APIs; open + warm-up {time.perf_counter() - started:.1f} s")
    texts = requirements(Settings.from_env(), args.requests, args.seed)
    for text in texts[:5]:
        tender.recommend(Request.create(text, organisation=args.organisation))  # contractor knowledge loads lazily
    print("| protocol | requests | p50 ms | p95 ms | mean ms |\n|---|---:|---:|---:|---:|")
    for protocol in PROTOCOLS:
        latencies = []
        for text in texts:
            tender.encoder._cache.clear()
            if tender.ranker.reader is not None:
                tender.ranker.reader.queries._cache.clear()
            t0 = time.perf_counter()
            tender.recommend(Request.create(text, protocol=protocol, organisation=args.organisation))
            latencies.append((time.perf_counter() - t0) * 1000)
        print(
            f"| {protocol} | {len(latencies)} | {percentile(latencies, 50):.1f} | {percentile(latencies, 95):.1f} | "
            f"{sum(latencies) / len(latencies):.1f} |"
        )
    print(f"peak memory (max RSS): {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
