"""Decomposition measured on its own: the needs Tender finds in a requirement against the gold needs of
suites/decomposition.jsonl (written with their spans before any of Tender's answers were seen).

Matching rule: a found need matches a gold need when it holds at least half of the content words of the gold
need's spans (lower case, a plural's final s dropped, words of three letters or more); each found and each gold
need matches at most once, the largest overlaps first. Need-level precision, recall and F1 are micro-averaged.
A gold need is dropped silently when its span words are in neither a found need nor the parts the plan reports as
context."""

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .datasets import SUITES, split
from tender.assembly import text_model_for

SUITE = SUITES / "decomposition.jsonl"
# Words that carry no need; the rule only counts the others.
_FUNCTION_WORDS = frozenset(
    "the and with their them they its for that this these those from into onto than then when what which who "
    "your our my his her are was were will would can could should has have had been being any all each some "
    "also just about over".split()
)


def words(text: str) -> set[str]:
    out = set()
    for w in re.findall(r"[a-z0-9]+", text.lower()):
        if (len(w) < 3 and not (len(w) == 2 and any(c.isdigit() for c in w))) or w in _FUNCTION_WORDS:
            continue
        out.add(w[:-1] if w.endswith("s") and len(w) > 3 and not w.endswith("ss") else w)
    return out


@dataclass(frozen=True)
class Case:
    id: str
    requirement: str
    needs: tuple[tuple[str, tuple[str, ...]], ...]  # (need, spans)
    context: tuple[str, ...]


def load(part: str, path: Path = SUITE) -> list[Case]:
    wanted = set(split("decomposition")[part])
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [
        Case(
            id=r["id"],
            requirement=r["requirement"],
            needs=tuple((n["need"], tuple(n["spans"])) for n in r["needs"]),
            context=tuple(r.get("context", [])),
        )
        for r in rows
        if r["id"] in wanted
    ]


def match(found: list[str], case: Case) -> list[tuple[int, int]]:
    """(found index, gold index) pairs under the matching rule."""
    gold = [words(" ".join(spans)) for _, spans in case.needs]
    pairs = []
    for i, text in enumerate(found):
        have = words(text)
        for j, want in enumerate(gold):
            if want:
                share = len(have & want) / len(want)
                if share >= 0.5:
                    pairs.append((share, i, j))
    used_found: set[int] = set()
    used_gold: set[int] = set()
    out = []
    for _, i, j in sorted(pairs, key=lambda t: (-t[0], t[1], t[2])):
        if i not in used_found and j not in used_gold:
            used_found.add(i)
            used_gold.add(j)
            out.append((i, j))
    return out


def judge(case: Case, found: list[str], context: list[str]) -> dict:
    pairs = match(found, case)
    seen = words(" ".join(found + context))
    dropped = [need for need, spans in case.needs if not words(" ".join(spans)) & seen]
    return {
        "id": case.id,
        "requirement": case.requirement,
        "found": found,
        "context": context,
        "gold": [need for need, _ in case.needs],
        "matched": len(pairs),
        "dropped": dropped,
    }


def score(cases: list[Case], decompose: Callable[[str], tuple[list[str], list[str]]]) -> dict:
    """Run `decompose(requirement) -> (needs, context parts)` on every case; need-level P, R, F1 and the drops."""
    rows = [judge(case, *decompose(case.requirement)) for case in cases]
    found = sum(len(r["found"]) for r in rows)
    gold = sum(len(r["gold"]) for r in rows)
    matched = sum(r["matched"] for r in rows)
    precision = matched / found if found else 0.0
    recall = matched / gold if gold else 0.0
    return {
        "cases": len(rows),
        "precision": round(precision, 4),
        "recall": round(recall, 4),
        "f1": round(2 * precision * recall / (precision + recall), 4) if precision + recall else 0.0,
        "exact": round(sum(r["matched"] == len(r["gold"]) == len(r["found"]) for r in rows) / len(rows), 4)
        if rows
        else 0.0,
        "dropped_needs": sum(len(r["dropped"]) for r in rows),
        "cases_with_a_drop": sum(bool(r["dropped"]) for r in rows),
        "rows": rows,
    }


def micro_f1(rows: list[dict]) -> float:
    found = sum(len(r["found"]) for r in rows)
    gold = sum(len(r["gold"]) for r in rows)
    matched = sum(r["matched"] for r in rows)
    precision, recall = (matched / found if found else 0.0), (matched / gold if gold else 0.0)
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def paired_f1(a: list[dict], b: list[dict], resamples: int = 2000, seed: int = 0) -> tuple[float, float, float]:
    """(B's F1 less A's, and its 95% interval) over the cases both read, resampling cases with replacement."""
    import numpy as np

    index = {r["id"]: r for r in b}
    pairs = [(r, index[r["id"]]) for r in a if r["id"] in index]
    rng = np.random.default_rng(seed)
    deltas = []
    for _ in range(resamples):
        drawn = [pairs[i] for i in rng.integers(0, len(pairs), size=len(pairs))]
        deltas.append(micro_f1([y for _, y in drawn]) - micro_f1([x for x, _ in drawn]))
    low, high = np.percentile(deltas, [2.5, 97.5])
    return micro_f1([y for _, y in pairs]) - micro_f1([x for x, _ in pairs]), float(low), float(high)


def main(argv: list[str] | None = None) -> int:
    """The decomposition suite read by the rules or by the model that reads requests (TENDER_REQUEST_MODEL, else the
    pulled one); or two such runs compared, paired by case."""
    import argparse
    import time

    parser = argparse.ArgumentParser(prog="python -m tender.evaluation.decomposition", description=main.__doc__)
    parser.add_argument("--part", choices=("dev", "test"), default="dev")
    parser.add_argument("--reader", choices=("rules", "model"), default="rules")
    parser.add_argument("--out", type=Path, help="Write the scores and every case's reading here (JSON).")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("A", "B"), help="Two --out files: B less A.")
    args = parser.parse_args(argv)
    if args.compare:
        a, b = (json.loads(p.read_text())["rows"] for p in args.compare)
        delta, low, high = paired_f1(a, b)
        print(f"need F1: A {micro_f1(a):.3f}, B {micro_f1(b):.3f}, B - A {delta:+.3f} [{low:+.3f}, {high:+.3f}]")
        return 0
    from tender.agents.context import RunContext
    from tender.agents.reasoners.embedded import EmbeddedReasoner
    from tender.agents.tasks import DecomposeTask
    from tender.settings import Settings

    reasoner = EmbeddedReasoner()
    if args.reader == "model":
        from tender.agents.reasoners.local import LocalReader

        model = text_model_for(Settings.from_env())
        if model is None:
            parser.error("no model reads requests here: set TENDER_REQUEST_MODEL, or pull one")
        reasoner = LocalReader(model, EmbeddedReasoner())  # type: ignore[assignment]
    seconds: list[float] = []
    notes: list[str] = []

    def decompose(text: str) -> tuple[list[str], list[str]]:
        context = RunContext()
        began = time.perf_counter()
        reading = reasoner.run(DecomposeTask(requirement=text), context)
        seconds.append(time.perf_counter() - began)
        notes.extend(context.notes)
        return [f.description for f in reading.functions], list(reading.context)

    result = score(load(args.part), decompose)
    result["seconds"] = sorted(round(s, 3) for s in seconds)
    result["notes"] = notes
    print(
        f"{args.part}, read by {args.reader}: {result['cases']} cases, P {result['precision']:.3f} R "
        f"{result['recall']:.3f} F1 {result['f1']:.3f}, exact {result['exact']:.3f}, {result['dropped_needs']} needs "
        f"dropped; {len(notes)} fallbacks"
    )
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
