"""`tender eval`: run methods (the protocols and the flat baselines) on a dataset's part, one JSON line per query
and method, and their means.

The hidden mashups of a part (dev and test mashups, a fold's mashups) are left out of the catalogue the agents and
the baselines use: no contractor history, co-usage weight or neighbour search sees them; the runner checks that
before it starts."""

import json
import random
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm

from tender.agents.context import RunContext
from tender.agents.protocols import PROTOCOLS
from tender.agents.request import InvalidRequest, Request
from tender.ranking.choice import ranking_model
from tender.catalog import Catalog
from tender.catalog.servers import routes_of
from tender.ranking.scorer import Scorer

from .baselines import BASELINES, HISTORY_ONLY, NEEDS_ONLY, QueryVectors
from .catalogues import Catalogues
from .datasets import Dataset, Variant
from .gold import Answer, Query, mean, metrics, percentile

CUTS = range(1, 6)  # the set sizes a baseline's cut is chosen among, on the dev part
CALIBRATION_BINS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


class LeakError(AssertionError):
    pass


@dataclass
class Job:
    """One dataset part in one variant, with the methods to run on it."""

    dataset: Dataset
    part: str
    variant: Variant
    methods: list[str]
    sample: int | None = None
    seed: int = 0
    cuts: dict[str, int] = field(default_factory=dict)  # baseline -> k
    scorer: Path | None = None  # a ranking model for this part alone (an R2API fold's, fitted without it)

    @property
    def key(self) -> str:
        return f"{self.dataset.name} | {self.part} | {self.variant.name}"


def methods_for(dataset: Dataset, variant: Variant, wanted: Iterable[str] | None = None) -> list[str]:
    """The protocols and the baselines that apply: history baselines where there is history, per-need baselines
    where the caller states needs."""
    history = dataset.has_history and variant.history
    names = [
        *PROTOCOLS,
        *(
            b
            for b in BASELINES
            if (b not in HISTORY_ONLY or history) and (b not in NEEDS_ONLY or variant.needs is not None)
        ),
    ]
    if wanted is not None:
        wanted = list(wanted)
        names = [m for m in names if m in wanted]
    return names


def draw(queries: list[Query], sample: int | None, seed: int) -> list[Query]:
    """`sample` queries drawn without replacement (the same seed always draws the same ones); all without."""
    if sample is None or sample >= len(queries):
        return queries
    return sorted(random.Random(seed).sample(queries, sample), key=lambda q: queries.index(q))


def check_leave_out(catalog: Catalog, hidden: Iterable[int]) -> None:
    hidden = set(hidden)
    if not hidden:
        return
    visible = (
        {m.id for m in catalog.mashups()}
        | set(catalog.vectors("mashup").ids)
        | {m.id for a in catalog.api_ids() for m in catalog.usage_history(a)}
    )
    leaked = hidden & visible
    if leaked:
        raise LeakError(f"hidden mashups {sorted(leaked)[:5]} are visible to the agents")


def needs_of(query: Query, variant: Variant) -> tuple[str, ...] | None:
    """The needs the caller states in this variant: the assistant's (written blind), or the judged functions'."""
    if variant.needs == "assistant":
        return query.needs
    if variant.needs == "gold":
        return tuple(f.need for f in query.functions) or None
    return None


def protocol_answer(
    tender,
    method: str,
    query: Query,
    needs: tuple[str, ...] | None,
    top_n: int | None,
    include_deprecated: bool = False,
) -> Answer:
    started = time.perf_counter()
    try:
        request = Request.create(
            query.text,
            protocol=method,
            needs=list(needs) if needs else None,
            kind=query.kind if needs else None,  # an assistant stating the needs says what it wants them as
            top_n=top_n,
            include_deprecated=include_deprecated,
        )
        plan = tender.recommend(request, RunContext()).plan
    except InvalidRequest as error:  # e.g. a description that masking left empty
        return Answer(error=str(error), latency_ms=(time.perf_counter() - started) * 1000)
    scores = {a.api_id: a.score for a in plan.apis}
    ranked = list(dict.fromkeys([*plan.stages.final, *plan.stages.bidding]))
    return Answer(
        functions=[s.function for s in plan.steps],
        final=list(plan.stages.final),
        ranked=ranked,
        steps=[(s.function, [a.api_id for a in s.awarded]) for s in plan.steps],
        scores=scores,
        candidates=list(plan.stages.candidates),
        verdict=plan.verdict,
        latency_ms=plan.latency_ms,
        notes=plan.notes,
    )


def record(job: Job, method: str, query: Query, answer: Answer, needs: tuple[str, ...] | None) -> dict:
    scored = query.model_copy(update={"needs": needs})
    gold = query.gold_items
    return {
        "dataset": job.dataset.name,
        "part": job.part,
        "variant": job.variant.name,
        "method": method,
        "id": query.id,
        "query": query.text,
        "needs": list(needs) if needs else None,
        "functions": answer.functions,
        "final": answer.final,
        "ranked": answer.ranked[:20],
        "gold": [sorted(f.acceptable) for f in query.functions],
        "expect_nothing": query.expect_nothing,
        "metrics": metrics(scored, answer),
        # (score, right) of each item of the final set: how far a plan's confidence can be taken at its word
        "confidences": [[answer.scores[a], a in gold] for a in answer.final if a in answer.scores],
        "verdict": answer.verdict,
        "latency_ms": round(answer.latency_ms, 2),
        "error": answer.error,
    }


def run_job(
    job: Job,
    catalogues: Catalogues,
    make_tender: Callable[..., object],
    top_n: int | None = None,
    progress: bool = True,
) -> list[dict]:
    """Every method on every (drawn) query of the job: the records, one a query and method."""
    data = job.dataset
    hidden = data.hidden(catalogues.paths, job.part)
    catalog = catalogues.open(data.catalogue, hidden, history=job.variant.history)
    try:
        check_leave_out(catalog, hidden if job.variant.history else [])
        queries = draw(data.queries(catalogues.paths, job.part, catalog, job.variant), job.sample, job.seed)
        tender = None
        if any(m in PROTOCOLS for m in job.methods):
            scorer = Scorer.load(job.scorer) if job.scorer else None
            if data.history_lifts:
                scorer = scorer or ranking_model(catalogues.settings.ranking_model_path, catalog.embedder)
                scorer = scorer.model_copy(update={"history_lifts": True})
            tender = make_tender(catalog, scorer) if scorer else make_tender(catalog)
        if tender is not None:
            tender.warm_up()  # type: ignore[attr-defined]
        out = []
        bar = tqdm(total=len(queries) * len(job.methods), desc=job.key, unit="run", disable=not progress)
        for query in queries:
            needs = needs_of(query, job.variant)
            if job.variant.needs and not needs:
                bar.update(len(job.methods))
                continue  # no needs written for this query: it is not part of this variant
            vectors = QueryVectors(catalog)  # the baselines embed each text of this query once
            for method in job.methods:
                if method in PROTOCOLS:
                    answer = protocol_answer(tender, method, query, needs, top_n, data.include_deprecated)
                else:
                    spared, started = vectors.skipped, time.perf_counter()
                    final, ranked = BASELINES[method].answer(catalog, query, needs, job.cuts.get(method, 2), vectors)
                    seconds = time.perf_counter() - started + vectors.skipped - spared  # as if it ran alone
                    answer = Answer(final=final, ranked=ranked, latency_ms=seconds * 1000)
                dead = [a for a in answer.final if catalog.get_api(a).gone]
                servers = [a for a in answer.final if catalog.get_api(a).of_server]
                installable = [a for a in servers if routes_of(catalog.get_api(a).details)]
                seen = {"dead": dead, "servers": servers, "installable": installable}
                out.append(record(job, method, query, answer.model_copy(update=seen), needs))
                bar.update()
        bar.close()
        return out
    finally:
        catalog.close()


def fit_cuts(records: list[dict]) -> dict[str, int]:
    """For each whole-query baseline, the set size k (1..5) of the best mean F1 over these (dev) records."""
    from .gold import GoldFunction, prf

    cuts = {}
    for method in {r["method"] for r in records if r["method"] in BASELINES and r["method"] not in NEEDS_ONLY}:
        rows = [r for r in records if r["method"] == method and not r["expect_nothing"]]
        queries = [
            Query(id=r["id"], text="", functions=tuple(GoldFunction(acceptable=frozenset(g)) for g in r["gold"]))
            for r in rows
        ]
        cuts[method] = max(CUTS, key=lambda k: (mean(prf(r["ranked"][:k], q)[2] for r, q in zip(rows, queries)), -k))
    return cuts


def summarise(records: list[dict]) -> dict:
    """Means per (dataset, part, variant, method), with latency percentiles and a reliability table."""
    groups: dict[tuple, list[dict]] = {}
    for r in records:
        groups.setdefault((r["dataset"], r["part"], r["variant"], r["method"]), []).append(r)
    out = []
    for (dataset, part, variant, method), rows in groups.items():
        scored = [r for r in rows if not r["expect_nothing"]]
        names = sorted({k for r in scored for k in r["metrics"]})
        means = {k: round(mean(r["metrics"][k] for r in scored if k in r["metrics"]), 4) for k in names}
        nothing = [r for r in rows if r["expect_nothing"]]
        if nothing:
            means["abstained"] = round(mean(r["metrics"]["abstained"] for r in nothing), 4)
        latencies = [r["latency_ms"] for r in rows if r["error"] is None]
        out.append(
            {
                "dataset": dataset,
                "part": part,
                "variant": variant,
                "method": method,
                "queries": len(rows),
                "metrics": means,
                "latency_ms": {"p50": round(percentile(latencies, 50), 1), "p95": round(percentile(latencies, 95), 1)},
                "errors": sum(r["error"] is not None for r in rows),
                "reliability": reliability([c for r in rows for c in r.get("confidences", [])]),
            }
        )
    return {"groups": out}


def reliability(confidences: list) -> list[dict]:
    """Per band of score, how many final-set items fell in it and the share of them that were right: where a
    score reads as a probability, the share is near the band."""
    bands = []
    for low, high in zip(CALIBRATION_BINS, CALIBRATION_BINS[1:]):
        inside = [bool(right) for score, right in confidences if low <= score < high or (high == 1.0 and score == 1.0)]
        if inside:
            bands.append({"band": f"{low:.1f}-{high:.1f}", "items": len(inside), "right": round(mean(inside), 3)})
    return bands


def write_records(records: list[dict], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        for r in records:
            out.write(json.dumps(r, ensure_ascii=False) + "\n")


def read_records(path: Path) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


def records_of(folder: Path) -> list[dict]:
    """Every record of an --all folder (its records/*.jsonl, in name order)."""
    return [r for path in sorted((Path(folder) / "records").glob("*.jsonl")) for r in read_records(path)]
