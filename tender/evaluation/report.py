"""The evaluation's Markdown tables and figure."""

from pathlib import Path

PAPER = {  # Table I (P, R, F1 of the final stage) and Table II (tokens a request) of the seed paper
    "manager-led": ((0.159, 0.298, 0.193), 12_560),
    "contractor-led": ((0.034, 0.116, 0.049), 2_952_364),
    "collaborative": ((0.083, 0.223, 0.114), 594_240),
    "single-agent": ((0.137, 0.141, 0.130), 42_904),
}


def markdown(result: dict) -> str:
    results = result["results"]
    lines = ["| method | stage | precision | recall | F1 | paper F1 (final) |", "|---|---|---:|---:|---:|---:|"]
    for method, r in results.items():
        for stage, s in r["stages"].items():
            paper = f"{PAPER[method][0][2]:.3f}" if stage == "final" and method in PAPER else ""
            lines.append(f"| {method} | {stage} | {s['precision']:.3f} | {s['recall']:.3f} | {s['f1']:.3f} | {paper} |")
    lines += ["", "| method | avg APIs | P@1 | R@5 | NDCG@5 | NDCG@10 | tokens in/out | paper tokens | contractors | messages | p50 ms | p95 ms |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for method, r in results.items():
        k = r["ranking"]
        paper = f"{PAPER[method][1]:,}" if method in PAPER else ""
        lines.append(
            f"| {method} | {r['avg_apis']:.2f} | {k['p@1']:.3f} | {k['r@5']:.3f} | {k['ndcg@5']:.3f} | {k['ndcg@10']:.3f} | "
            f"{r['tokens']['input']:,}/{r['tokens']['output']:,} | {paper} | {r['contractors_contacted']:.1f} | "
            f"{r['messages']:.1f} | {r['latency_ms']['p50']:.1f} | {r['latency_ms']['p95']:.1f} |")
    llm = {m: r["llm"] for m, r in results.items() if r.get("llm", {}).get("calls") or r.get("llm", {}).get("fallbacks")}
    if llm:  # only when an LLM took part: how much of each run it answered
        lines += ["", "| method | LLM calls a request | of them from the cache | steps fallen back to embedded |",
                  "|---|---:|---:|---:|"]
        lines += [f"| {m} | {v['calls']:.1f} | {v['cache_hits']:.1f} | {v['fallbacks']:.1f} |" for m, v in llm.items()]
    return "\n".join(lines)


def plot(result: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    results = result["results"]
    methods = list(results)
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5), sharey=True)
    for ax, metric in zip(axes, ("precision", "recall", "f1")):
        width = 0.27
        for i, stage in enumerate(("category", "bidding", "final")):
            values = [results[m]["stages"].get(stage, {}).get(metric, 0.0) for m in methods]
            ax.bar([x + (i - 1) * width for x in range(len(methods))], values, width, label=stage)
        ax.set_xticks(range(len(methods)), [m.replace("baseline-", "b:") for m in methods], rotation=35, ha="right")
        ax.set_title(metric.upper() if metric == "f1" else metric.capitalize())
        ax.grid(axis="y", alpha=0.3)
    axes[0].legend(title="stage")
    config = result["config"]
    fig.suptitle(f"Tender on {config['test_mashups']} held-out mashups (seed {config['seed']}"
                 f"{', API names masked' if config['mask_api_names'] else ''})")
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
