"""What `tender eval --all` runs: every dataset in every variant on its test part, the protocols and the baselines
that apply, after fitting the baselines' cuts on the dev parts; then docs/results.md from what it wrote.
`--quick` runs a sample of each part, for day-to-day work (its figures are not the reported ones)."""

import json
import multiprocessing
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from tender.agents.protocols import PROTOCOLS
from tender.catalog import Catalog

from .baselines import BASELINES, NEEDS_ONLY
from .catalogues import Catalogues
from .datasets import DATASETS, FOLDS, R2API_MODELS, Variant
from .runner import Job, fit_cuts, methods_for, run_job, summarise, write_records

MAIN = "manager-led"


@dataclass(frozen=True)
class Plan:
    """One dataset in one variant: the parts and the protocols to run (baselines always run)."""

    dataset: str
    variant: Variant
    protocols: tuple[str, ...]
    parts: tuple[str, ...] = ("test",)
    sample: int | None = None


def plans(quick: bool = False) -> list[Plan]:
    every = tuple(PROTOCOLS)
    out = []
    for name, data in DATASETS.items():
        for variant in data.variants:
            protocols = every
            parts: tuple[str, ...] = ("test",)
            sample = None
            if name == "r2api":
                protocols, parts = (MAIN,), FOLDS
            elif name == "metatool-single":
                protocols = (MAIN,)
            if quick:
                sample = 60
                parts = parts[:1]
                if name in ("r2api", "metatool-single"):
                    sample = 100
            out.append(Plan(name, variant, protocols, parts, sample))
    return out


def commit() -> str:
    """The checked-out commit, with '+' where the tree has changes; '' outside a git checkout."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True)
    except (OSError, subprocess.CalledProcessError):
        return ""
    return head.stdout.strip() + ("+" if dirty.stdout.strip() else "")


def run_all(
    catalogues: Catalogues,
    make_tender: Callable[[Catalog], object],
    out: Path,
    quick: bool = False,
    only: set[str] | None = None,
    progress: bool = True,
    say: Callable[[str], None] = print,
    jobs: int = 1,
) -> dict:
    """Run every plan, writing out/records/*.jsonl and out/summary.json; returns the summary. With jobs > 1 the
    parts run side by side in that many processes (each answers one query at a time, on one core)."""
    started = time.perf_counter()
    tasks = [(plan, part) for plan in plans(quick) if not only or plan.dataset in only for part in plan.parts]
    for name in dict.fromkeys(DATASETS[plan.dataset].catalogue for plan, _ in tasks):
        catalogues.ensure(name)  # built once, before any process opens them
    global _WORK
    _WORK = (catalogues, make_tender, progress and jobs == 1, say)
    cuts_all: dict[str, dict[str, int]] = {}
    if jobs > 1:
        with multiprocessing.get_context("fork").Pool(jobs, maxtasksperchild=None) as pool:
            done = pool.imap_unordered(_run_task, tasks, chunksize=1)
            for key, records, cuts, seconds in done:
                say(f"{key}: {len(records)} runs in {seconds:.0f} s")
                write_records(records, out / "records" / f"{_slug(key)}.jsonl")
                cuts_all.update(cuts)
    else:
        for task in tasks:
            key, records, cuts, seconds = _run_task(task)
            say(f"{key}: {len(records)} runs in {seconds:.0f} s")
            write_records(records, out / "records" / f"{_slug(key)}.jsonl")
            cuts_all.update(cuts)
    if not only or "decomposition" in only:
        (out / "decomposition.json").write_text(json.dumps(decompose_test(), indent=1))
    stamp = {
        "date": date.today().isoformat(),
        "commit": commit(),
        "quick": quick,
        "seconds": round(time.perf_counter() - started),
        "jobs": jobs,
        "encoder": catalogues.settings.embedding_model or "all-MiniLM-L6-v2",
        "datasets": sorted(only) if only else "all",
    }
    parts = json.loads((out / "parts.json").read_text()) if only and (out / "parts.json").is_file() else []
    parts = [p for p in parts if not set(p["stamp"]["datasets"]) & set(only or ())] + [
        {"stamp": stamp, "cuts": cuts_all}
    ]
    (out / "parts.json").write_text(json.dumps(parts, indent=1))
    return report(out)


# What a task runs with: set by run_all before the processes fork (a closure such as make_tender cannot be sent
# to a process, but a forked one inherits it).
_WORK: tuple = ()
_CUTS: dict[str, dict[str, int]] = {}  # each process's baselines' cuts, fitted once per dataset and variant


def _run_task(task: tuple[Plan, str]) -> tuple[str, list[dict], dict[str, dict[str, int]], float]:
    plan, part = task
    catalogues, make_tender, progress, say = _WORK
    data = DATASETS[plan.dataset]
    baselines = [m for m in methods_for(data, plan.variant) if m in BASELINES]
    if plan.dataset == "r2api":  # 9,000 queries: the strongest flat baselines only, within the time budget
        baselines = [b for b in baselines if b in ("hybrid", "knn", "popularity")]
    began = time.perf_counter()
    cuts = _cuts(plan, catalogues, make_tender, baselines, _CUTS, progress)
    scorer = R2API_MODELS / f"{part}.json" if plan.dataset == "r2api" else None
    if scorer is not None and not scorer.is_file():
        say(f"No model of its own for R2API {part} ({scorer}): the shipped one, which saw its mashups, ranks it.")
        scorer = None
    job = Job(data, part, plan.variant, [*plan.protocols, *baselines], sample=plan.sample, cuts=cuts, scorer=scorer)
    records = run_job(job, catalogues, make_tender, progress=progress)
    return job.key, records, dict(_CUTS), time.perf_counter() - began


def decompose_test() -> dict:
    """The embedded decomposition on the decomposition suite's test part: need-level P, R, F1 and the drops."""
    from tender.agents.decomposition import read

    from .decomposition import load, score

    return score(load("test"), lambda text: (read(text).needs, read(text).context))


def report(out: Path) -> dict:
    """The summary of every record under out/records, with the runs that made them (out/parts.json): what
    docs/results.md is made from. A run of some datasets (--only) replaces their records and leaves the rest."""
    from .runner import records_of

    records = records_of(out)
    parts = json.loads((out / "parts.json").read_text())
    summary = summarise(records)
    summary["cuts"] = {k: v for p in parts for k, v in p["cuts"].items()}
    commits = sorted({p["stamp"]["commit"] for p in parts})
    summary["stamp"] = {
        "date": max(p["stamp"]["date"] for p in parts),
        "commit": ", ".join(commits),
        "quick": any(p["stamp"]["quick"] for p in parts),
        "seconds": sum(p["stamp"]["seconds"] for p in parts),
        "encoder": parts[-1]["stamp"]["encoder"],
        "runs": [p["stamp"] for p in parts],
    }
    if (out / "decomposition.json").is_file():
        summary["decomposition"] = json.loads((out / "decomposition.json").read_text())
    if (out / "words.json").is_file():  # written by `python -m tender.training.words --out OUT/words.json`
        summary["words"] = json.loads((out / "words.json").read_text())
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    return summary


def _cuts(plan, catalogues, make_tender, baselines, cuts_all, progress) -> dict[str, int]:
    """The baselines' set sizes, fitted on the dataset's dev part in this variant (R2API's folds: on
    ProgrammableWeb's dev part, as written or masked alike)."""
    whole = [b for b in baselines if b not in NEEDS_ONLY]
    source = "programmableweb" if plan.dataset == "r2api" else plan.dataset
    key = f"{source} | {plan.variant.name}"
    if key not in cuts_all and whole:
        data = DATASETS[source]
        variant = plan.variant if plan.variant in data.variants else data.variants[0]
        job = Job(data, "dev", variant, whole, sample=300 if not plan.sample else plan.sample, seed=1)
        cuts_all[key] = fit_cuts(run_job(job, catalogues, make_tender, progress=progress))
    return cuts_all.get(key, {})


def _slug(text: str) -> str:
    return "-".join("".join(ch if ch.isalnum() else " " for ch in text.lower()).split())
