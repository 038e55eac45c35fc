"""The local reader's time and memory: step 1 (reading a request into needs) by the model that reads requests
(TENDER_REQUEST_MODEL, else the pulled one) and by the rules, warm, on the dev parts' requests; then whole plans on a
catalogue with the model loaded, for the peak memory of a process serving with it.

    python -m tender.evaluation.bench_reader --db $TENDER_HOME/eval/demo.db --out bench.json

The model's threads are its own (local_model.THREADS); latency on a machine busy with other work is that work's
too, so the load average is printed beside the figures."""

import argparse
import json
import os
import resource
import time
from pathlib import Path
from typing import Any

from tender.agents.context import RunContext
from tender.agents.reasoners.embedded import EmbeddedReasoner
from tender.agents.reasoners.local import LocalReader
from tender.agents.tasks import DecomposeTask
from tender.settings import Settings

from .gold import percentile
from tender.assembly import assemble, embedder_for, text_model_for


def requests() -> list[str]:
    """The dev parts' requests: the decomposition suite's and the assistant suite's (never a test part's)."""
    from .datasets import SUITES, split
    from .decomposition import load

    wanted = set(split("assistant-suite")["dev"])
    assistant = [json.loads(line) for line in (SUITES / "assistant.jsonl").read_text(encoding="utf-8").splitlines()]
    return [c.requirement for c in load("dev")] + [r["requirement"] for r in assistant if r["id"] in wanted]


def rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", type=Path, help="A catalogue to make whole plans on (peak memory with the model).")
    parser.add_argument("--requests", type=int, default=0, help="The first N requests only (0: all).")
    parser.add_argument("--out", type=Path, help="Write every figure here (JSON).")
    args = parser.parse_args(argv)
    settings = Settings.from_env()
    texts = requests()[: args.requests or None]
    began = time.perf_counter()
    model = text_model_for(settings)
    if model is None:
        parser.error("no model reads requests here: set TENDER_REQUEST_MODEL, or pull one")
    loaded_s = time.perf_counter() - began
    reader, rules = LocalReader(model, EmbeddedReasoner()), EmbeddedReasoner()
    rows: list[dict[str, Any]] = []
    for text in texts:
        for name, reasoner in (("model", reader), ("rules", rules)):
            context = RunContext()
            start = time.perf_counter()
            reasoner.run(DecomposeTask(requirement=text), context)
            rows.append(
                {
                    "reader": name,
                    "seconds": time.perf_counter() - start,
                    "fell_back": bool(context.notes),
                    "prompt_tokens": context.cost.tokens.input,
                    "completion_tokens": context.cost.tokens.output,
                    "load": os.getloadavg()[0],
                }
            )
    result: dict = {"requests": len(texts), "load_and_warm_s": round(loaded_s, 2), "model": model.name}
    for name in ("model", "rules"):
        mine = [r for r in rows if r["reader"] == name]
        seconds = [r["seconds"] for r in mine]
        result[name] = {
            "p50_s": round(percentile(seconds, 50), 3),
            "p95_s": round(percentile(seconds, 95), 3),
            "max_s": round(max(seconds), 3),
            "fell_back": sum(r["fell_back"] for r in mine),
            "mean_prompt_tokens": round(sum(r["prompt_tokens"] for r in mine) / len(mine), 1),
            "mean_completion_tokens": round(sum(r["completion_tokens"] for r in mine) / len(mine), 1),
        }
    result["load_average"] = round(sum(r["load"] for r in rows) / len(rows), 2)
    result["peak_rss_mib_reading"] = round(rss_mib())
    if args.db:
        from tender.agents.request import Request
        from tender.catalog import Catalog

        catalog = Catalog(args.db, embedder=embedder_for(settings, catalog=args.db))
        tender = assemble(settings, catalog)
        tender.warm_up()
        plans = [tender.recommend(Request.create(text)).plan for text in texts[:20]]
        result["plans_read_by_model"] = sum(p.read_by.startswith("the local model") for p in plans)
        result["peak_rss_mib_serving"] = round(rss_mib())
    print(json.dumps(result, indent=1))
    if args.out:
        args.out.write_text(json.dumps({"summary": result, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
