"""Query embeddings, cached per text: within a run the requirement and its clauses are asked for by the
manager, the router and every contractor, and must be embedded once."""

import threading
from collections import OrderedDict

import numpy as np

from catalog import Embedder


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

    def embed(self, texts: list[str], progress: bool = False) -> np.ndarray:
        texts = [self.key(t) for t in texts]
        found: dict[str, np.ndarray] = {}
        with self._lock:
            for text in texts:
                if text in self._cache:
                    found[text] = self._cache[text]
        for batch in by_length([t for t in dict.fromkeys(texts) if t not in found]):
            found.update(zip(batch, self.embedder.embed(batch)))
            with self._lock:
                for text in batch:
                    self._cache[text] = found[text]
                while len(self._cache) > self._max:
                    self._cache.popitem(last=False)
        return np.stack([found[t] for t in texts]) if texts else np.zeros((0, self.dimension), np.float32)

    def embed_requirement(self, requirement: str, parts: list[str]) -> np.ndarray:
        """The requirement's and its parts' (clauses') vectors, which every agent of a run asks for. With an
        embedder that reads parts in context (embed_parts), one model pass gives them all."""
        texts = [requirement, *parts]
        with self._lock:
            known = all(self.key(t) in self._cache for t in texts)
        split = getattr(self.embedder, "embed_parts", None)
        if not known and split is not None and len(parts) > 1:
            whole, vectors = split(requirement, parts)
            with self._lock:
                self._cache.setdefault(self.key(requirement), whole)
                for part, vector in zip(parts, vectors):
                    if vector is not None:
                        self._cache.setdefault(self.key(part), vector)
        return self.embed(texts)

    def one(self, text: str) -> np.ndarray:
        return self.embed([text])[0]
