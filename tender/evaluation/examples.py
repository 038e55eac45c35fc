"""The README's examples, judged beforehand: for each requirement, the functions a developer needs and the catalogue
items they would accept for each, on the two catalogues a user meets. suites/readme_examples.jsonl judges them on
ProgrammableWeb's 940 APIs (ids), suites/readme_examples_today.jsonl on today's catalogue, the MCP Registry and
public-apis (2,158 items, by exact name); each was written by a helper from its catalogue alone, before any of
Tender's answers to them was seen. The judgement is the one for the catalogue given: ProgrammableWeb's where it was
built from the R2API data, today's otherwise. An answer is accepted when

- every function has an acceptable item in the plan: an active one, or a deprecated one only where the judge found
  no active alternative; and
- the plan holds no item acceptable for none of the functions.

    python -m tender.evaluation.examples                       # the catalogue at TENDER_CATALOG (today's: make demo)
    python -m tender.evaluation.examples --db programmableweb.db --json examples.json
    python -m tender.evaluation.examples --needs-given --include-deprecated

`--needs-given` passes the judged functions' needs as the caller's (what an assistant does), so that a miss of the
ranking shows apart from a miss of the decomposition."""

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tender.evaluation.datasets import as_id, resolve_by_name
from tender.assembly import assemble, embedder_for

SUITES = Path(__file__).parent / "suites"
SUITE = SUITES / "readme_examples.jsonl"  # ProgrammableWeb's ids
TODAY = SUITES / "readme_examples_today.jsonl"  # today's catalogue, by exact item name


@dataclass(frozen=True)
class Judged:
    need: str
    active: frozenset[int]
    deprecated: frozenset[int]

    def served_by(self, plan: set[int]) -> bool:
        return bool(plan & self.active) or (not self.active and bool(plan & self.deprecated))


def load(path: Path = SUITE) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def functions_of(example: dict, resolve: Callable[[object], int] = as_id) -> list[Judged]:
    """The example's functions, each item resolved to its id: ProgrammableWeb's judgement names ids, today's names."""

    def ids(items: list) -> frozenset[int]:
        return frozenset(resolve(a["id"] if isinstance(a, dict) else a) for a in items)

    out = []
    for function in example["functions"]:
        deprecated = ids(function.get("deprecated", []))
        out.append(Judged(function["need"], ids(function["acceptable"]) - deprecated, deprecated))
    return out


def judge(example: dict, plan: list[int], resolve: Callable[[object], int] = as_id) -> dict:
    """How a plan (its items' ids) fares against the example's judgement."""
    functions = functions_of(example, resolve)
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
    parser.add_argument("--db", type=Path, help="The catalogue (default: TENDER_CATALOG's).")
    parser.add_argument("--json", type=Path, help="Also write the verdicts here.")
    parser.add_argument("--needs-given", action="store_true", help="Pass the judged needs as the caller's.")
    parser.add_argument("--include-deprecated", action="store_true", help="Let deprecated APIs take a need too.")
    args = parser.parse_args(argv)

    from tender.agents.request import Request
    from tender.catalog import Catalog
    from tender.settings import Settings

    settings = Settings.from_env()
    db = args.db or settings.catalog_path
    catalog = Catalog(db, embedder=embedder_for(settings, catalog=db))
    # The Tender `tender recommend` runs: TENDER_READER_MODEL's reader and TENDER_RANKING_MODEL's model where set.
    tender = assemble(settings, catalog)
    resolve: Callable[[object], int] = as_id
    suite = SUITE  # ProgrammableWeb's, whose judgement names the R2API ids
    if not any(api.source == "R2API" for api in catalog.apis()):
        suite, resolve = TODAY, resolve_by_name(catalog)
    print(f"Judged by {suite.name} on {db}")
    verdicts = []
    for example in load(suite):
        needs = [f.need for f in functions_of(example, resolve)] if args.needs_given else None
        constraints = {"include_deprecated": True} if args.include_deprecated else {}
        plan = tender.recommend(Request.create(example["requirement"], needs=needs, constraints=constraints)).plan
        verdict = judge(example, [a.api_id for a in plan.apis], resolve)
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
