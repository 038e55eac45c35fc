"""The reader's cache (TENDER_HOME/cache/reader) only saves time: whatever is wrong with the file, a plan is served
as from a cold cache, the fault is logged once, and a file that is not the cache is set aside and made again. Each
test damages a real cache file the way the fault probe of 2026-11-28 did (issue 56, row 3)."""

import logging
import os
import sqlite3
import stat
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import numpy as np
import pytest

from tender.agents.request import Request
from tender.agents.service import Tender
from tender.catalog import HashingEmbedder
from tender.ranking import reader as reader_module
from tender.ranking.reader import Reader
from tests.test_ranking_reader import Counting  # the reader's encoder, counting the documents it embeds

NEED = "weather forecast on a map"


def plan(catalog, cache: Path) -> tuple[list[str], Reader]:
    """The plan's APIs with a reader on this cache folder (a new process's reader)."""
    reader = Reader(Counting(), cache)
    apis = [a.name for a in Tender(catalog, reader=reader).recommend(Request.create(NEED)).plan.apis]
    return apis, reader


def cache_file(cache: Path) -> Path:
    (file,) = (cache / "reader").glob("*.db")
    return file


@pytest.fixture
def warm(catalog, tmp_path):
    """A cache folder a first plan filled, with the plan it gave."""
    cache = tmp_path / "cache"
    apis, reader = plan(catalog, cache)
    reader.close()
    assert apis and cache_file(cache).stat().st_size > 0
    return cache, apis


def damage(file: Path, how: str) -> None:
    if how == "garbage":
        file.write_bytes(os.urandom(50_000))
    elif how == "truncated":
        with closing(sqlite3.connect(file)) as db:
            db.execute("pragma wal_checkpoint(truncate)")
        data = file.read_bytes()
        file.write_bytes(data[: len(data) // 2])
    elif how == "other schema":
        with closing(sqlite3.connect(file)) as db:
            db.execute("drop table vectors")
            db.execute("create table vectors (id integer primary key, embedding text)")
            db.commit()
    elif how == "empty":
        file.write_bytes(b"")
    for suffix in ("-wal", "-shm"):
        Path(f"{file}{suffix}").unlink(missing_ok=True)


@pytest.mark.parametrize("how", ["garbage", "truncated", "other schema"])
def test_a_cache_file_that_is_not_the_cache_is_set_aside_made_again_and_the_plan_served(catalog, warm, how, caplog):
    cache, cold_plan = warm
    damage(cache_file(cache), how)

    with caplog.at_level(logging.WARNING, logger="tender.reader"):
        apis, reader = plan(catalog, cache)
        reader.close()
        again, later = plan(catalog, cache)
        later.close()

    assert apis == cold_plan == again
    assert reader.embedder.documents > 0  # read afresh, as on a cold start
    assert later.embedder.documents == 0  # the cache made again keeps what the plan read
    warnings = [r.getMessage() for r in caplog.records if r.name == "tender.reader"]
    assert len(warnings) == 1 and "set aside" in warnings[0], warnings
    assert (cache / "reader" / (cache_file(cache).name + ".broken")).is_file()


@pytest.mark.parametrize("blob", ["wrong size", "nan", "inf"])
def test_stored_vectors_of_the_wrong_size_or_not_finite_are_read_again_never_a_users_invalid_request(
    catalog, warm, blob, caplog
):
    cache, cold_plan = warm
    bad = {
        "wrong size": np.zeros(10, np.float32),
        "nan": np.full(64, np.nan, np.float32),
        "inf": np.full(64, np.inf, np.float32),
    }[blob]
    with closing(sqlite3.connect(cache_file(cache))) as db:
        db.execute("update vectors set vector = ?", (bad.tobytes(),))
        db.commit()

    with caplog.at_level(logging.WARNING, logger="tender.reader"):
        apis, reader = plan(catalog, cache)
        reader.close()
    again, later = plan(catalog, cache)

    assert apis == cold_plan == again
    assert reader.embedder.documents > 0 and later.embedder.documents == 0  # replaced in the file
    warnings = [r.getMessage() for r in caplog.records if r.name == "tender.reader"]
    assert len(warnings) == 1 and "read again and replaced" in warnings[0]


HOLD = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], timeout=0)
db.execute("pragma locking_mode=exclusive")
db.execute("begin exclusive")
db.execute("delete from vectors where 0")
print("held", flush=True)
sys.stdin.read()
"""


def test_a_lock_another_process_holds_costs_a_plan_half_a_second_not_every_plan(catalog, warm, caplog, monkeypatch):
    """The file is tried once, waiting for the lock at most BUSY_S (half a second; it was 10 s, then a failed plan),
    and then left alone: the next plans do not try it again (for RETRY_S), so none of them waits on it."""
    cache, cold_plan = warm
    waits: list[float] = []  # the busy timeout of each attempt to open the cache file
    connect = sqlite3.connect

    def spy(database, *args, **kwargs):
        if str(database) == str(cache_file(cache)):
            waits.append(kwargs.get("timeout", 5.0))  # sqlite3's own default: 5 s
        return connect(database, *args, **kwargs)

    with subprocess.Popen(
        [sys.executable, "-c", HOLD, str(cache_file(cache))], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    ) as holder:
        try:
            assert holder.stdout is not None and holder.stdout.readline() == "held\n"
            monkeypatch.setattr(reader_module.sqlite3, "connect", spy)
            with caplog.at_level(logging.WARNING, logger="tender.reader"):
                apis, reader = plan(catalog, cache)
                tender = Tender(catalog, reader=reader)
                more = [tender.recommend(Request.create(NEED)).plan.apis for _ in range(3)]
                reader.close()
        finally:
            holder.kill()
    assert apis == cold_plan and all(more)
    assert waits == [reader_module.BUSY_S] and reader_module.BUSY_S <= 0.5  # once, for half a second at most
    warnings = [r.getMessage() for r in caplog.records if r.name == "tender.reader"]
    assert len(warnings) == 1 and "database is locked" in warnings[0] and "tried again every 60 s" in warnings[0]
    assert cache_file(cache).stat().st_size > 0  # a locked file is not the cache's fault: kept as it is


def test_the_cache_is_0600_in_folders_made_0700(tmp_path):
    previous = os.umask(0o022)  # the common default, under which a new file is 0644 unless its maker says otherwise
    try:
        Reader(HashingEmbedder(64), tmp_path / "home" / "cache").close()
    finally:
        os.umask(previous)
    file = cache_file(tmp_path / "home" / "cache")
    modes = {path: stat.S_IMODE(path.stat().st_mode) for path in (file, file.parent, file.parent.parent)}
    assert list(modes.values()) == [0o600, 0o700, 0o700]


# -- a full or read-only file system: a tmpfs mounted for the test (root only; skipped elsewhere) -----------------


@pytest.fixture
def tmpfs(tmp_path):
    """Mount a small tmpfs at a fresh folder: `mount(options)`; unmounted afterwards."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    where = tmp_path / "fs"
    where.mkdir()
    mounted = []

    def mount(options: str) -> Path:
        command = ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)] if not mounted else None
        command = command or ["mount", "-o", f"remount,{options}", str(where)]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
        mounted.append(where)
        return where

    yield mount
    if mounted and subprocess.run(["umount", str(where)], capture_output=True).returncode != 0:
        subprocess.run(["umount", "-l", str(where)], check=False)  # a file still open: detached, freed once closed


def test_a_full_file_system_serves_the_plan_and_says_so_once(catalog, warm, tmpfs, caplog):
    _, cold_plan = warm
    full = tmpfs("size=64k")
    with caplog.at_level(logging.WARNING, logger="tender.reader"):
        first, reader = plan(catalog, full / "cache")
        tender = Tender(catalog, reader=reader)
        again = [a.name for a in tender.recommend(Request.create(NEED)).plan.apis]
        reader.close()
    assert first == cold_plan == again
    warnings = [r.getMessage() for r in caplog.records if r.name == "tender.reader"]
    assert len(warnings) == 1 and "full" in warnings[0], warnings


def test_a_read_only_file_system_is_read_as_it_is(catalog, tmpfs, caplog):
    fs = tmpfs("size=8m")
    cold_plan, reader = plan(catalog, fs / "cache")
    reader.close()
    tmpfs("ro")
    with caplog.at_level(logging.WARNING, logger="tender.reader"):
        apis, reader = plan(catalog, fs / "cache")
        fresh, other = plan(catalog, fs / "other-cache")  # no file yet, and none can be made
        reader.close()
    assert apis == cold_plan == fresh
    assert reader.embedder.documents == 0  # what the file holds is still read
    assert other.embedder.documents > 0
    warnings = [r.getMessage() for r in caplog.records if r.name == "tender.reader"]
    assert len(warnings) == 2 and "read as it is" in warnings[0] and "Read-only file system" in warnings[1]
