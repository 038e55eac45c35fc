"""Pooling token embeddings into unit vectors, shared by the torch and the ONNX runtimes so that both give
the same vectors."""

import numpy as np


def unit(vector: np.ndarray) -> np.ndarray:
    return (vector / (np.linalg.norm(vector) or 1.0)).astype(np.float32)


def mean_pool(tokens: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The mean of each text's tokens in a padded batch of token embeddings (batch, tokens, dimension) and its
    attention mask; not yet unit length (a model's Dense layers come between pooling and normalising)."""
    return ((tokens * mask[..., None]).sum(axis=1) / np.maximum(mask.sum(axis=1, keepdims=True), 1)).astype(np.float32)


def pool_parts(text: str, parts: list[str], spans, tokens: np.ndarray) -> tuple[np.ndarray, list[np.ndarray | None]]:
    """Mean-pool one text's token embeddings (`spans` are their character offsets; special tokens have empty
    spans) into the text's vector and each part's, parts found in order. A part not found gets None."""
    vectors: list[np.ndarray | None] = []
    cursor = 0
    for part in parts:
        start = text.find(part, cursor)
        rows = (
            []
            if start < 0
            else [i for i, (a, b) in enumerate(spans) if b > a and a >= start and b <= start + len(part)]
        )
        if rows:
            cursor = start + len(part)
        vectors.append(unit(tokens[rows].mean(axis=0)) if rows else None)
    return unit(tokens.mean(axis=0)), vectors
