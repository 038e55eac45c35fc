"""The evaluation figure: one F1 panel, best first, and the stages as a second figure."""

from tender.evaluation.report import plot


def result(**f1) -> dict:
    def stages(value, staged):
        return ({"category": {"f1": 0.02}, "bidding": {"f1": 0.3}} if staged else {}) | {"final": {"f1": value}}

    return {
        "config": {"test_mashups": 10, "seed": 0, "mask_api_names": False},
        "results": {m.replace("_", "-"): {"stages": stages(v, m == "manager_led")} for m, v in f1.items()},
    }


def test_the_plot_writes_the_f1_panel_and_the_stages_beside_it(tmp_path):
    plot(result(manager_led=0.65, baseline_knn=0.58, single_agent=0.66), tmp_path / "eval.png")
    assert (tmp_path / "eval.png").stat().st_size > 10_000
    assert (tmp_path / "eval-stages.png").stat().st_size > 10_000


def test_without_stage_results_there_is_no_stage_figure(tmp_path):
    plot(result(baseline_knn=0.58, single_agent=0.66), tmp_path / "eval.png")
    assert (tmp_path / "eval.png").exists() and not (tmp_path / "eval-stages.png").exists()
