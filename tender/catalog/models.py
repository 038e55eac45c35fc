"""Encoders Tender knows how to fetch, and the fetching: `tender models list | pull | verify | remove`.

Only that command downloads: recommending, building and serving read a model folder that is already there. Every
file of a known encoder is listed here with its size and sha256, so what a pull writes is checked byte for byte,
from huggingface.co or any mirror that serves `{endpoint}/{repo}/resolve/{revision}/{path}`. A pull writes into
`{name}.partial/` and renames it to `{name}/` once every file is verified: a half pull is never a model folder, and
the next pull goes on from the files it already has.

A model whose licence asks something of its user (EmbeddingGemma) is pulled only once that licence was accepted;
the acceptance is recorded in the model's folder (ACCEPTED_LICENCE). A token (HF_TOKEN) goes in the Authorization
header, to the endpoint's host only, and nowhere else: not in a URL, a message or a file."""

import hashlib
import os
import shutil
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from http.client import HTTPException
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from ..errors import InputToFix, TenderError

HF_ENDPOINT = "https://huggingface.co"
TIMEOUT_S = 30  # one request: connecting, and each wait for bytes
RETRIES = 3  # after the first try, on a connection error, 429 or 5xx
BACKOFF_S = 1.0  # doubled after each failed try
CHUNK = 1 << 20
ACCEPTED = "ACCEPTED_LICENCE"
PARTIAL = ".partial"

# Called as bytes of a model's files are fetched or found already verified: (the file's path, how many bytes).
Progress = Callable[[str, int], None]


class KnownModel(BaseModel):
    """An encoder Tender can fetch: where from, under which licence, and every file with its size and sha256."""

    model_config = ConfigDict(frozen=True)

    name: str  # the folder it is pulled into, and the encoder's name in a catalogue
    repo: str
    revision: str  # a commit, or "main": the hashes below still pin the bytes
    licence: str
    licence_url: str
    licence_note: str = ""  # what a user must read before the first pull; empty: nothing to accept
    gated: bool = False  # the repository serves its files only to a signed-in user who accepted the licence
    files: tuple[tuple[str, int, str], ...]  # (path in the repository, size in bytes, sha256)

    @property
    def size(self) -> int:
        return sum(size for _, size, _ in self.files)


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
    )
}


class UnknownModel(InputToFix):
    def __init__(self, name: str):
        super().__init__(f"No known encoder {name!r}: `tender models list` shows them.")
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
    against the table; a file already there with the right hash is not fetched again. Raises UnknownModel,
    LicenceNotAccepted (a licence to accept first, and `accept_licence` not given), and TenderError for a file that
    does not match (it is deleted) or cannot be fetched; the folder appears only once every file is verified."""
    model = known(name)
    if not accept_licence and not licence_accepted(model, home):
        raise LicenceNotAccepted(model)
    base = _endpoint(endpoint)
    root = encoders_dir(home)
    final, partial = root / name, root / (name + PARTIAL)
    if final.is_dir():
        if not verify(name, home):
            return final
        shutil.rmtree(partial, ignore_errors=True)
        os.replace(final, partial)  # a damaged folder: mend it like a half pull, keeping its good files
    partial.mkdir(parents=True, exist_ok=True)
    if model.licence_note and not (partial / ACCEPTED).is_file():
        when = datetime.now(UTC).isoformat(timespec="seconds")
        (partial / ACCEPTED).write_text(
            f"licence: {model.licence}\nurl: {model.licence_url}\naccepted: {when}\n", encoding="utf-8"
        )
    opener = urllib.request.build_opener(_SameHostRedirects())
    for path, size, sha256 in model.files:
        target = partial / path
        if target.is_file() and target.stat().st_size == size and _sha256(target) == sha256:
            if progress:
                progress(path, size)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        _fetch(opener, model, base, path, size, sha256, target, token, progress)
    os.replace(partial, final)
    return final


def verify(name: str, home: Path) -> list[str]:
    """Re-hash a pulled encoder's files against the table: the problems found (missing, wrong size, wrong hash),
    none when it is whole. Raises UnknownModel, and NotPulled when its folder is not there."""
    model = known(name)
    folder = encoders_dir(home) / name
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
    return problems


def list_models(home: Path) -> list[ListedModel]:
    """Every known encoder, pulled or not, then the folders under `{home}/models/encoders` that Tender did not
    pull (nothing is re-hashed: `verify` does that)."""
    root = encoders_dir(home)
    rows = []
    for model in KNOWN.values():
        folder = root / model.name
        status = (
            "pulled" if folder.is_dir() else "interrupted" if (root / (model.name + PARTIAL)).is_dir() else "not pulled"
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
        raise InputToFix(f"{name!r} is not an encoder's name: give a name that `tender models list` shows.")
    root = encoders_dir(home)
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
    if not removed:
        raise NotPulled(name)
    return removed


def _endpoint(endpoint: str) -> str:
    parts = urllib.parse.urlsplit(endpoint.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise InputToFix(f"{endpoint!r} is not an endpoint: give an http(s) URL such as {HF_ENDPOINT}.")
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
    """One file, tried up to 1 + RETRIES times, into a temporary name beside `target`, renamed once it matches."""
    url = f"{base}/{model.repo}/resolve/{urllib.parse.quote(model.revision, safe='')}/{urllib.parse.quote(path)}"
    temp = target.with_name(f"{target.name}.{os.getpid()}.download")
    for attempt in range(RETRIES + 1):
        try:
            digest, got = _download(opener, url, model, path, size, temp, token, progress)
            break
        except _Retry as error:
            temp.unlink(missing_ok=True)
            if attempt == RETRIES:
                raise TenderError(
                    f"Could not fetch {path} of {model.name} from {url} after {RETRIES + 1} tries ({error}). "
                    "Run the pull again: it goes on from the files it has."
                ) from None
            time.sleep(max(BACKOFF_S * 2**attempt, min(error.wait, 60.0)))
        except BaseException:
            temp.unlink(missing_ok=True)
            raise
    if got != size or digest != sha256:
        temp.unlink()
        raise TenderError(
            f"{path} of {model.name} from {url} does not match: sha256 {digest} ({got:,} bytes), expected {sha256} "
            f"({size:,} bytes). It was deleted; the model is not usable."
        )
    os.replace(temp, target)


def _download(opener, url: str, model: KnownModel, path: str, size: int, temp: Path, token, progress):
    request = urllib.request.Request(url, headers={"User-Agent": "tender-mcp"})
    if token:
        request.add_unredirected_header("Authorization", f"Bearer {token}")
    digest, got = hashlib.sha256(), 0
    try:
        with opener.open(request, timeout=TIMEOUT_S) as response, open(temp, "wb") as out:
            announced = response.headers.get("Content-Length")
            # One byte past the table's size is enough to tell the file is wrong: a server sending without end
            # is not read to the end.
            while got <= size and (chunk := response.read(min(CHUNK, size + 1 - got))):
                digest.update(chunk)
                out.write(chunk)
                got += len(chunk)
                if progress:
                    progress(path, len(chunk))
            if announced is not None and announced.isdigit() and got < min(int(announced), size + 1):
                raise _Retry(f"the connection ended after {got:,} of {int(announced):,} bytes")
    except urllib.error.HTTPError as error:
        if error.code == 429 or error.code >= 500:
            retry_after = error.headers.get("Retry-After", "") if error.headers else ""
            raise _Retry(f"HTTP {error.code}", float(retry_after) if retry_after.isdigit() else 0.0) from None
        raise _refused(model, url, error.code, token) from None
    except (urllib.error.URLError, HTTPException, ConnectionError, TimeoutError) as error:
        raise _Retry(str(getattr(error, "reason", None) or error) or type(error).__name__) from None
    return digest.hexdigest(), got


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
