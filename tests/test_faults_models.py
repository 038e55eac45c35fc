"""`tender models pull` under the faults the probe of 2026-11-28 found (issue 56, row 10): a pull killed with -9, two
pulls at once, a full disk, a server trickling a byte at a time. The fake endpoint of test_models_pull.py serves a
tiny model; the faults are real (a process killed, a tmpfs filled, a socket trickling)."""

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tender.catalog import models
from tender.catalog.models import PullInProgress, pull, verify
from tests.test_models_pull import FILES, encoders, home, hub, tender  # noqa: F401 (hub, home: fixtures)

ROOT = Path(__file__).resolve().parent.parent
WEIGHTS = "model.safetensors"  # the largest file: 10,240 bytes

# A pull in its own process, with the tiny table in place of the real one (what the `home` fixture does here).
PULL = """
import sys
from pathlib import Path
from tender.catalog import models
from tests.test_models_pull import entry
models.KNOWN = {"tiny-encoder": entry("tiny-encoder")}
models.pull("tiny-encoder", Path(sys.argv[1]), sys.argv[2])
"""


def pull_process(home: Path, url: str, **kwargs) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(ROOT), NO_PROXY="*")
    return subprocess.Popen(
        [sys.executable, "-c", PULL, str(home), url], env=env, stderr=subprocess.PIPE, text=True, **kwargs
    )


def wait_for(condition, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def half_written(home: Path) -> list[Path]:
    return list((encoders(home) / "tiny-encoder.partial").glob(f"{WEIGHTS}.*.download"))


def test_a_pull_killed_with_minus_9_is_gone_on_from_and_its_leftover_never_lands_in_the_model(home, hub):
    hub.trickle[WEIGHTS] = 0.001  # 10 s for the file: time to kill the pull in the middle of it
    killed = pull_process(home, hub.url)
    try:
        wait_for(lambda: any(f.stat().st_size > 1_000 for f in half_written(home)))
    finally:
        killed.send_signal(signal.SIGKILL)
        killed.communicate()
    (leftover,) = half_written(home)
    kept = leftover.stat().st_size

    del hub.trickle[WEIGHTS]
    hub.ranges = []
    folder = pull("tiny-encoder", home, hub.url)

    assert (WEIGHTS, f"bytes={kept}-") in hub.ranges  # asked only for the bytes it lacked
    files = sorted(str(f.relative_to(folder)) for f in folder.rglob("*") if f.is_file())
    assert files == sorted(FILES)  # exactly the model's files: no *.download
    assert verify("tiny-encoder", home) == []


def test_verify_names_a_file_that_is_not_the_models_and_a_pull_clears_it(home, hub):
    folder = pull("tiny-encoder", home, hub.url)
    stray = folder / f"{WEIGHTS}.4242.download"  # what the code before moved into the folder after a kill -9
    stray.write_bytes(b"x" * 1_800)

    result = tender("verify", "tiny-encoder")
    assert result.exit_code == 1
    assert f"{WEIGHTS}.4242.download: not a file of tiny-encoder (1,800 bytes)" in result.stdout

    hub.requests = []
    pull("tiny-encoder", home, hub.url)  # mends it: the stray goes, nothing is fetched again
    assert not stray.exists() and hub.requests == [] and verify("tiny-encoder", home) == []


def test_bytes_left_that_are_not_the_files_start_are_fetched_again_whole(home, hub):
    partial = encoders(home) / "tiny-encoder.partial"
    partial.mkdir(parents=True)
    (partial / f"{WEIGHTS}.99999.download").write_bytes(b"not the file's start")

    pull("tiny-encoder", home, hub.url)

    assert verify("tiny-encoder", home) == []
    assert [r for p, r in hub.ranges if p == WEIGHTS] == ["bytes=20-", None]  # went on, did not match, started over


def test_a_second_pull_at_once_is_refused_in_one_line_and_the_first_completes(home, hub):
    hub.trickle[WEIGHTS] = 0.0002  # 2 s for the file
    first: list[object] = []
    running = threading.Thread(target=lambda: first.append(pull("tiny-encoder", home, hub.url)))
    running.start()
    wait_for(lambda: half_written(home))

    second = tender("pull", "tiny-encoder", "--quiet")
    running.join()

    assert second.exit_code == 1 and second.output.count("\n") == 1, second.output
    assert "Another `tender models pull tiny-encoder` is running" in second.output
    assert first == [encoders(home) / "tiny-encoder"] and verify("tiny-encoder", home) == []
    with pytest.raises(PullInProgress):  # the lock is the kernel's: any second holder is refused
        with models.pull_lock(encoders(home), "tiny-encoder"):
            pull("tiny-encoder", home, hub.url)


def test_remove_waits_for_no_pull_it_is_refused_while_one_runs(home, hub):
    hub.trickle[WEIGHTS] = 0.0002
    running = threading.Thread(target=lambda: pull("tiny-encoder", home, hub.url))
    running.start()
    wait_for(lambda: half_written(home))
    removed = tender("remove", "tiny-encoder")
    running.join()
    assert removed.exit_code == 1 and "is running" in removed.output
    assert verify("tiny-encoder", home) == []


def test_a_trickling_server_is_stopped_in_one_line_and_the_next_pull_goes_on(home, hub, monkeypatch):
    monkeypatch.setattr(models, "WINDOW_S", 1.0)
    monkeypatch.setattr(models, "MIN_RATE", 1_000)
    hub.trickle[WEIGHTS] = 0.01  # 100 bytes a second: 100 s for the file, and for ever at the real file's size

    cut = tender("pull", "tiny-encoder", "--quiet")

    # Stopped by the rate it measured (under MIN_RATE over a window), not by the file's end: the line says so.
    assert cut.exit_code == 1 and cut.output.count("\n") == 1, cut.output
    assert f"{WEIGHTS} of tiny-encoder came from" in cut.output and "(under 1,000)" in cut.output
    assert "goes on from the bytes it has" in cut.output
    (kept,) = half_written(home)
    have = kept.stat().st_size
    assert have < 10_240  # part of the file: the pull did not wait for the rest

    del hub.trickle[WEIGHTS]
    pull("tiny-encoder", home, hub.url)
    assert (WEIGHTS, f"bytes={have}-") in hub.ranges and verify("tiny-encoder", home) == []


# -- a full disk --------------------------------------------------------------------------------------------------


FSIZE = """
import resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (5_000, 5_000))
from tender.catalog import models
from tests.test_models_pull import entry
models.KNOWN = {"tiny-encoder": entry("tiny-encoder")}
from tender.cli import main
main(["models", "pull", "tiny-encoder", "--quiet"])
"""


def test_a_write_the_file_system_refuses_is_one_line(home, hub):
    """No file may pass 5,000 bytes (RLIMIT_FSIZE): the weights' write fails as on a quota, with no root needed."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), NO_PROXY="*", TENDER_HOME=str(home), TENDER_HF_ENDPOINT=hub.url)
    done = subprocess.run([sys.executable, "-c", FSIZE], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("Error: Could not write "), done.stderr
    assert "File too large" in done.stderr and "goes on from what it has" in done.stderr
    assert not (encoders(home) / "tiny-encoder").exists()


@pytest.fixture
def tmpfs(tmp_path):
    """A small tmpfs mounted for the test (root only; skipped elsewhere), unmounted afterwards."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    where = tmp_path / "fs"
    where.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=32k", "tmpfs", str(where)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    yield where
    if subprocess.run(["umount", str(where)], capture_output=True).returncode != 0:
        subprocess.run(["umount", "-l", str(where)], check=False)


def test_a_disk_too_small_is_said_before_anything_is_fetched(home, hub, tmpfs, monkeypatch):
    monkeypatch.setenv("TENDER_HOME", str(tmpfs / "home"))
    (tmpfs / "filler").write_bytes(b"\0" * 24_000)
    result = tender("pull", "tiny-encoder", "--quiet")
    assert result.exit_code == 1 and result.output.count("\n") == 1, result.output
    assert "No room for tiny-encoder: it needs 10,307 bytes more in" in result.output and "free" in result.output
    assert hub.requests == []


def test_a_disk_that_fills_during_the_pull_is_one_line(home, hub, tmpfs, monkeypatch):
    def fill():  # another program takes the space while the weights are on their way
        with open(tmpfs / "filler", "wb") as out:
            try:
                out.write(b"\0" * 64_000)
            except OSError:
                pass

    monkeypatch.setenv("TENDER_HOME", str(tmpfs / "home"))
    hub.before[WEIGHTS] = fill
    result = tender("pull", "tiny-encoder", "--quiet")
    assert result.exit_code == 1 and result.output.count("\n") == 1, result.output
    assert "No room for tiny-encoder" in result.output and "goes on from what it has" in result.output
