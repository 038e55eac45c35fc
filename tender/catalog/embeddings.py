"""Text embedders: all-MiniLM-L6-v2 under ONNX Runtime (the default, onnx_embedder.py) or under
sentence-transformers (torch, the `train` extra; loaded lazily), and a small deterministic bag-of-words
embedder for fast tests. Each names the encoder it runs (encoders.py), which the catalogue and the bid model
are checked against."""

import hashlib
import os
import re
from functools import cached_property
from pathlib import Path
from typing import Protocol

import numpy as np

from ..errors import TenderError
from .encoders import (
    DELTA_FILE,
    SHIPPED_DELTAS,
    STOCK_MAX_TOKENS,
    EncoderId,
    folder_encoder,
    is_delta_folder,
    shipped_delta_file,
    stock_encoder,
    stock_torch_dir,
    truncated,
)
from .model_folder import ModelFolder, Role, read_model_folder
from .onnx_embedder import OnnxEmbedder, finish, onnx_available, shift_spans

RUNTIMES = ("auto", "onnx", "torch")


class Embedder(Protocol):
    model_name: str
    encoder: EncoderId

    @property
    def dimension(self) -> int: ...

    def embed(self, texts: list[str], progress: bool = False, role: Role = "query") -> np.ndarray:
        """Unit-length float32 rows, one per text, each read as a `role`: a query (a requirement, a need) or a
        document (a catalogue item), with the model's own prompt for it."""
        ...


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


class SentenceTransformerEmbedder:
    """A local sentence-transformers model folder (default: the stock one). Never downloads: the hub is
    switched off. Needs the `train` extra."""

    def __init__(
        self,
        path: Path | str | None = None,
        device: str = "cpu",
        threads: int | None = 1,
        dimensions: int | None = None,
    ):
        stock = path is None
        self.path = stock_torch_dir() if stock else Path(path)  # type: ignore[arg-type]
        self.stock = stock
        if not (self.path / "config.json").is_file() and not (self.path / "modules.json").is_file():
            raise TenderError(
                f"{self.path} is not a sentence-transformers model folder (no config.json or modules.json)."
            )
        self.device = device
        # One thread by default: queries are short, and on a busy 2-core machine two torch threads per call
        # were many times slower than one. Building the catalogue passes threads=None (all cores).
        self.threads = threads
        # The stock folder holds the same weights as the stock ONNX graph (a test compares their vectors).
        self.folder = ModelFolder(self.path, max_tokens=STOCK_MAX_TOKENS) if stock else read_model_folder(self.path)
        self.dimensions = dimensions
        self.encoder: EncoderId = truncated(stock_encoder() if stock else folder_encoder(self.path), dimensions)
        self.model_name = self.encoder.name

    @cached_property
    def _model(self):
        # Heavy import, loaded on first use so that `tender --help` stays instant.
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        try:
            import torch
            from sentence_transformers import SentenceTransformer
        except ImportError:
            raise TenderError(
                "The torch runtime needs the train extra: `pip install 'tender-mcp[train]'` (the CPU "
                "build of torch first), or set TENDER_EMBEDDING_RUNTIME=onnx."
            ) from None

        torch.set_num_threads(self.threads or max(1, os.cpu_count() or 1))
        model = SentenceTransformer(str(self.path), device=self.device, local_files_only=True)
        model.max_seq_length = min(model.max_seq_length or self.folder.max_tokens, self.folder.max_tokens)
        return model

    @cached_property
    def dimension(self) -> int:
        return int(self.embed(["dimension"]).shape[1])

    def embed(self, texts: list[str], progress: bool = False, role: Role = "query") -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        vectors = self._model.encode(
            list(texts),
            prompt=self.folder.prompt(role) or None,
            batch_size=64,
            normalize_embeddings=True,
            truncate_dim=self.dimensions,
            show_progress_bar=progress,
            convert_to_numpy=True,
        )
        return vectors.astype(np.float32, copy=False)

    def tokens(self, text: str, role: Role = "query") -> tuple[list[tuple[int, int]], np.ndarray] | None:
        """The text's token embeddings from one pass of the model (through its head, where that is linear), with
        each token's character span in `text` (empty for the prompt's and the special tokens); None for a model
        whose tokens do not line up with its tokenizer's offsets. Pooled by pooling.pool_parts, they give the text's
        vector and its parts' read in context ("late chunking")."""
        import torch

        if not self.folder.head_is_linear:
            return None
        model, prompt = self._model, self.folder.prompt(role)
        spans = model.tokenizer(
            prompt + text, return_offsets_mapping=True, truncation=True, max_length=model.max_seq_length
        )["offset_mapping"]
        with torch.inference_mode():
            tokens = model.encode([prompt + text], output_value="token_embeddings", convert_to_numpy=False)[0]
        tokens = finish(self.folder, tokens.float().numpy(), self.dimensions, normalize=False)
        return (shift_spans(spans, len(prompt)), tokens) if len(tokens) == len(spans) else None


_TOKEN = re.compile(r"[a-z0-9]+")


class HashingEmbedder:
    """Bag of words hashed into a fixed number of buckets: deterministic, instant, no model files."""

    def __init__(self, dimension: int = 256):
        self._dimension = dimension
        self.model_name = f"hashing-{dimension}"
        self.encoder = EncoderId(name=self.model_name, fingerprint=self.model_name)

    @property
    def dimension(self) -> int:
        return self._dimension

    def embed(self, texts: list[str], progress: bool = False, role: Role = "query") -> np.ndarray:
        matrix = np.zeros((len(texts), self._dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for token in _TOKEN.findall(text.lower()):
                bucket = int.from_bytes(hashlib.blake2b(token.encode(), digest_size=4).digest(), "little")
                matrix[row, bucket % self._dimension] += 1.0
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        return matrix / np.where(norms == 0, 1.0, norms)


def get_embedder(
    spec: str | None = None,
    threads: int | None = 1,
    runtime: str | None = None,
    cache_dir: Path | None = None,
    dimensions: int | None = None,
) -> Embedder:
    """`None`, "default" or "all-MiniLM-L6-v2": the stock MiniLM; "tender-minilm" or "tender-matcher": the stock
    MiniLM with a delta Tender ships (ONNX only); a folder holding a delta (`tender train encoder --kinds` writes
    one): the stock MiniLM with that delta, named as the folder; "hashing" or "hashing-N": the test embedder; else a
    model folder. `threads=None` uses every core (for building). `runtime` runs the model with "onnx" (ONNX Runtime:
    the same vectors for half the CPU, with the GIL released, and no torch) or "torch" (sentence-transformers, the
    `train` extra); "auto" (the default) takes ONNX where onnxruntime is installed. `cache_dir` keeps a fine-tuned
    model's exported ONNX graph (Settings.cache_dir). `dimensions` keeps a folder model's first that many
    dimensions (Matryoshka truncation; only for a model trained for it, such as EmbeddingGemma's 512, 256, 128)."""
    runtime = (runtime or "auto").lower()
    if runtime not in RUNTIMES:
        raise TenderError(f"Unknown embedding runtime {runtime!r}: use auto, onnx or torch.")
    if spec and spec.startswith("hashing"):
        _, _, size = spec.partition("-")
        return HashingEmbedder(int(size) if size else 256)
    delta, name = None, spec
    if spec in SHIPPED_DELTAS:
        delta = shipped_delta_file(spec)
    elif spec and is_delta_folder(Path(spec)):
        delta, name = Path(spec) / DELTA_FILE, Path(spec).name
    if delta is not None:
        if runtime == "torch" or not onnx_available():
            raise TenderError(
                f"{name} runs on ONNX Runtime: `pip install onnxruntime onnx`, and leave "
                "TENDER_EMBEDDING_RUNTIME unset (or set it to onnx)."
            )
        if dimensions is not None:
            raise TenderError("TENDER_EMBEDDING_DIMENSIONS applies to a model folder trained for it, not to MiniLM.")
        return OnnxEmbedder(None, threads=threads, cache_dir=cache_dir, delta=delta, name=name)
    path = None if not spec or spec in ("default", "all-MiniLM-L6-v2") else spec
    if dimensions is not None and path is None:
        raise TenderError("TENDER_EMBEDDING_DIMENSIONS applies to a model folder trained for it, not to MiniLM.")
    if runtime in ("onnx", "auto"):
        if onnx_available():
            return OnnxEmbedder(path, threads=threads, cache_dir=cache_dir, dimensions=dimensions)
        if runtime == "onnx":
            raise TenderError(
                "The ONNX runtime is not installed: `pip install onnxruntime`, or set TENDER_EMBEDDING_RUNTIME=torch."
            )
    return SentenceTransformerEmbedder(path, threads=threads, dimensions=dimensions)
