"""The hand-judged requirement suite: does Tender understand plain-language requirements?

`suites/requirements.jsonl` holds requirements judged by hand against the ProgrammableWeb catalogue
(see `suites/README.md`): for each functional unit, every API that would serve it (`acceptable`), and
popular APIs that would be a clearly wrong answer (`irrelevant`); a few cases expect no plan at all.

    python -m tender.evaluation.suite --db catalog.db --protocol all --json out.json
    python -m tender.evaluation.suite --db catalog.db --protocol manager-led --no-history

Metrics, per protocol, over the English function cases (the non-English ones are reported apart):
- coverage: share of judged functions with at least one acceptable API in the final set;
- precision: share of final-set APIs (pooled over the cases) acceptable for some function of their case;
- all covered: share of cases whose every function is covered;
- clearly wrong: share of answers containing an `irrelevant` API;
- no plan (the `expect: nothing` cases): share answered with no plan: an empty final set, a plan whose
  `verdict` says nothing fits (where Plan has that field), or a refusal (InvalidRequest); a crash is not.
"""

import argparse
import json
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

SUITE_PATH = Path(__file__).resolve().parent / "suites" / "requirements.jsonl"


@dataclass(frozen=True)
class Function:
    need: str
    acceptable: frozenset[int]


@dataclass(frozen=True)
class Case:
    id: str
    requirement: str
    functions: tuple[Function, ...]
    irrelevant: frozenset[int] = frozenset()
    expect: str | None = None
    language: str = "en"

    @property
    def expects_nothing(self) -> bool:
        return self.expect == "nothing"

    @classmethod
    def from_dict(cls, row: dict) -> "Case":
        return cls(
            id=row["id"],
            requirement=row["requirement"],
            functions=tuple(Function(f["need"], frozenset(f["acceptable"])) for f in row.get("functions", [])),
            irrelevant=frozenset(row.get("irrelevant", [])),
            expect=row.get("expect"),
            language=row.get("language", "en"),
        )


def load_cases(path: Path | str = SUITE_PATH) -> list[Case]:
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return [Case.from_dict(json.loads(line)) for line in lines if line.strip()]


@dataclass
class Answer:
    """What the scorer reads from one plan: the final set, in order, and the steps with their awards."""

    final: list[int]
    steps: list[dict] = field(default_factory=list)
    latency_ms: float = 0.0
    error: str | None = None
    nothing: bool = False  # the plan says nothing in the catalogue fits (Plan.verdict, where the Plan has one)
    refused: bool = False  # the request was refused as invalid (InvalidRequest): an answer, not a crash


def read_plan(plan) -> Answer:
    """A Plan, a Run (its .plan), or anything with `apis` (objects or dicts with `api_id`) and optionally `steps`."""
    plan = getattr(plan, "plan", plan)
    if isinstance(plan, dict):
        apis, steps, latency = plan.get("apis", []), plan.get("steps", []), plan.get("latency_ms", 0.0)
    else:
        apis, steps, latency = getattr(plan, "apis", []), getattr(plan, "steps", []), getattr(plan, "latency_ms", 0.0)

    def get(obj, name, default=None):
        return obj.get(name, default) if isinstance(obj, dict) else getattr(obj, name, default)

    verdict = str((plan.get("verdict") if isinstance(plan, dict) else getattr(plan, "verdict", None)) or "plan")
    final = list(dict.fromkeys(int(get(a, "api_id")) for a in apis))
    step_rows = [
        {"function": get(s, "function", ""), "awarded": [int(get(a, "api_id")) for a in get(s, "awarded", []) or []]}
        for s in steps
    ]
    return Answer(
        final=final,
        steps=step_rows,
        latency_ms=float(latency or 0.0),
        nothing=verdict.strip().lower().startswith("nothing"),
    )


def judge(case: Case, answer: Answer) -> dict:
    """One case's verdict."""
    final = answer.final
    row = {
        "id": case.id,
        "language": case.language,
        "final": final,
        "error": answer.error,
        "steps": len(answer.steps),
        "latency_ms": answer.latency_ms,
    }
    if case.expects_nothing:
        # no plan: an empty final set or a "nothing fits" verdict, or a refusal; a crash is not an answer
        no_plan = (not final or answer.nothing) and (answer.error is None or answer.refused)
        return row | {"expect": "nothing", "no_plan": no_plan, "wrong": sorted(set(final) & case.irrelevant)}
    acceptable = frozenset().union(*(f.acceptable for f in case.functions))
    covered = [bool(f.acceptable & set(final)) for f in case.functions]
    return row | {
        "functions": len(case.functions),
        "covered": sum(covered),
        "uncovered": [f.need for f, c in zip(case.functions, covered) if not c],
        "acceptable_in_final": sum(a in acceptable for a in final),
        "all_covered": all(covered),
        "clearly_wrong": sorted(set(final) & case.irrelevant),
    }


def _ratio(numerator: float, denominator: float) -> float | None:
    return round(numerator / denominator, 4) if denominator else None


def summarise(rows: list[dict]) -> dict:
    """Aggregate verdicts (function cases and nothing cases may be mixed; each metric reads its own)."""
    functional = [r for r in rows if r.get("expect") != "nothing"]
    nothing = [r for r in rows if r.get("expect") == "nothing"]
    functions = sum(r["functions"] for r in functional)
    final_apis = sum(len(r["final"]) for r in functional)
    return {
        "cases": len(functional),
        "functions": functions,
        "coverage": _ratio(sum(r["covered"] for r in functional), functions),
        "precision": _ratio(sum(r["acceptable_in_final"] for r in functional), final_apis),
        "all_covered": _ratio(sum(r["all_covered"] for r in functional), len(functional)),
        "clearly_wrong": _ratio(sum(bool(r["clearly_wrong"]) for r in functional), len(functional)),
        "empty_answers": sum(not r["final"] for r in functional),
        "avg_apis": _ratio(final_apis, len(functional)),
        "nothing_cases": len(nothing),
        "no_plan": _ratio(sum(r["no_plan"] for r in nothing), len(nothing)),
        "errors": sum(r["error"] is not None for r in rows),
    }


def score(cases: Iterable[Case], answer: Callable[[str], object]) -> dict:
    """Run `answer(requirement)` (returning a Plan-like object, see `read_plan`) on every case and score it.

    An exception from `answer` is recorded as the case's error and leaves the final set empty; it counts as
    "no plan" for a nothing case only when it is a refusal of the request (InvalidRequest), not a crash.
    Returns {"english": summary, "non_english": summary, "cases": [per-case verdicts]}."""
    rows = []
    for case in cases:
        started = time.perf_counter()
        try:
            got = read_plan(answer(case.requirement))
        except Exception as error:  # noqa: BLE001 - a refusal (e.g. InvalidRequest) is an answer too
            got = Answer(
                final=[],
                error=f"{type(error).__name__}: {error}",
                latency_ms=(time.perf_counter() - started) * 1000,
                refused=type(error).__name__ == "InvalidRequest",
            )
        rows.append(judge(case, got))
    english = [r for r in rows if r["language"] == "en"]
    other = [r for r in rows if r["language"] != "en"]
    return {"english": summarise(english), "non_english": summarise(other), "cases": rows}


# -- command line -------------------------------------------------------------------------------


def _fmt(value) -> str:
    return "–" if value is None else (f"{value:.3f}" if isinstance(value, float) else str(value))


def markdown(results: dict[str, dict], history: bool) -> str:
    lines = [
        f"Requirement suite ({'with' if history else 'without'} usage history)",
        "",
        "| protocol | coverage | precision | all covered | clearly wrong | no plan (nothing cases) | avg APIs | empty | errors |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for protocol, result in results.items():
        s = result["english"]
        lines.append(
            f"| {protocol} | {_fmt(s['coverage'])} | {_fmt(s['precision'])} | {_fmt(s['all_covered'])} | "
            f"{_fmt(s['clearly_wrong'])} | {_fmt(s['no_plan'])} | {_fmt(s['avg_apis'])} | {s['empty_answers']} | "
            f"{s['errors']} |"
        )
    first = next(iter(results.values()))
    lines += [
        "",
        (
            f"English: {first['english']['cases']} function cases ({first['english']['functions']} functions), "
            f"{first['english']['nothing_cases']} nothing cases."
        ),
        "",
        "Non-English (es, fr), reported apart:",
        "",
        "| protocol | coverage | precision | all covered | clearly wrong | avg APIs |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for protocol, result in results.items():
        s = result["non_english"]
        lines.append(
            f"| {protocol} | {_fmt(s['coverage'])} | {_fmt(s['precision'])} | {_fmt(s['all_covered'])} | "
            f"{_fmt(s['clearly_wrong'])} | {_fmt(s['avg_apis'])} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    from tender.agents.protocols import PROTOCOLS

    parser = argparse.ArgumentParser(prog="python -m tender.evaluation.suite", description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", type=Path, required=True, help="catalogue built by `tender catalog build`")
    parser.add_argument("--protocol", default="all", help=f"one of {', '.join(PROTOCOLS)}, or all")
    parser.add_argument(
        "--suite", type=Path, default=SUITE_PATH, help="requirements JSONL (default: the bundled suite)"
    )
    parser.add_argument("--json", dest="json_path", type=Path, help="write the full results (per case too) here")
    parser.add_argument(
        "--no-history",
        action="store_true",
        help="hide all usage history: open the catalogue with every mashup excluded",
    )
    parser.add_argument("--organisation", default="api", choices=("api", "category", "provider"))
    parser.add_argument("--top-n", type=int, default=None, help="contractors reached per call for proposals")
    args = parser.parse_args(argv)

    protocols = list(PROTOCOLS) if args.protocol == "all" else [args.protocol]
    unknown = [p for p in protocols if p not in PROTOCOLS]
    if unknown:
        parser.error(f"unknown protocol {unknown[0]!r}; use one of {', '.join(PROTOCOLS)} or all")

    from tender.agents.request import Request
    from tender.agents.service import Tender
    from tender.catalog import Catalog
    from tender.settings import Settings

    excluded: list[int] = []
    if args.no_history:
        probe = Catalog(args.db)
        excluded = [m.id for m in probe.mashups()]
        probe.close()
    catalog = Catalog(args.db, embedder=Settings.from_env().embedder(catalog=args.db), exclude_mashups=excluded)
    tender = Tender(catalog)
    tender.warm_up()
    cases = load_cases(args.suite)
    results = {}
    for protocol in protocols:

        def answer(text, protocol=protocol):
            return tender.recommend(
                Request.create(text, protocol=protocol, organisation=args.organisation, top_n=args.top_n)
            ).plan

        started = time.perf_counter()
        results[protocol] = score(cases, answer)
        results[protocol]["seconds"] = round(time.perf_counter() - started, 1)
        print(f"{protocol}: {len(cases)} cases in {results[protocol]['seconds']} s", file=sys.stderr)
    print(markdown(results, history=not args.no_history))
    if args.json_path:
        args.json_path.parent.mkdir(parents=True, exist_ok=True)
        payload = {
            "config": {
                "db": str(args.db),
                "suite": str(args.suite),
                "history": not args.no_history,
                "excluded_mashups": len(excluded),
                "organisation": args.organisation,
                "model": catalog.model_name,
            },
            "results": results,
        }
        args.json_path.write_text(json.dumps(payload, indent=2, ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
