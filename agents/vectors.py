"""Query embeddings, cached per text: within a run the requirement and its clauses are asked for by the
manager, the router and every contractor, and must be embedded once."""

import threading
from collections import OrderedDict

import numpy as np

from catalog import Embedder


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
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if missing:
            vectors = self.embedder.embed(missing)
            with self._lock:
                for text, vector in zip(missing, vectors):
                    self._cache[text] = vector
                while len(self._cache) > self._max:
                    self._cache.popitem(last=False)
        with self._lock:
            return np.stack([self._cache[t] for t in texts]) if texts else np.zeros((0, self.dimension), np.float32)

    def one(self, text: str) -> np.ndarray:
        return self.embed([text])[0]
