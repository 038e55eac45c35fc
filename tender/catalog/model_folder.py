"""What a sentence-transformers folder says about how to embed with it, read without torch: the prompts it was
trained with (a query and a document are read differently), how its token embeddings are pooled, the Dense layers
after the pooling, whether it normalises, and how many tokens it reads.

EmbeddingGemma read without its prompts found fewer of the right tools than MiniLM; with them, more (issue 46). So
a model's own prompts are part of the model, and every runtime applies them the same way."""

import json
import struct
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

import numpy as np

from ..errors import TenderError

Role = Literal["query", "document"]
ROLES: tuple[Role, ...] = ("query", "document")
# A catalogue text is capped at 4,000 characters before embedding; past this many tokens a model only costs more.
MAX_TOKENS_READ = 512
_SAFETENSORS_TYPES = {"F32": np.float32, "F16": np.float16, "F64": np.float64}
_ACTIVATIONS = {"torch.nn.modules.linear.Identity": None, "torch.nn.modules.activation.Tanh": np.tanh}


def read_safetensors(file: Path) -> dict[str, np.ndarray]:
    """A safetensors file's tensors as float32 arrays (the format is a JSON header then raw little-endian data:
    no package needed for the few small Dense layers read here)."""
    raw = file.read_bytes()
    (size,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + size])
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        dtype = _SAFETENSORS_TYPES.get(entry["dtype"])
        if dtype is None:
            raise TenderError(f"{file}: tensor {name} is {entry['dtype']}; only F16, F32 and F64 are read.")
        start, end = entry["data_offsets"]
        data = np.frombuffer(raw, dtype=dtype, count=(end - start) // np.dtype(dtype).itemsize, offset=8 + size + start)
        tensors[name] = data.reshape(entry["shape"]).astype(np.float32)
    return tensors


@dataclass(frozen=True)
class Dense:
    """One sentence-transformers Dense layer: y = activation(x W^T + b)."""

    folder: Path
    activation: str

    @cached_property
    def weights(self) -> tuple[np.ndarray, np.ndarray | None]:
        file = self.folder / "model.safetensors"
        if not file.is_file():
            raise TenderError(f"{self.folder} has no model.safetensors; save the model with safetensors.")
        tensors = read_safetensors(file)
        return tensors["linear.weight"], tensors.get("linear.bias")

    @property
    def linear(self) -> bool:
        return _ACTIVATIONS.get(self.activation, "?") is None

    def __call__(self, x: np.ndarray) -> np.ndarray:
        weight, bias = self.weights
        y = x @ weight.T
        if bias is not None:
            y = y + bias
        activation = _ACTIVATIONS.get(self.activation)
        return activation(y) if activation is not None else y


@dataclass(frozen=True)
class ModelFolder:
    """How to embed with one model folder. `prompts` maps a role to the text put before what is embedded."""

    path: Path
    prompts: dict[str, str] = field(default_factory=dict)
    max_tokens: int = 256
    pooling: str = "mean"
    dense: tuple[Dense, ...] = ()
    normalize: bool = True

    @property
    def head_is_linear(self) -> bool:
        """Whether the layers after pooling are affine maps, which commute with mean pooling: then a part of a
        text can be pooled from the text's tokens after the head (pooling.pool_parts)."""
        return all(layer.linear for layer in self.dense)

    def prompt(self, role: Role) -> str:
        return self.prompts.get(role, "")

    def head(self, pooled: np.ndarray) -> np.ndarray:
        """The Dense layers applied to pooled (or, for a linear head, token) embeddings."""
        for layer in self.dense:
            pooled = layer(pooled)
        return pooled.astype(np.float32, copy=False)


def read_model_folder(path: Path) -> ModelFolder:
    """A folder's modules.json, config_sentence_transformers.json and sentence_bert_config.json; a folder without
    them (a bare transformer) is mean-pooled and normalised, as sentence-transformers would."""
    path = Path(path)
    config = _json(path / "config_sentence_transformers.json")
    prompts = {role: text for role, text in (config.get("prompts") or {}).items() if role in ROLES and text}
    bert = _json(path / "sentence_bert_config.json")
    max_tokens = min(int(bert.get("max_seq_length") or 256), MAX_TOKENS_READ)
    modules = _json(path / "modules.json") or []
    pooling, dense, normalize = "mean", [], not modules
    for module in modules:
        kind = str(module.get("type", "")).rsplit(".", 1)[-1]
        folder = path / module.get("path", "")
        if kind == "Pooling":
            pooling = _pooling(folder, _json(folder / "config.json"))
        elif kind == "Dense":
            settings = _json(folder / "config.json")
            activation = settings.get("activation_function", "torch.nn.modules.linear.Identity")
            if activation not in _ACTIVATIONS:
                raise TenderError(f"{folder}: Dense activation {activation} is not supported (Identity or Tanh).")
            dense.append(Dense(folder, activation))
        elif kind == "Normalize":
            normalize = True
        elif kind != "Transformer":
            raise TenderError(f"{path}: module {module.get('type')} is not supported (Transformer, Pooling, Dense).")
    return ModelFolder(path, prompts, max_tokens, pooling, tuple(dense), normalize)


def _pooling(folder: Path, config: dict) -> str:
    if config.get("include_prompt") is False:
        raise TenderError(f"{folder}: pooling that leaves the prompt out is not supported.")
    modes = [m for m in ("mean_tokens", "cls_token", "lasttoken") if config.get(f"pooling_mode_{m}")]
    if modes != ["mean_tokens"] and modes:
        raise TenderError(f"{folder}: only mean pooling is supported (the folder asks for {', '.join(modes)}).")
    return "mean"


def _json(file: Path) -> Any:
    try:
        return json.loads(file.read_text(encoding="utf-8")) if file.is_file() else {}
    except (OSError, ValueError) as error:
        raise TenderError(f"{file} cannot be read ({error}).") from None
