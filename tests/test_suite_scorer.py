import json
from types import SimpleNamespace

import pytest

from tender.evaluation.suite import SUITE_PATH, Case, load_cases, read_plan, score
from tests.conftest import SHARED_DATA


def plan(*ids, steps=()):
    return SimpleNamespace(apis=[SimpleNamespace(api_id=i) for i in ids], steps=list(steps), latency_ms=5.0)


CASES = [
    Case.from_dict(
        {
            "id": "a",
            "requirement": "sms and weather",
            "functions": [{"need": "sms", "acceptable": [1, 2]}, {"need": "weather", "acceptable": [3]}],
            "irrelevant": [9],
        }
    ),
    Case.from_dict(
        {"id": "b", "requirement": "maps", "functions": [{"need": "map", "acceptable": [4, 5]}], "irrelevant": [9]}
    ),
    Case.from_dict({"id": "c", "requirement": "gibberish", "functions": [], "expect": "nothing"}),
    Case.from_dict({"id": "d", "requirement": "more gibberish", "functions": [], "expect": "nothing"}),
    Case.from_dict(
        {"id": "e", "requirement": "cartes", "functions": [{"need": "map", "acceptable": [4]}], "language": "fr"}
    ),
]
ANSWERS = {
    "sms and weather": plan(1, 2, 7),  # sms covered twice, weather missed, 7 unjudged
    "maps": plan(5, 9),  # covered, but 9 is clearly wrong
    "gibberish": plan(),  # right: no plan
    "more gibberish": plan(4),  # wrong: a plan
    "cartes": plan(4),
}


def test_score_arithmetic():
    result = score(CASES, ANSWERS.__getitem__)
    en = result["english"]
    assert en["cases"] == 2 and en["functions"] == 3
    assert en["coverage"] == pytest.approx(2 / 3, abs=1e-4)  # sms, map covered; weather not
    assert en["precision"] == pytest.approx(3 / 5, abs=1e-4)  # 1, 2, 5 of 1, 2, 7, 5, 9
    assert en["all_covered"] == 0.5  # only case b
    assert en["clearly_wrong"] == 0.5  # case b holds 9
    assert en["nothing_cases"] == 2 and en["no_plan"] == 0.5
    assert en["avg_apis"] == 2.5 and en["empty_answers"] == 0
    fr = result["non_english"]
    assert (fr["cases"], fr["coverage"], fr["precision"], fr["all_covered"]) == (1, 1.0, 1.0, 1.0)
    a = next(r for r in result["cases"] if r["id"] == "a")
    assert a["uncovered"] == ["weather"] and a["clearly_wrong"] == []


class InvalidRequest(Exception):
    pass


def test_a_refusal_counts_as_no_plan_but_a_crash_does_not():
    def refuse(text):
        raise InvalidRequest("no words")

    result = score(CASES, refuse)
    assert result["english"]["no_plan"] == 1.0
    assert result["english"]["coverage"] == 0.0
    assert result["english"]["precision"] is None  # no API proposed at all
    assert result["english"]["errors"] == 4

    def crash(text):
        raise IndexError("index 1 is out of bounds")

    assert score(CASES, crash)["english"]["no_plan"] == 0.0


def test_a_nothing_fits_verdict_is_no_plan():
    nothing = SimpleNamespace(apis=[], steps=[], verdict="nothing fits")
    result = score([c for c in CASES if c.expects_nothing], lambda text: nothing)
    assert result["english"]["no_plan"] == 1.0
    assert read_plan(nothing).nothing and not read_plan(plan(1)).nothing


def test_read_plan_takes_runs_and_dicts():
    step = SimpleNamespace(function="send sms", awarded=[SimpleNamespace(api_id=2)])
    run = SimpleNamespace(plan=plan(2, 2, 3, steps=[step]))
    got = read_plan(run)
    assert got.final == [2, 3] and got.steps == [{"function": "send sms", "awarded": [2]}]
    assert read_plan({"apis": [{"api_id": 8}], "steps": []}).final == [8]


def test_the_suite_file_is_well_formed():
    cases = load_cases(SUITE_PATH)
    assert len(cases) >= 36
    assert len({c.id for c in cases}) == len(cases)
    for case in cases:
        assert case.requirement.strip(), case.id
        if case.expects_nothing:
            assert not case.functions, case.id
        else:
            assert case.functions, case.id
            assert all(f.need and f.acceptable for f in case.functions), case.id
    assert sum(c.expects_nothing for c in cases) >= 4
    assert {c.language for c in cases} >= {"en", "es", "fr"}


def test_the_suite_ids_exist_in_the_catalogue():
    apis_path = SHARED_DATA / "apis.jsonl"
    if not apis_path.is_file():
        pytest.skip(f"{apis_path} not present")
    ids = {json.loads(line)["id"] for line in apis_path.read_text(encoding="utf-8").splitlines() if line.strip()}
    for case in load_cases(SUITE_PATH):
        named = set(case.irrelevant).union(*(f.acceptable for f in case.functions))
        assert named <= ids, (case.id, sorted(named - ids))
        for f in case.functions:
            assert not (f.acceptable & case.irrelevant), (case.id, f.need)


OPENAPI_SUITES = [SUITE_PATH.with_name("openapi.jsonl"), SUITE_PATH.with_name("openapi_tuning.jsonl")]


@pytest.mark.parametrize("path", OPENAPI_SUITES, ids=lambda p: p.stem)
def test_the_openapi_suites_are_well_formed_and_name_operations_of_the_documents(path, tmp_path):
    from tender.catalog import Catalog, HashingEmbedder
    from tender.catalog.build import build_from_sources
    from tender.catalog.sources.openapi import load_openapi

    cases = load_cases(path)
    assert len({c.id for c in cases}) == len(cases) >= 30
    assert all(bool(c.functions) != c.expects_nothing for c in cases)
    assert all(f.need and f.acceptable for c in cases for f in c.functions)
    documents = SHARED_DATA.parent / "openapi" / "docs"
    if not documents.is_dir():
        pytest.skip(f"{documents} not present")
    build_from_sources([load_openapi(documents)], tmp_path / "oa.db", HashingEmbedder(64))
    ids = set(Catalog(tmp_path / "oa.db").api_ids())
    for case in cases:
        named = set().union(*(f.acceptable for f in case.functions))
        assert named <= ids, (case.id, sorted(named - ids))
