"""The evaluation's tables: one for a run (`tender eval`), and docs/results.md for `tender eval --all`, made from the
summary it wrote and nothing else."""

from collections.abc import Sequence
from pathlib import Path

from .datasets import DATASETS
from .targets import TARGETS, check

# Tobisawa and Murakami, Table I: final-set F1 of each protocol with gpt-oss-20b on ProgrammableWeb mashups.
PAPER_F1 = {"manager-led": 0.193, "contractor-led": 0.049, "collaborative": 0.114, "single-agent": 0.130}
# R2API (IEEE TSE 51(9), 2025), its README's fold 1: P@5, R@5, MAP@5, NDCG@5, R@10, NDCG@10
R2API_FOLD_1 = (0.202, 0.709, 0.725, 0.682, 0.759, 0.701)
R2API_COLUMNS = ("p@5", "r@5", "map@5", "ndcg@5", "r@10", "ndcg@10")
COLUMNS = (
    ("f1", "F1"),
    ("precision", "P"),
    ("recall", "R"),
    ("r@5", "R@5"),
    ("ndcg@5", "NDCG@5"),
    ("p@1", "P@1"),
    ("candidates r", "cand. R"),
)


def _fmt(value) -> str:
    return "–" if value is None else f"{value:.3f}"


def summary_table(summary: dict) -> str:
    """Every group of a run: its means, latency and errors."""
    # The header is made from COLUMNS, as the cells are, so that a column added there cannot shift the rest.
    head = ["queries", *(name for _, name in COLUMNS), "items", "p50 ms", "errors"]
    lines = [
        "| dataset | part | variant | method | " + " | ".join(head) + " |",
        "|---|---|---|---|" + "---:|" * len(head),
    ]
    for g in summary["groups"]:
        m = g["metrics"]
        cells = " | ".join(_fmt(m.get(k)) for k, _ in COLUMNS)
        lines.append(
            f"| {g['dataset']} | {g['part']} | {g['variant']} | {g['method']} | {g['queries']} | {cells} | "
            f"{m.get('size', 0):.2f} | {g['latency_ms']['p50']:.0f} | {g['errors']} |"
        )
    return "\n".join(lines)


def _groups(summary: dict, dataset: str) -> dict[str, list[dict]]:
    by_variant: dict[str, list[dict]] = {}
    for g in summary["groups"]:
        if g["dataset"] == dataset:
            by_variant.setdefault(g["variant"], []).append(g)
    return by_variant


def _dataset_section(summary: dict, dataset: str) -> list[str]:
    data = DATASETS[dataset]
    lines = [f"### {dataset}", "", f"{data.summary[0].upper()}{data.summary[1:]}.", ""]
    suite = dataset.endswith("-suite")
    for variant, groups in _groups(summary, dataset).items():
        parts = sorted({g["part"] for g in groups})
        queries = max(g["queries"] for g in groups)
        lines += [f"**{variant}** ({'/'.join(parts)} part, {queries} queries)", ""]
        extra = ["all covered", "clearly wrong", "dead item", "abstained"] if suite else []
        servers = any("servers_share" in g["metrics"] for g in groups)
        extra += ["servers"] if servers else []
        head = [name for _, name in COLUMNS] + extra + ["items", "p50 ms"]
        lines += ["| method | " + " | ".join(head) + " |", "|---|" + "---:|" * len(head)]
        for g in groups:
            m = g["metrics"]
            cells = [_fmt(m.get(k)) for k, _ in COLUMNS]
            if suite:
                cells += [_fmt(m.get(k)) for k in ("all_covered", "clearly_wrong", "dead", "abstained")]
            if servers:
                cells.append(_fmt(m.get("servers_share")))
            cells += [f"{m.get('size', 0):.2f}", f"{g['latency_ms']['p50']:.0f}"]
            lines.append(f"| {g['method']} | " + " | ".join(cells) + " |")
        lines.append("")
    return lines


def _r2api_section(summary: dict) -> list[str]:
    if not _groups(summary, "r2api"):
        return []
    lines = [
        "### r2api",
        "",
        "The R2API paper's ten folds (each fold's mashups hidden from the catalogue; nothing fitted on them), "
        "ranking metrics as R2API's metric.py computes them, beside the only fold the paper reports (fold 1).",
        "",
    ]
    for variant, groups in _groups(summary, "r2api").items():
        lines += [f"**{variant}**", "", "| method | fold | " + " | ".join(c.upper() for c in R2API_COLUMNS) + " | F1 |"]
        lines.append("|---|---|" + "---:|" * (len(R2API_COLUMNS) + 1))
        for g in sorted(groups, key=lambda g: (g["method"], int(g["part"].split("-")[1]))):
            m = g["metrics"]
            lines.append(
                f"| {g['method']} | {g['part']} | "
                + " | ".join(_fmt(m.get(c)) for c in R2API_COLUMNS)
                + f" | {_fmt(m.get('f1'))} |"
            )
        lines.append("| R2API (paper) | fold-1 | " + " | ".join(f"{v:.3f}" for v in R2API_FOLD_1) + " | – |")
        lines.append("")
    return lines


def _reliability(summary: dict) -> list[str]:
    lines = [
        "## How far a score can be taken at its word",
        "",
        "For the default protocol, the items of the final sets by the score the plan gave them, and the share of "
        "them that were right (a score reads as a probability where the two are near).",
        "",
        "| dataset | variant | score | items | right |",
        "|---|---|---|---:|---:|",
    ]
    for g in summary["groups"]:
        if g["method"] != "manager-led" or g["dataset"] == "r2api":
            continue
        for band in g["reliability"]:
            lines.append(
                f"| {g['dataset']} | {g['variant']} | {band['band']} | {band['items']} | {band['right']:.3f} |"
            )
    return lines + [""]


def _words(summary: dict) -> list[str]:
    w = summary.get("words")
    if not w:
        return []
    lines = [
        '## "Likely" on a kind of catalogue the calibration never saw',
        "",
        f"Candidates of each source's {w['part']} part (need-level, no usage history) that the words call likely, and "
        'the share of them that serve the need, with the calibration and the bar for "likely" fitted on the dev '
        "parts of every other source, as if this kind had never been seen; the eval-only sets (every request, never "
        "fitted on) with both fitted on every dev source. At 0.6 is what a calibrated kind is told; the bar is what "
        'a plan on a kind its model\'s calibration never saw says "likely" from (`python -m tender.training.words`).',
        "",
        "| source | held out | candidates | bar | likely at 0.6 | right | likely at the bar | right |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for row in (r for r in w["rows"] if r["candidates"]):  # a source read with history has no cold candidates
        high, bar = row["at_high"], row["at_bar"]
        lines.append(
            f"| {row['source']} | {'yes' if row['held_out'] else 'never seen'} | {row['candidates']} | "
            f"{row['bar']:.2f} | {high['called']} | {_fmt(high['right'])} | {bar['called']} | {_fmt(bar['right'])} |"
        )
    return lines + [""]


def _targets(summary: dict) -> list[str]:
    lines = ["## Targets", "", "| target | measured | met |", "|---|---|---|"]
    for target in TARGETS:
        measured, met = check(target, summary)
        lines.append(f"| {target.text} | {measured} | {'yes' if met else 'no' if met is False else '–'} |")
    return lines + [
        "",
        "Why the targets missed are beyond this design, measured on dev parts, and what would reach them: "
        "[tuning.md](tuning.md#where-this-design-stops).",
        "",
    ]


def _decomposition(summary: dict) -> list[str]:
    d = summary.get("decomposition")
    if not d:
        return []
    return [
        "### decomposition",
        "",
        f"The embedded decomposition on the decomposition suite's test part ({d['cases']} requirements written with "
        "their gold needs before any answer was seen; the matching rule is in tender/evaluation/decomposition.py):",
        "",
        "| need-level P | R | F1 | requirements read exactly | needs dropped silently |",
        "|---:|---:|---:|---:|---:|",
        f"| {d['precision']:.3f} | {d['recall']:.3f} | {d['f1']:.3f} | {d['exact']:.3f} | {d['dropped_needs']} |",
        "",
        "What decomposition costs a plan is in each suite's table: the function coverage (R) of `decomposed` against "
        "`gold needs given`.",
        "",
    ]


def _against(records: list[dict], before: list[dict], label: str) -> list[str]:
    """The default protocol against an earlier version's, query by query: the paired bootstrap intervals."""
    from .compare import compare, groups

    lines = [
        f"## Against {label}",
        "",
        "Manager-led, the same test queries answered by this version (B) and by the rule cascade it replaces (A), "
        "with paired bootstrap 95% intervals of B - A.",
        "",
        "| dataset | part | variant | queries | F1 A → B (interval) | R@5 A → B (interval) |",
        "|---|---|---|---:|---|---|",
    ]
    new = groups(records, "manager-led")
    for key, old in groups(before, "manager-led").items():
        if key not in new:
            continue
        f1, r5, _ = compare(old, new[key])
        count = len({r["id"] for r in old} & {r["id"] for r in new[key]})
        lines.append(
            f"| {key[0]} | {key[1]} | {key[2]} | {count} | {f1.a:.3f} → {f1.b:.3f} [{f1.low:+.3f}, {f1.high:+.3f}] | "
            f"{r5.a:.3f} → {r5.b:.3f} [{r5.low:+.3f}, {r5.high:+.3f}] |"
        )
    return lines + [""]


def _encoders(records: list[dict], encoders: dict[str, list[dict]], stock: str) -> list[str]:
    """Tender with each other encoder against this run's, on the test parts both measured: manager-led paired
    with bootstrap 95% intervals, each encoder's best flat search (dense or hybrid, by R@5) beside it."""
    from .compare import compare, groups, paired

    lines = [
        "## Encoders",
        "",
        f"Manager-led with another encoder (B) against {stock} (A), the same test queries, paired bootstrap 95% "
        "intervals of B - A; each encoder's best flat search (dense or hybrid) by R@5 beside. Made from another "
        "`tender eval --all` run with the encoder set (`--encoder NAME=FOLDER`); docs/tuning.md says how each "
        "encoder's ranking model was fitted.",
        "",
        "| encoder | dataset | part | variant | queries | F1 A → B (interval) | R@5 A → B (interval) | best flat R@5 A, B |",
        "|---|---|---|---|---:|---|---|---|",
    ]
    mine = groups(records, "manager-led")

    def best_flat(run: list[dict]) -> dict[tuple, float]:
        """Each (dataset, part, variant)'s best flat R@5 in the run."""
        best: dict[tuple, float] = {}
        for key, rows in groups(run).items():
            if key[3] in ("dense", "hybrid") and rows:
                r5 = sum(r["metrics"].get("r@5", 0.0) for r in rows) / len(rows)
                best[key[:3]] = max(r5, best.get(key[:3], r5))
        return best

    flat_mine = best_flat(records)
    for name, theirs in encoders.items():
        flat_theirs = best_flat(theirs)
        for key, rows in groups(theirs, "manager-led").items():
            if key not in mine:
                continue
            f1, r5, _ = compare(mine[key], rows)
            count = len(paired(mine[key], rows))
            lines.append(
                f"| {name} | {key[0]} | {key[1]} | {key[2]} | {count} | {f1.a:.3f} → {f1.b:.3f} "
                f"[{f1.low:+.3f}, {f1.high:+.3f}] | {r5.a:.3f} → {r5.b:.3f} [{r5.low:+.3f}, {r5.high:+.3f}] | "
                f"{flat_mine.get(key[:3], float('nan')):.3f}, {flat_theirs.get(key[:3], float('nan')):.3f} |"
            )
    return lines + [""]


def write_results(
    summary: dict,
    path: Path,
    records: Sequence[dict] = (),
    before: Sequence[dict] = (),
    encoders: dict[str, list[dict]] | None = None,
) -> None:
    stamp = summary["stamp"]
    runs = stamp.get("runs", [stamp])
    made = (
        f"in {stamp['seconds'] / 60:.1f} minutes on 2 cores"
        if len(runs) == 1
        else f"in {len(runs)} runs of some datasets each ({stamp['seconds'] / 60:.1f} minutes in all on 2 cores)"
    )
    lines = [
        "# Results",
        "",
        f"Made by `tender eval --all` (`make eval`) on {stamp['date']} at commit {stamp['commit'] or '?'}, {made}, "
        f"with {stamp['encoder']} and no LLM. Every figure is from a test part (tender/evaluation/splits): nothing "
        "was fitted or chosen on it. Each table puts the flat baselines beside the protocols, scored the same way on "
        "the same queries; a baseline keeps its first k items, k fitted on the dataset's dev part. Metrics: "
        "[evaluation.md](evaluation.md); what was chosen and how: [tuning.md](tuning.md).",
        "",
        *_targets(summary),
        "## Datasets",
        "",
    ]
    for name in DATASETS:
        if name == "r2api":
            lines += _r2api_section(summary)
        elif any(g["dataset"] == name for g in summary["groups"]):
            lines += _dataset_section(summary, name)
    lines += _decomposition(summary)
    if records and encoders:
        lines += _encoders(list(records), encoders, stamp["encoder"])
    lines += _reliability(summary)
    lines += _words(summary)
    if records and before:
        lines += _against(list(records), list(before), "the rule cascade (tag pre-ranking: 3fe9934's ranking)")
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text("\n".join(lines))
