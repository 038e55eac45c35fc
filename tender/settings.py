"""Settings read once from the environment, by the CLI, and passed down; nothing deeper reads os.environ.

Everything Tender writes (the catalogue, the runs database, caches, trained models) lives under one home,
`TENDER_HOME`, by default a per-user data folder, never beside the code."""

import math
import functools
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from .errors import DataMissing, InputToFix
from .safety import echo, redact

# A clone keeps the ProgrammableWeb data in ../shared/data beside it; an installed package has none.
_CLONE_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "programmableweb"


# The LLM backend's defaults, written once (agents/reasoners take them from here).
LLM_TIMEOUT_DEFAULT_S = 60.0  # one attempt, from connecting to the last byte
LLM_IN_FLIGHT_DEFAULT = 4  # LLM calls at once
LLM_RETRIES_DEFAULT = 3


def default_home(env=None) -> Path:
    """TENDER_HOME, else the platform's per-user data folder."""
    env = os.environ if env is None else env
    if env.get("TENDER_HOME"):
        return Path(env["TENDER_HOME"]).expanduser()
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "tender"
    if sys.platform == "win32":
        return Path(env.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local") / "tender"
    return Path(env.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "tender"


def default_data_dir(env=None) -> Path:
    """TENDER_DATA, else the ProgrammableWeb data beside a clone (see the README, "Data")."""
    env = os.environ if env is None else env
    return Path(env["TENDER_DATA"]).expanduser() if env.get("TENDER_DATA") else _CLONE_DATA


@dataclass(frozen=True)
class Settings:
    home: Path = Path(".")
    catalog_path: Path = Path("catalog.db")
    runs_path: Path = Path("runs.db")
    # TENDER_RUNS=postgresql://...: the runs store several replicas share, instead of the file at runs_path.
    runs_url: str | None = field(default=None, repr=False)  # it may hold a password
    embedding_model: str | None = None
    embedding_runtime: str = "auto"  # "onnx", "torch" or "auto" (ONNX where installed)
    embedding_dimensions: int | None = None  # TENDER_EMBEDDING_DIMENSIONS: Matryoshka truncation of a folder model
    reader_model: str | None = (
        None  # TENDER_READER_MODEL: a strong encoder that reads each shortlist (ranking/reader.py)
    )
    data_dir: Path = _CLONE_DATA
    data_from_env: bool = False  # TENDER_DATA named data_dir (else it is the clone's, which an install lacks)
    llm_base_url: str | None = None
    llm_model: str | None = None
    llm_api_key: str | None = field(default=None, repr=False)  # secrets stay out of a printed Settings
    llm_timeout_s: float = LLM_TIMEOUT_DEFAULT_S  # TENDER_LLM_TIMEOUT: one attempt, from connecting to the last byte
    llm_in_flight: int = LLM_IN_FLIGHT_DEFAULT  # TENDER_LLM_IN_FLIGHT: LLM calls at once
    llm_cache: bool = True  # TENDER_LLM_CACHE=off: ask the endpoint every time
    deadline_s: float | None = None  # TENDER_DEADLINE: seconds a request's LLM steps may take; None: no deadline
    http_token: str | None = field(default=None, repr=False)
    ranking_model_path: Path | None = None  # TENDER_RANKING_MODEL: a model refitted with `tender train ranker --out`
    sampling: bool = True  # TENDER_SAMPLING=off: never ask a client's model (MCP sampling), whatever a call asks

    def data_file(self, name: str, instead: str = "") -> Path:
        """A file of the ProgrammableWeb data; DataMissing, saying to set TENDER_DATA (or `instead`), if absent."""
        path = self.data_dir / name
        if not path.exists():
            raise DataMissing(self.data_dir, name, instead, from_env=self.data_from_env)
        return path

    @property
    def runs_location(self) -> Path | str:
        """Where runs are kept: the PostgreSQL URL, else the file (answers/runs.py `open_store` reads either)."""
        return self.runs_url or self.runs_path

    @property
    def runs_shown(self) -> str:
        """Where runs are kept, as messages say it: the URL without its credentials (safety.redact)."""
        return redact(self.runs_url) if self.runs_url else str(self.runs_path)

    @property
    def models_dir(self) -> Path:
        return self.home / "models"

    @property
    def cache_dir(self) -> Path:
        return self.home / "cache"

    def embedder(self, threads: int | None = 1, catalog: Path | None = None):
        """The configured encoder, loaded lazily; `threads=None` uses every core (for building). Where none is
        configured, a `catalog` built with Tender's tuned encoder keeps it (a server started without the
        setting that built it still opens it, and a rebuild does not switch it back to the stock one)."""
        from tender.catalog import get_embedder
        from tender.catalog.encoders import TUNED_NAME
        from tender.catalog.store import built_with

        spec = self.embedding_model
        if spec is None and catalog is not None and built_with(catalog) == TUNED_NAME:
            spec = TUNED_NAME
        return get_embedder(
            spec,
            threads=threads,
            runtime=self.embedding_runtime,
            cache_dir=self.cache_dir,
            dimensions=self.embedding_dimensions,
        )

    def reader(self):
        """The strong encoder that reads each function's shortlist (TENDER_READER_MODEL), one per process and
        folder; None where unset."""
        if not self.reader_model:
            return None
        return _reader(self.reader_model, self.embedding_runtime, self.cache_dir)

    @classmethod
    def from_env(cls, env=None) -> "Settings":
        env = os.environ if env is None else env
        home = default_home(env)
        catalog = Path(env["TENDER_CATALOG"]).expanduser() if env.get("TENDER_CATALOG") else home / "catalog.db"
        runs, runs_url = _runs(env.get("TENDER_RUNS") or "")
        return cls(
            home=home,
            catalog_path=catalog,
            runs_path=runs or catalog.with_name("runs.db"),
            runs_url=runs_url,
            embedding_model=env.get("TENDER_EMBEDDING_MODEL") or None,
            reader_model=env.get("TENDER_READER_MODEL") or None,
            embedding_runtime=env.get("TENDER_EMBEDDING_RUNTIME") or "auto",
            embedding_dimensions=_number(env, "TENDER_EMBEDDING_DIMENSIONS", int, None, *EMBEDDING_DIMENSIONS),
            data_dir=default_data_dir(env),
            data_from_env=bool(env.get("TENDER_DATA")),
            llm_base_url=_llm_url(env),
            llm_model=env.get("TENDER_LLM_MODEL") or env.get("OPENAI_MODEL") or None,
            llm_api_key=env.get("TENDER_LLM_API_KEY") or env.get("OPENAI_API_KEY") or None,
            llm_timeout_s=_number(env, "TENDER_LLM_TIMEOUT", float, LLM_TIMEOUT_DEFAULT_S, *LLM_TIMEOUT_S),
            llm_in_flight=_number(env, "TENDER_LLM_IN_FLIGHT", int, LLM_IN_FLIGHT_DEFAULT, *LLM_IN_FLIGHT),
            llm_cache=_switch(env, "TENDER_LLM_CACHE", True),
            deadline_s=_number(env, "TENDER_DEADLINE", float, None, *DEADLINE_S),
            http_token=env.get("TENDER_HTTP_TOKEN") or None,
            ranking_model_path=Path(env["TENDER_RANKING_MODEL"]).expanduser()
            if env.get("TENDER_RANKING_MODEL")
            else None,
            sampling=_switch(env, "TENDER_SAMPLING", True),
        )


class BadSetting(InputToFix):
    """A TENDER_* value the user set and can fix: the CLI exits 2."""


# The ranges of the numeric settings, shared with the CLI's flags. An hour bounds one LLM attempt and one
# request's LLM steps (as recommend_apis' deadline_s); nan, inf and 1e309 (inf) are no number of seconds.
LLM_TIMEOUT_S = (1.0, 3600.0)
DEADLINE_S = (0.1, 3600.0)
LLM_IN_FLIGHT = (1, 256)
EMBEDDING_DIMENSIONS = (32, 8192)


def _number(env, name: str, kind: type, default, minimum: float, maximum: float):
    text = (env.get(name) or "").strip()
    if not text:
        return default
    try:
        value = kind(text)
    except ValueError:
        value = None
    if value is None or not math.isfinite(value) or not minimum <= value <= maximum:
        unit = "a whole number" if kind is int else "a number of seconds"
        raise BadSetting(
            f"{name}={echo(text)} is not valid; set it to {unit} from {minimum:g} to {maximum:g}, or unset it."
        )
    return value


RUNS_URL_SCHEMES = ("postgresql://", "postgres://")


def _runs(text: str) -> tuple[Path | None, str | None]:
    """TENDER_RUNS: a file, or a PostgreSQL URL (another kind of URL is refused, saying which are read)."""
    text = text.strip()
    if not text:
        return None, None
    if text.startswith(RUNS_URL_SCHEMES):
        if not readable_runs_url(text):
            raise BadSetting(f"TENDER_RUNS holds a PostgreSQL URL that cannot be read as written: {ENCODE}")
        return None, text
    scheme = text.split("://", 1)[0] if "://" in text else ""
    if scheme and scheme.replace("+", "").isalnum():
        raise BadSetting(
            f"TENDER_RUNS={echo(redact(text))} is a {scheme}:// URL; runs are kept in a file (a path) or in "
            "PostgreSQL (postgresql://user:password@host:5432/database)."
        )
    return Path(text).expanduser(), None


# A URL's user name and password may hold these as they are (RFC 3986); anything else percent-encoded.
_USERINFO = re.compile(r"(?:[A-Za-z0-9\-._~!$&'()*+,;=:]|%[0-9A-Fa-f]{2})*")
_BAD_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")
# Said instead of the URL, which is never echoed: a client reads such a URL otherwise than written (libpq takes an
# unencoded / in a password for the end of the host, an @ for its start) and its errors quote the pieces.
ENCODE = (
    "percent-encode the user name and password (and any value) in it: @ as %40, / as %2F, % as %25, # as %23, "
    "? as %3F, a space as %20 (python3 -c 'import getpass, urllib.parse; print(urllib.parse.quote(getpass.getpass(), "
    'safe=""))\' does it for a password typed in). The value is not shown: it may hold a password.'
)


def readable_runs_url(url: str) -> bool:
    """Whether libpq reads this PostgreSQL URL as written: at most one @, ending the user's part, which holds only
    what a URL may hold there; every % starting an encoding; no blank or #; and libpq parses it (where psycopg is
    installed)."""
    rest = url.split("://", 1)[1]
    if any(c.isspace() for c in rest) or "#" in rest or _BAD_PERCENT.search(rest) or rest.count("@") > 1:
        return False
    if "@" in rest and not _USERINFO.fullmatch(rest[: rest.index("@")]):
        return False
    try:
        from psycopg import ProgrammingError
        from psycopg.conninfo import conninfo_to_dict
    except ImportError:
        return True  # the store says what to install
    try:
        conninfo_to_dict(url)
    except ProgrammingError:
        return False
    return True


@functools.lru_cache(maxsize=2)
def _reader(spec: str, runtime: str, cache_dir: Path):
    from tender.catalog import get_embedder
    from tender.ranking.reader import Reader

    return Reader(get_embedder(spec, threads=1, runtime=runtime, cache_dir=cache_dir), cache_dir)


def _llm_url(env) -> str | None:
    """TENDER_LLM_BASE_URL (or OPENAI_BASE_URL), refused without being echoed when it cannot be read as written."""
    name = "TENDER_LLM_BASE_URL" if env.get("TENDER_LLM_BASE_URL") else "OPENAI_BASE_URL"
    text = env.get(name) or None
    if text is None:
        return None
    import httpx

    try:
        httpx.URL(text)
    except (httpx.InvalidURL, ValueError, TypeError):  # httpx's own message quotes the pieces ("Invalid port: ...")
        raise BadSetting(f"{name} cannot be read as a URL as written: {ENCODE}") from None
    return text


def _switch(env, name: str, default: bool) -> bool:
    text = (env.get(name) or "").strip().lower()
    if not text:
        return default
    if text in ("1", "on", "true", "yes"):
        return True
    if text in ("0", "off", "false", "no"):
        return False
    raise BadSetting(f"{name}={echo(text)} is not valid; set it to on or off, or unset it.")
