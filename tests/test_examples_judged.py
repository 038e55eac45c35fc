"""The README's examples, judged beforehand (suites/readme_examples.jsonl): the judgement names real catalogue APIs,
and an answer is accepted only when it serves every function with an active API and adds nothing unrelated."""

import json

import pytest

from tender.evaluation.examples import functions_of, judge, load
from tests.conftest import ROOT

APIS = ROOT.parent / "shared" / "data" / "programmableweb" / "apis.jsonl"
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


def test_a_plan_serving_every_function_with_an_active_api_is_accepted():
    assert judge(EXAMPLE, [2, 3])["accepted"]


def test_a_deprecated_api_does_not_serve_where_an_active_one_would():
    verdict = judge(EXAMPLE, [1, 3])
    assert not verdict["accepted"] and verdict["unserved"] == ["map"]


def test_an_api_acceptable_for_no_function_spoils_the_answer():
    verdict = judge(EXAMPLE, [2, 3, 9])
    assert not verdict["accepted"] and verdict["unrelated"] == [9] and verdict["served"] == 2
