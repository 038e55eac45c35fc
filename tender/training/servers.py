"""Recalibrate the ranking model for catalogues that hold MCP servers (Scorer.servers).

The model is fitted on web APIs and MetaTool's tools. Among servers and their tools its probabilities say too
little of how near an item's description is to the need: a wrong server that the features favour in other ways
("Zscaler" for booking a dentist on Zocdoc) scores like a right one. This fits three numbers on the judged suites
over such catalogues: on the log-odds the model gives (calibrated as elsewhere) and the need's similarity to the
item,

    z' = slope * z + weight * similarity + intercept,

with the examples the serving Ranker makes (one extractor): each judged need's shortlist, in the need's form,
labelled by the judge's acceptable items; a request where nothing fits gives its stated needs' shortlists, every
candidate a wrong one. Dev parts only; each suite weighs the same. The MCP suite is never fitted on (it judges
whether the numbers transfer).

    python -m tender.training.servers [--suites assistant-suite,today-suite] [--model FILE]
"""

import argparse
import sys
from dataclasses import dataclass, field

import numpy as np
from tqdm import tqdm

from tender.agents.form import read_forms
from tender.evaluation.catalogues import Catalogues
from tender.evaluation.datasets import DATASETS, Paths
from tender.ranking.retrieval import Ranker
from tender.ranking.scorer import Scorer
from tender.ranking.vectors import QueryEncoder
from tender.settings import Settings

SUITES = ("assistant-suite", "today-suite")


@dataclass
class Rows:
    """One suite's candidates: the model's log-odds, the need's similarity, whether the judge accepts the item."""

    suite: str
    z: list[float] = field(default_factory=list)
    similarity: list[float] = field(default_factory=list)
    right: list[float] = field(default_factory=list)
    needs: int = 0


def suite_rows(name: str, catalogues: Catalogues, paths: Paths, scorer: Scorer, progress: bool) -> Rows:
    data = DATASETS[name]
    catalog = catalogues.open(data.catalogue, data.hidden(paths, "dev"))
    plain = scorer.model_copy(update={"servers": None})
    try:
        assert catalog.embedder is not None
        ranker = Ranker(catalog, QueryEncoder(catalog.embedder), plain)
        out = Rows(name)
        for query in tqdm(data.queries(paths, "dev", catalog), desc=name, disable=not progress):
            needs = [(f.need, f.form, set(f.acceptable)) for f in query.functions]
            if query.expect_nothing and query.needs:  # nothing fits: every candidate of every stated need is wrong
                forms = read_forms(query.text, list(query.needs)).forms
                needs = [(n, query.kind or form, set()) for n, form in zip(query.needs, forms)]
            for need, form, acceptable in needs:
                shortlist = ranker.shortlist(need, query.text, form=None if form == "any" else form)
                evidence = [c.evidence for c in shortlist.candidates]
                out.z += [float(z) for z in plain.logits(evidence)]
                out.similarity += [e.dense for e in evidence]
                out.right += [float(c.item in acceptable) for c in shortlist.candidates]
                out.needs += 1
        return out
    finally:
        catalog.close()


def fit(rows: list[Rows]) -> tuple[float, float, float]:
    """(slope, weight, intercept) by a logistic fit, each suite weighing the same."""
    from .ranker import fit_logistic

    x = np.concatenate([np.c_[r.z, r.similarity] for r in rows])
    y = np.concatenate([r.right for r in rows])
    weight = np.concatenate([np.full(len(r.right), len(y) / (len(rows) * len(r.right))) for r in rows])
    slope, similarity, intercept = fit_logistic(x, y, weight, l2=1e-6)
    return round(float(slope), 6), round(float(similarity), 6), round(float(intercept), 6)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tender.training.servers", description=__doc__.split("\n\n")[0])
    parser.add_argument("--suites", default=",".join(SUITES), help="judged suites over catalogues of servers")
    parser.add_argument("--model", help="the ranking model to recalibrate (default: the one the encoder picks)")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    from tender.assembly import embedder_for

    from .ranker import default_out

    settings = Settings.from_env()
    path = args.model or default_out(embedder_for(settings))
    scorer = Scorer.load(path)
    paths = Paths(settings.data_dir.parent)
    catalogues = Catalogues(settings, paths, progress=not args.quiet)
    suites = [s.strip() for s in args.suites.split(",") if s.strip()]
    if "mcp-suite" in suites:
        raise SystemExit("The MCP suite judges whether the recalibration transfers: it is never fitted on.")
    rows = [suite_rows(name, catalogues, paths, scorer, not args.quiet) for name in suites]
    numbers = fit(rows)
    fitted_on = {
        **scorer.fitted_on,
        "servers": {
            "sources": [
                {"source": f"{r.suite} dev", "needs": r.needs, "rows": len(r.right), "right": int(sum(r.right))}
                for r in rows
            ],
            "parts": "dev parts; each suite weighs the same; never mcp-suite",
        },
    }
    updated = scorer.model_copy(update={"servers": numbers, "fitted_on": fitted_on})
    with open(path, "w") as out:
        out.write(updated.model_dump_json(indent=1) + "\n")
    slope, weight, intercept = numbers
    print(
        f"Wrote {path}: servers slope {slope:+.3f}, similarity {weight:+.3f}, intercept {intercept:+.3f}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
