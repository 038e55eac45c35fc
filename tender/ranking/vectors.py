"""Query embeddings, cached per text: within a run the requirement and its clauses are asked for by the
manager, the router and every contractor, and must be embedded once.

A clause read where it stands in its requirement (`in_context`) is pooled from that requirement's tokens, kept per
requirement text: the same clause in another requirement (or in the same one with API names masked) gets its own."""

import threading
from collections import OrderedDict

import numpy as np

from tender.catalog import Embedder
from tender.catalog.pooling import pool_parts, unit


def by_length(texts: list[str], ratio: float = 2.0) -> list[list[str]]:
    """Batches of texts within `ratio` of each other's length. A batch is padded to its longest text, so a
    requirement embedded with its clauses made every short clause cost as much as the whole requirement."""
    batches: list[list[str]] = []
    for text in sorted(texts, key=len, reverse=True):
        if batches and len(text) * ratio >= len(batches[-1][0]):
            batches[-1].append(text)
        else:
            batches.append([text])
    return batches


class QueryEncoder:
    def __init__(self, embedder: Embedder, max_items: int = 4096):
        self.embedder = embedder
        self.model_name = embedder.model_name
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._tokens: OrderedDict[str, tuple[list[tuple[int, int]], np.ndarray]] = OrderedDict()
        self._max = max_items
        self._lock = threading.Lock()

    @classmethod
    def wrap(cls, embedder) -> "QueryEncoder":
        return embedder if isinstance(embedder, QueryEncoder) else cls(embedder)

    @property
    def dimension(self) -> int:
        return self.embedder.dimension

    @staticmethod
    def key(text: str) -> str:
        """Texts that differ only by surrounding spaces or a final full stop share one vector: a requirement
        of one sentence is also its only clause."""
        return text.strip().rstrip(".;,!? ") or text

    def embed(self, texts: list[str]) -> np.ndarray:
        """The texts' vectors, each read on its own."""
        texts = [self.key(t) for t in texts]
        found: dict[str, np.ndarray] = {}
        with self._lock:
            for text in texts:
                vector = self._cache.get(text)
                if vector is not None:
                    found[text] = vector
        for batch in by_length([t for t in dict.fromkeys(texts) if t not in found]):
            found.update(zip(batch, self.embedder.embed(batch)))
            with self._lock:
                for text in batch:
                    self._cache[text] = found[text]
                self._trim()
        return np.stack([found[t] for t in texts]) if texts else np.zeros((0, self.dimension), np.float32)

    def read(self, requirement: str, parts: list[str]) -> None:
        """Embed a run's requirement and its parts (needs, clauses) in as few passes as the model allows: the
        requirement's tokens once (kept for `in_context`), its vector pooled from them (the same vector, since the
        layers after pooling are affine), and the parts batched. One pass each cost a strong encoder 40-90 ms."""
        tokens = self._requirement_tokens(requirement)
        key = self.key(requirement)
        if tokens is not None and len(tokens[1]):
            with self._lock:
                self._cache.setdefault(key, unit(tokens[1].mean(axis=0)))
                self._trim()
        self.embed([requirement, *parts])

    def _requirement_tokens(self, requirement: str) -> tuple[list[tuple[int, int]], np.ndarray] | None:
        """The requirement's token embeddings and their spans, read once and kept; None where the embedder cannot
        read tokens."""
        read = getattr(self.embedder, "tokens", None)
        if read is None:
            return None
        with self._lock:
            found = self._tokens.get(requirement)
        if found is None:
            found = read(requirement) or ([], np.zeros((0, self.dimension), np.float32))
            with self._lock:
                self._tokens[requirement] = found
                while len(self._tokens) > 16:  # the requirements of the runs in flight (at most 0.4 MB each)
                    self._tokens.popitem(last=False)
        return found

    def in_context(self, part: str, requirement: str) -> np.ndarray | None:
        """The part's vector read where it stands in the requirement: its tokens' embeddings from one pass over
        the whole requirement (kept for the requirement's other parts), pooled. "their reviews" after
        "restaurants on a map" is then nearer to restaurant reviews than to book reviews. None where the embedder
        cannot read tokens, the part is the whole requirement, or it is not in the requirement's words (a need
        the caller states)."""
        scope, text = self.key(requirement), self.key(part)
        if text == scope:
            return None
        found = self._requirement_tokens(requirement)
        if found is None:
            return None
        spans, tokens = found
        return pool_parts(requirement, [text], spans, tokens)[1][0] if len(tokens) else None

    def _trim(self) -> None:
        while len(self._cache) > self._max:
            self._cache.popitem(last=False)

    def one(self, text: str) -> np.ndarray:
        return self.embed([text])[0]
