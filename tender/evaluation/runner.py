"""`tender eval`: quality and cost of every protocol and baseline on held-out mashups.

Test mashups are left out of the catalogue the agents use (contractor histories, co-usage graph,
neighbour search) for the whole of their split; the runner checks that before it starts."""

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from tqdm import tqdm

from tender.agents.context import RunContext
from tender.agents.protocols import PROTOCOLS
from tender.agents.request import InvalidRequest, Request
from tender.agents.service import Tender
from tender.agents.text import mask_names
from tender.catalog import Catalog, Mashup, TenderError, read_jsonl
from tender.catalog.encoders import STOCK_NAME
from tender.errors import DataMissing

from .baselines import BASELINES
from .metrics import average_precision_at, mean, ndcg_at, percentile, precision_at, prf, recall_at
from .split import encoder_ids, sample_ids, validation_pool
from .split import folds as make_folds

METHODS = (*PROTOCOLS, *BASELINES)
KS = (1, 3, 5, 10)
STAGES = ("category", "bidding", "final")


class LeakError(AssertionError):
    pass


class NothingToValidate(TenderError):
    pass


@dataclass
class EvalConfig:
    db: Path
    methods: list[str] = field(default_factory=lambda: list(METHODS))
    sample: int = 100
    seed: int = 0
    folds: int | None = None
    mashups_path: Path | None = None
    mask_api_names: bool = False
    validation: bool = False  # draw the sample outside the reported seed-0 sample and the tuning sample
    organisation: str = "api"
    top_n: int = 12
    backend: str = "offline"
    # Hide every API's usage history from the agents (a cold-start catalogue): all mashups are left out.
    no_history: bool = False
    # An external requests file split in two fixed halves by id parity: "tune" (even) to decide on, "report" (odd).
    half: str | None = None
    # The R2API paper's test fold k (r2api_folds/fold_k.txt beside the mashups), left out of everything.
    r2api_fold: int | None = None
    folds_dir: Path | None = None

    def public(self) -> dict:
        data = asdict(self)
        return {k: str(v) if isinstance(v, Path) else v for k, v in data.items()}


@dataclass
class Observation:
    stages: dict[str, list[int]]
    ranked: list[int]
    truth: list[int]
    latency_ms: float
    tokens: tuple[int, int] = (0, 0)
    contractors: int = 0
    messages: int = 0
    # LLM calls answered by the endpoint, replayed from the cache, and steps handed to the embedded reasoner
    llm: tuple[int, int, int] = (0, 0, 0)
    error: str | None = None
    mashup_id: int | None = None
    # (input, output) tokens per reasoning step ('manager.decompose', 'contractor.bid', 'repairs', ...)
    tokens_by_step: dict[str, tuple[int, int]] = field(default_factory=dict)
    tokens_from_cache: tuple[int, int] = (0, 0)
    repairs: int = 0
    tidied: int = 0
    fallback_notes: list[str] = field(default_factory=list)  # why steps fell back, in the run's own words
    # (confidence, right) of each API in the final set: how far a plan's confidence can be taken at its word
    confidences: list[tuple[float, bool]] = field(default_factory=list)


def splits(config: EvalConfig, full: Catalog) -> list[tuple[list[int], list[Mashup]]]:
    """(left-out ids, test mashups) per split."""
    if config.mashups_path:
        requests = read_jsonl(config.mashups_path, Mashup)
        if config.half:
            requests = [m for m in requests if m.id % 2 == (0 if config.half == "tune" else 1)]
        return [([], requests)]
    ids = [m.id for m in full.mashups()]
    if config.r2api_fold:
        test = r2api_fold(config.folds_dir, config.r2api_fold)
        return [(test, [full.get_mashup(i) for i in test])]
    if config.folds:
        return [(fold, [full.get_mashup(i) for i in fold]) for fold in make_folds(ids, config.folds, config.seed)]
    if config.validation:
        pool = validation_pool(ids)
        if not pool:
            raise NothingToValidate(
                f"no mashups outside the reported and the tuning samples to validate on (the catalogue "
                f"has {len(ids)}); use a sample without --validation"
            )
        ids = pool
    test = sample_ids(ids, config.sample, config.seed)
    return [(test, [full.get_mashup(i) for i in test])]


def evaluate(
    config: EvalConfig,
    open_catalog: Callable[[list[int]], Catalog],
    make_tender: Callable[[Catalog], Tender],
    progress: bool = True,
) -> dict:
    full = open_catalog([])
    names = [a.name for a in full.apis()]
    observations: dict[str, list[Observation]] = {m: [] for m in config.methods}
    parts = splits(config, full)
    total = sum(len(test) for _, test in parts) * len(config.methods)
    bar = tqdm(total=total, desc="evaluating", unit="run", disable=not progress)
    everything = [m.id for m in full.mashups()]
    for left_out, test in parts:
        catalog = open_catalog(everything if config.no_history else left_out)
        leaked = set(left_out) & (
            {m.id for m in catalog.mashups()}
            | set(catalog.vectors("mashup").ids)
            | {m for a in catalog.api_ids() for m in (x.id for x in catalog.usage_history(a))}
        )
        if leaked:
            raise LeakError(f"test mashups {sorted(leaked)[:5]} are visible to the agents")
        tender = make_tender(catalog) if any(m in PROTOCOLS for m in config.methods) else None
        if tender is not None:
            tender.warm_up()
        baselines = {m: BASELINES[m](catalog) for m in config.methods if m in BASELINES}
        for mashup in test:
            query = mask_names(mashup.description, names) if config.mask_api_names else mashup.description
            for method in config.methods:
                bar.set_postfix_str(method)
                observations[method].append(_observe(method, query, mashup, tender, baselines.get(method), config))
                bar.update()
    bar.close()
    return {
        "config": config.public()
        | {
            "test_mashups": sum(len(t) for _, t in parts),
            "model": full.model_name,
            "leave_out_checked": True,
            # an external file's ids are its own, not the catalogue's
            "seen_by_encoder": 0 if config.mashups_path else len(seen_by_encoder(full, parts)),
        },
        "results": {m: summarise(m, obs) for m, obs in observations.items()},
    }


def r2api_fold(folder: Path | None, k: int) -> list[int]:
    """The test mashups of the R2API paper's fold k: the first number of each line of fold_k.txt."""
    folder = Path(folder or "r2api_folds")
    path = folder / f"fold_{k}.txt"
    if not path.is_file():  # the folds come with the ProgrammableWeb data, in r2api_folds/
        raise DataMissing(folder.parent, f"{folder.name}/{path.name}")
    return [int(line.split()[0]) for line in path.read_text().splitlines() if line.strip()]


def seen_by_encoder(full: Catalog, parts) -> set[int]:
    """Test mashups a tuned encoder may have learned from (their scores are optimistic): none for the reported
    and validation samples, many for --folds or another seed. Tender's own (the shipped tender-minilm and any
    `tender train encoder` output) learn from the encoder split; any encoder but the stock one is assumed to."""
    if full.model_name == STOCK_NAME or full.model_name.startswith("hashing"):
        return set()
    return {m.id for _, test in parts for m in test} & set(encoder_ids([m.id for m in full.mashups()]))


def _observe(method, query, mashup, tender, baseline, config) -> Observation:
    truth = list(dict.fromkeys(mashup.api_ids))
    started = time.perf_counter()
    if baseline is not None:
        final, ranked = baseline(query)
        return Observation(
            stages={"final": final}, ranked=ranked, truth=truth, latency_ms=(time.perf_counter() - started) * 1000
        )
    try:
        request = Request.create(
            query or mashup.name, protocol=method, organisation=config.organisation, top_n=config.top_n
        )
        plan = tender.recommend(request, RunContext()).plan
    except InvalidRequest as error:  # e.g. a description that masking left empty
        return Observation(stages={s: [] for s in STAGES}, ranked=[], truth=truth, latency_ms=0.0, error=str(error))
    score = {api.api_id: api.score for api in plan.apis}  # bids of APIs not in the plan's list count 0
    bids = sorted(plan.stages.bidding, key=lambda a: -score.get(a, 0.0))
    ranked = list(dict.fromkeys([*plan.stages.final, *bids]))
    stages = plan.stages.model_dump() if PROTOCOLS[method].contract_net else {"final": plan.stages.final}
    return Observation(
        stages=stages,
        ranked=ranked,
        truth=truth,
        latency_ms=plan.latency_ms,
        tokens=(plan.cost.tokens.input, plan.cost.tokens.output),
        contractors=plan.cost.contractors_contacted,
        messages=plan.cost.messages,
        llm=(plan.cost.llm_calls, plan.cost.cache_hits, plan.cost.fallbacks),
        mashup_id=mashup.id,
        tokens_by_step={k: (v.input, v.output) for k, v in plan.cost.tokens_by_step.items()},
        tokens_from_cache=(plan.cost.tokens_from_cache.input, plan.cost.tokens_from_cache.output),
        repairs=plan.cost.repairs,
        tidied=plan.cost.tidied,
        fallback_notes=[
            n
            for n in plan.notes
            if "reasoner answered this step" in n or n.startswith(("Token budget of", "The LLM endpoint failed"))
        ],
        confidences=[(score.get(a, 0.0), a in truth) for a in plan.stages.final],
    )


CONFIDENCE_BINS = (0.0, 0.1, 0.3, 0.5, 0.7, 1.0)


def calibration(confidences: list[tuple[float, bool]]) -> list[dict]:
    """Per band of confidence, how many recommended APIs fell in it and how many of them were right: a
    calibrated band's share right is near its confidence."""
    bands = []
    for low, high in zip(CONFIDENCE_BINS, CONFIDENCE_BINS[1:]):
        inside = [right for c, right in confidences if low <= c < high or (high == 1.0 and c == 1.0)]
        if inside:
            bands.append(
                {
                    "confidence": f"{low:.1f}-{high:.1f}",
                    "apis": len(inside),
                    "right": round(sum(inside) / len(inside), 3),
                }
            )
    return bands


def summarise(method: str, observations: list[Observation]) -> dict:
    stages = {}
    for stage in STAGES:
        if not all(stage in o.stages for o in observations):
            continue
        scores = [prf(o.stages[stage], o.truth) for o in observations]
        stages[stage] = {
            "precision": mean(s[0] for s in scores),
            "recall": mean(s[1] for s in scores),
            "f1": mean(s[2] for s in scores),
        }
    ranking = {}
    for k in KS:
        ranking[f"p@{k}"] = mean(precision_at(o.ranked, o.truth, k) for o in observations)
        ranking[f"r@{k}"] = mean(recall_at(o.ranked, o.truth, k) for o in observations)
        ranking[f"ndcg@{k}"] = mean(ndcg_at(o.ranked, o.truth, k) for o in observations)
        ranking[f"map@{k}"] = mean(average_precision_at(o.ranked, o.truth, k) for o in observations)
    latencies = [o.latency_ms for o in observations if o.error is None]
    summary: dict = {
        "stages": stages,
        "ranking": ranking,
        "avg_apis": mean(len(o.stages["final"]) for o in observations),
        "tokens": {
            "input": round(mean(o.tokens[0] for o in observations)),
            "output": round(mean(o.tokens[1] for o in observations)),
        },
        "contractors_contacted": mean(o.contractors for o in observations),
        "messages": mean(o.messages for o in observations),
        "latency_ms": {"p50": percentile(latencies, 50), "p95": percentile(latencies, 95)},
        "errors": sum(o.error is not None for o in observations),
        "calibration": calibration([c for o in observations for c in o.confidences]),
        "llm": {
            name: mean(o.llm[i] for o in observations) for i, name in enumerate(("calls", "cache_hits", "fallbacks"))
        },
    }
    if any(o.llm[0] or o.llm[2] for o in observations):
        summary["llm"] |= llm_summary(observations, stages)
    return summary


def llm_summary(observations: list[Observation], stages: dict) -> dict:
    """Where an LLM took part: its tokens per step (means a request), the repairs and tidied answers, and the
    runs it answered on its own (no step fell back) apart, with their scores, so that the model's accuracy is
    never mixed silently with the fallback's."""
    steps = sorted({k for o in observations for k in o.tokens_by_step})
    own = [o for o in observations if o.error is None and o.llm[2] == 0]
    scores = {stage: [prf(o.stages[stage], o.truth) for o in own] for stage in stages}
    return {
        "repairs": mean(o.repairs for o in observations),
        "tidied": mean(o.tidied for o in observations),
        "tokens_by_step": {
            k: {
                "input": round(mean(o.tokens_by_step.get(k, (0, 0))[0] for o in observations)),
                "output": round(mean(o.tokens_by_step.get(k, (0, 0))[1] for o in observations)),
            }
            for k in steps
        },
        "tokens_from_cache": {
            "input": round(mean(o.tokens_from_cache[0] for o in observations)),
            "output": round(mean(o.tokens_from_cache[1] for o in observations)),
        },
        "runs_with_fallbacks": [o.mashup_id for o in observations if o.llm[2]],
        "fallback_notes": {str(o.mashup_id): o.fallback_notes for o in observations if o.fallback_notes},
        "llm_only": {
            "runs": len(own),
            "mashups": [o.mashup_id for o in own],
            "stages": {
                stage: {
                    "precision": mean(s[0] for s in v),
                    "recall": mean(s[1] for s in v),
                    "f1": mean(s[2] for s in v),
                }
                for stage, v in scores.items()
            }
            if own
            else {},
        },
    }
