"""One assembly: settings in, a ready Tender out. The CLI, the server, evaluation and training all build their
catalogue, encoders, reader, request model and agents here, so that a setting means the same at every entrance and
the settings themselves (settings.py) stay a ground floor that imports nothing of Tender's above it."""

import functools
import sys
from pathlib import Path

from tender.agents.service import Tender
from tender.catalog import Catalog
from tender.ranking.choice import scorer_for
from tender.safety import echo
from tender.settings import PATH_SHOWN, RULES_ONLY, BadSetting, Settings

FROM_SETTINGS = object()  # assemble's reader and text model: the ones the settings name


def open_catalog(settings: Settings, *, embed: bool = True, exclude_mashups=(), path: Path | None = None) -> Catalog:
    """The configured catalogue (or `path`), with the encoder it is read with unless `embed` is False."""
    path = path or settings.catalog_path
    return Catalog(
        path, embedder=embedder_for(settings, catalog=path) if embed else None, exclude_mashups=exclude_mashups
    )


def assemble(
    settings: Settings,
    catalog: Catalog,
    manager: str = "offline",
    contractors: str = "offline",
    *,
    llm=None,
    scorer=None,
    reader=FROM_SETTINGS,
    text_model=FROM_SETTINGS,
) -> Tender:
    """A Tender on `catalog` with these reasoner backends: the ranking model TENDER_RANKING_MODEL names or the one
    fitted for the catalogue's vectors (unless `scorer`), the reader and the model that reads requests the settings
    name (unless given; None turns either off), and `llm` (else the settings' LLM options) where a backend asks."""
    from tender.agents.reasoners.factory import build_reasoners, llm_settings

    if reader is FROM_SETTINGS:
        reader = reader_for(settings)
    if text_model is FROM_SETTINGS:
        text_model = text_model_for(settings) if manager == "offline" else None
    scorer = scorer or scorer_for(settings.ranking_model_path, catalog, reader)
    if manager == contractors == "offline":
        built = build_reasoners(text_model=text_model)
    else:
        llm = llm or llm_settings(settings)
        built = build_reasoners(manager, contractors, llm, text_model, endpoint_model_for(settings, llm.base_url))
    judge = judge_for(settings, catalog)
    return Tender(catalog, manager=built[0], contractors=built[1], scorer=scorer, reader=reader, judge=judge)


def judge_for(settings: Settings, catalog: Catalog):
    """The matcher that judges each award (ranking/judge.py; the Ranker uses it only in a catalogue that holds MCP
    servers), one per process, its model loaded on first use; None where TENDER_JUDGE=off, where the catalogue is
    read with the test embedder (no model), or where ONNX Runtime or the stock MiniLM is not installed."""
    from tender.catalog.embeddings import HashingEmbedder
    from tender.catalog.onnx_embedder import onnx_available

    from tender.errors import TenderError

    if not settings.judge or isinstance(catalog.embedder, HashingEmbedder) or not onnx_available():
        return None
    try:
        return _judge(settings.cache_dir)
    except TenderError:  # the stock MiniLM's files are missing: plans as the ranking scores them
        return None


@functools.cache
def _judge(cache_dir: Path):
    from tender.catalog.encoders import MATCHER_NAME, shipped_delta_file
    from tender.catalog.onnx_embedder import OnnxEmbedder
    from tender.ranking.judge import Judge

    # Its vectors are never stored, so its matrix products run in 8 bits: a plan pays half the time for it.
    delta = shipped_delta_file(MATCHER_NAME)
    return Judge(
        OnnxEmbedder(None, threads=1, cache_dir=cache_dir, delta=delta, name=MATCHER_NAME, matmuls_8_bits=True)
    )


def one_thread_each() -> None:
    """Concurrency comes from serving runs side by side, one core each. Math libraries' own threads on
    top oversubscribe the cores: torch's OpenMP spin-waits made an encode 14x slower on a busy 2-core
    machine, and numpy's BLAS threads doubled the CPU time of a run (135 ms to 72 ms once limited)."""
    from threadpoolctl import threadpool_limits

    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)
    threadpool_limits(1)  # kept for the life of the process


def model_spec(settings: Settings, spec: str, variable: str) -> str:
    """A model setting as get_embedder takes it: a known encoder's name (`tender models list`) is its pulled
    folder; a folder is checked to be there. BadSetting, naming the variable and the fix, otherwise."""
    from tender.catalog.encoders import SHIPPED_DELTAS
    from tender.catalog.models import KNOWN, PARTIAL, encoders_dir

    if spec in ("default", "all-MiniLM-L6-v2", *SHIPPED_DELTAS) or spec.startswith("hashing"):
        return spec
    path = Path(spec).expanduser()
    if spec in KNOWN and not path.exists():
        pulled = encoders_dir(settings.home) / spec
        if not pulled.is_dir():
            raise BadSetting(f"{variable}={spec}, but {spec} is not pulled: `tender models pull {spec}` fetches it.")
        return str(pulled)
    shown = echo(str(path), PATH_SHOWN)
    if not path.exists():
        raise BadSetting(
            f"{variable}={shown}: there is no such folder. Set it to a model's folder (`tender models list` shows "
            "the pulled ones) or to a pulled encoder's name, or unset it."
        )
    if not path.is_dir():
        raise BadSetting(f"{variable}={shown} is a file; set it to a model's folder, or unset it.")
    if path.name.endswith(PARTIAL) and path.name[: -len(PARTIAL)] in KNOWN:
        name = path.name[: -len(PARTIAL)]
        raise BadSetting(
            f"{variable}={shown} is a pull that did not finish: `tender models pull {name}` completes it; then "
            f"set {variable}={name}."
        )
    return str(path)


def embedder_for(settings: Settings, threads: int | None = 1, catalog: Path | None = None):
    """The configured encoder, loaded lazily; `threads=None` uses every core (for building). Where none is
    configured, a `catalog` built with Tender's tuned encoder keeps it (a server started without the
    setting that built it still opens it, and a rebuild does not switch it back to the stock one)."""
    from tender.catalog import get_embedder
    from tender.catalog.encoders import SHIPPED_DELTAS
    from tender.catalog.store import built_with

    spec = settings.embedding_model
    if spec is None and catalog is not None and (built := built_with(catalog)) in SHIPPED_DELTAS:
        spec = built
    if spec is not None:
        spec = model_spec(settings, spec, "TENDER_EMBEDDING_MODEL")
    return get_embedder(
        spec,
        threads=threads,
        runtime=settings.embedding_runtime,
        cache_dir=settings.cache_dir,
        dimensions=settings.embedding_dimensions,
    )


def reader_for(settings: Settings):
    """The strong encoder that reads each function's shortlist (TENDER_READER_MODEL), one per process and
    folder, loaded and run once; None where unset. BadSetting, in one line saying what to do, for a name that is
    not pulled, a folder that is not there, or a model that cannot be loaded."""
    if not settings.reader_model:
        return None
    return _reader(
        model_spec(settings, settings.reader_model, "TENDER_READER_MODEL"),
        settings.embedding_runtime,
        settings.cache_dir,
    )


def request_model_file(settings: Settings) -> Path | None:
    """The GGUF file of the model that reads requests: TENDER_REQUEST_MODEL's (a pulled model's name, a file, or
    a folder holding one .gguf); None where it is unset or "rules" (opt-in: measured on the dev parts, the model
    read no better than the rules, docs/local-reader.md). BadSetting, saying what to do, for a value that names
    none."""
    from tender.catalog.models import KNOWN, REQUEST_MODEL, model_file

    spec = settings.request_model
    if spec is None:
        return None
    if spec.lower() in RULES_ONLY:
        return None
    if spec in KNOWN and KNOWN[spec].kind == "language" and not Path(spec).expanduser().exists():
        found = model_file(spec, settings.home)
        if found is None:
            raise BadSetting(
                f"TENDER_REQUEST_MODEL={spec}, but {spec} is not pulled: `tender models pull {spec}` fetches it."
            )
        return found
    path = Path(spec).expanduser()
    shown = echo(str(path), PATH_SHOWN)
    if path.is_dir():
        files = sorted(path.glob("*.gguf"))
        if len(files) != 1:
            raise BadSetting(
                f"TENDER_REQUEST_MODEL={shown} is a folder holding {len(files)} .gguf files; name the file."
            )
        return files[0]
    if not path.is_file():
        raise BadSetting(
            f"TENDER_REQUEST_MODEL={shown}: there is no such file. Set it to a .gguf file, to "
            f"{REQUEST_MODEL} once pulled (`tender models pull {REQUEST_MODEL}`), or to rules."
        )
    return path


def text_model_for(settings: Settings):
    """The language model that reads requests (agents/local_model.py), loaded once per process; None where
    request_model_file finds none. BadSetting where it cannot be loaded (llama-cpp-python missing, a file that
    is no model)."""
    from tender.agents.local_model import LocalModelUnavailable
    from tender.agents.reasoners.local import warmed

    file = request_model_file(settings)
    if file is None:
        return None
    try:
        return warmed(file.resolve(), settings.cache_dir)
    except LocalModelUnavailable as error:
        raise BadSetting(
            f"The model that reads requests, {echo(str(file), PATH_SHOWN)}, cannot be used: {error} Set "
            "TENDER_REQUEST_MODEL to another .gguf file, or to rules to read requests by rules."
        ) from None


def endpoint_model_for(settings: Settings, base_url: str | None):
    """The model that answers the LLM backend in this process where its base URL is "local": the one that reads
    requests (TENDER_REQUEST_MODEL), else the pulled default; None for any other base URL, or where none is pulled
    (the factory then says what to do)."""
    from tender.agents.reasoners.local_endpoint import is_local
    from tender.catalog.models import REQUEST_MODEL, model_file

    if not is_local(base_url):
        return None
    file = request_model_file(settings) or model_file(REQUEST_MODEL, settings.home)
    if file is None:
        return None
    from tender.agents.local_model import LocalModelUnavailable, load

    try:
        return load(file.resolve())
    except LocalModelUnavailable as error:
        raise BadSetting(
            f"TENDER_LLM_BASE_URL=local, but {echo(str(file), PATH_SHOWN)} cannot be used: {error}"
        ) from None


@functools.lru_cache(maxsize=2)
def _reader(spec: str, runtime: str, cache_dir: Path):
    from tender.catalog import get_embedder
    from tender.errors import TenderError
    from tender.ranking.reader import Reader

    try:
        embedder = get_embedder(spec, threads=1, runtime=runtime, cache_dir=cache_dir)
        embedder.embed(["a site that shows nearby restaurants on a map"])  # a model that cannot run fails here
    except TenderError as error:
        raise BadSetting(f"TENDER_READER_MODEL={echo(spec, PATH_SHOWN)} cannot be used: {error}") from None
    except Exception as error:  # what a damaged model makes its runtime raise (onnxruntime, tokenizers, torch)
        said = " ".join(str(error).split())
        raise BadSetting(
            f"TENDER_READER_MODEL={echo(spec, PATH_SHOWN)}: its model cannot be loaded ({type(error).__name__}: "
            f"{said[:200]}{'…' if len(said) > 200 else ''}). Pull it again (`tender models pull NAME` mends it), or "
            "set TENDER_READER_MODEL to a whole model folder, or unset it."
        ) from None
    return Reader(embedder, cache_dir)
