"""toolsdk's MCP registry (toolsdk-ai/toolsdk-mcp-registry, MIT) as a catalogue source: one server per record, with
its package (npm for node, PyPI for python), its environment variables, its remote endpoints, its category, and
the tools toolsdk listed where it started the server ("validated").

A record is its publisher's words: its install route is built from checked parts (catalog/install.py). A python
record's package name is only a guess where toolsdk never started it (the name of an unrelated PyPI project,
sometimes), so such a record gets no route unless a harvest found its package and started it."""

from pathlib import Path
from typing import Any

from ...safety import one_line
from .. import install
from ..install import Refused, Variable
from ..servers import Server, Tool, archived
from .server_catalogue import servers_loaded
from .base import Loaded, mapping, read_records

LICENCE = "MIT, Copyright (c) toolsdk-ai (toolsdk-ai/toolsdk-mcp-registry); each record is its publisher's"
MAX_RECORD_BYTES = 256 * 1024
RUNTIMES = {"node": "npm", "python": "pypi"}


def category_name(slug: str) -> str:
    """toolsdk's category slug as words: "finance-fintech" -> "Finance & Fintech"; none for "uncategorized"."""
    if not slug or slug in ("uncategorized", "other-tools-and-integrations"):
        return ""
    words = slug.replace("-and-", " & ").replace("-", " ").split()
    return " ".join(w if w == "&" else w.capitalize() for w in words)


def _text(value: Any, limit: int) -> str:
    return value[:limit] if isinstance(value, str) else ""


def server_of(row: dict, origin: str) -> Server:
    """A toolsdk line as a Server; Refused reasons for its routes are kept on it, never raised."""
    record = mapping(row.get("record"))
    key = _text(row.get("key"), 300).strip()
    if not key:
        raise ValueError("has no key")
    title = one_line(_text(record.get("name"), 300)) or key
    description = _text(record.get("description"), 4000).strip()
    runtime = _text(record.get("runtime"), 20)
    validated = row.get("validated") is True
    env = []
    raw_env = mapping(record.get("env"))
    for name, spec in list(raw_env.items())[:40]:
        spec = mapping(spec)
        try:
            env.append(
                Variable(
                    name=str(name),
                    required=spec.get("required") is True,
                    secret=any(w in str(name).upper() for w in ("KEY", "TOKEN", "SECRET", "PASSWORD")),
                    description=one_line(_text(spec.get("description"), 200)),
                )
            )
        except ValueError:
            continue
    server = Server(
        ref=f"toolsdk:{key}",
        namespace=_text(record.get("packageName"), 300).strip() or key,
        title=title,
        description=description,
        source=origin,
        categories=[c for c in [category_name(_text(row.get("category"), 80))] if c],
        repository=_text(record.get("url"), 500),
        homepage=_text(record.get("url"), 500),
        status="active" if validated else "unknown",
        status_source="toolsdk started it and listed its tools" if validated else "listed by toolsdk's registry",
    )
    package = _text(record.get("packageName"), 300).strip()
    registry = RUNTIMES.get(runtime)
    if registry and package and not package.startswith("@toolsdk-remote/"):
        if registry == "pypi" and not validated:
            server.refused.append(
                f"PyPI package {package[:60]!r} not verified: toolsdk never started it, and a name it guessed may be "
                "another project's"
            )
            server.extra["unverified_package"] = {"registry": "pypi", "identifier": package}
        else:
            try:
                server.routes.append(install.package(registry, package, env=env, source="toolsdk"))
            except Refused as error:
                server.refused.append(str(error))
    elif runtime and runtime not in RUNTIMES and not record.get("remotes"):
        server.refused.append(f"a {runtime[:20]} server: no package registry Tender runs (see its repository)")
    for number, remote in enumerate(record.get("remotes") or []):
        if not isinstance(remote, dict):
            continue
        headers = []
        auth = mapping(remote.get("auth"))
        if auth.get("type") in ("bearer", "apiKey", "api_key"):
            headers.append(Variable(name="Authorization", required=True, secret=True, description="a bearer token"))
        try:
            server.routes.append(
                install.remote(_text(remote.get("url"), 2000), _text(remote.get("type"), 40), headers, source="toolsdk")
            )
        except Refused as error:
            server.refused.append(f"remotes[{number}]: {error}")
        if auth.get("type") == "oauth2":
            server.extra["remote_auth"] = "OAuth (the client signs in)"
    tools = mapping(row.get("tools"))
    for name, spec in list(tools.items())[:200]:
        spec = mapping(spec)
        server.tools.append(Tool(name=str(spec.get("name") or name), description=_text(spec.get("description"), 2000)))
    if server.tools:
        server.tools_from = "toolsdk's registry started it and listed its tools"
    if archived(title, description):
        server.status, server.status_source = "deprecated", "its record says it is archived or deprecated"
    return server


def load_toolsdk(path: Path) -> Loaded:
    path = Path(path)
    servers, counts, named = read_records(path, lambda row: server_of(row, str(path)), MAX_RECORD_BYTES)
    return servers_loaded("toolsdk", path, servers, counts, named, LICENCE)
