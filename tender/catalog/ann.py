"""Dense search for the ranking: a query's cosine similarity to every item of one kind (their texts, their names).

Below EXACT_BELOW items it is exact, one matrix product, as it always was. Above, a product over a million rows
costs more than a request may (about 150 ms each, twice a function), so an approximate index (an HNSW graph,
usearch, chosen by measurement: docs/deployment.md, "Growth") finds the FOUND rows nearest to the query; those are
scored exactly, and any other row is scored exactly when it is read. The index is built on first use and kept
beside the catalogue (`<catalog>.<key>-m<M>e<ef>.<kind>.usearch`, naming the build it indexes and the graph),
memory-mapped, so that replicas on one machine share it and a restart does not build it again."""

import hashlib
import os
import tempfile
from pathlib import Path

import numpy as np

from ..errors import TenderError

EXACT_BELOW = 50_000
# Rows the index returns for a query, scored exactly: twenty times the ranking's depth (50), so that the best 50 are
# among them at a recall measured ≥ 0.95 at a million items (docs/deployment.md), with room for excluded items.
# At a million, M 16 / ef 256 / 200 rows found 0.84 and 0.76 of them (texts, names), and 8-bit vectors were not the
# cause (16-bit: the same); M 32 and ef 1,024 found 0.96 of the names in 6 ms.
FOUND = 1000
CONNECTIVITY = 32  # HNSW's M: edges per node
EXPANSION_ADD = 128  # ef_construction
EXPANSION_SEARCH = 1024  # ef_search


class Similarities:
    """A query's similarities to every item of a large catalogue, as the ranking reads them, without computing a
    million: `s[row]` is exact for any row; `s[mask]` (a boolean array over all rows) gives the rows the index found
    that the mask allows, so the best of the catalogue is their max, and an item the index did not find ranks after
    all of them."""

    def __init__(self, matrix: np.ndarray, vector: np.ndarray, rows: np.ndarray, scores: np.ndarray):
        self._matrix, self._vector = matrix, vector
        order = np.argsort(-scores, kind="stable")
        self.rows, self.scores = rows[order], scores[order]

    def __len__(self) -> int:
        return len(self._matrix)

    def __getitem__(self, key):
        if isinstance(key, np.ndarray) and key.dtype == bool:
            return self.scores[key[self.rows]]
        return np.float32(self._matrix[int(key)] @ self._vector)

    def __gt__(self, value) -> np.ndarray:
        return self.scores > value

    def max(self) -> float:
        return float(self.scores.max()) if len(self.scores) else 0.0

    def nearest(self, allowed: np.ndarray, depth: int) -> list[int]:
        return [int(r) for r in self.rows[allowed[self.rows]][:depth]]


class DenseSearch:
    """One kind's vectors, searched exactly or through an index (see the module's docstring)."""

    def __init__(self, matrix: np.ndarray, index=None):
        self.matrix, self.index = matrix, index

    @classmethod
    def of(cls, matrix: np.ndarray, catalog_path: Path, key: str, kind: str) -> "DenseSearch":
        if len(matrix) < EXACT_BELOW:
            return cls(matrix)
        return cls(matrix, load_index(matrix, index_path(catalog_path, key, kind)))

    def similarities(self, vector: np.ndarray) -> "np.ndarray | Similarities":
        if self.index is None:
            return self.matrix @ vector
        rows = np.asarray(self.index.search(vector, FOUND, threads=1, exact=False).keys, dtype=np.int64)
        return Similarities(self.matrix, vector, rows, self.matrix[rows] @ vector)

    @staticmethod
    def nearest(similarities: "np.ndarray | Similarities", allowed: np.ndarray, depth: int) -> list[int]:
        """The rows of the `depth` items nearest the query among those `allowed`, best first."""
        if isinstance(similarities, Similarities):
            return similarities.nearest(allowed, depth)
        return [int(r) for r in np.argsort(-np.where(allowed, similarities, -np.inf), kind="stable")[:depth]]


def _usearch(items: int):
    try:  # onnxruntime 1.32 crashes (SIGSEGV) when imported after usearch 2.26's numkong, never before it
        import onnxruntime  # noqa: F401
    except ImportError:  # the hashing encoder or an other runtime: nothing to protect
        pass
    try:
        from usearch.index import Index
    except ImportError:
        raise TenderError(
            f"A catalogue of {items:,} items is searched through an approximate index, which needs usearch: "
            "pip install 'tender-mcp[large]'."
        ) from None
    return Index


def build_key(meta: dict) -> str:
    """Names one build of a catalogue: its fingerprint, when it was built, and the encoder that embedded it."""
    text = "\x00".join(meta.get(k, "") for k in ("fingerprint", "built_at", "encoder_fingerprint", "model"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def index_path(catalog_path: Path, key: str, kind: str) -> Path:
    """Named by the build it indexes and the graph's shape: an index made with other settings is not reused."""
    return catalog_path.with_name(f"{catalog_path.name}.{key}-m{CONNECTIVITY}e{EXPANSION_ADD}.{kind}.usearch")


def build_index(matrix: np.ndarray, path: Path) -> None:
    """The HNSW graph of these vectors (8-bit: a quarter of their size, recall measured), written whole, then renamed
    into place: a replica never reads half of one."""
    Index = _usearch(len(matrix))

    index = Index(
        ndim=matrix.shape[1],
        metric="ip",
        dtype="i8",
        connectivity=CONNECTIVITY,
        expansion_add=EXPANSION_ADD,
        expansion_search=EXPANSION_SEARCH,
    )
    index.add(np.arange(len(matrix), dtype=np.uint64), matrix, threads=os.cpu_count() or 1)
    handle, name = tempfile.mkstemp(prefix=f"{path.name}.tmp-", dir=path.parent)
    os.close(handle)
    try:
        index.save(name)
        os.replace(name, path)
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise


def load_index(matrix: np.ndarray, path: Path):
    """The index at `path`, memory-mapped; built first where there is none."""
    Index = _usearch(len(matrix))

    if not path.is_file():
        build_index(matrix, path)
    index = Index.restore(str(path), view=True)
    index.expansion_search = EXPANSION_SEARCH
    return index
