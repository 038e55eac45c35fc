"""A strong encoder that reads each function's shortlist (TENDER_READER_MODEL, issue 46).

The catalogue's own encoder (all-MiniLM-L6-v2: minutes to build 16,469 items on 2 cores, milliseconds a query)
and BM25 find a function's candidates; the reader (EmbeddingGemma: hours to embed 16,469 items here) embeds the
function, the requirement and only the candidates' texts and names, and the ranking model fitted on the reader's
vectors scores them. A candidate's vectors are made the first time it is shortlisted and kept, in memory and in a
SQLite file under TENDER_HOME/cache keyed by the text, so a catalogue of any size builds at the fast encoder's
speed and a served catalogue's usual candidates are read once.

What the reader cannot do is find what the fast encoder and BM25 left out of the shortlist; and the best
similarity and the rank a candidate's evidence compares with are the shortlist's, not the whole catalogue's.
docs/tuning.md measures both against a catalogue embedded whole by the strong encoder."""

import errno
import logging
import os
import sqlite3
import threading
import time
from pathlib import Path

import numpy as np

from tender.catalog import Catalog, Embedder
from tender.catalog.database import private_file
from tender.catalog.embeddings import text_hash

from .vectors import QueryEncoder

log = logging.getLogger("tender.reader")

KINDS = ("api", "name")  # an item's text and its name's words, as the catalogue embeds them
IN_MEMORY = 200_000  # vectors kept in memory (chosen: about 0.6 GB at 768 dimensions); the file keeps every one
# The cache file waits this long for a lock another process holds, then is left alone for RETRY_S: a write of a
# batch of vectors takes milliseconds, so a longer wait is a process holding the file, and would cost every plan.
BUSY_S = 0.5
RETRY_S = 60.0  # a file that could not be opened, read or written is tried again after this long
SET_ASIDE = 3  # files set aside in a process at most: past it, a file damaged again and again rests like a lock
SCHEMA = ["kind", "text_hash", "vector"]
# SQLite's primary result codes for a file that is not (or no longer) the cache: it is set aside and made again.
# Any other fault (a lock, a read-only or full file system, an I/O error) leaves the file as it is, for a while.
_DAMAGED = {1, 11, 17, 20, 26}  # SQLITE_ERROR (a column missing), SQLITE_CORRUPT, _SCHEMA, _MISMATCH, _NOTADB


class OtherSchema(Exception):
    """The cache file holds another table than the cache's."""


class ItemVectors:
    """Document vectors by (kind, text hash) in a SQLite file (or only in memory, without one). Thread-safe.

    The file only saves time, so no fault in it ever fails a plan. A file that is not the cache (garbage, truncated,
    another schema) is renamed `*.broken` (replacing an older one) and made again. One that cannot be used now is
    left as it is: a lock another process holds, or an I/O error, leaves it alone for RETRY_S; a write that fails
    (a full or read-only file system) stops writes for RETRY_S, reads going on; a file that cannot be opened for
    writing is read only. Vectors not kept are still kept in memory (Reader). Each kind of fault is logged once.
    Files are 0600 in folders made 0700."""

    def __init__(self, path: Path | None):
        self.path = path
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._resting_until = 0.0  # monotonic time before which the file is left alone
        self._writes_resting_until = 0.0  # ... and before which nothing is written to it
        self._read_only = False
        self._told: set[tuple[str, bool]] = set()
        self._set_aside = 0
        with self._lock:
            self._connection()

    def get(self, kind: str, hashes: list[str]) -> dict[str, bytes]:
        """The blobs kept for these hashes: none where the file cannot be read now."""
        found: dict[str, bytes] = {}
        with self._lock:
            db = self._connection() if hashes else None
            if db is None:
                return {}
            try:
                for start in range(0, len(hashes), 500):
                    chunk = hashes[start : start + 500]
                    rows = db.execute(
                        "select text_hash, vector from vectors "
                        f"where kind = ? and text_hash in ({','.join('?' * len(chunk))})",
                        [kind, *chunk],
                    ).fetchall()
                    found.update((h, blob) for h, blob in rows if isinstance(h, str) and isinstance(blob, bytes))
            except sqlite3.Error as error:
                self._fault(error, "read")
                return {}
        return found

    def put(self, kind: str, vectors: dict[str, bytes]) -> None:
        """Keep these blobs; nothing is kept where the file cannot be written now (said once in the log)."""
        with self._lock:
            if not vectors or self._read_only or time.monotonic() < self._writes_resting_until:
                return
            db = self._connection()
            if db is None:
                return
            try:
                with db:
                    db.executemany(
                        "insert or replace into vectors (kind, text_hash, vector) values (?, ?, ?)",
                        [(kind, digest, blob) for digest, blob in vectors.items()],
                    )
            except sqlite3.Error as error:
                self._fault(error, "written")

    def close(self) -> None:
        with self._lock:
            self._drop()

    def _connection(self) -> sqlite3.Connection | None:
        """The open file, opened where it is closed and not resting (a damaged one is set aside and made again at
        once, one that cannot be written read only); None while it cannot be used."""
        for _ in range(2):
            if self._db is not None or self.path is None or time.monotonic() < self._resting_until:
                break
            try:
                self._db = _open(self.path)
            except (sqlite3.Error, OtherSchema, OSError) as error:
                if _unwritable(error) and self._open_read_only(error):
                    break
                self._fault(error, "opened")
        return self._db

    def _open_read_only(self, error: Exception) -> bool:
        """Open the file to read only, when it cannot be opened to write (a read-only file system)."""
        assert self.path is not None
        if not self.path.is_file():
            return False
        try:
            self._db = _open(self.path, read_only=True)
        except (sqlite3.Error, OtherSchema, OSError):
            return False
        self._read_only = True
        self._say(
            ("opened", False),
            f"The reader's cache {self.path} cannot be written ({error}); it is read as it is, and items it does not "
            "hold are read and kept in memory.",
        )
        return True

    def _fault(self, error: Exception, doing: str) -> None:
        """Set the file aside where it is not the cache, else leave it (or writing it) alone for RETRY_S; logged
        once each way."""
        assert self.path is not None
        if _damaged(error) and self._set_aside < SET_ASIDE:
            self._drop()
            aside = self.path.with_name(self.path.name + ".broken")
            try:
                os.replace(self.path, aside)
                for suffix in ("-wal", "-shm"):  # the old file's: never to be read with the new one
                    Path(f"{self.path}{suffix}").unlink(missing_ok=True)
            except OSError as cannot:
                error = cannot
            else:
                self._set_aside += 1
                self._read_only = False
                self._say(
                    (doing, True),
                    f"The reader's cache {self.path} could not be {doing} ({error}); it was set aside as {aside.name} "
                    "and made again: items are read afresh as they are shortlisted.",
                )
                return
        if doing == "written":
            self._writes_resting_until = time.monotonic() + RETRY_S
            what = "items not in it are kept in memory only, and writing is tried again"
        else:
            self._drop()
            self._resting_until = time.monotonic() + RETRY_S
            what = "plans go on without it (their items read and kept in memory), and it is tried again"
        self._say(
            (doing, False),
            f"The reader's cache {self.path} could not be {doing} ({error}); {what} every {RETRY_S:g} s.",
        )

    def _drop(self) -> None:
        if self._db is not None:
            try:
                self._db.close()
            except sqlite3.Error:
                pass
            self._db = None

    def _say(self, key: tuple[str, bool], message: str) -> None:
        if key not in self._told:
            self._told.add(key)
            log.warning("%s", message)


def _damaged(error: Exception) -> bool:
    """Whether SQLite says the file is not (or no longer) the cache."""
    code = getattr(error, "sqlite_errorcode", None)
    return isinstance(error, OtherSchema) or (code is not None and code & 0xFF in _DAMAGED)


def _unwritable(error: Exception) -> bool:
    """Whether the file could not be opened because it cannot be written (a read-only file system or file)."""
    if isinstance(error, OSError):
        return error.errno in (errno.EROFS, errno.EACCES, errno.EPERM)
    code = getattr(error, "sqlite_errorcode", None)
    return code is not None and code & 0xFF in (3, 8, 14)  # SQLITE_PERM, SQLITE_READONLY, SQLITE_CANTOPEN


def _open(path: Path, read_only: bool = False) -> sqlite3.Connection:
    """The cache file, made 0600 where it is missing; OtherSchema when it holds another table `vectors`. Read only,
    a file on a read-only file system is opened as immutable (its -shm cannot be made there)."""
    if read_only:
        try:
            db = _checked(
                sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, check_same_thread=False, timeout=BUSY_S)
            )
        except sqlite3.OperationalError:
            db = _checked(sqlite3.connect(f"{path.as_uri()}?immutable=1", uri=True, check_same_thread=False))
        return db
    if not path.exists():
        private_file(path)
    db = sqlite3.connect(path, check_same_thread=False, timeout=BUSY_S)
    try:
        db.execute("pragma journal_mode=wal")
        db.execute(
            "create table if not exists vectors (kind text, text_hash text, vector blob, primary key (kind, text_hash))"
        )
    except BaseException:
        db.close()
        raise
    return _checked(db)


def _checked(db: sqlite3.Connection) -> sqlite3.Connection:
    """The connection, where its file holds the cache's table; closed and OtherSchema otherwise."""
    try:
        columns = [row[1] for row in db.execute("pragma table_info(vectors)")]
        if columns != SCHEMA:
            raise OtherSchema(
                f"its table vectors holds {', '.join(map(str, columns)) or 'nothing'}, not {', '.join(SCHEMA)}"
            )
    except BaseException:
        db.close()
        raise
    return db


class Reader:
    """The strong encoder over a catalogue's items, their vectors made on first use and kept."""

    def __init__(self, embedder: Embedder, cache_dir: Path | None = None):
        self.embedder = embedder
        self.queries = QueryEncoder(embedder)
        encoder = embedder.encoder
        path = cache_dir / "reader" / f"{encoder.name}-{encoder.fingerprint}.db" if cache_dir else None
        self._store = ItemVectors(path)
        self._memory: dict[tuple[str, str], np.ndarray] = {}
        self._lock = threading.Lock()
        self._told_unsound = False

    @property
    def encoder(self):
        return self.embedder.encoder

    def items(self, catalog: Catalog, kind: str, ids: list[int]) -> np.ndarray:
        """The items' vectors of `kind` (their text, or their name's words), one row each, embedding as
        documents only those never read before."""
        texts = [catalog.get_api(i).text() if kind == "api" else catalog.get_api(i).name_text() for i in ids]
        hashes = [text_hash(t) for t in texts]
        with self._lock:
            found = {h: self._memory[(kind, h)] for h in hashes if (kind, h) in self._memory}
        stored = self._store.get(kind, [h for h in dict.fromkeys(hashes) if h not in found])
        found.update(self._sound(stored))
        missing = {h: t for h, t in zip(hashes, texts) if h not in found}
        if missing:
            vectors = self.embedder.embed(list(missing.values()), role="document")
            made = dict(zip(missing, vectors))
            found.update(made)
            self._store.put(kind, {h: np.asarray(v, dtype=np.float32).tobytes() for h, v in made.items()})
        with self._lock:
            if len(self._memory) > IN_MEMORY:
                self._memory.clear()  # the file still holds them; memory refills with what is asked now
            self._memory.update({(kind, h): found[h] for h in hashes})
        return np.stack([found[h] for h in hashes]) if ids else np.zeros((0, 0), np.float32)

    def _sound(self, stored: dict[str, bytes]) -> dict[str, np.ndarray]:
        """The stored vectors that can be this encoder's: its dimension, every value finite. The others are read
        again (and replaced in the file), said once in the log."""
        size = 4 * self.embedder.dimension
        sound = {}
        for digest, blob in stored.items():
            vector = np.frombuffer(blob, dtype=np.float32) if len(blob) == size else None
            if vector is not None and np.isfinite(vector).all():
                sound[digest] = vector
        if len(sound) < len(stored) and not self._told_unsound:
            self._told_unsound = True
            log.warning(
                "The reader's cache %s held %d vector(s) that cannot be %s's (not %d float32 values, or not finite); "
                "they are read again and replaced.",
                self._store.path,
                len(stored) - len(sound),
                self.encoder.name,
                size // 4,
            )
        return sound

    def read_ahead(self, catalog: Catalog, ids: list[int], batch: int = 256, progress=None) -> None:
        """Make the vectors of these items now (a small catalogue at build time, or a warm-up)."""
        for start in range(0, len(ids), batch):
            chunk = ids[start : start + batch]
            for kind in KINDS:
                self.items(catalog, kind, chunk)
            if progress is not None:
                progress(len(chunk))

    def close(self) -> None:
        self._store.close()
