"""Query embeddings, cached per text: within a run the requirement and its clauses are asked for by the
manager, the router and every contractor, and must be embedded once.

A clause read in the context of its requirement has a vector of its own, cached under the pair: the same
clause in another requirement (or in the same requirement with API names masked) must not get it."""

import threading
from collections import OrderedDict

import numpy as np

from tender.catalog import Embedder


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
        self._cache: OrderedDict[str | tuple[str, str], np.ndarray] = OrderedDict()
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

    def embed(self, texts: list[str], context: str | None = None) -> np.ndarray:
        """The texts' vectors; a clause of `context` embedded by embed_requirement gets its vector in context."""
        texts = [self.key(t) for t in texts]
        scope = self.key(context) if context is not None else None
        found: dict[str, np.ndarray] = {}
        with self._lock:
            for text in texts:
                vector = self._cache.get((scope, text)) if scope is not None else None
                if vector is None:
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

    def _trim(self) -> None:
        while len(self._cache) > self._max:
            self._cache.popitem(last=False)

    def embed_requirement(self, requirement: str, parts: list[str]) -> np.ndarray:
        """The requirement's and its parts' (clauses') vectors, which every agent of a run asks for. With an
        embedder that reads parts in context (embed_parts), one model pass gives them all; agents then ask
        for a part with `context=requirement`."""
        scope = self.key(requirement)
        split = getattr(self.embedder, "embed_parts", None)
        if split is not None and len(parts) > 1:
            with self._lock:
                known = scope in self._cache and all((scope, self.key(p)) in self._cache for p in parts)
            if not known:
                whole, vectors = split(requirement, parts)
                with self._lock:
                    self._cache[scope] = whole
                    for part, vector in zip(parts, vectors):
                        if vector is not None:
                            self._cache[(scope, self.key(part))] = vector
                    self._trim()
        return self.embed([requirement, *parts], context=requirement)

    def one(self, text: str, context: str | None = None) -> np.ndarray:
        return self.embed([text], context)[0]
