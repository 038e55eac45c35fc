"""The runs store on PostgreSQL, for several server replicas that must each explain every run: TENDER_RUNS set
to postgresql://user:password@host:port/database. The same table, rows and migrations as the SQLite file
(runs.py); psycopg 3 and its connection pool (the `postgres` extra).

Migrations are the SQLite ones by name (m001_runs, m002_catalog), recorded in `_tender_migrations` and applied
in one transaction under an advisory lock, so replicas starting at once migrate once. Each write is one
transaction on a pooled connection that is checked before use, so a restarted PostgreSQL costs no run.

Faults: a server that cannot be reached when the store opens is not given up: a run that cannot be written
raises RunNotStored (`keep` makes it a note on the plan, which is returned all the same), a read raises
RunsUnavailable, and the store migrates and serves as soon as the server answers again. A URL's password
never appears in a message or a log."""

import datetime
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tender.agents.plan import Run

from .runs import (
    COLUMNS,
    ENTRY_COLUMNS,
    LISTED_COLUMNS,
    CatalogRef,
    RunNotStored,
    RunsUnavailable,
    StoredRun,
    UnknownRun,
    cutoff,
    entry_of,
    listed,
    row_of,
    shown,
)

log = logging.getLogger(__name__)

EXTRA = "pip install 'tender-mcp[postgres]'"
# Connections a replica keeps: its runs are written from worker threads, a few at once.
POOL_SIZE = 8
# Seconds to wait for a connection (a server that is down answers a plan's save within this, with a note).
CONNECT_TIMEOUT_S = 5
MIGRATION_LOCK = 0x7E0DE5  # pg_advisory_xact_lock's key: one replica migrates at a time

# The SQLite migrations (runs.py), by the same names, in PostgreSQL's words: add one to both, never edit one.
MIGRATIONS: dict[str, list[str]] = {
    "m001_runs": [
        "create table runs (run_id text primary key, created_at text, requirement text, protocol text, "
        "organisation text, plan text, transcript text, api_ids text, latency_ms double precision, backends text)",
        "create index idx_runs_created_at on runs (created_at)",
    ],
    "m002_catalog": [
        "alter table runs add column catalog_path text",
        "alter table runs add column catalog_fingerprint text",
    ],
}


class DriverMissing(RunsUnavailable):
    def __init__(self, url: str, error: ImportError):
        super().__init__(
            shown(url),
            error,
            f"TENDER_RUNS names a PostgreSQL server, which needs psycopg 3 and psycopg_pool: {EXTRA}. "
            "Or set TENDER_RUNS to a file.",
        )


def _driver(url: str) -> tuple[Any, Any]:
    try:
        import psycopg
        import psycopg_pool
    except ImportError as error:
        raise DriverMissing(url, error) from None
    return psycopg, psycopg_pool


def _unreachable(url: str, error: Exception) -> RunsUnavailable:
    return RunsUnavailable(
        shown(url), error, "Check TENDER_RUNS (host, port, database, user and password) and that the server is up."
    )


class PostgresRunStore:
    """Read-write store of runs in a PostgreSQL database. Safe to share between threads and between processes on
    any number of machines. Raises UnknownRun for an id it does not hold, RunNotStored for a run it cannot write,
    RunsUnavailable for a read it cannot make, and DriverMissing (at once) without the `postgres` extra."""

    keeps_history = True

    def __init__(self, url: str, *, pool_size: int = POOL_SIZE, timeout_s: float = CONNECT_TIMEOUT_S):
        self.url = url
        self.path = shown(url)
        self._psycopg, pool = _driver(url)
        self._pool_timeout = pool.PoolTimeout
        self._errors = (self._psycopg.Error, pool.PoolTimeout, OSError)
        self._migrated = False
        self._lock = threading.Lock()
        try:
            self._pool = pool.ConnectionPool(
                url,
                min_size=1,
                max_size=pool_size,
                timeout=timeout_s,
                open=False,
                check=pool.ConnectionPool.check_connection,  # a connection the server dropped is replaced, not used
                kwargs={"connect_timeout": max(1, int(timeout_s))},
                name="tender-runs",
            )
        except self._psycopg.ProgrammingError as error:  # a URL psycopg cannot read
            raise _unreachable(url, error) from None
        self._pool.open(wait=False)

    def warm(self) -> None:
        """Connect and migrate now (a server does at start), logging, not raising, when the server cannot be
        reached: plans then say they were not stored, until it answers."""
        try:
            self._ready()
        except RunsUnavailable as error:
            log.warning("%s Plans say they were not stored until it answers.", error)

    def __repr__(self):
        return f"<PostgresRunStore {self.path}>"

    def _ready(self) -> None:
        """Apply the migrations this database has not seen, once per store (RunsUnavailable if it cannot)."""
        if self._migrated:
            return
        with self._lock:
            if self._migrated:
                return
            try:
                with self._pool.connection() as conn, conn.transaction():
                    conn.execute("select pg_advisory_xact_lock(%s)", [MIGRATION_LOCK])
                    conn.execute(
                        "create table if not exists _tender_migrations (name text primary key, applied_at text)"
                    )
                    done = {row[0] for row in conn.execute("select name from _tender_migrations")}
                    for name, statements in MIGRATIONS.items():
                        if name in done:
                            continue
                        for statement in statements:
                            conn.execute(statement)
                        conn.execute(
                            "insert into _tender_migrations (name, applied_at) values (%s, now()::text)", [name]
                        )
            except self._errors as error:
                cause = self._cause(error)
                raise _unreachable(self.url, cause) from cause
            self._migrated = True

    def applied(self) -> list[str]:
        """The names of the migrations applied to this database, in order."""
        with self._reading() as conn:
            return [row[0] for row in conn.execute("select name from _tender_migrations order by applied_at, name")]

    @contextmanager
    def _reading(self) -> Iterator[Any]:
        """A connection in a transaction, committed when the block ends; RunsUnavailable when the server cannot
        be reached or a statement fails."""
        self._ready()
        try:
            with self._pool.connection() as conn, conn.transaction():
                yield conn
        except self._errors as error:
            cause = self._cause(error)
            raise _unreachable(self.url, cause) from cause

    def _cause(self, error: Exception) -> Exception:
        """The server's own reason: the pool only says it waited, so a direct connection is tried for the cause
        (refused, no such database, a password refused)."""
        if isinstance(error, self._pool_timeout):
            try:
                self._psycopg.connect(self.url, connect_timeout=2).close()
            except self._psycopg.Error as direct:
                return direct
        return error

    def save(self, run: Run, catalog: CatalogRef | None = None) -> str:
        """Store one run, with the catalogue it was made on, in one transaction; returns its run_id."""
        row = row_of(run, catalog)
        names = ", ".join(COLUMNS)
        updates = ", ".join(f"{c} = excluded.{c}" for c in COLUMNS if c != "run_id")
        try:
            with self._reading() as conn:
                conn.execute(
                    f"insert into runs ({names}) values ({', '.join(['%s'] * len(COLUMNS))}) "
                    f"on conflict (run_id) do update set {updates}",
                    [_text(row[c]) for c in COLUMNS],
                )
        except RunsUnavailable as error:
            cause = error.__cause__
            raise RunNotStored(self.path, cause if isinstance(cause, Exception) else error) from error
        return run.plan.run_id

    def get(self, run_id: str) -> Run:
        return self.entry(run_id).run

    def entry(self, run_id: str) -> StoredRun:
        """The run with when it was stored and the catalogue it was made on; UnknownRun if there is none."""
        with self._reading() as conn:
            row = conn.execute(
                f"select {ENTRY_COLUMNS} from runs where run_id = %s", [_text(run_id.strip())]
            ).fetchone()
        if row is None:
            raise UnknownRun(run_id)
        return entry_of(row)

    def count(self) -> int:
        with self._reading() as conn:
            return conn.execute("select count(*) from runs").fetchone()[0]

    def recent(self, limit: int = 20) -> list[dict]:
        """The latest runs, newest first (see RunStore.recent)."""
        with self._reading() as conn:
            rows = conn.execute(
                f"select {LISTED_COLUMNS} from runs order by created_at desc, run_id desc limit %s", [limit]
            ).fetchall()
        return [listed(row) for row in rows]

    def delete(self, run_ids: list[str]) -> int:
        """Remove these runs in one transaction; UnknownRun (and nothing removed) if one is not stored."""
        wanted = list(dict.fromkeys(_text(r.strip()) for r in run_ids))
        with self._reading() as conn:
            for run_id in wanted:  # UnknownRun leaves the block by an exception: the transaction rolls back
                if conn.execute("delete from runs where run_id = %s", [run_id]).rowcount == 0:
                    raise UnknownRun(run_id)
        return len(wanted)

    def prune(self, older_than: datetime.timedelta, *, dry_run: bool = False) -> int:
        """Remove the runs stored more than `older_than` ago (only count them with dry_run); returns how many."""
        before = cutoff(older_than)
        with self._reading() as conn:
            if dry_run:
                return conn.execute("select count(*) from runs where created_at < %s", [before]).fetchone()[0]
            return conn.execute("delete from runs where created_at < %s", [before]).rowcount

    def close(self) -> None:
        self._pool.close()


def _text(value: Any) -> Any:
    """PostgreSQL's text holds no NUL character, which SQLite's does: one in a requirement is dropped."""
    return value.replace("\x00", "") if isinstance(value, str) else value
