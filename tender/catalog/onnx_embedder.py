"""The same all-MiniLM-L6-v2, run by ONNX Runtime for queries.

Serving embeds one short requirement at a time. Under torch that costs about 11 ms for one word and 29 ms
for sixty, most of it Python between small operators, holding the GIL, so concurrent requests queue
behind each other. ONNX Runtime runs the whole graph in C++ with the GIL released: about 3 and 19 ms, and
a second request can use the second core meanwhile. The vectors are the model's own (cosine 1.000 to
sentence-transformers'), so a catalogue built with torch is searched with ONNX vectors unchanged.

The graph is exported from the local model folder once, with torch, and kept in a cache folder
(`TENDER_CACHE_DIR`, default ~/.cache/tender); after that neither torch nor the export is needed."""

import hashlib
import json
import logging
import os
import tempfile
import threading
import warnings
from functools import cached_property
from pathlib import Path

import numpy as np

from .embeddings import _unit, default_model_path, pool_parts
from ..errors import TenderError

log = logging.getLogger(__name__)


def onnx_available() -> bool:
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        return False
    return True


def cache_dir() -> Path:
    folder = os.environ.get("TENDER_CACHE_DIR")
    return Path(folder) if folder else Path.home() / ".cache" / "tender"


def _fingerprint(model_path: Path) -> str:
    """Names the exported graph after the model files it came from, so a changed model is exported again."""
    digest = hashlib.sha256(str(model_path.resolve()).encode())
    for name in sorted(os.listdir(model_path)):
        file = model_path / name
        if file.is_file():
            stat = file.stat()
            digest.update(f"{name}:{stat.st_size}:{int(stat.st_mtime)}".encode())
    return digest.hexdigest()[:16]


def export_onnx(model_path: Path, target: Path) -> Path:
    """Export the model's transformer (without pooling: we pool here) to `target`, atomically: a
    concurrent or interrupted export never leaves a half-written file under the final name."""
    log.info("Exporting %s to ONNX for queries (once; it is kept in %s)", model_path.name, target.parent)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(model_path), device="cpu", local_files_only=True)
    transformer = model[0].auto_model.eval()
    sample = model.tokenizer(["an example sentence"], return_tensors="pt")
    names = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in sample]

    class TokenEmbeddings(torch.nn.Module):
        # Inputs by keyword: the positional order of the transformer's forward() differs between versions.
        def __init__(self):
            super().__init__()
            self.transformer = transformer

        def forward(self, *inputs):
            return self.transformer(**dict(zip(names, inputs))).last_hidden_state

    axes = {name: {0: "batch", 1: "tokens"} for name in names}
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(f".{os.getpid()}.{threading.get_ident()}.partial")
    try:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the tracer's notes on shapes it fixes; the test checks the vectors
            torch.onnx.export(
                TokenEmbeddings(), tuple(sample[n] for n in names), str(partial), input_names=names,
                output_names=["token_embeddings"], dynamic_axes={**axes, "token_embeddings": {0: "batch", 1: "tokens"}},
                opset_version=17, dynamo=False,
            )
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    return target


class OnnxEmbedder:
    """A sentence-transformers folder (BERT-style, mean pooling, normalised) run by ONNX Runtime."""

    def __init__(self, path: Path | str | None = None, threads: int = 1):
        self.path = Path(path) if path else default_model_path()
        if not (self.path / "tokenizer.json").is_file():
            raise TenderError(f"{self.path} has no tokenizer.json; the ONNX runtime needs a fast tokenizer.")
        self.threads = threads
        self.model_name = "all-MiniLM-L6-v2" if self.path == default_model_path() else self.path.name
        config = self.path / "sentence_bert_config.json"
        self.max_tokens = json.loads(config.read_text()).get("max_seq_length", 256) if config.is_file() else 256

    @property
    def graph_path(self) -> Path:
        return cache_dir() / "onnx" / f"{self.path.name}-{_fingerprint(self.path)}.onnx"

    @cached_property
    def _session(self):
        import onnxruntime as ort

        graph = self.graph_path
        if not graph.is_file():
            try:
                export_onnx(self.path, graph)
            except OSError as error:  # an unwritable cache folder: export for this process only
                log.warning("Cannot write %s (%s); exporting to a temporary folder instead", graph.parent, error)
                graph = export_onnx(self.path, Path(tempfile.mkdtemp(prefix="tender-onnx-")) / graph.name)
            except Exception as error:
                raise TenderError(f"Could not export {self.path} to ONNX ({error}). "
                                  "Set TENDER_EMBEDDING_RUNTIME=torch to embed queries with torch.") from error
        options = ort.SessionOptions()
        # One thread per call: requests already run side by side, one per core.
        options.intra_op_num_threads = self.threads
        options.inter_op_num_threads = 1
        session = ort.InferenceSession(str(graph), options, providers=["CPUExecutionProvider"])
        self._inputs = {i.name for i in session.get_inputs()}
        return session

    @cached_property
    def _tokenizer(self):
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(self.path / "tokenizer.json"))
        tokenizer.enable_truncation(self.max_tokens)
        tokenizer.no_padding()
        return tokenizer

    @property
    def dimension(self) -> int:
        return int(self._session.get_outputs()[0].shape[-1])

    def _run(self, encodings) -> np.ndarray:
        """Token embeddings (batch, tokens, dimension) and the attention mask of the padded batch."""
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        types = np.zeros_like(ids)
        for row, encoding in enumerate(encodings):
            n = len(encoding.ids)
            ids[row, :n], mask[row, :n], types[row, :n] = encoding.ids, encoding.attention_mask, encoding.type_ids
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        session = self._session
        (tokens,) = session.run(None, {k: v for k, v in feed.items() if k in self._inputs})
        return tokens, mask

    def embed(self, texts: list[str], progress: bool = False) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        rows = []
        for start in range(0, len(texts), 64):
            tokens, mask = self._run(self._tokenizer.encode_batch(list(texts[start:start + 64])))
            summed = (tokens * mask[..., None]).sum(axis=1)
            rows.extend(_unit(v) for v in summed / np.maximum(mask.sum(axis=1, keepdims=True), 1))
        return np.stack(rows).astype(np.float32)

    def embed_parts(self, text: str, parts: list[str]) -> tuple[np.ndarray, list[np.ndarray | None]]:
        """As SentenceTransformerEmbedder.embed_parts: the text and its parts from one pass of the model."""
        encoding = self._tokenizer.encode(text)
        tokens = self._run([encoding])[0][0]
        return pool_parts(text, parts, encoding.offsets, tokens)
