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
