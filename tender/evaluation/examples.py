"""The README's examples, judged beforehand: for each requirement, the functions a developer needs and the catalogue
APIs they would accept for each (suites/readme_examples.jsonl, written by a helper from the ProgrammableWeb
catalogue alone, before any of Tender's answers to them was seen). An answer is accepted when

- every function has an acceptable API in the plan: an active one, or a deprecated one only where the judge found no
  active alternative; and
- the plan holds no API acceptable for none of the functions.

    python -m tender.evaluation.examples                       # the catalogue at TENDER_CATALOG
    python -m tender.evaluation.examples --db catalog.db --json examples.json
    python -m tender.evaluation.examples --needs-given --include-deprecated

`--needs-given` passes the judged functions' needs as the caller's (what an assistant does), so that a miss of the
ranking shows apart from a miss of the decomposition."""

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

SUITE = Path(__file__).parent / "suites" / "readme_examples.jsonl"


@dataclass(frozen=True)
class Judged:
    need: str
    active: frozenset[int]
    deprecated: frozenset[int]

    def served_by(self, plan: set[int]) -> bool:
        return bool(plan & self.active) or (not self.active and bool(plan & self.deprecated))


def load(path: Path = SUITE) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def functions_of(example: dict) -> list[Judged]:
    out = []
    for function in example["functions"]:
        deprecated = frozenset(a["id"] for a in function.get("deprecated", []))
        every = frozenset(a["id"] for a in function["acceptable"])
        out.append(Judged(function["need"], every - deprecated, deprecated))
    return out


def judge(example: dict, plan: list[int]) -> dict:
    """How a plan (its APIs' ids) fares against the example's judgement."""
    functions = functions_of(example)
    chosen = set(plan)
    acceptable = set().union(*(f.active | f.deprecated for f in functions))
    unserved = [f.need for f in functions if not f.served_by(chosen)]
    unrelated = [a for a in plan if a not in acceptable]
    return {
        "id": example["id"],
        "requirement": example["requirement"],
        "functions": len(functions),
        "served": len(functions) - len(unserved),
        "unserved": unserved,
        "unrelated": unrelated,
        "accepted": not unserved and not unrelated,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tender.evaluation.examples", description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", type=Path, help="The ProgrammableWeb catalogue (default: TENDER_CATALOG's).")
    parser.add_argument("--json", type=Path, help="Also write the verdicts here.")
    parser.add_argument("--needs-given", action="store_true", help="Pass the judged needs as the caller's.")
    parser.add_argument("--include-deprecated", action="store_true", help="Let deprecated APIs take a need too.")
    args = parser.parse_args(argv)

    from tender.agents.request import Request
    from tender.catalog import Catalog
    from tender.cli import make_tender
    from tender.settings import Settings

    settings = Settings.from_env()
    db = args.db or settings.catalog_path
    catalog = Catalog(db, embedder=settings.embedder(catalog=db))
    # The Tender `tender recommend` runs: TENDER_READER_MODEL's reader and TENDER_RANKING_MODEL's model where set.
    tender = make_tender(settings, catalog, {})
    verdicts = []
    for example in load():
        needs = [f.need for f in functions_of(example)] if args.needs_given else None
        constraints = {"include_deprecated": True} if args.include_deprecated else {}
        plan = tender.recommend(Request.create(example["requirement"], needs=needs, constraints=constraints)).plan
        verdict = judge(example, [a.api_id for a in plan.apis])
        verdict["plan"] = [f"{a.name}{' (deprecated)' if a.status == 'deprecated' else ''}" for a in plan.apis]
        verdicts.append(verdict)
        mark = "accepted" if verdict["accepted"] else "not accepted"
        print(
            f"{example['id']} {mark}: {verdict['served']}/{verdict['functions']} functions served; {example['requirement']!r}"
        )
        print(f"   plan: {', '.join(verdict['plan']) or 'nothing'}")
        if verdict["unserved"]:
            print(f"   unserved: {'; '.join(verdict['unserved'])}")
        if verdict["unrelated"]:
            names = [catalog.get_api(a).name for a in verdict["unrelated"]]
            print(f"   acceptable for no function: {', '.join(names)}")
    accepted = sum(v["accepted"] for v in verdicts)
    print(f"{accepted} of {len(verdicts)} accepted")
    if args.json:
        args.json.write_text(json.dumps(verdicts, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
