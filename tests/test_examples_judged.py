"""The README's examples, judged beforehand on ProgrammableWeb (suites/readme_examples.jsonl) and on today's catalogue
(suites/readme_examples_today.jsonl): each judgement names real items of its catalogue, and an answer is accepted only
when it serves every function with an active item and adds nothing unrelated."""

import json

import pytest

from tender.catalog.build import assemble
from tender.catalog.sources.mcp_registry import load_registry
from tender.catalog.sources.public_apis import load_public_apis
from tender.evaluation.examples import TODAY, functions_of, judge, load
from tests.conftest import ROOT

DATA = ROOT.parent / "shared" / "data"
APIS = DATA / "programmableweb" / "apis.jsonl"
PUBLIC_APIS = DATA / "public-apis" / "public-apis-README.md"
REGISTRY = DATA / "mcp-registry" / "seed_2025_05_16.json"
EXAMPLE = {
    "id": "x",
    "requirement": "nearby restaurants on a map",
    "functions": [
        {"need": "map", "acceptable": [{"id": 1}, {"id": 2}], "deprecated": [{"id": 1}]},
        {"need": "restaurants", "acceptable": [{"id": 3}]},
    ],
}


def test_the_judgement_names_apis_of_the_catalogue_by_id_and_name():
    if not APIS.is_file():
        pytest.skip(f"the ProgrammableWeb data is not at {APIS}")
    names = {row["id"]: row["name"] for row in map(json.loads, APIS.read_text().splitlines())}
    examples = load()
    assert examples and all(functions_of(e) for e in examples)
    for example in examples:
        for function in example["functions"]:
            assert function["acceptable"], f"{example['id']}: {function['need']} has no acceptable API"
            for api in function["acceptable"] + function.get("deprecated", []):
                assert names[api["id"]] == api["name"]


def test_today_s_judgement_names_items_of_today_s_catalogue_as_the_build_names_them():
    if not (PUBLIC_APIS.is_file() and REGISTRY.is_file()):
        pytest.skip(f"the public-apis and MCP Registry snapshots are not in {DATA}")
    apis, _ = assemble([load_registry(REGISTRY), load_public_apis(PUBLIC_APIS)])  # the README's build, in its order
    ids = {api.name: api.id for api in apis}
    today, programmableweb = load(TODAY), load()
    assert [e["requirement"] for e in today] == [e["requirement"] for e in programmableweb]
    for example, twin in zip(today, programmableweb):
        functions = functions_of(example, lambda name: ids[str(name)])
        assert [f.need for f in functions] == [f.need for f in functions_of(twin)]
        assert all(f.active for f in functions), f"{example['id']}: a function with no acceptable item"


def test_a_plan_serving_every_function_with_an_active_api_is_accepted():
    assert judge(EXAMPLE, [2, 3])["accepted"]


def test_a_deprecated_api_does_not_serve_where_an_active_one_would():
    verdict = judge(EXAMPLE, [1, 3])
    assert not verdict["accepted"] and verdict["unserved"] == ["map"]


def test_an_api_acceptable_for_no_function_spoils_the_answer():
    verdict = judge(EXAMPLE, [2, 3, 9])
    assert not verdict["accepted"] and verdict["unrelated"] == [9] and verdict["served"] == 2
