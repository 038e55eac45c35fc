"""How far "likely" holds on a kind of catalogue the calibration never saw, on a part no fit looked at.

For each source the calibration reads (MetaTool's held-out tools, the OpenAPI and ProgrammableWeb suites, the
tool-retrieval sets), the calibration and the bar for "likely" are fitted again on the dev parts of every other
source, as if this kind had never been seen; then, of this source's candidates on the reported part, how many the
words call likely (at the calibrated 0.6 and at that bar) and the share of them that serve the need. The four
eval-only sets, never fitted on by anything, are read with the calibration and bar fitted on every dev source.

    python -m tender.training.words --part test --out OUT/words.json

`tender eval --all` puts the file it finds in its folder into docs/results.md. Reading the dev parts and the
reported part takes about five minutes on two cores.
"""

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from tender.assembly import embedder_for
from tender.evaluation.catalogues import Catalogues
from tender.evaluation.datasets import Paths
from tender.evaluation.kinds import EVAL_ONLY
from tender.ranking.evidence import HIGH
from tender.ranking.choice import ranking_model
from tender.ranking.scorer import Scorer
from tender.settings import Settings

from .ranker import Examples, called_likely, dev_examples, held_out_probabilities, tool_dev_examples, unseen_bar


def _kind(source: str) -> str:
    """A source's name without its part ("tools-bfcl test" and "tools-bfcl dev" are one source)."""
    return source.replace(" dev", "").replace(" test", "")


def _called(scorer: Scorer, calibrated_on: list[Examples], held: Examples, bar: float) -> dict:
    """Of `held`'s candidates in a catalogue without history, with the calibration fitted on `calibrated_on`: how
    many score 0.6 or more and `bar` or more, and the share of each that serve the need."""
    read = held_out_probabilities(scorer, calibrated_on, held)
    p, y = read if read is not None else (np.zeros(0), np.zeros(0))
    return {
        "source": _kind(held.source),
        "candidates": len(p),
        "bar": bar,
        "at_high": called_likely(p, y, HIGH),
        "at_bar": called_likely(p, y, bar),
    }


def reliability(scorer: Scorer, dev: list[Examples], reported: list[Examples], unseen: list[Examples]) -> list[dict]:
    """One row per reported source, its calibration and bar fitted without it (see the module's docstring)."""
    rows = []
    for held in reported:
        rest = [s for s in dev if _kind(s.source) != _kind(held.source)]
        rows.append({**_called(scorer, rest, held, unseen_bar(scorer, rest)), "held_out": True})
    bar = unseen_bar(scorer, dev)
    for held in unseen:
        rows.append({**_called(scorer, dev, held, bar), "held_out": False})
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tender.training.words", description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", choices=("dev", "test"), default="test", help="the part reported on")
    parser.add_argument("--out", type=Path, required=True, help="JSON file to write")
    parser.add_argument("--sample", type=int, default=300, help="requests drawn from each part of each source")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    settings = Settings.from_env()
    paths = Paths(settings.data_dir.parent)
    catalogues = Catalogues(settings, paths, progress=not args.quiet)
    scorer = ranking_model(settings.ranking_model_path, embedder_for(settings))
    progress = not args.quiet

    def sources(part: str, seed: int) -> list[Examples]:
        return dev_examples(paths, catalogues, args.sample, seed, progress, part) + tool_dev_examples(
            paths, catalogues, args.sample, seed, progress, part
        )

    dev = sources("dev", args.seed)
    reported = dev if args.part == "dev" else sources(args.part, args.seed)  # a row is never read on what fitted it
    unseen = tool_dev_examples(paths, catalogues, args.sample, args.seed, progress, "test", EVAL_ONLY)
    rows = reliability(scorer, dev, reported, unseen)
    result = {"part": args.part, "model": scorer.encoder or "all-MiniLM-L6-v2", "high": HIGH, "rows": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1))
    for row in rows:
        print(
            f"  {row['source']:<48} bar {row['bar']:.2f}: at 0.6 {row['at_high']}, at the bar {row['at_bar']}",
            file=sys.stderr,
        )
    print(f"Wrote {args.out} in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
