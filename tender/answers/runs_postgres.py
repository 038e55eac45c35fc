"""The runs store on PostgreSQL, for several server replicas that must each explain every run: TENDER_RUNS set
to postgresql://user:password@host:port/database. The same table, rows and migrations as the SQLite file
(runs.py); psycopg 3 and its connection pool (the `postgres` extra).

Migrations are the SQLite ones by name (m001_runs, m002_catalog), recorded in `_tender_migrations` and applied
in one transaction under an advisory lock, so replicas starting at once migrate once. Each write is one
transaction on a pooled connection that is checked before use, so a restarted PostgreSQL costs no run.

Faults: a server that cannot be reached when the store opens is not given up: a run that cannot be written
raises RunNotStored (`keep` makes it a note on the plan, which is returned all the same), a read raises
RunsUnavailable, and the store migrates and serves as soon as the server answers again. A URL's password
never appears in a message or a log, and a URL libpq would read otherwise than written is refused unread.

Time: saving a run costs a plan at most SAVE_BUDGET_S (2 s), whatever the server does. Each transaction sets its
own `lock_timeout` and `statement_timeout` to what is left of that budget after waiting for a connection, so a
session holding a lock on the runs table, or a server too busy to answer, costs 2 s and a note, never the wait.
Those are the server's own timers: a server that stops answering altogether (frozen, swapped out, a link gone
silent) never fires them, and held every plan as long as it was silent (90 s frozen, plans waited 90.1 s). So
the client keeps its own deadline too: a connection still busy at the end of the budget (the pool's check of it
included) has its socket shut, libpq reads the end of the stream at once, and the save fails as a timeout. Over
TCP, keepalives and `tcp_user_timeout` also drop an idle pooled connection to a host that has gone away.
After a failure to reach the server or a timeout the store is not asked again for RETRY_S (5 s): meanwhile every
save fails at once with the same note, so an outage does not hold a request slot per plan; then one call tries
again, and saving resumes when the server answers. Reads (explain_bids, `tender runs list`) have the same budget;
`tender runs prune` and the migrations wait for locks as long, but not for their statements."""

import datetime
import logging
import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any

from tender.agents.plan import Run
from tender.settings import ENCODE, readable_runs_url

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
# The pool logs each failed connection, again and again while a server is down; the store says it once, itself.
logging.getLogger("psycopg.pool").setLevel(logging.ERROR)

EXTRA = "pip install 'tender-mcp[postgres]'"
# Connections a replica keeps: its runs are written from worker threads, a few at once.
POOL_SIZE = 8
# Seconds a save (or a read) may take in all: waiting for a connection, for locks and for its statements. Not fitted:
# the bound issue 49 set on what a lock or an outage may cost a plan.
SAVE_BUDGET_S = 2.0
# Seconds to wait for a connection, and libpq's connect_timeout (it counts whole seconds, 2 at least).
CONNECT_TIMEOUT_S = 2
# Seconds the store is not asked again after it could not be reached or did not answer in time. Chosen, not fitted:
# one plan in 5 s pays the 2 s probe (544-929 plans per 5 s measured during an outage, docs/faults.md) and saving
# resumes within 5-10 s of the server's return.
RETRY_S = 5.0
# libpq's TCP settings (ignored on a Unix socket), unless the URL sets its own: an idle connection is probed after
# 10 s and given up after 3 unanswered probes 5 s apart; data unacknowledged for 10 s drops the connection. They
# find a host that has gone away; the client's deadline (above) bounds a save whatever the link does.
TCP_SETTINGS = {
    "keepalives": 1,
    "keepalives_idle": 10,
    "keepalives_interval": 5,
    "keepalives_count": 3,
    "tcp_user_timeout": 10_000,
}
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
    if _timed_out(error):
        fix = (
            f"The server did not answer within {SAVE_BUDGET_S:g} s (a lock held on the runs table, a busy server, or "
            "one that has stopped answering)."
        )
    else:
        fix = "Check TENDER_RUNS (host, port, database, user and password) and that the server is up."
    return RunsUnavailable(shown(url), error, fix)


def _timed_out(error: Exception) -> bool:
    """A lock_timeout or statement_timeout (SQLSTATE 55P03, 57014), or the client's own deadline."""
    return isinstance(error, Silent) or getattr(error, "sqlstate", None) in ("55P03", "57014")


class Silent(TimeoutError):
    """The server did not answer by the client's deadline; its connection was cut."""

    def __init__(self, budget_s: float):
        super().__init__(f"the server did not answer within {budget_s:g} s")


class _Cutoff:
    """Shuts a connection's socket at `deadline` unless released first. libpq then reads the end of the stream and
    psycopg raises at once, however silent the server: a frozen server never fires its own statement_timeout. The
    socket is shut (not closed), so libpq's descriptor stays its own to close; the pool discards the connection."""

    def __init__(self, conn: Any, deadline: float):
        self.fired = False
        self._conn = conn
        self._lock = threading.Lock()
        self._timer = threading.Timer(max(0.0, deadline - time.monotonic()), self._cut)
        self._timer.daemon = True
        self._timer.start()

    def _cut(self) -> None:
        with self._lock:
            if self._conn is None:  # released: the connection may be another caller's by now
                return
            self.fired = True
            with suppress(Exception):  # a connection already closed has nothing left to cut
                with socket.socket(fileno=os.dup(self._conn.pgconn.socket)) as sock:
                    sock.shutdown(socket.SHUT_RDWR)

    def release(self) -> None:
        with self._lock:
            self._conn = None
        self._timer.cancel()


class PostgresRunStore:
    """Read-write store of runs in a PostgreSQL database. Safe to share between threads and between processes on
    any number of machines. Raises UnknownRun for an id it does not hold, RunNotStored for a run it cannot write,
    RunsUnavailable for a read it cannot make, and DriverMissing (at once) without the `postgres` extra."""

    keeps_history = True

    def __init__(self, url: str, *, pool_size: int = POOL_SIZE, timeout_s: float = CONNECT_TIMEOUT_S):
        self.url = url
        self.path = shown(url)
        if not readable_runs_url(url):  # libpq's own errors would quote pieces of the password
            raise RunsUnavailable(
                self.path, ValueError("a URL that cannot be read as written"), f"In TENDER_RUNS, {ENCODE}"
            )
        self._psycopg, pool = _driver(url)
        self._pool_timeout = pool.PoolTimeout
        self._errors = (self._psycopg.Error, OSError)
        self._outage = (self._psycopg.OperationalError, OSError)  # not reached, or not in time (PoolTimeout too)
        self._wait_s = min(timeout_s, SAVE_BUDGET_S)
        self._migrated = False
        self._lock = threading.Lock()
        self._failure: Exception | None = None  # why the server could not be used, until it can again
        self._retry_at = 0.0
        self._connect_error: Exception | None = None  # the last connection the pool could not make, and why
        self._call = threading.local()  # this thread's transaction: its deadline, and whether its check was cut
        self._check_connection = pool.ConnectionPool.check_connection
        try:
            self._pool = pool.ConnectionPool(
                url,
                connection_class=self._recording(),
                min_size=1,
                max_size=pool_size,
                timeout=self._wait_s,
                open=False,
                check=self._check,  # a connection the server dropped is replaced, not used
                kwargs={"connect_timeout": max(2, int(timeout_s))} | _tcp_settings(self._psycopg, url),
                # A connection that keeps failing is given up after RETRY_S (its retries back off to seconds apart),
                # and the next call asks for a new one at once: the store is used again soon after the server is.
                reconnect_timeout=RETRY_S,
                name="tender-runs",
            )
        except self._psycopg.ProgrammingError as error:  # a URL psycopg cannot read
            raise _unreachable(url, error) from None
        self._pool.open(wait=False)

    def _recording(self) -> type:
        """The pool's connection class, keeping the reason of the last connection it could not make (the pool itself
        only says it waited)."""
        store, connection = self, self._psycopg.Connection

        class Recording(connection):  # type: ignore[valid-type, misc]
            @classmethod
            def connect(cls, conninfo: str = "", **kwargs: Any) -> Any:
                try:
                    made = super().connect(conninfo, **kwargs)
                except Exception as error:
                    store._connect_error = error
                    raise
                store._connect_error = None
                return made

        return Recording

    def warm(self) -> None:
        """Connect and migrate now (a server does at start), logging, not raising, when the server cannot be
        reached: plans then say they were not stored, until it answers."""
        try:
            with self._transaction(None):
                pass
        except RunsUnavailable as error:
            log.warning("%s Plans say they were not stored until it answers.", error)

    def __repr__(self):
        return f"<PostgresRunStore {self.path}>"

    @contextmanager
    def _transaction(self, budget_s: float | None = SAVE_BUDGET_S) -> Iterator[Any]:
        """A connection in a transaction, committed when the block ends, within `budget_s` seconds in all (None: the
        statements are not timed, as a prune or a migration may take long; the waits for a connection and for locks
        are). RunsUnavailable when the server cannot be reached, does not answer in time or a statement fails; and
        at once, saying the same, for RETRY_S after the server could not be reached or did not answer in time."""
        waited_s = budget_s if budget_s is not None else self._wait_s + SAVE_BUDGET_S
        deadline = time.monotonic() + waited_s
        self._admit()
        self._call.deadline, self._call.waited_s, self._call.silent = deadline, waited_s, None
        timed = budget_s is not None
        try:
            if not self._migrated:
                self._migrate(deadline, cut=timed)
            with self._connection(deadline, timed=timed, cut=timed) as conn:
                yield conn
        except self._errors as error:
            cause = self._cause(error)
            if isinstance(error, self._outage):
                self._down(cause)
            raise _unreachable(self.url, cause) from cause
        self._failure = None

    @contextmanager
    def _connection(self, deadline: float, *, timed: bool, cut: bool) -> Iterator[Any]:
        """A pooled connection in a transaction whose waits (and, `timed`, statements) end by `deadline` on the
        server's clock, and (`cut`) on the client's: the connection is cut if the server has not answered by then."""
        left = deadline - time.monotonic()
        with (
            self._pool.connection(timeout=max(0.05, min(self._wait_s, left))) as conn,
            self._cut_at(conn, deadline if cut else None),
            conn.transaction(),
        ):
            left_ms = max(100, int((deadline - time.monotonic()) * 1000))
            lock_ms = min(left_ms - 50, int(SAVE_BUDGET_S * 1000))  # ends first: a lock waited for says so
            conn.execute(
                "select set_config('lock_timeout', %s, true), set_config('statement_timeout', %s, true)",
                [f"{lock_ms}ms", f"{left_ms}ms" if timed else "0"],
            )
            yield conn

    @contextmanager
    def _cut_at(self, conn: Any, deadline: float | None) -> Iterator[None]:
        """`conn` cut at `deadline` (None: never) if still waiting for the server; Silent raised if it was."""
        if deadline is None:
            yield
            return
        cutoff = _Cutoff(conn, deadline)
        try:
            yield
        except self._errors as error:
            if cutoff.fired:
                raise Silent(self._call.waited_s) from error
            raise
        finally:
            cutoff.release()

    def _check(self, conn: Any) -> None:
        """The pool's check of a connection before handing it out (an empty query), cut at the caller's deadline: a
        frozen server would hold it for ever. The pool tries another connection after a failed check, and then says
        only that it waited; the cut is remembered for `_cause` to tell."""
        try:
            with self._cut_at(conn, getattr(self._call, "deadline", None)):
                self._check_connection(conn)
        except Silent as silent:
            self._call.silent = silent
            raise

    def _admit(self) -> None:
        """Raise at once while the server is known not to answer; every RETRY_S one caller is let through to try."""
        with self._lock:
            if self._failure is None:
                return
            now = time.monotonic()
            if now < self._retry_at:
                raise _unreachable(self.url, self._failure) from self._failure
            self._retry_at = now + RETRY_S  # this caller tries; the others still fail at once meanwhile

    def _down(self, cause: Exception) -> None:
        with self._lock:
            self._failure, self._retry_at = cause, time.monotonic() + RETRY_S

    def _migrate(self, deadline: float, *, cut: bool) -> None:
        """Apply the migrations this database has not seen (threads starting at once queue on the advisory lock, and
        the later ones find them applied). Their statements are not timed by the server; `cut`: the client still
        cuts a connection the server leaves unanswered past `deadline` (a save's migrations)."""
        with self._connection(deadline, timed=False, cut=cut) as conn:
            conn.execute("select pg_advisory_xact_lock(%s)", [MIGRATION_LOCK])
            conn.execute("create table if not exists _tender_migrations (name text primary key, applied_at text)")
            done = {row[0] for row in conn.execute("select name from _tender_migrations")}
            for name, statements in MIGRATIONS.items():
                if name in done:
                    continue
                for statement in statements:
                    conn.execute(statement)
                conn.execute("insert into _tender_migrations (name, applied_at) values (%s, now()::text)", [name])
        self._migrated = True

    def applied(self) -> list[str]:
        """The names of the migrations applied to this database, in order."""
        with self._transaction() as conn:
            return [row[0] for row in conn.execute("select name from _tender_migrations order by applied_at, name")]

    def _cause(self, error: Exception) -> Exception:
        """The server's own reason: the pool only says it waited, so the last connection it could not make says why
        (refused, no such database, a password refused)."""
        if isinstance(error, self._pool_timeout):
            silent = getattr(self._call, "silent", None)
            if silent is not None:  # a pooled connection's check was cut: the server is there, and silent
                return silent
            if self._connect_error is not None:
                return self._connect_error
        return error

    def save(self, run: Run, catalog: CatalogRef | None = None) -> str:
        """Store one run, with the catalogue it was made on, in one transaction; returns its run_id."""
        row = row_of(run, catalog)
        names = ", ".join(COLUMNS)
        updates = ", ".join(f"{c} = excluded.{c}" for c in COLUMNS if c != "run_id")
        try:
            with self._transaction() as conn:
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
        with self._transaction() as conn:
            row = conn.execute(
                f"select {ENTRY_COLUMNS} from runs where run_id = %s", [_text(run_id.strip())]
            ).fetchone()
        if row is None:
            raise UnknownRun(run_id)
        return entry_of(row)

    def count(self) -> int:
        with self._transaction() as conn:
            return conn.execute("select count(*) from runs").fetchone()[0]

    def recent(self, limit: int = 20) -> list[dict]:
        """The latest runs, newest first (see RunStore.recent)."""
        with self._transaction() as conn:
            rows = conn.execute(
                f"select {LISTED_COLUMNS} from runs order by created_at desc, run_id desc limit %s", [limit]
            ).fetchall()
        return [listed(row) for row in rows]

    def delete(self, run_ids: list[str]) -> int:
        """Remove these runs in one transaction; UnknownRun (and nothing removed) if one is not stored."""
        wanted = list(dict.fromkeys(_text(r.strip()) for r in run_ids))
        with self._transaction(None) as conn:
            for run_id in wanted:  # UnknownRun leaves the block by an exception: the transaction rolls back
                if conn.execute("delete from runs where run_id = %s", [run_id]).rowcount == 0:
                    raise UnknownRun(run_id)
        return len(wanted)

    def prune(self, older_than: datetime.timedelta, *, dry_run: bool = False) -> int:
        """Remove the runs stored more than `older_than` ago (only count them with dry_run); returns how many."""
        before = cutoff(older_than)
        with self._transaction(None) as conn:
            if dry_run:
                return conn.execute("select count(*) from runs where created_at < %s", [before]).fetchone()[0]
            return conn.execute("delete from runs where created_at < %s", [before]).rowcount

    def close(self) -> None:
        self._pool.close()


def _tcp_settings(psycopg: Any, url: str) -> dict[str, Any]:
    """TCP_SETTINGS but those the URL sets itself."""
    try:
        given = psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError:  # the pool reports an unreadable URL itself
        given = {}
    return {name: value for name, value in TCP_SETTINGS.items() if name not in given}


def _text(value: Any) -> Any:
    """PostgreSQL's text holds no NUL character, which SQLite's does: one in a requirement is dropped."""
    return value.replace("\x00", "") if isinstance(value, str) else value
