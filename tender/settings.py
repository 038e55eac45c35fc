"""Settings read once from the environment, by the CLI, and passed down; nothing deeper reads os.environ.

`Environment` is the one typed reading of the variables (pydantic-settings: names, types, ranges and the
one-line errors the CLI exits 2 on); `Settings` is what the code is given, with the paths that follow from them
(the catalogue under the home, the runs beside the catalogue). Everything Tender writes (the catalogue, the runs
database, caches, trained models) lives under one home, `TENDER_HOME`, by default the platform's per-user data
folder (platformdirs), never beside the code."""

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import platformdirs
from pydantic import AliasChoices, Field, ValidationInfo, field_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from .errors import DataMissing, InputToFix
from .safety import echo, redact

# A clone keeps the ProgrammableWeb data in ../shared/data beside it; an installed package has none.
_CLONE_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "programmableweb"


# The LLM backend's defaults, written once (agents/reasoners take them from here).
LLM_TIMEOUT_DEFAULT_S = 60.0  # one attempt, from connecting to the last byte
LLM_IN_FLIGHT_DEFAULT = 4  # LLM calls at once
LLM_RETRIES_DEFAULT = 3


def platform_home() -> Path:
    """The platform's per-user data folder for Tender: ~/.local/share/tender (or $XDG_DATA_HOME/tender),
    ~/Library/Application Support/tender, %LOCALAPPDATA%\\tender."""
    return Path(platformdirs.user_data_dir("tender", appauthor=False))


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
    # TENDER_READER_MODEL: a strong encoder that reads each shortlist (ranking/reader.py)
    reader_model: str | None = None
    # TENDER_JUDGE=off: award what the ranking scores, without the matcher's judgement of each award (ranking/judge.py)
    judge: bool = True
    # TENDER_REQUEST_MODEL: the language model that reads a request into needs (agents/reasoners/local.py): a pulled
    # model's name, a .gguf file, or "rules" (none, as when unset)
    request_model: str | None = None
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
    # TENDER_MANAGER_BACKEND, TENDER_CONTRACTOR_BACKEND: the reasoners a server's recommend_apis runs (the assistant
    # asks for abilities, the deployment chooses how they are reasoned); `client`: the caller's model states the needs
    manager_backend: str = "offline"
    contractor_backend: str = "offline"

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

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> "Settings":
        """The settings the process's environment gives, or those of `env` alone (a test, a program embedding
        Tender); BadSetting, naming the variable, for a value that cannot be used."""
        if env is None:
            return Environment().settings()
        given: dict[str, Any] = dict(env)  # a blank value is unset, as in the environment (_blank_is_unset)
        return _Given(**given).settings()


class BadSetting(InputToFix):
    """A TENDER_* value the user set and can fix: the CLI exits 2."""


RULES_ONLY = ("rules", "off", "none")  # TENDER_REQUEST_MODEL values that turn the model off
PATH_SHOWN = 300  # a folder the user named is quoted up to this many characters (a path's are rarely more)


# The ranges of the numeric settings, shared with the CLI's flags. An hour bounds one LLM attempt and one
# request's LLM steps (as recommend_apis' deadline_s); nan, inf and 1e309 (inf) are no number of seconds.
LLM_TIMEOUT_S = (1.0, 3600.0)
DEADLINE_S = (0.1, 3600.0)
LLM_IN_FLIGHT = (1, 256)
EMBEDDING_DIMENSIONS = (32, 8192)


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


def _variable(name: str, *more: str) -> Any:
    """A field read from the environment variable `name` (or, where it is unset, from `more`, in order)."""
    return AliasChoices(name, *more) if more else name


class Environment(BaseSettings):
    """The variables Tender reads, typed and checked in one place. An empty value is unset; a value that cannot be
    used is refused in one line that names the variable (and never echoes a URL, which may hold a password)."""

    model_config = SettingsConfigDict(frozen=True, extra="ignore", case_sensitive=True, env_ignore_empty=True)

    home: Path | None = Field(None, validation_alias=_variable("TENDER_HOME"))
    catalog: Path | None = Field(None, validation_alias=_variable("TENDER_CATALOG"))
    runs: str | None = Field(None, validation_alias=_variable("TENDER_RUNS"), repr=False)
    data: Path | None = Field(None, validation_alias=_variable("TENDER_DATA"))
    embedding_model: str | None = Field(None, validation_alias=_variable("TENDER_EMBEDDING_MODEL"))
    embedding_runtime: str = Field("auto", validation_alias=_variable("TENDER_EMBEDDING_RUNTIME"))
    embedding_dimensions: int | None = Field(None, validation_alias=_variable("TENDER_EMBEDDING_DIMENSIONS"))
    reader_model: str | None = Field(None, validation_alias=_variable("TENDER_READER_MODEL"))
    judge: bool = Field(True, validation_alias=_variable("TENDER_JUDGE"))
    request_model: str | None = Field(None, validation_alias=_variable("TENDER_REQUEST_MODEL"))
    ranking_model: Path | None = Field(None, validation_alias=_variable("TENDER_RANKING_MODEL"))
    llm_base_url: str | None = Field(None, validation_alias=_variable("TENDER_LLM_BASE_URL", "OPENAI_BASE_URL"))
    llm_model: str | None = Field(None, validation_alias=_variable("TENDER_LLM_MODEL", "OPENAI_MODEL"))
    llm_api_key: str | None = Field(
        None, validation_alias=_variable("TENDER_LLM_API_KEY", "OPENAI_API_KEY"), repr=False
    )
    llm_timeout_s: float = Field(LLM_TIMEOUT_DEFAULT_S, validation_alias=_variable("TENDER_LLM_TIMEOUT"))
    llm_in_flight: int = Field(LLM_IN_FLIGHT_DEFAULT, validation_alias=_variable("TENDER_LLM_IN_FLIGHT"))
    llm_cache: bool = Field(True, validation_alias=_variable("TENDER_LLM_CACHE"))
    deadline_s: float | None = Field(None, validation_alias=_variable("TENDER_DEADLINE"))
    http_token: str | None = Field(None, validation_alias=_variable("TENDER_HTTP_TOKEN"), repr=False)
    sampling: bool = Field(True, validation_alias=_variable("TENDER_SAMPLING"))
    manager_backend: str = Field("offline", validation_alias=_variable("TENDER_MANAGER_BACKEND"))
    contractor_backend: str = Field("offline", validation_alias=_variable("TENDER_CONTRACTOR_BACKEND"))

    @classmethod
    def variable(cls, field_name: str) -> str:
        alias = cls.model_fields[field_name].validation_alias
        return alias.choices[0] if isinstance(alias, AliasChoices) else str(alias)  # type: ignore[return-value]

    @field_validator("home", "catalog", "data", "ranking_model")
    @classmethod
    def _expand(cls, value: Path | None) -> Path | None:
        return value.expanduser() if value is not None else None

    @field_validator("llm_timeout_s", "llm_in_flight", "deadline_s", "embedding_dimensions", mode="before")
    @classmethod
    def _in_range(cls, value: Any, info: ValidationInfo) -> Any:
        if value is None or not isinstance(value, str):
            return value
        name = info.field_name or ""
        kind: type = int if cls.model_fields[name].annotation in (int, int | None) else float
        minimum, maximum = _RANGES[name]
        try:
            number = kind(value)
        except ValueError:
            number = None
        if number is None or not math.isfinite(number) or not minimum <= number <= maximum:
            unit = "a whole number" if kind is int else "a number of seconds"
            raise BadSetting(
                f"{cls.variable(name)}={echo(value)} is not valid; set it to {unit} from {minimum:g} to "
                f"{maximum:g}, or unset it."
            )
        return number

    @field_validator("llm_cache", "sampling", mode="before")
    @classmethod
    def _switch(cls, value: Any, info: ValidationInfo) -> Any:
        if not isinstance(value, str):
            return value
        text = value.lower()
        if text in ("1", "on", "true", "yes"):
            return True
        if text in ("0", "off", "false", "no"):
            return False
        raise BadSetting(
            f"{cls.variable(info.field_name or '')}={echo(text)} is not valid; set it to on or off, or unset it."
        )

    @field_validator("manager_backend", "contractor_backend")
    @classmethod
    def _backend(cls, value: str, info: ValidationInfo) -> str:
        allowed = ("offline", "llm", "client") if info.field_name == "manager_backend" else ("offline", "llm")
        if value not in allowed:
            raise BadSetting(
                f"{cls.variable(info.field_name or '')}={echo(value)} is not valid; set it to one of "
                f"{', '.join(allowed)}, or unset it."
            )
        return value

    @field_validator("llm_base_url")
    @classmethod
    def _readable_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        import httpx

        try:
            httpx.URL(value)
        except (httpx.InvalidURL, ValueError, TypeError):  # httpx's own message quotes the pieces ("Invalid port: ...")
            raise BadSetting(
                f"TENDER_LLM_BASE_URL (or OPENAI_BASE_URL) cannot be read as a URL as written: {ENCODE}"
            ) from None
        return value

    # Defined last, so run first: pydantic runs a field's before-validators last-defined first.
    @field_validator("*", mode="before")
    @classmethod
    def _blank_is_unset(cls, value: Any, info: ValidationInfo) -> Any:
        if isinstance(value, str) and not value.strip():
            return cls.model_fields[info.field_name or ""].default
        return value.strip() if isinstance(value, str) and info.field_name not in _VERBATIM else value

    def settings(self) -> Settings:
        """What the code is given: the catalogue under the home unless named, the runs beside the catalogue
        unless named (a file, or a PostgreSQL URL)."""
        home = self.home or platform_home()
        catalog = self.catalog or home / "catalog.db"
        runs, runs_url = _runs(self.runs or "")
        return Settings(
            home=home,
            catalog_path=catalog,
            runs_path=runs or catalog.with_name("runs.db"),
            runs_url=runs_url,
            data_dir=self.data or _CLONE_DATA,
            data_from_env=self.data is not None,
            ranking_model_path=self.ranking_model,
            **self.model_dump(include=_AS_GIVEN),
        )


class _Given(Environment):
    """The same variables, from a mapping instead of the process's environment."""

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings,)


# The values Settings takes as they are read (under the same names).
_AS_GIVEN = set(Environment.model_fields) - {"home", "catalog", "runs", "data", "ranking_model"}
# Secrets and URLs are used as given (a password may start or end with a blank).
_VERBATIM = {"runs", "llm_base_url", "llm_api_key", "http_token"}
_RANGES = {
    "llm_timeout_s": LLM_TIMEOUT_S,
    "deadline_s": DEADLINE_S,
    "llm_in_flight": LLM_IN_FLIGHT,
    "embedding_dimensions": EMBEDDING_DIMENSIONS,
}
