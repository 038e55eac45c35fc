"""BM25 for a large catalogue: the same scores as FTS5's bm25() without scoring every row that holds a word.

FTS5 answers `ORDER BY bm25() LIMIT k` by scoring every row that holds any of the query's words: 7 ms a call at
16,625 items, about 200 ms at 100,000, twice a function, growing with the catalogue (docs/deployment.md,
"Growth"). From FROM_ITEMS items a bm25s index (scores computed when it is built, a sparse matrix over the
vocabulary) answers instead: a query costs the postings of its words, summed in numpy.

It reproduces FTS5's ranking: the row's columns (the name's words and the text) read as one document, as FTS5's
bm25() counts them; unicode61 tokens with diacritics removed, Porter-stemmed; k1 1.2, b 0.75; FTS5's idf,
log((N - n + 0.5) / (n + 0.5)), floored (FTS5 at 1e-6, here at 0: a word in most rows adds nothing, and a row
holding only such words, which FTS5 lists at a score near 0, is left out). Like the approximate index of vectors
(ann.py), it is built on first use and kept beside the catalogue
(`<catalog>.<key>.bm25s`, the key naming the build it indexes), memory-mapped, renamed into place whole."""

import os
import re
import shutil
import tempfile
import unicodedata
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np

from ..errors import TenderError

_TOKEN = re.compile(r"[^\W_]+")
K1, B = 1.2, 0.75  # FTS5's
# Where the index answers instead of FTS5. FTS5 scores every row that holds a word of the function: 7 ms a call on
# average at the demo catalogue's 16,625 items (needs' words are common: "list", "data", "get"), twice a function,
# a third of a warm plan; the index 0.2 ms, the same plans on the assistant suite's dev part (docs/tuning.md).
FROM_ITEMS = 10_000


def _libraries(items: int):
    try:
        import bm25s
        import Stemmer
    except ImportError:
        raise TenderError(
            f"A catalogue of {items:,} items is searched through a BM25 index, which needs bm25s and PyStemmer "
            "(dependencies of tender-mcp): pip install 'bm25s>=0.2' 'PyStemmer>=2.2'."
        ) from None
    return bm25s, Stemmer


def _fold(text: str) -> str:
    """Lower case without diacritics, as unicode61 with remove_diacritics folds a token."""
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


class Tokenizer:
    """unicode61 (remove_diacritics) and porter, as the catalogue's FTS5 table tokenizes (schema.TOKENIZER)."""

    def __init__(self, items: int):
        _, Stemmer = _libraries(items)
        self._stem = Stemmer.Stemmer("porter").stemWords

    def __call__(self, text: str) -> list[str]:
        return [t for t in self._stem(_TOKEN.findall(_fold(text))) if t]


def index_path(catalog_path: Path, key: str) -> Path:
    return catalog_path.with_name(f"{catalog_path.name}.{key}.bm25s")


class LexicalIndex:
    """The catalogue's rows (rowid, name, body) in a bm25s index; `search` answers like Catalog.lexical's FTS5."""

    def __init__(self, retriever, rowids: np.ndarray, tokenizer: Tokenizer):
        self._retriever, self._rowids, self._tokenize = retriever, rowids, tokenizer  # rowids ascending
        self._vocab = retriever.vocab_dict

    @classmethod
    def open(cls, rows: "Callable[[], Iterable[tuple[int, str, str]]]", items: int, path: Path) -> "LexicalIndex":
        """The index at `path`, memory-mapped; built first where there is none, from `rows()` (rowid, name, body in
        rowid order), which is read only then."""
        bm25s, _ = _libraries(items)
        tokenizer = Tokenizer(items)
        if not (path / "rowids.npy").is_file():
            build(rows(), items, path, tokenizer)
        retriever = bm25s.BM25.load(str(path), mmap=True, show_progress=False)
        return cls(retriever, np.load(path / "rowids.npy", mmap_mode="r"), tokenizer)

    def _scores(self, words: list[str]) -> np.ndarray:
        # Each word counts, as each of FTS5's phrases does: "drivers" and "driver" both add the stem's score.
        tokens = [t for w in words for t in self._tokenize(w) if t in self._vocab]
        if not tokens:
            return np.zeros(len(self._rowids), dtype=np.float32)
        return self._retriever.get_scores(tokens)

    def search(self, words: list[str], k: int, among: "Iterable[int] | None" = None) -> list[tuple[int, float]]:
        """(rowid, score) of the best k rows holding any of the words (only those of `among`), best first."""
        return self.ranked(self._scores(words), k, among)

    def scorer(self, words: list[str]) -> "Callable[[int, Iterable[int] | None], list[tuple[int, float]]]":
        """`search` for these words, their scores read once however often it is asked."""
        scores = self._scores(words)

        def search(k: int, among: "Iterable[int] | None" = None) -> list[tuple[int, float]]:
            return self.ranked(scores, k, among)

        return search

    def ranked(self, scores: np.ndarray, k: int, among: "Iterable[int] | None" = None) -> list[tuple[int, float]]:
        if among is not None:
            wanted = np.fromiter((int(i) for i in among), dtype=np.int64)
            rows = np.searchsorted(self._rowids, wanted)
            rows = rows[(rows < len(self._rowids)) & (self._rowids[np.minimum(rows, len(self._rowids) - 1)] == wanted)]
        else:
            rows = np.flatnonzero(scores > 0)
        rows = rows[scores[rows] > 0]
        if len(rows) > k:
            rows = rows[np.argpartition(-scores[rows], k - 1)[:k]]
        rows = rows[np.lexsort((self._rowids[rows], -scores[rows]))]
        return [(int(self._rowids[r]), float(scores[r])) for r in rows]


def build(rows: "Iterable[tuple[int, str, str]]", items: int, path: Path, tokenizer: Tokenizer) -> None:
    """Index the rows, write the index to a folder beside `path`, then rename it into place."""
    bm25s, _ = _libraries(items)
    rowids: list[int] = []
    corpus: list[list[str]] = []
    for rowid, name, body in rows:
        rowids.append(int(rowid))
        corpus.append(tokenizer(f"{name} {body}"))
    retriever = bm25s.BM25(k1=K1, b=B, method="atire", idf_method="robertson")
    retriever.index(corpus, show_progress=False)
    folder = Path(tempfile.mkdtemp(prefix=f"{path.name}.tmp-", dir=path.parent))
    try:
        retriever.save(str(folder), show_progress=False)
        np.save(folder / "rowids.npy", np.asarray(rowids, dtype=np.int64))
        os.replace(folder, path)
    except OSError:
        shutil.rmtree(folder, ignore_errors=True)
        if not (path / "rowids.npy").is_file():  # not a replica that built the same index first
            raise
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
