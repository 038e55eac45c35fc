"""Which runs store a location names, opened: a file (SQLite, runs.py) or a PostgreSQL URL (runs_postgres.py, for
replicas that share one store). Apart from both, so that neither store's module imports the other."""

import logging
from pathlib import Path

from tender.agents.plan import Run
from tender.catalog import Catalog

from .runs import (
    NoHistory,
    RunNotStored,
    RunStore,
    RunsUnavailable,
    Store,
    is_url,
    reason_of,
    redact_notes,
    saved,
    shown,
)
from .runs_postgres import PostgresRunStore

log = logging.getLogger(__name__)


def open_store(location: Path | str) -> RunStore | PostgresRunStore:
    """The runs store at `location`: a PostgreSQL URL (the `postgres` extra) or a file (SQLite). RunsUnavailable
    when it cannot be opened, saying what to fix (what to install, where the server is, the folder's rights)."""
    if is_url(location):
        return PostgresRunStore(str(location))
    return RunStore(location)


def open_runs(location: Path | str) -> Store:
    """The server's runs store, or, when it cannot be opened, NoHistory (logged once, in one line). A PostgreSQL
    server that cannot be reached now is not given up (runs_postgres.py): plans say they were not stored until
    it can be."""
    try:
        store = open_store(location)
    except RunsUnavailable as error:
        log.warning("%s Serving without history: plans are returned but not stored.", error)
        return NoHistory(location, reason_of(error.__cause__ or error))
    if not isinstance(store, RunStore):
        store.warm()  # PostgreSQL: connected and migrated now, or said in the log that it cannot be yet
    return store


def keep_at(location: Path | str, run: Run, catalog: Catalog | None = None) -> str | None:
    """Open the runs store at `location`, store the run (with the catalogue it was made on) and close it: the CLI's
    way, one run a process. None when stored; otherwise the note added to the plan, which is returned all the same
    (its LLM calls may have been paid for), whether the store could not be opened (its folder is a file, the
    server is down) or not written (a full disk)."""
    redact_notes(run)
    try:
        store = open_store(location)
    except RunsUnavailable as error:
        note = str(RunNotStored(shown(location), error.__cause__ or error))
        run.plan.notes.append(note)
        return note
    try:
        return saved(store, run, catalog)
    finally:
        store.close()
