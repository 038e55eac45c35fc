"""Linear time, tested without a clock: the input is made long enough that a quadratic (or worse) reading would run
for many minutes, and read in a process of its own that is stopped at a guard of a minute. The guard is against
hanging, not a bound on speed: a linear reading of these inputs takes milliseconds, and a busy machine cannot make
it take a minute. A process of its own, since a regular expression backtracking in C cannot be interrupted in this
one. The figures themselves (how many milliseconds) are a benchmark's to measure, not a test's."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GUARD_S = 60


def ends_in_a_process_of_its_own(code: str, stdin: str, guard_s: float = GUARD_S) -> str:
    """Run `code` (Python, which reads `stdin` from sys.stdin) in a child process; fail the test if it has not
    ended within `guard_s`, or if it failed. Returns what it printed."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    try:
        done = subprocess.run(
            [sys.executable, "-c", code], input=stdin, env=env, capture_output=True, text=True, timeout=guard_s
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"reading it did not end within {guard_s:g} s: it is not linear in the input's length")
    assert done.returncode == 0, done.stderr
    return done.stdout
