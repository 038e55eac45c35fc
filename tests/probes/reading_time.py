"""Probe (issues 49 and 56): how long the public-apis directory's reader and a sampling answer's reader take on the
hostile inputs the tests read under a guard (tests/test_faults_public_apis.py, tests/test_server_sampling.py), at a
length and at twice and four times it. The figures the tests no longer assert: milliseconds, and about twice as
long for twice the input (linear).

    python -m tests.probes.reading_time [--repeat 3]"""

import argparse
import time

from tender.catalog.sources.public_apis import parse
from tender.server import sampling

HEAD = "| API | Description | Auth | HTTPS | CORS |\n"
RULE = "|---|---|---|---|---|\n"
SHAPES = {
    "public-apis: a heading line of n blanks": lambda n: "# a" + " " * n + "x\n",
    "public-apis: a separator line of n blanks": lambda n: "### W\n" + HEAD + "|---" + " " * n + "x\n",
    "public-apis: a link cell of n/3 `](`": lambda n: "### W\n" + HEAD + RULE + "| [a" + "](b" * (n // 3) + " | d |\n",
    "sampling: n newlines": lambda n: "\n" * n,
    "sampling: n `[`": lambda n: "[" * n,
    "sampling: n digits": lambda n: "1" * n,
}


def read(shape: str, text: str) -> None:
    if shape.startswith("public-apis"):
        parse(text, "probe")
        return
    try:
        sampling.parse_needs(text)
    except sampling.Unusable:
        pass


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3, help="the best of this many reads is shown")
    parser.add_argument("--length", type=int, default=400_000)
    args = parser.parse_args(argv)
    sampling.MAX_ANSWER_CHARS = 10**9  # the limit on an answer's length lifted: the reading itself is timed
    for shape, make in SHAPES.items():
        times = []
        for n in (args.length, 2 * args.length, 4 * args.length):
            text = make(n)
            best = float("inf")
            for _ in range(args.repeat):
                started = time.perf_counter()
                read(shape, text)
                best = min(best, time.perf_counter() - started)
            times.append(best)
        growth = " ".join(f"x{later / max(earlier, 1e-9):.1f}" for earlier, later in zip(times, times[1:]))
        shown = ", ".join(f"{t * 1000:.1f} ms" for t in times)
        print(f"{shape} (n = {args.length:,}, twice, four times): {shown}; each doubling {growth}")


if __name__ == "__main__":
    main()
