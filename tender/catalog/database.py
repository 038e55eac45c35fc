"""Opening Tender's SQLite files, in one place: a catalogue read-only, and the files several processes write
at once (the runs database, the LLM response cache) in WAL mode with a busy timeout, so that a writer waits
for the lock rather than failing.

What Tender writes is its user's alone: requirements and plans, LLM prompts and replies, the catalogue of the
user's own tools. Files it creates are 0600 (SQLite gives a database's -wal and -shm files the database's
mode), in folders it creates 0700; files and folders that exist are left as their owner set them."""

import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

BUSY_TIMEOUT_MS = 30_000
PRIVATE_FILE = 0o600
PRIVATE_FOLDER = 0o700


def private_folder(path: Path | str) -> None:
    """Make the folder and each missing parent 0700 (`mkdir(parents=True)` makes the parents 0755)."""
    path = Path(path)
    missing = [folder for folder in (path, *path.parents) if not folder.exists()]
    for folder in reversed(missing):
        folder.mkdir(mode=PRIVATE_FOLDER, exist_ok=True)


def private_file(path: Path | str) -> None:
    """Create the file empty (0600) in a private folder, unless it exists: before SQLite creates it 0644."""
    private_folder(Path(path).parent)
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT, PRIVATE_FILE))


def connect_read_only(path: Path | str, *, check_same_thread: bool = True) -> sqlite3.Connection:
    """The file as it is, never written to (nor created when it is missing)."""
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=check_same_thread)


def connect_shared(path: Path | str, busy_timeout_ms: int = BUSY_TIMEOUT_MS) -> sqlite3.Connection:
    """A connection, usable from any thread, to a file that other processes may write at the same time: its
    folder made if need be, WAL mode (readers never wait for the writer), a busy timeout, and commits that are
    durable at checkpoints rather than at each transaction. Raises sqlite3.Error or OSError."""
    private_file(path)
    conn = sqlite3.connect(path, timeout=busy_timeout_ms / 1000, check_same_thread=False)
    try:
        conn.execute(f"pragma busy_timeout = {busy_timeout_ms}")
        _enable_wal(conn, busy_timeout_ms)
        conn.execute("pragma synchronous = normal")
    except BaseException:
        conn.close()
        raise
    return conn


def _enable_wal(conn: sqlite3.Connection, busy_timeout_ms: int) -> None:
    """Switching to WAL takes an exclusive lock and does not wait on the busy timeout, so processes that
    open a new file at the same moment retry here, within the same time limit."""
    deadline = time.monotonic() + busy_timeout_ms / 1000
    while True:
        try:
            conn.execute("pragma journal_mode = wal")
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


@contextmanager
def write_transaction(conn) -> Iterator[None]:
    """BEGIN IMMEDIATE takes SQLite's write lock up front: a second writer waits for it (busy timeout)
    instead of failing when it upgrades a read to a write. Commits on success, rolls back otherwise.
    `conn` is a sqlite3.Connection or a sqlite_utils.Database."""
    conn.execute("begin immediate")
    try:
        yield
    except BaseException:
        conn.rollback()
        raise
    conn.commit()


def file_identity(path: Path | str) -> tuple[int, int] | None:
    """(device, inode) of the file now at `path`, None if there is none: a connection whose file's identity
    changed is writing into a file that was deleted or replaced."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_dev, stat.st_ino
