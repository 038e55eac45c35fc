"""The evaluation: frozen splits that never leak, function-level metrics on worked examples, per-query records,
the paired comparison, and sampling that applies to any request file."""

import json
import math
import random

import pytest

from tender.agents.service import Tender
from tender.evaluation import baselines as flat
from tender.evaluation.catalogues import Catalogues
from tender.evaluation.compare import compare
from tender.evaluation.datasets import DATASETS, Paths, external, split
from tender.evaluation.gold import Answer, GoldFunction, Query, metrics, ndcg_at, prf, recall_at
from tender.evaluation.runner import Job, LeakError, check_leave_out, fit_cuts, methods_for, run_job, summarise
from tender.settings import Settings
from tests.conftest import ROOT, write_jsonl
from tests.fixture_data import mashup_rows

SHARED = ROOT.parent / "shared" / "data"


def mashup(*apis: int) -> Query:
    return Query(id="m", text="", functions=tuple(GoldFunction(acceptable=frozenset([a])) for a in apis))


# -- splits ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name",
    ["programmableweb", "metatool-multi", "metatool-single", "openapi-suite", "programmableweb-suite", "decomposition"],
)
def test_no_test_id_is_in_a_dev_part(name):
    parts = split(name)
    assert parts["test"] and parts["dev"]
    assert not set(parts["test"]) & set(parts["dev"])
    assert len(set(parts["test"])) == len(parts["test"])


def test_the_programmableweb_history_is_the_train_part_for_dev_and_test_alike():
    data = DATASETS["programmableweb"]
    paths = Paths(SHARED)
    hidden = set(data.hidden(paths, "test"))
    assert (
        hidden
        == set(data.hidden(paths, "dev"))
        == set(split("programmableweb")["dev"]) | set(split("programmableweb")["test"])
    )


@pytest.mark.skipif(not (SHARED / "metatool").is_dir(), reason="../shared/data/metatool is not beside the clone")
def test_metatool_test_parts_hold_only_tools_no_training_part_has_seen():
    rows = [json.loads(line) for line in (SHARED / "metatool" / "single_tool_queries.jsonl").open()]
    split_of = {r["id"]: r["split"] for r in rows}
    assert {split_of[i] for i in split("metatool-single")["test"] + split("metatool-single")["dev"]} == {"heldout"}
    held = set(json.loads((SHARED / "metatool" / "split.json").read_text())["heldout_tool_ids"])
    trained_tools = {r["api_ids"][0] for r in rows if r["split"] == "train"}
    assert not held & trained_tools


# -- metrics -----------------------------------------------------------------------------------------------
def test_on_mashups_the_metrics_are_the_usual_item_level_ones():
    query = mashup(1, 2)
    assert prf([1, 2], query) == (1.0, 1.0, 1.0)
    precision, recall, f1 = prf([1, 2, 3, 4], mashup(1, 5))
    assert (precision, recall) == (0.25, 0.5) and f1 == pytest.approx(2 * 0.25 * 0.5 / 0.75)
    assert recall_at([9, 1], query, 1) == 0.0 and recall_at([9, 1], query, 2) == 0.5
    # Hits at ranks 1 and 3 of a true set of two: DCG = 1 + 1/log2(4), ideal = 1 + 1/log2(3).
    assert ndcg_at([1, 5, 2], query, 3) == pytest.approx(1.5 / (1 + 1 / math.log2(3)))


def test_a_judged_function_is_covered_once_whichever_of_its_acceptable_items_comes():
    query = Query(
        id="s", text="", functions=(GoldFunction(acceptable=frozenset({1, 2})), GoldFunction(acceptable=frozenset({3})))
    )
    assert recall_at([1, 2], query, 2) == 0.5  # two items, one function
    assert ndcg_at([1, 2, 3], query, 3) < ndcg_at([1, 3, 2], query, 3)  # the second acceptable item gains nothing
    scored = metrics(query, Answer(final=[1, 2], ranked=[1, 2, 3]))
    assert scored["precision"] == 1.0 and scored["recall"] == 0.5 and scored["r@5"] == 1.0


def test_a_query_that_expects_nothing_is_scored_on_abstaining():
    nothing = Query(id="n", text="", expect_nothing=True)
    assert metrics(nothing, Answer(final=[], verdict="nothing fits")) == {"abstained": 1.0}
    assert metrics(nothing, Answer(final=[4])) == {"abstained": 0.0}


def test_a_function_nothing_serves_is_not_counted_as_missed_and_is_scored_on_being_left_open():
    query = Query(
        id="p", text="", functions=(GoldFunction(acceptable=frozenset({1, 2})), GoldFunction(acceptable=frozenset()))
    )
    left_open = metrics(query, Answer(final=[1], ranked=[1, 7]))
    assert left_open["recall"] == 1.0 and left_open["all_covered"] == 1.0 and left_open["unserved_open"] == 1.0
    filled = metrics(query, Answer(final=[1, 7], ranked=[1, 7]))
    assert filled["recall"] == 1.0 and filled["precision"] == 0.5 and filled["unserved_open"] == 0.0
    assert "unserved_open" not in metrics(mashup(1, 2), Answer(final=[1, 2]))


# -- runs on the fixture catalogue ---------------------------------------------------------------------------
@pytest.fixture
def requests_file(tmp_path):
    return write_jsonl(tmp_path / "requests.jsonl", mashup_rows())


@pytest.fixture
def catalogues(catalog_path, embedder, tmp_path):
    class Fixture(Catalogues):
        def open(self, name, hidden=(), history=True):
            from tender.catalog import Catalog

            return Catalog(
                catalog_path,
                embedder=embedder,
                exclude_mashups=list(hidden) if history else [m["id"] for m in mashup_rows()],
            )

    return Fixture(Settings(home=tmp_path), Paths(SHARED), progress=False)


def run(catalogues, path, methods, **job):
    data = external(path)
    return run_job(Job(data, "all", data.variants[0], methods, **job), catalogues, Tender, progress=False)


def test_each_query_and_method_gives_one_record_with_the_ranking_the_gold_and_the_metrics(catalogues, requests_file):
    records = run(catalogues, requests_file, ["manager-led", "dense"], sample=5, seed=3)
    assert len(records) == 10 and {r["method"] for r in records} == {"manager-led", "dense"}
    first = records[0]
    for field in ("id", "functions", "final", "ranked", "gold", "metrics", "latency_ms"):
        assert field in first
    assert first["functions"] and set(first["final"]) <= set(first["ranked"]) | set(first["final"])


def test_sample_and_seed_apply_to_a_request_file(catalogues, requests_file):
    ids = lambda records: [r["id"] for r in records]  # noqa: E731
    three = run(catalogues, requests_file, ["dense"], sample=3, seed=1)
    assert len(three) == 3
    assert ids(three) == ids(run(catalogues, requests_file, ["dense"], sample=3, seed=1))
    assert ids(three) != ids(run(catalogues, requests_file, ["dense"], sample=3, seed=2))


def test_a_hidden_mashup_visible_to_the_agents_stops_the_run(catalog, catalog_path):
    with pytest.raises(LeakError):
        check_leave_out(catalog, [mashup_rows()[0]["id"]])


def test_a_baseline_keeps_the_set_size_best_on_dev():
    rows = [
        {"method": "dense", "expect_nothing": False, "id": str(i), "gold": [[1], [2]], "ranked": [1, 2, 3]}
        for i in range(3)
    ]
    assert fit_cuts(rows) == {"dense": 2}


def test_history_baselines_run_only_with_history_and_per_need_ones_only_with_needs():
    pw, metatool = DATASETS["programmableweb"], DATASETS["metatool-multi"]
    assert "knn" in methods_for(pw, pw.variants[0]) and "knn" not in methods_for(metatool, metatool.variants[0])
    given = next(v for v in metatool.variants if v.needs)
    assert "dense per need" in methods_for(metatool, given) and "dense per need" not in methods_for(pw, pw.variants[0])


def test_baselines_embed_a_query_once_yet_are_timed_as_if_each_ran_alone(catalogues, requests_file, monkeypatch):
    from tender.catalog import Catalog

    alone = {m: run(catalogues, requests_file, [m]) for m in ("dense", "hybrid", "knn")}
    embedded: list[str] = []
    embed = Catalog.embed

    def counting(self, texts):
        embedded.extend(texts)
        return embed(self, texts)

    monkeypatch.setattr(Catalog, "embed", counting)
    together = run(catalogues, requests_file, ["dense", "hybrid", "knn"])
    for method, records in alone.items():
        assert [(r["final"], r["ranked"]) for r in records] == [
            (r["final"], r["ranked"]) for r in together if r["method"] == method
        ]
    queries = [r for r in together if r["method"] == "knn"]
    assert len(embedded) == len(queries)  # one embedding a query, for the three baselines that ask
    assert all(r["latency_ms"] > 0 for r in queries)


# -- the paired comparison ------------------------------------------------------------------------------------
def test_two_runs_of_the_same_code_show_no_difference(catalogues, requests_file):
    a = run(catalogues, requests_file, ["manager-led"])
    b = run(catalogues, requests_file, ["manager-led"])
    for difference in compare(a, b):
        assert difference.low <= 0 <= difference.high and difference.verdict == "no difference shown"


def test_a_ranking_in_random_order_is_reported_as_a_significant_loss(catalogues, requests_file, monkeypatch):
    good = run(catalogues, requests_file, ["hybrid"])
    shuffle = random.Random(0)

    def shuffled(catalog, text, embed):
        items = [(a, 0.0) for a in catalog.api_ids()]
        shuffle.shuffle(items)
        return items

    monkeypatch.setitem(flat.BASELINES, "hybrid", flat.Baseline("hybrid", shuffled, "random order"))
    broken = run(catalogues, requests_file, ["hybrid"])
    verdicts = {d.metric: d.verdict for d in compare(good, broken)}
    assert verdicts["r@5"] == "B worse" and verdicts["ndcg@5"] == "B worse"


def test_the_summary_has_one_group_a_method_with_means_and_latency(catalogues, requests_file):
    summary = summarise(run(catalogues, requests_file, ["manager-led", "bm25"], sample=6))
    assert {g["method"] for g in summary["groups"]} == {"manager-led", "bm25"}
    assert all(g["queries"] == 6 and "f1" in g["metrics"] and g["latency_ms"]["p50"] >= 0 for g in summary["groups"])


def test_parts_run_side_by_side_give_the_records_one_process_gives(catalogues, requests_file, tmp_path, monkeypatch):
    from tender.evaluation import schedule

    data = external(requests_file)
    fixture = [schedule.Plan("fixture", data.variants[0], ("manager-led",), ("all",), sample=4)]
    monkeypatch.setitem(schedule.DATASETS, "fixture", data)
    monkeypatch.setattr(schedule, "plans", lambda quick=False: fixture)
    monkeypatch.setattr(schedule, "_cuts", lambda *args: {})  # the fixture dataset has no dev part
    monkeypatch.setattr(catalogues, "ensure", lambda name, rebuild=False: tmp_path / "unused.db")

    def records(jobs: int) -> list[tuple]:
        out = tmp_path / f"jobs-{jobs}"
        schedule.run_all(catalogues, Tender, out, only={"fixture"}, progress=False, say=lambda text: None, jobs=jobs)
        rows = [json.loads(line) for f in (out / "records").glob("*.jsonl") for line in f.open()]
        return sorted((r["method"], r["id"], r["final"], r["ranked"]) for r in rows)

    one = records(1)
    assert len(one) == 4 * 4  # manager-led and the three baselines that apply, four requests each
    assert records(2) == one


def test_the_evaluation_answers_on_one_core_a_query_as_the_server_does(tmp_path):
    """Math libraries' own threads on top of the processes of --jobs oversubscribe the cores and count their
    spinning into every latency figure."""
    import subprocess
    import sys

    records = tmp_path / "records.jsonl"
    records.write_text("")
    probe = (
        "import sys; from click.testing import CliRunner; from threadpoolctl import threadpool_info;"
        "from tender.cli import main;"
        f"done = CliRunner().invoke(main, ['eval', '--compare', {str(records)!r}, {str(records)!r}]);"
        "print(sorted({p['num_threads'] for p in threadpool_info()}))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[1]"


def test_results_set_another_encoder_against_this_run_query_by_query_with_the_flat_searches_beside():
    from tender.evaluation.report import _encoders

    def run(f1: float, r5: float, flat: float) -> list[dict]:
        rows = []
        for i in range(4):
            base = {
                "dataset": "mcp-suite",
                "part": "test",
                "variant": "decomposed",
                "id": f"q{i}",
                "expect_nothing": False,
            }
            rows.append({**base, "method": "manager-led", "metrics": {"f1": f1, "r@5": r5}})
            rows.append({**base, "method": "hybrid", "metrics": {"f1": 0.1, "r@5": flat}})
        return rows

    lines = _encoders(run(0.5, 0.6, 0.55), {"embeddinggemma-300m": run(0.7, 0.9, 0.8)}, "all-MiniLM-L6-v2")
    row = next(line for line in lines if line.startswith("| embeddinggemma-300m | mcp-suite | test | decomposed"))
    assert "| 4 | 0.500 → 0.700" in row and "0.600 → 0.900" in row and row.endswith("| 0.550, 0.800 |")


def test_the_summary_table_has_a_heading_over_every_cell():
    from tender.evaluation.report import summary_table

    group = {
        "dataset": "d",
        "part": "dev",
        "variant": "v",
        "method": "m",
        "queries": 3,
        "errors": 0,
        "metrics": {"f1": 0.5, "candidates r": 1.0, "size": 2.0},
        "latency_ms": {"p50": 4.0},
    }
    head, rule, row = summary_table({"groups": [group]}).splitlines()
    cells = row.strip("|").split("|")
    assert len(head.strip("|").split("|")) == len(rule.strip("|").split("|")) == len(cells)
    names = [c.strip() for c in head.strip("|").split("|")]
    assert cells[names.index("cand. R")].strip() == "1.000"
    assert cells[names.index("errors")].strip() == "0"


def test_a_plan_is_scored_for_a_clearly_unrelated_item_and_for_a_dead_one_apart():
    query = Query(
        id="q",
        text="show hotels on a map",
        functions=(GoldFunction(need="map", acceptable=frozenset({1})),),
        irrelevant=frozenset({7}),
    )
    clean = metrics(query, Answer(final=[1], ranked=[1]))
    assert clean["clearly_wrong"] == 0.0 and clean["dead"] == 0.0
    dead = metrics(query, Answer(final=[1, 2], ranked=[1, 2], dead=[2]))
    assert dead["dead"] == 1.0 and dead["clearly_wrong"] == 0.0
    assert metrics(query, Answer(final=[1, 7], ranked=[1, 7]))["clearly_wrong"] == 1.0
