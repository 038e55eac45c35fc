"""`tender doctor`: what a server started the same way would use (catalogue, encoder, runs database, LLM
endpoint, settings), whether each works, and the client configurations that start such a server.

An MCP client (Claude Desktop, an IDE) starts `tender serve` without the user's shell: no PATH additions, no
exported TENDER_* variables. So the configurations printed here name the command by its full path and carry
every setting in their `env`, and what the doctor checks is what that server will see. A secret (a key, a URL
holding a password or a token) is never printed: the configurations carry a placeholder in its place, and say so,
since a masked URL pasted in would log in wrongly without a word."""

import json
import os
import shlex
import sys
from pathlib import Path

from pydantic import BaseModel, Field

from tender.catalog import TenderError
from tender.catalog.summary import summarise
from tender.safety import redact
from tender.settings import Settings
from tender.assembly import embedder_for, reader_for, text_model_for

LLM_PROBE_S = 3.0  # seconds the LLM endpoint has to answer GET /models
SECRET = "<your key>"  # a key is never printed; the snippet says where it goes


class Check(BaseModel):
    name: str
    ok: bool
    found: str = Field(description="What a server started this way would use.")
    fix: str = Field("", description="What to do, where it is not ok.")


class Diagnosis(BaseModel):
    checks: list[Check]
    settings: dict[str, str] = Field(description="The settings that server would run with, by variable.")
    clients: dict[str, str] = Field(description="Client configurations that start it, by client.")
    placeholders: dict[str, str] = Field(
        default_factory=dict,
        description="The variable whose value to write in place of each placeholder in them: a secret, never printed.",
    )

    @property
    def ok(self) -> bool:
        return all(check.ok for check in self.checks)


def diagnose(settings: Settings, *, tender_command: str | None = None) -> Diagnosis:
    """Check what a server with `settings` would use. Read-only: nothing is created (a runs database that does
    not exist yet is only checked to be creatable)."""
    env = server_env(settings)
    command = tender_command or tender_executable()
    return Diagnosis(
        checks=[
            _catalogue(settings),
            _encoder(settings),
            *([_reader(settings)] if settings.reader_model else []),
            _request_model(settings),
            _runs(settings.runs_url) if settings.runs_url else _runs(settings.runs_path),
            _ranking_model(settings),
            _llm(settings),
        ],
        settings=env,
        clients=client_configs(command, env),
        placeholders={value: name for name, value in env.items() if value in (SECRET, placeholder(name))},
    )


def placeholder(name: str) -> str:
    return f"<your {name}>"


def _pasteable(name: str, url: str) -> str:
    """A URL as a configuration may carry it: whole, or, where it holds a credential, a placeholder."""
    return url if redact(url) == url else placeholder(name)


def tender_executable() -> str:
    """The full path of this `tender` command: a client does not search the shell's PATH."""
    beside = Path(sys.executable).with_name("tender")
    return str(beside) if beside.exists() else str(Path(sys.argv[0]).resolve())


def server_env(settings: Settings) -> dict[str, str]:
    """The TENDER_* variables that make a server use what this one does, paths made absolute."""
    env = {
        "TENDER_HOME": str(settings.home.expanduser().resolve()),
        "TENDER_CATALOG": str(settings.catalog_path.expanduser().resolve()),
        # a PostgreSQL URL holding a password is a placeholder, like the LLM key: the user writes it in
        "TENDER_RUNS": _pasteable("TENDER_RUNS", settings.runs_url)
        if settings.runs_url
        else str(settings.runs_path.expanduser().resolve()),
    }
    # An encoder named by its folder is given whole (the client starts the server elsewhere); a stock name as it is.
    for name, spec in (
        ("TENDER_EMBEDDING_MODEL", settings.embedding_model),
        ("TENDER_READER_MODEL", settings.reader_model),
        ("TENDER_REQUEST_MODEL", settings.request_model),
    ):
        if spec:
            env[name] = str(Path(spec).resolve()) if Path(spec).exists() else spec
    if settings.embedding_runtime != "auto":
        env["TENDER_EMBEDDING_RUNTIME"] = settings.embedding_runtime
    if settings.ranking_model_path:
        env["TENDER_RANKING_MODEL"] = str(settings.ranking_model_path.resolve())
    if settings.llm_base_url:
        env["TENDER_LLM_BASE_URL"] = _pasteable("TENDER_LLM_BASE_URL", settings.llm_base_url)
    if settings.llm_model:
        env["TENDER_LLM_MODEL"] = settings.llm_model
    if settings.llm_api_key:
        env["TENDER_LLM_API_KEY"] = SECRET
    if settings.llm_timeout_s != Settings.llm_timeout_s:
        env["TENDER_LLM_TIMEOUT"] = f"{settings.llm_timeout_s:g}"
    if settings.llm_in_flight != Settings.llm_in_flight:
        env["TENDER_LLM_IN_FLIGHT"] = str(settings.llm_in_flight)
    if not settings.llm_cache:
        env["TENDER_LLM_CACHE"] = "off"
    if settings.deadline_s is not None:
        env["TENDER_DEADLINE"] = f"{settings.deadline_s:g}"
    return env


def client_configs(command: str, env: dict[str, str]) -> dict[str, str]:
    """Claude Desktop and Cursor (mcpServers), VS Code (servers) and Claude Code (a command line)."""
    server = {"command": command, "args": ["serve"], "env": env}
    flags = " ".join(f"--env {shlex.quote(f'{k}={v}')}" for k, v in env.items())
    return {
        "Claude Desktop (claude_desktop_config.json), Cursor (.cursor/mcp.json)": json.dumps(
            {"mcpServers": {"tender": server}}, indent=2
        ),
        "VS Code (.vscode/mcp.json)": json.dumps({"servers": {"tender": {"type": "stdio", **server}}}, indent=2),
        "Claude Code": f"claude mcp add tender {flags} -- {shlex.quote(command)} serve",
    }


def _catalogue(settings: Settings) -> Check:
    try:
        summary = summarise(settings.catalog_path)
    except TenderError as error:
        return Check(name="catalogue", ok=False, found=str(settings.catalog_path), fix=str(error))
    built = f", built {summary.built_at}" if summary.built_at else ""
    return Check(
        name="catalogue",
        ok=True,
        found=f"{summary.path}: {summary.describe()}; encoder {summary.model}{built}; fingerprint {summary.fingerprint}",
    )


def _encoder(settings: Settings) -> Check:
    """The encoder the server would load (the configured one, else the one the catalogue keeps), loaded and run
    once, and checked against the catalogue's."""
    from tender.catalog import Catalog

    try:
        embedder = embedder_for(settings, catalog=settings.catalog_path)
        embedder.embed(["a site that shows nearby restaurants on a map"])
        found = f"{embedder.model_name} ({type(embedder).__name__})"
        if settings.catalog_path.is_file():
            Catalog(settings.catalog_path, embedder=embedder).close()  # EncoderMismatch where they differ
    except TenderError as error:
        return Check(name="encoder", ok=False, found=settings.embedding_model or "all-MiniLM-L6-v2", fix=str(error))
    return Check(name="encoder", ok=True, found=found)


def _reader(settings: Settings) -> Check:
    """The reader (TENDER_READER_MODEL), loaded and run once, with the ranking model fitted on its vectors."""
    from tender.ranking.choice import ranking_model

    try:
        reader = reader_for(settings)
        assert reader is not None
        reader.embedder.embed(["a site that shows nearby restaurants on a map"])
        ranking_model(settings.ranking_model_path, reader.embedder)
    except TenderError as error:
        return Check(name="reader", ok=False, found=str(settings.reader_model), fix=str(error))
    return Check(
        name="reader", ok=True, found=f"{reader.encoder.name}: reads each need's shortlist, its ranking model found"
    )


def _request_model(settings: Settings) -> Check:
    """What reads a request into needs where the caller states none: the language model TENDER_REQUEST_MODEL names,
    loaded and asked once, or the rules."""
    from tender.catalog.models import REQUEST_MODEL

    try:
        model = text_model_for(settings)
    except TenderError as error:
        return Check(
            name="request reader", ok=False, found=str(settings.request_model or REQUEST_MODEL), fix=str(error)
        )
    if model is None:
        return Check(
            name="request reader",
            ok=True,
            found=f"rules (a local model reads them with TENDER_REQUEST_MODEL={REQUEST_MODEL}, once pulled: `tender "
            f"models pull {REQUEST_MODEL}`, and llama-cpp-python installed: `pip install 'tender-mcp[local]'`)",
        )
    from tender.agents.context import RunContext
    from tender.agents.reasoners.embedded import EmbeddedReasoner
    from tender.agents.reasoners.local import LocalReader
    from tender.agents.tasks import DecomposeTask

    context = RunContext()
    reading = LocalReader(model, EmbeddedReasoner()).run(
        DecomposeTask(requirement="a site that shows nearby restaurants on a map"), context
    )
    if context.notes:
        return Check(name="request reader", ok=False, found=model.name, fix=" ".join(context.notes))
    needs = "; ".join(f.description for f in reading.functions)
    return Check(name="request reader", ok=True, found=f"{reading.read_by}: reads each request into needs ({needs})")


def _runs(path: Path | str) -> Check:
    if isinstance(path, str):  # a PostgreSQL URL
        return _runs_server(path)
    if path.is_file():
        from tender.answers.runs import RunStore, RunsUnavailable

        try:
            store = RunStore(path)
        except RunsUnavailable as error:
            return Check(name="runs", ok=False, found=str(path), fix=str(error))
        try:
            count = store.count()
        finally:
            store.close()
        writable = os.access(path, os.W_OK)
        return Check(
            name="runs",
            ok=writable,
            found=f"{path}: {count} run{'' if count == 1 else 's'}" + ("" if writable else ", read-only"),
            fix="" if writable else f"Make {path} writable, or set TENDER_RUNS to a writable file.",
        )
    folder = next((p for p in [path.parent, *path.parent.parents] if p.exists()), None)
    if folder is not None and not folder.is_dir():  # a file where a folder of the path should be
        return Check(
            name="runs", ok=False, found=str(path), fix=f"{folder} is a file, not a folder; set TENDER_RUNS elsewhere."
        )
    if folder is not None and os.access(folder, os.W_OK):
        return Check(name="runs", ok=True, found=f"{path}: none yet (made by the first run)")
    return Check(
        name="runs", ok=False, found=str(path), fix=f"{folder} is not writable; set TENDER_RUNS to a writable file."
    )


def _runs_server(url: str) -> Check:
    """A PostgreSQL runs store: reached, migrated, its runs counted (read-only but for the migrations)."""
    from tender.answers.runs import RunsUnavailable, shown
    from tender.answers.stores import open_store

    try:
        store = open_store(url)
        try:
            count = store.count()
        finally:
            store.close()
    except RunsUnavailable as error:
        return Check(name="runs", ok=False, found=str(shown(url)), fix=str(error))
    return Check(name="runs", ok=True, found=f"{shown(url)}: {count} run{'' if count == 1 else 's'}")


def _ranking_model(settings: Settings) -> Check:
    if settings.ranking_model_path is None:
        return Check(name="ranking model", ok=True, found="the one shipped for the encoder")
    if settings.ranking_model_path.is_file():
        return Check(name="ranking model", ok=True, found=str(settings.ranking_model_path))
    return Check(
        name="ranking model",
        ok=False,
        found=str(settings.ranking_model_path),
        fix="TENDER_RANKING_MODEL names no file; refit one with `tender train ranker --out FILE`, or unset it.",
    )


def _llm(settings: Settings) -> Check:
    """The LLM endpoint, asked for its models (GET /models) within LLM_PROBE_S; optional, so none is fine."""
    if not settings.llm_base_url:
        return Check(
            name="LLM endpoint",
            ok=True,
            found="none configured: the embedded reasoner answers (TENDER_LLM_BASE_URL names an endpoint)",
        )
    import httpx

    url = settings.llm_base_url.rstrip("/") + "/models"
    headers = {"Authorization": f"Bearer {settings.llm_api_key}"} if settings.llm_api_key else {}
    model = settings.llm_model or "(no TENDER_LLM_MODEL)"
    shown = redact(settings.llm_base_url)
    try:
        reply = httpx.get(url, headers=headers, timeout=LLM_PROBE_S)
    except httpx.HTTPError as error:
        return Check(
            name="LLM endpoint",
            ok=False,
            found=f"{shown}, model {model}: not reachable ({type(error).__name__}: {redact(str(error))})",
            fix="Start the endpoint, or fix TENDER_LLM_BASE_URL. Until then LLM steps fall back to the embedded "
            "reasoner.",
        )
    if reply.status_code >= 400:
        return Check(
            name="LLM endpoint",
            ok=False,
            found=f"{shown}, model {model}: reachable, GET /models answered HTTP {reply.status_code}",
            fix="Check TENDER_LLM_API_KEY and the URL (it should end in /v1 for most servers).",
        )
    try:
        served = [m.get("id") for m in reply.json().get("data", [])]
    except (ValueError, AttributeError):
        served = []
    known = "" if not served or settings.llm_model in served else f"; it serves {', '.join(map(str, served[:5]))}"
    return Check(
        name="LLM endpoint",
        ok=not known,
        found=f"{shown}, model {model}: reachable{known}",
        fix="Set TENDER_LLM_MODEL to one of the models it serves." if known else "",
    )
