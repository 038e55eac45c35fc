"""How to run the MCP servers a plan awards: each server's install routes as lines for a terminal, and the plan's
servers as one configuration for each client: Claude Desktop's and Cursor's `mcpServers`, VS Code's `servers`, and
`claude mcp add` lines for Claude Code.

Routes are read back from the catalogue and checked again (catalog/install.py): a command and its arguments stay
list items, a flag apart from its value, the version the source pins kept; every variable is a placeholder
("<GITHUB_TOKEN>") with whether it is required or secret, never a value from a record."""

import shlex
from collections.abc import Iterable

from pydantic import BaseModel, Field

from tender.agents.plan import Plan
from tender.catalog import ApiNotFound, Catalog
from tender.catalog.install import PackageInstall, RemoteInstall, Variable, placeholder
from tender.catalog.records import Api
from tender.catalog.servers import routes_of

Route = PackageInstall | RemoteInstall


def install_line(route: Route) -> str:
    """A route in a line: the command as a shell would read it (quoted where a value needs it; to read, not to run
    through a shell), or the endpoint; then the variables it needs."""
    if isinstance(route, RemoteInstall):
        headers = f"; headers: {', '.join(_said(h) for h in route.headers)}" if route.headers else ""
        return f"connect: {route.url} ({route.transport}){headers}"
    env = f"; env: {', '.join(_said(v) for v in route.env)}" if route.env else ""
    return f"run: {shlex.join([route.command, *route.args])} ({route.transport}){env}"


def _said(variable: Variable) -> str:
    marks = [m for m, on in (("required", variable.required), ("secret", variable.secret)) if on]
    return f"{variable.name} ({', '.join(marks)})" if marks else variable.name


def verification(api: Api) -> str:
    """What is known of the server's tools: started here (by a harvest) on a date, listed by a catalogue, or not
    verified."""
    harvest = api.details.get("harvest")
    if isinstance(harvest, dict) and harvest.get("started"):
        return f"started on {harvest.get('date', '?')} with {harvest.get('tools', 0)} tools"
    listed = (
        f"{api.details.get('tools_count', 0)} tools as {api.details['tools_from']}"
        if api.details.get("tools_from")
        else ""
    )
    if isinstance(harvest, dict) and not harvest.get("ran", True):  # never run: its package was not to be had
        # The registry the harvest asked (a mirror, maybe) did not give it: no fact about the package itself.
        tried = f"not started here: its package could not be fetched when tried on {harvest.get('date', '?')}"
        return f"{listed}; {tried}" if listed else tried
    if isinstance(harvest, dict):  # tried, and it did not start: say so, and what it asked for
        asked = harvest.get("asked_for") or []
        tried = f"did not start when tried on {harvest.get('date', '?')}" + (
            f" (it asked for {', '.join(asked)})" if asked else ""
        )
        return f"{listed}; {tried}" if listed else tried
    return listed or "not verified: its tools are not known"


def _header_value(header: Variable) -> str:
    """A header's placeholder: the record's template where it gives one ("Bearer <APIFY_API_KEY>")."""
    said = header.description
    if "<" in said and ">" in said and len(said) <= 200:
        return said
    return placeholder(header.name)


def claude_entry(route: Route) -> dict:
    if isinstance(route, RemoteInstall):
        entry: dict = {"type": "http" if route.transport == "streamable-http" else "sse", "url": route.url}
        if route.headers:
            entry["headers"] = {h.name: _header_value(h) for h in route.headers}
        return entry
    entry = {"command": route.command, "args": list(route.args)}
    if route.env:
        entry["env"] = {v.name: placeholder(v.name) for v in route.env}
    return entry


def vscode_entry(route: Route) -> dict:
    if isinstance(route, RemoteInstall):
        return claude_entry(route)
    return {"type": "stdio", **claude_entry(route)}


def claude_code_line(key: str, route: Route) -> str:
    """`claude mcp add` for one server: env as -e NAME=<NAME>, then `--` and the command."""
    if isinstance(route, RemoteInstall):
        words = ["claude", "mcp", "add", "--transport", "http" if route.transport == "streamable-http" else "sse"]
        for header in route.headers:
            words += ["--header", f"{header.name}: {_header_value(header)}"]
        return shlex.join([*words, key, route.url])
    words = ["claude", "mcp", "add", key]
    for variable in route.env:
        words += ["-e", f"{variable.name}={placeholder(variable.name)}"]
    return shlex.join([*words, "--", route.command, *route.args])


class ServerVariable(BaseModel):
    server: str
    name: str
    required: bool = False
    secret: bool = False
    description: str = ""
    kind: str = Field("env", description="'env' (an environment variable) or 'header' (an HTTP header).")


class ClientConfig(BaseModel):
    """The plan's servers configured for each client, with the values to fill in."""

    claude_desktop: dict = Field(description="claude_desktop_config.json (Cursor's .cursor/mcp.json reads the same).")
    vscode: dict = Field(description=".vscode/mcp.json.")
    claude_code: list[str] = Field(description="One `claude mcp add` line per server.")
    variables: list[ServerVariable] = Field(
        default_factory=list, description="Every placeholder to fill in, per server: required, secret, what it is."
    )


def config_names(servers: Iterable[str]) -> dict[str, str]:
    """A configuration key for each server: its config key, or the key with a number where two would share one."""
    names = list(dict.fromkeys(servers))
    out: dict[str, str] = {}
    taken: set[str] = set()
    for name in names:
        key, n = name, 1
        while key in taken:
            n += 1
            key = f"{name}-{n}"
        taken.add(key)
        out[name] = key
    return out


def client_config(servers: Iterable[tuple[str, Route]]) -> ClientConfig:
    """Every client's configuration of exactly these servers (configuration key, route), in order."""
    servers = list(servers)
    keys = config_names(key for key, _ in servers)
    variables = []
    for key, route in servers:
        for v in route.headers if isinstance(route, RemoteInstall) else route.env:
            variables.append(
                ServerVariable(
                    server=keys[key],
                    name=v.name,
                    required=v.required,
                    secret=v.secret,
                    description=v.description,
                    kind="header" if isinstance(route, RemoteInstall) else "env",
                )
            )
    return ClientConfig(
        claude_desktop={"mcpServers": {keys[key]: claude_entry(route) for key, route in servers}},
        vscode={"servers": {keys[key]: vscode_entry(route) for key, route in servers}},
        claude_code=[claude_code_line(keys[key], route) for key, route in servers],
        variables=variables,
    )


def server_of(catalog: Catalog, api: Api) -> Api:
    """The server an item belongs to: itself, or the server item a tool of it names."""
    if api.kind == "tool" and api.details.get("of_server"):
        for item in catalog.apis_of_provider(str(api.details["of_server"])):
            found = catalog.get_api(item)
            if found.kind == "server":
                return found
    return api


def installs(catalog: Catalog, api_ids: Iterable[int]) -> dict[int, tuple[str, list[Route]]]:
    """The configuration key and the routes (best first) of each of these items that has any, by id."""
    found = {}
    for api_id in api_ids:
        try:
            api = catalog.get_api(api_id)
        except ApiNotFound:
            continue
        routes = routes_of(api.details)
        if routes:
            key = str(
                api.details.get("config_key")
                or api.server
                or (api.details.get("registry") or {}).get("name")
                or api.provider_name
            )
            found[api_id] = (key, routes)
    return found


def configurable(route: Route) -> bool:
    """A route a client starts or connects to by itself: a package over stdio, or a remote endpoint (a package that
    serves over HTTP is started by the user first)."""
    return isinstance(route, RemoteInstall) or route.transport == "stdio"


def plan_client_config(plan: Plan, catalog: Catalog) -> ClientConfig | None:
    """The client configuration of the plan's awarded servers (its final set, best first; each by its best route a
    client can start); None when it awards none."""
    found = installs(catalog, [api.api_id for api in plan.apis])
    chosen = [(key, usable[0]) for key, routes in found.values() if (usable := [r for r in routes if configurable(r)])]
    return client_config(chosen) if chosen else None
