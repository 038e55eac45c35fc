"""The public-apis directory is read in time linear in its size: a hostile README cannot hold a build for minutes
(issue 56, row 6: a 3 KB heading line took 35 s, and separator lines and link cells grew as their square). The
hand-written readers say exactly what the patterns they replaced matched, which this file keeps as their
specification. Linear is tested without a clock (tests/guards.py): each hostile line is long enough that the
patterns' reading would run for 10 minutes or more, and is read in a process of its own under a guard of a minute."""

import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tender.catalog.sources.public_apis import heading, is_separator, link_of, parse
from tests.guards import ends_in_a_process_of_its_own

ROOT = Path(__file__).resolve().parent.parent
# What the directory's lines were read with before: the specification, and the backtracking that was the fault.
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
SEPARATOR = re.compile(r"^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
LINK = re.compile(r"^\[(?P<name>.+?)\]\(\s*(?P<link>[^)\s]+)\s*\)$")

READ = "import sys; from tender.catalog.sources.public_apis import parse; parse(sys.stdin.read(), 'probe')"
HEAD = "| API | Description | Auth | HTTPS | CORS |\n"
RULE = "|---|---|---|---|---|\n"
TABLE = (
    "### Weather\n"
    + HEAD
    + RULE
    + "".join(f"| [Api{i}](https://api{i}.example) | weather forecast {i} | No | Yes | Yes |\n" for i in range(3))
)


def test_the_readers_say_what_the_patterns_they_replaced_matched():
    rnd = random.Random(56)

    def line(alphabet: str, longest: int) -> str:
        return "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, longest)))

    for _ in range(20_000):
        text = line("# \t#a\u00a0", 12)
        found = HEADING.match(text)
        assert heading(text) == (found.group(1).strip() if found else None), repr(text)
        text = line("|-: \t-", 14)
        assert is_separator(text) == bool(SEPARATOR.match(text.strip())), repr(text)
        text = "[" * rnd.randint(0, 1) + line("[]() a)\t", 14) + ")" * rnd.randint(0, 1)
        found = LINK.match(text)
        assert link_of(text) == (found.group("name", "link") if found else None), repr(text)


@pytest.mark.parametrize(
    "shape, hostile",
    [
        # cubic before: 1,000 blanks inside a heading took 1.5 s, so these 10,000 about 25 minutes
        ("a heading line of blanks", "# a" + " " * 10_000 + "x\n" + TABLE),
        # quadratic before: 16,000 blanks took 1.2 s, so these 400,000 about 12 minutes
        ("a separator line of blanks", "### Weather\n" + HEAD + "|---" + " " * 400_000 + "x\n"),
        # quadratic before: 4,000 `](` took 0.6 s, so these 160,000 about 15 minutes
        ("a link cell of `](`", "### Weather\n" + HEAD + RULE + "| [a" + "](b" * 160_000 + " | d | No | Yes | Yes |\n"),
    ],
)
def test_a_hostile_line_is_read_in_time_linear_in_its_length(shape, hostile):
    ends_in_a_process_of_its_own(READ, hostile)


def test_an_api_listed_under_many_headings_is_one_item_of_each_in_order():
    text = (
        "".join(f"### C{i}\n{HEAD}{RULE}| [A](https://a.example) | d | No | Yes | Yes |\n" for i in range(2_000))
        + f"### C0\n{HEAD}{RULE}| [A](https://a.example) | d | No | Yes | Yes |\n"
    )
    apis, counts, _ = parse(text, "probe")
    assert len(apis) == 1 and apis[0].categories == [f"C{i}" for i in range(2_000)]
    assert counts["listed again"] == 2_000


def test_a_10_kb_heading_and_10_mb_of_separators_build(tmp_path):
    """The issue's target, whole: `tender catalog build --public-apis` of the probe's file (about 25 minutes before
    the fix; the guard, against hanging, is 2 minutes; how long it takes is the README figures script's to say)."""
    chunk = "| a |\n|---" + " " * 5_000 + "x\n"  # a line with a pipe, then one to try as its table's separator
    readme = tmp_path / "README.md"
    readme.write_text("# a" + " " * 10_000 + "x\n" + TABLE + "\n" + chunk * (10_000_000 // len(chunk) + 1))
    assert readme.stat().st_size > 10_000_000
    env = {"TENDER_HOME": str(tmp_path / "home"), "TENDER_EMBEDDING_MODEL": "hashing", "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "tender", "catalog", "build", "--public-apis", str(readme), "--quiet"]
    command += ["--db", str(tmp_path / "c.db")]
    try:
        built = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        pytest.fail("the build did not end within 120 s")
    assert built.returncode == 0, built.stderr
    assert "3 items" in built.stdout + built.stderr
