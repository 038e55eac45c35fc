"""How to run the MCP servers a plan awards (items of an MCP registry): each server's install information as a
line for a terminal, and the plan's servers as the configuration an MCP client reads: Claude Desktop's
`mcpServers` (claude_desktop_config.json; Cursor reads the same) and VS Code's `servers` (.vscode/mcp.json).
Commands stay lists of arguments; secrets and the user's own values are placeholders ("<GITHUB_TOKEN>") to fill
in, never values."""

import shlex
from collections.abc import Iterable

from pydantic import ValidationError

from tender.agents.plan import Plan
from tender.catalog import ApiNotFound, Catalog
from tender.catalog.sources.mcp_registry import INSTALL, PackageInstall, RemoteInstall

InstallInfo = PackageInstall | RemoteInstall


def install_of(details: dict) -> InstallInfo | None:
    """An item's install information, read from its details; None for an item without any (not a registry
    server, or one whose record says nothing that can be run)."""
    raw = details.get("install") if isinstance(details, dict) else None
    if not isinstance(raw, dict):
        return None
    try:
        return INSTALL.validate_python(raw)
    except ValidationError:
        return None


def install_line(install: InstallInfo) -> str:
    """The install information in a line: the command as a shell would read it (quoted where a value needs it;
    to read, not to run through a shell), or the endpoint."""
    if isinstance(install, RemoteInstall):
        headers = f"; headers: {', '.join(h.name for h in install.headers)}" if install.headers else ""
        return f"connect: {install.url} ({install.transport}){headers}"
    env = f"; env: {', '.join(v.name for v in install.env)}" if install.env else ""
    return f"run: {shlex.join([install.command, *install.args])} ({install.transport}){env}"


def _placeholder(name: str) -> str:
    return f"<{name}>"


def claude_entry(install: InstallInfo) -> dict:
    if isinstance(install, RemoteInstall):
        entry: dict = {"type": "http" if install.transport == "streamable-http" else install.transport}
        entry["url"] = install.url
        if install.headers:
            entry["headers"] = {h.name: _placeholder(h.name) for h in install.headers}
        return entry
    entry = {"command": install.command, "args": list(install.args)}
    if install.env:
        entry["env"] = {v.name: _placeholder(v.name) for v in install.env}
    return entry


def vscode_entry(install: InstallInfo) -> dict:
    if isinstance(install, RemoteInstall):
        return claude_entry(install)
    return {"type": "stdio", **claude_entry(install)}


def config_names(servers: Iterable[str]) -> dict[str, str]:
    """A configuration key for each registry name: its last part ("io.github.github/github-mcp-server" ->
    "github-mcp-server"), or the whole name where two servers would share one."""
    names = list(dict.fromkeys(servers))
    short = {name: name.rsplit("/", 1)[-1] or name for name in names}
    taken = [short[n] for n in names]
    return {n: short[n] if taken.count(short[n]) == 1 else n for n in names}


def client_config(servers: Iterable[tuple[str, InstallInfo]]) -> dict:
    """Claude Desktop's and VS Code's configuration of exactly these servers (registry name, install), in order.
    A package runs its current release (PackageInstall.current): a version the registry listed may be gone from
    the package registry by the time the plan is read; each server's `install` keeps the pin, to set once checked."""
    servers = [(name, i.current() if isinstance(i, PackageInstall) else i) for name, i in servers]
    keys = config_names(name for name, _ in servers)
    return {
        "claude_desktop": {"mcpServers": {keys[name]: claude_entry(install) for name, install in servers}},
        "vscode": {"servers": {keys[name]: vscode_entry(install) for name, install in servers}},
    }


def installs(catalog: Catalog, api_ids: Iterable[int]) -> dict[int, tuple[str, InstallInfo]]:
    """The registry name and install information of each of these items that has them, by id."""
    found = {}
    for api_id in api_ids:
        try:
            api = catalog.get_api(api_id)
        except ApiNotFound:
            continue
        install = install_of(api.details)
        if install is not None:
            found[api_id] = (str((api.details.get("registry") or {}).get("name") or api.provider_name), install)
    return found


def plan_client_config(plan: Plan, catalog: Catalog) -> dict | None:
    """The client configuration of the plan's awarded registry servers (its final set, best first); None when it
    awards none."""
    found = installs(catalog, [api.api_id for api in plan.apis])
    return client_config(found.values()) if found else None
