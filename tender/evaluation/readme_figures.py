"""The figures the README states about installing and starting Tender, measured again on this machine and dated:
the install's size, the demo and ProgrammableWeb builds (time and peak memory), and a warm plan's latency on the
demo catalogue. Writes docs/readme-figures.md, which the README's Install and Quick start sections quote.

    python -m tender.evaluation.readme_figures            # everything (about 10 minutes on 2 cores)
    python -m tender.evaluation.readme_figures --skip-install

Each build runs in a fresh TENDER_HOME with nothing to reuse, as a new user's first build does."""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "data"


def folder_size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())


def timed(command: list[str], env: dict[str, str]) -> tuple[float, int, str]:
    """(seconds, the command's peak resident memory in bytes, the last line it printed), by GNU time."""
    gnu_time = shutil.which("time", path="/usr/bin:/bin") or ""
    if not gnu_time:
        raise SystemExit("GNU time (/usr/bin/time) is needed to measure peak memory: apt install time")
    report = tempfile.NamedTemporaryFile(suffix=".time", delete=False)
    started = time.perf_counter()
    done = subprocess.run([gnu_time, "-f", "%M", "-o", report.name, *command], env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed: {done.stderr[-2000:]}")
    peak_kb = int(Path(report.name).read_text().split()[-1])
    Path(report.name).unlink()
    lines = [line for line in (done.stdout + done.stderr).strip().splitlines() if line.startswith("Built")]
    return seconds, peak_kb * 1024, lines[-1] if lines else ""


def install_size(work: Path) -> int:
    """A core install (no extras) into a fresh virtual environment: its size on disk."""
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", str(ROOT)], check=True)
    return folder_size(venv)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--skip-install", action="store_true", help="leave out the install's size")
    parser.add_argument("--requests", type=int, default=50, help="plans timed for the latency")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "readme-figures.md")
    args = parser.parse_args(argv)
    tender = str(Path(sys.executable).with_name("tender"))
    rows: list[tuple[str, str, str]] = []
    with tempfile.TemporaryDirectory(prefix="tender-readme-") as folder:
        work = Path(folder)
        if not args.skip_install:
            size = install_size(work)
            rows.append(
                (
                    "pipx install . (core, no extras): size on disk",
                    f"{size / 1e6:,.0f} MB",
                    "a fresh venv, pip install .",
                )
            )
        env = {k: v for k, v in os.environ.items() if not k.startswith(("TENDER_", "OPENAI_"))}
        env |= {"TENDER_HOME": str(work / "home"), "TENDER_DATA": str(SHARED / "programmableweb")}
        seconds, peak, said = timed([tender, "catalog", "build", "--demo", "--quiet"], env)
        items = re.search(r"Built \S+: (\d+) items", said)
        rows.append(
            (
                "tender catalog build --demo",
                f"{seconds:.0f} s, {peak / 2**30:.2f} GB peak",
                f"{items.group(1) if items else '?'} items",
            )
        )
        demo = work / "home" / "catalog.db"
        seconds, peak, said = timed([tender, "catalog", "build", "--quiet", "--db", str(work / "home" / "pw.db")], env)
        rows.append(
            (
                "tender catalog build (ProgrammableWeb)",
                f"{seconds:.0f} s, {peak / 2**30:.2f} GB peak",
                "940 APIs, 4,493 mashups",
            )
        )
        done = subprocess.run(
            [sys.executable, "-m", "tender.evaluation.bench", "--db", str(demo), "--requests", str(args.requests)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        manager = next((line for line in done.stdout.splitlines() if line.startswith("| manager-led")), "")
        cells = [c.strip() for c in manager.strip("|").split("|")]
        if len(cells) >= 4:
            rows.append(
                (
                    "a warm plan on the demo catalogue (manager-led)",
                    f"p50 {cells[2]} ms, p95 {cells[3]} ms",
                    f"{cells[1]} requests",
                )
            )
        shutil.rmtree(work / "home", ignore_errors=True)
    cores = os.cpu_count() or 1
    lines = [
        "# The README's figures, measured",
        "",
        f"Measured on {date.today().isoformat()} on {cores} cores by `python -m tender.evaluation.readme_figures`",
        "(generated: edit the script, not this file).",
        "",
        "| what | measured | on |",
        "|---|---:|---|",
        *(f"| {what} | {value} | {on} |" for what, value, on in rows),
        "",
    ]
    args.out.write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
