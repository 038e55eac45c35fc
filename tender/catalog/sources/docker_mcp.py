"""Docker's MCP catalogue (docker/mcp-registry, MIT) as a catalogue source: one server per server.yaml, run from its
image (`docker run -i --rm`, a `-e NAME` for each secret and setting, its volumes where the user names the host
folder) or reached at its remote endpoint, with its category, and its tools where the catalogue lists them.

Templated values ("{{github.token}}") are the user's: they become placeholders, never a record's example."""

import re
from pathlib import Path
from typing import Any

import yaml

from ...safety import one_line
from .. import install
from ..install import Arg, Refused, Variable
from ..servers import Server, Tool, archived
from .server_catalogue import servers_loaded
from .base import Loaded, mapping, read_records

LICENCE = "MIT, Copyright (c) Docker, Inc. (docker/mcp-registry); each server.yaml is its publisher's"
MAX_RECORD_BYTES = 256 * 1024
_TEMPLATE = re.compile(r"\{\{\s*([^{}|\s]+)(?:\|[^{}]*)?\s*\}\}")


def _text(value: Any, limit: int = 4000) -> str:
    return value[:limit] if isinstance(value, str) else ""


def placeholders(value: str) -> str:
    """ "{{aks.kubeconfig}}" -> "<kubeconfig>"; "${APIFY_API_KEY}" -> "<APIFY_API_KEY>"."""
    value = _TEMPLATE.sub(lambda m: f"<{m.group(1).rsplit('.', 1)[-1]}>", value)
    return re.sub(r"\$\{([A-Za-z_]\w*)\}", r"<\1>", value)


def category_name(slug: str) -> str:
    slug = slug.strip()
    if not slug:
        return ""
    special = {"ai": "AI", "ai-ml": "AI & ML", "devops": "DevOps", "crm": "CRM", "iot": "IoT"}
    return special.get(slug.lower(), " ".join(w.capitalize() for w in slug.replace("-", " ").split()))


def _variables(config: dict) -> list[Variable]:
    required = (
        set((config.get("parameters") or {}).get("required") or [])
        if isinstance(config.get("parameters"), dict)
        else set()
    )
    found: list[Variable] = []
    for secret in config.get("secrets") or []:
        if isinstance(secret, dict) and secret.get("env"):
            found.append(Variable(name=str(secret["env"]), required=True, secret=True, description="a secret"))
    for entry in config.get("env") or []:
        if isinstance(entry, dict) and entry.get("name"):
            key = _TEMPLATE.search(str(entry.get("value", "")))
            wanted = bool(key and key.group(1).rsplit(".", 1)[-1] in required)
            found.append(
                Variable(
                    name=str(entry["name"]), required=wanted, description=one_line(_text(entry.get("description"), 200))
                )
            )
    return found


def _command_args(command: list) -> list[Arg]:
    """run.command as arguments: "--flag={{x.y}}" a flag with the user's value, "--flag" then a value, a value."""
    out: list[Arg] = []
    for word in command[:40]:
        word = placeholders(str(word))
        if word.startswith("-"):
            out.append(Arg(kind="named", name=word, boolean="=" not in word and " " not in word))
        elif out and out[-1].kind == "named" and out[-1].boolean:
            out[-1] = Arg(kind="named", name=out[-1].name, value=word, required=True)
        else:
            out.append(Arg(kind="positional", value=word, required=True))
    return out


def server_of(row: dict, origin: str) -> Server:
    name = _text(row.get("name"), 200).strip()
    if not name:
        raise ValueError("has no name")
    spec = yaml.safe_load(_text(row.get("server_yaml"), MAX_RECORD_BYTES))
    if not isinstance(spec, dict):
        raise ValueError("its server.yaml is not a mapping")
    about = mapping(spec.get("about"))
    meta = mapping(spec.get("meta"))
    source = mapping(spec.get("source"))
    config = mapping(spec.get("config"))
    title = one_line(_text(about.get("title"), 300)) or name
    description = _text(about.get("description")).strip()
    kind = _text(spec.get("type"), 20)
    image = _text(spec.get("image"), 300).strip()
    remote_spec = mapping(spec.get("remote"))
    untagged = re.sub(r"(@sha256:[a-f0-9]+|:[\w][\w.-]*)$", "", image) if image else ""
    namespace = untagged or (
        f"docker:{name}"
        if not remote_spec
        else re.sub(r"^https?://", "", _text(remote_spec.get("url"), 300)).rstrip("/")
    )
    project = _text(source.get("project"), 500).rstrip("/")
    folder = _text(source.get("directory"), 300).strip("/")
    server = Server(
        ref=f"docker:{name}",
        namespace=namespace or name,
        title=title,
        description=description,
        source=origin,
        categories=[c for c in [category_name(_text(meta.get("category"), 60))] if c],
        repository=f"{project}/tree/HEAD/{folder}" if project and folder else project,
        homepage=project,
        status="active",
        status_source="in Docker's MCP catalogue",
    )
    try:
        variables = _variables(config)
    except ValueError as error:
        variables = []
        server.refused.append(f"a variable: {str(error).splitlines()[0][:100]}")
    run = mapping(spec.get("run"))
    if kind == "server" and image:
        volumes = [
            Arg(kind="named", name="-v", value=placeholders(str(v)), required=True) for v in run.get("volumes") or []
        ]
        try:
            server.routes.append(
                install.package(
                    "oci",
                    image,
                    runner_arguments=volumes,
                    arguments=_command_args(list(run.get("command") or [])),
                    env=variables,
                    source="docker",
                )
            )
        except Refused as error:
            server.refused.append(str(error))
    elif kind == "remote" and remote_spec:
        headers = []
        for header, value in (remote_spec.get("headers") or {}).items():
            try:
                headers.append(
                    Variable(name=str(header), required=True, secret=True, description=placeholders(str(value))[:200])
                )
            except ValueError:
                server.refused.append(f"a header {str(header)[:40]!r} that is no header name")
        try:
            server.routes.append(
                install.remote(
                    _text(remote_spec.get("url"), 2000), _text(remote_spec.get("transport_type"), 40), headers, "docker"
                )
            )
        except Refused as error:
            server.refused.append(str(error))
        if spec.get("oauth"):
            server.extra["remote_auth"] = "OAuth (the client signs in)"
    else:
        server.refused.append(
            f"a {kind or 'typeless'} entry: Docker's own runtime runs it, not a command Tender can write"
        )
    listed = row.get("tools") if isinstance(row.get("tools"), list) else spec.get("tools")
    for tool in (listed or [])[:200]:
        if isinstance(tool, dict) and tool.get("name"):
            schema = tool.get("inputSchema") or tool.get("parameters") or {}
            properties = schema.get("properties") if isinstance(schema, dict) else None
            server.tools.append(
                Tool(
                    name=str(tool["name"]),
                    description=_text(tool.get("description"), 2000),
                    inputs=list(properties)[:10] if isinstance(properties, dict) else [],
                )
            )
    if server.tools:
        server.tools_from = "Docker's catalogue lists them"
    if archived(title, description):
        server.status, server.status_source = "deprecated", "Docker's catalogue marks it archived"
    return server


def load_docker_mcp(path: Path) -> Loaded:
    path = Path(path)
    servers, counts, named = read_records(
        path, lambda row: server_of(row, str(path)), MAX_RECORD_BYTES, unreadable=(yaml.YAMLError,)
    )
    return servers_loaded("docker-mcp", path, servers, counts, named, LICENCE)
