"""Paired comparison of two evaluation runs: the same queries answered by A and by B, the per-query differences
of F1, R@5 and NDCG@5 with a paired bootstrap 95% interval, and the queries won and lost.

A change is kept only where the interval on the dev part lies above zero: per-query F1 varies by about 0.3, so a
mean over a few hundred queries moves by a few hundredths by chance alone."""

from dataclasses import dataclass

import numpy as np

METRICS = ("f1", "r@5", "ndcg@5")
# A judged suite's too, where both runs have them: its functions covered, and every one covered.
SUITE_METRICS = ("recall", "all_covered")
RESAMPLES = 2000


@dataclass(frozen=True)
class Difference:
    metric: str
    a: float
    b: float
    delta: float  # mean of B - A
    low: float
    high: float
    won: int  # queries where B beats A
    lost: int

    @property
    def verdict(self) -> str:
        if self.low > 0:
            return "B better"
        if self.high < 0:
            return "B worse"
        return "no difference shown"


def bootstrap(deltas: np.ndarray, resamples: int = RESAMPLES, seed: int = 0) -> tuple[float, float]:
    """The 95% percentile interval of the mean of `deltas`, resampling queries with replacement."""
    if len(deltas) == 0:
        return 0.0, 0.0
    rng = np.random.default_rng(seed)
    means = deltas[rng.integers(0, len(deltas), size=(resamples, len(deltas)))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return float(low), float(high)


def paired(a: list[dict], b: list[dict]) -> list[tuple[dict, dict]]:
    """Records of the same query in both runs (by dataset, part, variant and id), queries that expect nothing
    left out."""
    index = {(r["dataset"], r["part"], r["variant"], r["id"]): r for r in b if not r["expect_nothing"]}
    return [
        (r, index[key])
        for r in a
        if not r["expect_nothing"] and (key := (r["dataset"], r["part"], r["variant"], r["id"])) in index
    ]


def compare(a: list[dict], b: list[dict], metrics: tuple[str, ...] | None = None) -> list[Difference]:
    """Each metric's paired difference: METRICS, and SUITE_METRICS where every paired record has them."""
    pairs = paired(a, b)
    if metrics is None:
        held = [m for m in SUITE_METRICS if pairs and all(m in x["metrics"] and m in y["metrics"] for x, y in pairs)]
        metrics = METRICS + tuple(held)
    out = []
    for name in metrics:
        x = np.array([ra["metrics"].get(name, 0.0) for ra, _ in pairs])
        y = np.array([rb["metrics"].get(name, 0.0) for _, rb in pairs])
        deltas = y - x
        low, high = bootstrap(deltas)
        out.append(
            Difference(
                metric=name,
                a=float(x.mean()) if len(x) else 0.0,
                b=float(y.mean()) if len(y) else 0.0,
                delta=float(deltas.mean()) if len(deltas) else 0.0,
                low=low,
                high=high,
                won=int((deltas > 1e-9).sum()),
                lost=int((deltas < -1e-9).sum()),
            )
        )
    return out


def groups(records: list[dict], method: str | None = None) -> dict[tuple[str, str, str, str], list[dict]]:
    """Records by (dataset, part, variant, method), of one method where given."""
    out: dict[tuple[str, str, str, str], list[dict]] = {}
    for r in records:
        if method is None or r["method"] == method:
            out.setdefault((r["dataset"], r["part"], r["variant"], r["method"]), []).append(r)
    return out


def abstentions(a: list[dict], b: list[dict]) -> tuple[int, int, int] | None:
    """(A's, B's abstentions, queries) on the queries both answered that expect nothing; None where there are none."""
    index = {(r["dataset"], r["part"], r["variant"], r["id"]): r for r in b if r["expect_nothing"]}
    pairs = [
        (r, index[k])
        for r in a
        if r["expect_nothing"] and (k := (r["dataset"], r["part"], r["variant"], r["id"])) in index
    ]
    if not pairs:
        return None
    return (
        sum(int(x["metrics"].get("abstained", 0)) for x, _ in pairs),
        sum(int(y["metrics"].get("abstained", 0)) for _, y in pairs),
        len(pairs),
    )


def report(a: list[dict], b: list[dict], method_a: str | None = None, method_b: str | None = None) -> str:
    """A table per group found in both runs. With methods named, A's `method_a` against B's `method_b` (B may be
    the same run); otherwise each method against itself."""
    lines = []
    ga, gb = groups(a, method_a), groups(b, method_b)
    for key, rows_a in ga.items():
        partner = (*key[:3], method_b or key[3])
        if partner not in gb:
            continue
        pairs = paired(rows_a, gb[partner])
        title = f"{' | '.join(key[:3])}: {key[3]} (A) vs {partner[3]} (B), {len(pairs)} queries"
        lines += [
            title,
            "",
            "| metric | A | B | B - A | 95% interval | won | lost | verdict |",
            "|---|---:|---:|---:|---|---:|---:|---|",
        ]
        for d in compare(rows_a, gb[partner]):
            lines.append(
                f"| {d.metric} | {d.a:.3f} | {d.b:.3f} | {d.delta:+.3f} | [{d.low:+.3f}, {d.high:+.3f}] | {d.won} | "
                f"{d.lost} | {d.verdict} |"
            )
        nothing = abstentions(rows_a, gb[partner])
        if nothing:
            lines.append(f"Nothing fits, answered empty: A {nothing[0]}, B {nothing[1]} of {nothing[2]}.")
        lines.append("")
    return "\n".join(lines) if lines else "No query is in both runs (same dataset, part, variant and method)."
