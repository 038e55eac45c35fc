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

import sqlite3
import threading
from pathlib import Path

import numpy as np

from tender.catalog import Catalog, Embedder
from tender.catalog.embeddings import text_hash

from .vectors import QueryEncoder

KINDS = ("api", "name")  # an item's text and its name's words, as the catalogue embeds them
IN_MEMORY = 200_000  # vectors kept in memory (chosen: about 0.6 GB at 768 dimensions); the file keeps every one


class ItemVectors:
    """Document vectors by (kind, text hash) in a SQLite file (or only in memory, without one). Thread-safe."""

    def __init__(self, path: Path | None):
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(path, check_same_thread=False, timeout=10)
            self._db.execute("pragma journal_mode=wal")
            self._db.execute(
                "create table if not exists vectors (kind text, text_hash text, vector blob, "
                "primary key (kind, text_hash))"
            )

    def get(self, kind: str, hashes: list[str]) -> dict[str, bytes]:
        if self._db is None or not hashes:
            return {}
        found: dict[str, bytes] = {}
        with self._lock:
            for start in range(0, len(hashes), 500):
                chunk = hashes[start : start + 500]
                rows = self._db.execute(
                    f"select text_hash, vector from vectors where kind = ? and text_hash in ({','.join('?' * len(chunk))})",
                    [kind, *chunk],
                ).fetchall()
                found.update(rows)
        return found

    def put(self, kind: str, vectors: dict[str, bytes]) -> None:
        if self._db is None or not vectors:
            return
        with self._lock, self._db:
            self._db.executemany(
                "insert or replace into vectors (kind, text_hash, vector) values (?, ?, ?)",
                [(kind, digest, blob) for digest, blob in vectors.items()],
            )

    def close(self) -> None:
        if self._db is not None:
            self._db.close()


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
        found.update({h: np.frombuffer(blob, dtype=np.float32) for h, blob in stored.items()})
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
