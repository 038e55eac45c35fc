"""The runs database: every plan the server returns, with the contract-net transcript behind it.

Separate from catalog.db, which the server only reads. Where it lives is TENDER_RUNS: a file (SQLite, the
default, this module) or a PostgreSQL URL (runs_postgres.py, for replicas that share one store); `open_store`
picks by the location, and everything above the store is the same code. The SQLite file is in WAL mode, so
readers never wait for the writer and several server processes can share one file; each write is one
transaction, and a writer that finds the database locked waits for it (busy timeout) rather than losing its run.
The schema grows by append-only named migrations (sqlite-utils' `Migrations`, recorded in
`_sqlite_migrations`; PostgreSQL has the same ones by name): add a new one at the end of both, never edit an
applied one.

Faults: a run that cannot be written (read-only file, full disk) raises RunNotStored, and `keep` turns that
into a note on the plan, which is returned all the same. A runs.db deleted or replaced while open is noticed
by its identity (device and inode) before each use and opened anew, rather than written into a file nobody
will read again. A runs path that cannot be opened at all raises RunsUnavailable; the server then serves
without history (NoHistory) and says so."""

import datetime
import json
import logging
import sqlite3
import threading
from pathlib import Path
from typing import Protocol

import sqlite_utils
from pydantic import BaseModel, Field
from sqlite_utils.migrations import Migrations

from tender.agents.messages import transcript_adapter
from tender.agents.plan import Plan, Run
from tender.catalog import Catalog, TenderError
from tender.catalog.database import connect_shared, file_identity, write_transaction
from tender.errors import InputToFix
from tender.safety import echo, redact
from tender.settings import RUNS_URL_SCHEMES

log = logging.getLogger(__name__)

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


@migrations()
def m002_catalog(db: sqlite_utils.Database) -> None:
    """The catalogue a run was made on (path and fingerprint): its ids mean something only in that catalogue.
    Runs stored before have none."""
    db["runs"].add_column("catalog_path", str)
    db["runs"].add_column("catalog_fingerprint", str)


def migrate(db: sqlite_utils.Database) -> None:
    """Apply the migrations this database has not seen. One transaction holding the write lock, so
    two processes opening a new file at once do not both create its tables."""
    with write_transaction(db):
        migrations.apply(db)


class UnknownRun(InputToFix):
    def __init__(self, run_id: str):
        super().__init__(
            f"No run {echo(run_id)}. A run_id is the `run_id` field that recommend_apis (or compare_protocols) "
            "returned; pass it exactly as given."
        )
        self.run_id = run_id


class CatalogRef(BaseModel):
    """The catalogue a run was made on: where it was, and its fingerprint then (catalog/summary.py)."""

    path: str
    fingerprint: str

    @classmethod
    def of(cls, catalog: Catalog) -> "CatalogRef":
        return cls(path=str(catalog.path.resolve()), fingerprint=catalog.fingerprint)


class StoredRun(BaseModel):
    run: Run
    created_at: str
    catalog: CatalogRef | None = Field(None, description="None for a run stored before runs recorded it.")


class RunsUnavailable(TenderError):
    def __init__(
        self,
        path: Path | str,
        error: Exception,
        fix: str = "Set TENDER_RUNS to a writable file, or fix the folder's permissions.",
    ):
        super().__init__(f"Cannot open the runs database {path} ({reason_of(error)}). {fix}")
        self.path = path


class RunNotStored(TenderError):
    def __init__(self, path: Path | str, error: BaseException):
        super().__init__(
            f"This plan could not be stored in {path} ({reason_of(error)}), so explain_bids (`tender explain`) will not "
            "find its run_id."
        )
        self.path = path


def reason_of(error: BaseException) -> str:
    if isinstance(error, OSError) and error.strerror:
        return f"{error.strerror.lower()}: {error.filename}" if error.filename else error.strerror.lower()
    # A PostgreSQL server's own message, without the statement it quotes after it ("LINE 1: insert into runs ...")
    primary = getattr(getattr(error, "diag", None), "message_primary", None)
    return redact(" ".join(str(primary or error).split())) or type(error).__name__


# The stored row of a run, and back: the same columns in every store.
COLUMNS = (
    "run_id",
    "created_at",
    "requirement",
    "protocol",
    "organisation",
    "plan",
    "transcript",
    "api_ids",
    "latency_ms",
    "backends",
    "catalog_path",
    "catalog_fingerprint",
)
ENTRY_COLUMNS = "plan, transcript, created_at, catalog_path, catalog_fingerprint"
LISTED_COLUMNS = "run_id, created_at, requirement, protocol, organisation, api_ids, catalog_path, catalog_fingerprint"


def row_of(run: Run, catalog: CatalogRef | None) -> dict:
    """The run as one row of the runs table (COLUMNS), stamped with the time now."""
    plan = run.plan
    return {
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
        "catalog_path": catalog.path if catalog else None,
        "catalog_fingerprint": catalog.fingerprint if catalog else None,
    }


def entry_of(row) -> StoredRun:
    """A StoredRun from the ENTRY_COLUMNS of a row."""
    return StoredRun(
        run=Run(plan=Plan.model_validate_json(row[0]), transcript=transcript_adapter.validate_json(row[1])),
        created_at=row[2],
        catalog=CatalogRef(path=row[3], fingerprint=row[4]) if row[3] else None,
    )


def listed(row) -> dict:
    """What `recent` gives of one row of LISTED_COLUMNS."""
    keys = ("run_id", "created_at", "requirement", "protocol", "organisation")
    return dict(zip(keys, row)) | {
        "api_ids": json.loads(row[5] or "[]"),
        "catalog": {"path": row[6], "fingerprint": row[7]} if row[6] else None,
    }


def cutoff(older_than: datetime.timedelta) -> str:
    """The created_at before which a run is older than `older_than` (times are ISO strings, which sort as times)."""
    return (datetime.datetime.now(datetime.UTC) - older_than).isoformat(timespec="microseconds")


class RunStore:
    """Read-write store of runs. Safe to share between threads; writes from several processes queue
    on SQLite's lock. Raises UnknownRun for an id it does not hold, RunNotStored for a run it cannot
    write, and RunsUnavailable when the file cannot be opened."""

    keeps_history = True

    def __init__(self, path: Path | str):
        self.path = Path(path)
        self._lock = threading.Lock()
        with self._lock:
            self._open()

    def _open(self) -> None:
        try:
            self.db = sqlite_utils.Database(connect_shared(self.path))
            migrate(self.db)
        except (sqlite3.Error, OSError) as error:
            raise RunsUnavailable(self.path, error) from error
        self._identity = file_identity(self.path)

    def _check_file(self) -> None:
        """Open the file anew if it is no longer the one open (deleted, or replaced): runs written into a
        deleted file would be lost at the next restart. Called with the lock held."""
        if file_identity(self.path) == self._identity:
            return
        log.warning("The runs database %s was deleted or replaced while open; opening it anew.", self.path)
        self.db.close()
        self._open()

    def __repr__(self):
        return f"<RunStore {self.path}>"

    def save(self, run: Run, catalog: CatalogRef | None = None) -> str:
        """Store one run, with the catalogue it was made on, in one transaction; returns its run_id."""
        row = row_of(run, catalog)
        try:
            with self._lock:
                self._check_file()
                with write_transaction(self.db):
                    self.db["runs"].insert(row, replace=True)
        except (sqlite3.Error, OSError, RunsUnavailable) as error:
            raise RunNotStored(
                self.path, (error.__cause__ or error) if isinstance(error, RunsUnavailable) else error
            ) from error
        return run.plan.run_id

    def get(self, run_id: str) -> Run:
        return self.entry(run_id).run

    def entry(self, run_id: str) -> StoredRun:
        """The run with when it was stored and the catalogue it was made on; UnknownRun if there is none."""
        with self._lock:
            self._check_file()
            row = self.db.execute(f"select {ENTRY_COLUMNS} from runs where run_id = ?", [run_id.strip()]).fetchone()
        if row is None:
            raise UnknownRun(run_id)
        return entry_of(row)

    def count(self) -> int:
        with self._lock:
            self._check_file()
            return self.db.execute("select count(*) from runs").fetchone()[0]

    def recent(self, limit: int = 20) -> list[dict]:
        """The latest runs, newest first: id, time, requirement, protocol, API ids and catalogue (None for a run
        stored before runs recorded theirs)."""
        with self._lock:
            self._check_file()
            rows = self.db.execute(
                f"select {LISTED_COLUMNS} from runs order by created_at desc, rowid desc limit ?", [limit]
            ).fetchall()
        return [listed(row) for row in rows]

    def delete(self, run_ids: list[str]) -> int:
        """Remove these runs in one transaction; UnknownRun (and nothing removed) if one is not stored."""
        wanted = list(dict.fromkeys(r.strip() for r in run_ids))
        with self._lock:
            self._check_file()
            with write_transaction(self.db):
                for run_id in wanted:
                    if self.db.execute("select 1 from runs where run_id = ?", [run_id]).fetchone() is None:
                        raise UnknownRun(run_id)
                    self.db.execute("delete from runs where run_id = ?", [run_id])
        return len(wanted)

    def prune(self, older_than: datetime.timedelta, *, dry_run: bool = False) -> int:
        """Remove the runs stored more than `older_than` ago (only count them with dry_run); returns how many."""
        before = cutoff(older_than)
        with self._lock:
            self._check_file()
            with write_transaction(self.db):
                count = self.db.execute("select count(*) from runs where created_at < ?", [before]).fetchone()[0]
                if not dry_run:
                    self.db.execute("delete from runs where created_at < ?", [before])
        return count

    def close(self) -> None:
        with self._lock:
            self.db.close()


class NoHistory:
    """Stands in for a runs store that could not be opened: plans are returned but not kept."""

    keeps_history = False

    def __init__(self, path: Path | str, reason: str):
        self.path, self.reason = shown(path), reason

    def __repr__(self):
        return f"<NoHistory {self.path}>"

    def save(self, run: Run, catalog: CatalogRef | None = None) -> str:
        raise RunNotStored(self.path, RuntimeError(f"this server runs without history: {self.reason}"))

    def get(self, run_id: str) -> Run:
        return self.entry(run_id).run

    def entry(self, run_id: str) -> StoredRun:
        raise TenderError(
            f"No run {echo(run_id)}: this server keeps no history ({self.reason}). "
            "Ask its operator to set TENDER_RUNS to a writable file (or a PostgreSQL URL) and restart it."
        )

    def count(self) -> int:
        return 0

    def recent(self, limit: int = 20) -> list[dict]:
        return []

    def close(self) -> None:
        pass


class Store(Protocol):
    """What the server and the CLI use of a runs store, whichever keeps the runs (RunStore, PostgresRunStore,
    NoHistory). `path` is where, as shown: a file, or a URL with its password masked."""

    @property
    def path(self) -> Path | str: ...  # read-only here: a store's own may be the narrower Path
    @property
    def keeps_history(self) -> bool: ...

    def save(self, run: Run, catalog: CatalogRef | None = None) -> str: ...
    def get(self, run_id: str) -> Run: ...
    def entry(self, run_id: str) -> StoredRun: ...
    def count(self) -> int: ...
    def recent(self, limit: int = 20) -> list[dict]: ...
    def close(self) -> None: ...


def is_url(location: Path | str) -> bool:
    """Whether TENDER_RUNS names a PostgreSQL server rather than a file."""
    return isinstance(location, str) and location.startswith(RUNS_URL_SCHEMES)


def shown(location: Path | str) -> Path | str:
    """The location as messages and logs give it: a URL without its password."""
    return redact(str(location)) if is_url(location) else Path(location)


def keep(store: Store, run: Run, catalog: Catalog | None = None) -> None:
    """Store the run with the catalogue it was made on; one that cannot be stored is still returned, its plan
    saying why it was not kept."""
    note = saved(store, run, catalog)
    if note is not None:
        log.warning("%s", note)


def saved(store: Store, run: Run, catalog: Catalog | None = None) -> str | None:
    """Store the run (its notes' credentials masked) with the catalogue it was made on: None when stored, else
    the note added to its plan saying why not."""
    redact_notes(run)
    try:
        store.save(run, CatalogRef.of(catalog) if catalog is not None else None)
    except RunNotStored as error:
        run.plan.notes.append(str(error))
        return str(error)
    return None


def redact_notes(run: Run) -> None:
    """Mask credentials in the plan's notes (an LLM endpoint's URL may carry them) before it is kept or shown."""
    run.plan.notes[:] = [redact(note) for note in run.plan.notes]


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="microseconds")
