"""The runs database: every plan the server returns, with the contract-net transcript behind it.

Separate from catalog.db, which the server only reads. SQLite in WAL mode, so readers never wait for
the writer and several server processes can share one file; each write is one transaction, and a
writer that finds the database locked waits for it (busy timeout) rather than losing its run.
The schema grows by append-only named migrations (sqlite-utils' `Migrations`, recorded in
`_sqlite_migrations`): add a new function at the end, never edit an applied one."""

import datetime
import json
import sqlite3
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import sqlite_utils
from sqlite_utils.migrations import Migrations

from tender.agents.messages import transcript_adapter
from tender.agents.plan import Plan, Run
from tender.catalog import TenderError

BUSY_TIMEOUT_MS = 30_000

migrations = Migrations("tender.runs")


@migrations()
def m001_runs(db: sqlite_utils.Database) -> None:
    db["runs"].create(
        {
            "run_id": str,
            "created_at": str,
            "requirement": str,
            "protocol": str,
            "organisation": str,
            "plan": str,
            "transcript": str,
            "api_ids": str,
            "latency_ms": float,
            "backends": str,
        },
        pk="run_id",
    )
    db["runs"].create_index(["created_at"])


def migrate(db: sqlite_utils.Database) -> None:
    """Apply the migrations this database has not seen. One transaction holding the write lock, so
    two processes opening a new file at once do not both create its tables."""
    with write_transaction(db):
        migrations.apply(db)


@contextmanager
def write_transaction(db: sqlite_utils.Database):
    """BEGIN IMMEDIATE takes SQLite's write lock up front: a second writer waits for it (busy timeout)
    instead of failing when it upgrades a read to a write. Commits on success, rolls back otherwise."""
    db.execute("begin immediate")
    try:
        yield db
    except BaseException:
        db.rollback()
        raise
    db.commit()


class UnknownRun(TenderError):
    def __init__(self, run_id: str):
        super().__init__(
            f"No run {run_id!r}. A run_id is the `run_id` field that recommend_apis (or compare_protocols) "
            "returned; pass it exactly as given."
        )
        self.run_id = run_id


def _enable_wal(conn: sqlite3.Connection) -> None:
    """Switching to WAL takes an exclusive lock and does not wait on the busy timeout, so processes that
    open a new runs.db at the same moment retry here, within the same time limit."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            conn.execute("pragma journal_mode = wal")
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


class RunStore:
    """Read-write store of runs. Safe to share between threads; writes from several processes queue
    on SQLite's lock. Raises UnknownRun for an id it does not hold."""

    def __init__(self, path: Path | str):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False)
        conn.execute(f"pragma busy_timeout = {BUSY_TIMEOUT_MS}")
        _enable_wal(conn)
        conn.execute("pragma synchronous = normal")
        self.db = sqlite_utils.Database(conn)
        self._lock = threading.Lock()
        with self._lock:
            migrate(self.db)

    def __repr__(self):
        return f"<RunStore {self.path}>"

    def save(self, run: Run) -> str:
        """Store one run in one transaction; returns its run_id."""
        plan = run.plan
        row = {
            "run_id": plan.run_id,
            "created_at": _now(),
            "requirement": plan.requirement,
            "protocol": plan.protocol,
            "organisation": plan.organisation,
            "plan": plan.model_dump_json(),
            "transcript": transcript_adapter.dump_json(run.transcript).decode(),
            "api_ids": json.dumps([api.api_id for api in plan.apis]),
            "latency_ms": plan.latency_ms,
            "backends": json.dumps(plan.backends),
        }
        with self._lock, write_transaction(self.db):
            self.db["runs"].insert(row, replace=True)
        return plan.run_id

    def get(self, run_id: str) -> Run:
        with self._lock:
            row = self.db.execute("select plan, transcript from runs where run_id = ?", [run_id.strip()]).fetchone()
        if row is None:
            raise UnknownRun(run_id)
        return Run(plan=Plan.model_validate_json(row[0]), transcript=transcript_adapter.validate_json(row[1]))

    def count(self) -> int:
        with self._lock:
            return self.db.execute("select count(*) from runs").fetchone()[0]

    def recent(self, limit: int = 20) -> list[dict]:
        """The latest runs, newest first: id, time, requirement, protocol and API ids."""
        with self._lock:
            rows = self.db.execute(
                "select run_id, created_at, requirement, protocol, organisation, api_ids from runs "
                "order by created_at desc, rowid desc limit ?", [limit],
            ).fetchall()
        keys = ("run_id", "created_at", "requirement", "protocol", "organisation", "api_ids")
        return [dict(zip(keys, row)) | {"api_ids": json.loads(row[5] or "[]")} for row in rows]

    def close(self) -> None:
        with self._lock:
            self.db.close()


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="microseconds")
