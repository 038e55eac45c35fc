"""The evaluation's Markdown tables and figure."""

from pathlib import Path

PAPER = {  # Table I (P, R, F1 of the final stage) and Table II (tokens a request) of the seed paper
    "manager-led": ((0.159, 0.298, 0.193), 12_560),
    "contractor-led": ((0.034, 0.116, 0.049), 2_952_364),
    "collaborative": ((0.083, 0.223, 0.114), 594_240),
    "single-agent": ((0.137, 0.141, 0.130), 42_904),
}

# R2API (IEEE TSE 51(9), 2025), its README's fold 1: P@5, R@5, MAP@5, NDCG@5, R@10, NDCG@10
R2API_FOLD_1 = (0.202, 0.709, 0.725, 0.682, 0.759, 0.701)


def markdown(result: dict) -> str:
    results = result["results"]
    lines = ["| method | stage | precision | recall | F1 | paper F1 (final) |", "|---|---|---:|---:|---:|---:|"]
    for method, r in results.items():
        for stage, s in r["stages"].items():
            paper = f"{PAPER[method][0][2]:.3f}" if stage == "final" and method in PAPER else ""
            lines.append(f"| {method} | {stage} | {s['precision']:.3f} | {s['recall']:.3f} | {s['f1']:.3f} | {paper} |")
    lines += [
        "",
        "| method | avg APIs | P@1 | R@5 | NDCG@5 | NDCG@10 | tokens in/out | paper tokens | contractors | messages | p50 ms | p95 ms |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for method, r in results.items():
        k = r["ranking"]
        paper = f"{PAPER[method][1]:,}" if method in PAPER else ""
        lines.append(
            f"| {method} | {r['avg_apis']:.2f} | {k['p@1']:.3f} | {k['r@5']:.3f} | {k['ndcg@5']:.3f} | {k['ndcg@10']:.3f} | "
            f"{r['tokens']['input']:,}/{r['tokens']['output']:,} | {paper} | {r['contractors_contacted']:.1f} | "
            f"{r['messages']:.1f} | {r['latency_ms']['p50']:.1f} | {r['latency_ms']['p95']:.1f} |"
        )
    bands = {m: r.get("calibration") for m, r in results.items() if r.get("calibration")}
    if bands:  # how often a recommended API was right, by the confidence the plan gave it
        lines += ["", "| method | confidence | APIs recommended | share right |", "|---|---|---:|---:|"]
        lines += [
            f"| {m} | {b['confidence']} | {b['apis']} | {b['right']:.3f} |" for m, bs in bands.items() for b in bs
        ]
    if result.get("config", {}).get("r2api_fold"):  # the R2API paper's metrics, beside its fold-1 figures
        lines += ["", "| method | P@5 | R@5 | MAP@5 | NDCG@5 | R@10 | NDCG@10 |", "|---|---:|---:|---:|---:|---:|---:|"]
        for method, r in results.items():
            k = r["ranking"]
            lines.append(
                f"| {method} | {k['p@5']:.3f} | {k['r@5']:.3f} | {k.get('map@5', 0):.3f} | {k['ndcg@5']:.3f} | "
                f"{k['r@10']:.3f} | {k['ndcg@10']:.3f} |"
            )
        lines.append("| R2API (paper, fold 1) | " + " | ".join(f"{v:.3f}" for v in R2API_FOLD_1) + " |")
    llm = {
        m: r["llm"] for m, r in results.items() if r.get("llm", {}).get("calls") or r.get("llm", {}).get("fallbacks")
    }
    if llm:  # only when an LLM took part: how much of each run it answered
        lines += [
            "",
            "| method | LLM calls a request | of them from the cache | repairs | tidied | steps fallen back "
            "to embedded | runs the LLM answered alone | their final F1 |",
            "|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for m, v in llm.items():
            own = v.get("llm_only", {})
            f1 = own.get("stages", {}).get("final", {}).get("f1")
            lines.append(
                f"| {m} | {v['calls']:.1f} | {v['cache_hits']:.1f} | {v.get('repairs', 0):.1f} | "
                f"{v.get('tidied', 0):.1f} | {v['fallbacks']:.1f} | {own.get('runs', 0)} | "
                f"{'-' if f1 is None else f'{f1:.3f}'} |"
            )
    return "\n".join(lines)


BASELINES = ("baseline-popularity", "baseline-embedding", "baseline-knn")


def plot(result: dict, path: Path) -> None:
    """One panel: final-set F1 per method, best first, its value on each bar; the baselines in grey, the
    seed paper's F1 for the same protocol as a black tick. With stage results (category, bidding), a second
    figure beside `path` (name-stages.png) shows F1 per stage."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    results = result["results"]
    f1 = {m: r["stages"].get("final", {}).get("f1", 0.0) for m, r in results.items()}
    methods = sorted(f1, key=lambda m: -f1[m])
    fig, ax = plt.subplots(figsize=(9, 4.8))
    colours = ["#9e9e9e" if m in BASELINES else "#3b6ea8" for m in methods]
    bars = ax.bar(range(len(methods)), [f1[m] for m in methods], 0.62, color=colours)
    ax.bar_label(bars, labels=[f"{f1[m]:.3f}" for m in methods], padding=3, fontsize=9)
    for x, m in enumerate(methods):
        if m in PAPER:
            ax.hlines(PAPER[m][0][2], x - 0.36, x + 0.36, colors="black", linewidth=2.2)
            # On the bar, just above the tick: beside it, the text would run into the next bar.
            ax.annotate(
                f"{PAPER[m][0][2]:.3f}",
                (x, PAPER[m][0][2]),
                xytext=(0, 4),
                textcoords="offset points",
                ha="center",
                va="bottom",
                fontsize=8,
                color="white",
                fontweight="bold",
            )
    ax.set_xticks(range(len(methods)), [m.replace("baseline-", "baseline:\n") for m in methods], fontsize=9)
    ax.set_ylabel("F1 of the final API set")
    ax.set_ylim(0, max(1.0, max(f1.values()) * 1.15))
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    ax.spines[["top", "right"]].set_visible(False)
    config = result["config"]
    ax.set_title(
        f"Tender on {config['test_mashups']} held-out mashups (seed {config['seed']}"
        f"{', API names masked' if config['mask_api_names'] else ''}), best first",
        fontsize=11,
    )
    legend = [
        Patch(color="#3b6ea8", label="Tender protocol"),
        Patch(color="#9e9e9e", label="baseline"),
        Line2D([], [], color="black", linewidth=2.2, label="paper (Tobisawa & Murakami), same protocol"),
    ]
    # Above the plot area, so that it never covers a bar.
    ax.legend(handles=legend, loc="lower center", bbox_to_anchor=(0.5, 1.08), ncol=3, frameon=False, fontsize=9)
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    staged = [m for m in methods if len(results[m]["stages"]) > 1]
    if staged:
        _plot_stages(result, staged, Path(path).with_name(Path(path).stem + "-stages.png"))


def _plot_stages(result: dict, methods: list[str], path: Path) -> None:
    """F1 at each stage (all APIs of the mapped categories, all proposed, final) for the protocols."""
    import matplotlib.pyplot as plt

    results = result["results"]
    stages = ("category", "bidding", "final")
    fig, ax = plt.subplots(figsize=(8, 4.4))
    width = 0.26
    for i, stage in enumerate(stages):
        values = [results[m]["stages"].get(stage, {}).get("f1", 0.0) for m in methods]
        bars = ax.bar(
            [x + (i - 1) * width for x in range(len(methods))],
            values,
            width,
            label=stage,
            color=("#c7d9ee", "#7fa6d3", "#3b6ea8")[i],
        )
        ax.bar_label(bars, labels=[f"{v:.2f}" for v in values], padding=2, fontsize=8)
    ax.set_xticks(range(len(methods)), methods)
    ax.set_ylabel("F1")
    ax.set_ylim(0, 1.0)
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    ax.spines[["top", "right"]].set_visible(False)
    ax.set_title("F1 at each stage: mapped categories, bids, final set", fontsize=11)
    ax.legend(title="stage", loc="lower center", bbox_to_anchor=(0.5, 1.1), ncol=3, frameon=False, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
