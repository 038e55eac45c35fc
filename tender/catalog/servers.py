"""MCP servers as catalogue items, whichever catalogue lists them (the MCP Registry, toolsdk's registry, Docker's
catalogue): one item per server, named with its namespace, carrying every checked way to install it and each tool
it lists as an item of its own.

A server met in several catalogues (the same package, or the same repository folder) is one item with every
install route and every tool listing. Lists of servers ("awesome-..."), templates, samples and demos are marked
and take no need unless asked; an archived server is marked gone. A server titled like another one (a record
titled "GitHub" outside GitHub's namespace) is marked, so a plan never passes it off as the other."""

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from ..safety import one_line
from .install import INSTALL, PackageInstall, RemoteInstall
from .records import Api

MAX_TITLE = 120
MAX_DESCRIPTION = 2_000
MAX_TOOLS = 200  # a server's tools kept as items (the largest real listings hold about 150)
MAX_TOOL_DESCRIPTION = 1_000
Route = PackageInstall | RemoteInstall


@dataclass
class Tool:
    name: str
    description: str = ""
    title: str = ""
    inputs: list[str] = field(default_factory=list)


@dataclass
class Server:
    """One catalogue's record of a server, read and checked, before servers met in several catalogues are merged."""

    ref: str  # "registry:io.github.github/github-mcp-server", "toolsdk:<key>", "docker:<name>"
    namespace: str  # what names it uniquely where it is published
    title: str
    description: str
    source: str  # the catalogue file or URL
    categories: list[str] = field(default_factory=list)
    repository: str = ""
    homepage: str = ""
    routes: list[Route] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # routes of the record Tender would not build, and why
    tools: list[Tool] = field(default_factory=list)
    tools_from: str = ""  # who listed the tools: "toolsdk started it", "Docker's catalogue", a harvest's date
    status: str = "unknown"
    status_source: str = ""
    extra: dict = field(default_factory=dict)  # source-specific details kept as they are (the registry's own)


# -- what a record is ---------------------------------------------------------------------------------------------
# Read off a record's title and package name, and the first words of its description; what a record says of the
# content it handles ("email templates", "a demo account") is not what it is.
_NOT_FOR_USE_NAME = (
    (re.compile(r"^awesome\b|\bawesome[- ]mcp|\bmcp[- ]servers? list\b", re.I), "a list of servers"),
    (re.compile(r"(?<!prompt[- ])\b(?:template|boilerplate|starter|scaffold)\b", re.I), "a template"),
    (re.compile(r"\b(?:hello[- ]?world|demo|example|sample)\b", re.I), "a demo"),
)
_NOT_FOR_USE_TEXT = (
    (
        re.compile(
            r"\b(?:a |curated )?(?:list|collection|directory) of (?:awesome |curated )?(?:mcp )?servers\b", re.I
        ),
        "a list of servers",
    ),
    (
        re.compile(r"\b(?:boilerplate|starter kit|starter template|template (?:for|to) (?:build|creat)\w*)", re.I),
        "a template",
    ),
    (re.compile(r"^(?:a |an )?(?:simple |minimal |basic )?(?:demo|example|sample|hello[- ]world)\b", re.I), "a demo"),
)


def not_for_use(title: str, namespace: str, description: str) -> str:
    """Why a record is no server to install (a list of servers, a template, a demo), or ""."""
    own = namespace.rstrip("/").rsplit("/", 1)[-1]
    for pattern, reason in _NOT_FOR_USE_NAME:
        if pattern.search(title) or pattern.search(own):
            return reason
    for pattern, reason in _NOT_FOR_USE_TEXT:
        if pattern.search(description[:300]):
            return reason
    return ""


_ARCHIVED = re.compile(r"\(archived\)|\barchived\b|\bno longer maintained\b|\bdeprecated\b", re.I)


def archived(title: str, description: str) -> bool:
    return bool(_ARCHIVED.search(title) or _ARCHIVED.search(description[:200]))


# -- the same server in several catalogues ---------------------------------------------------------------------------
def repository_key(url: str) -> str:
    """A repository folder as a key: host/owner/repo[/folder], lower-case, without .git, the branch of a
    /tree/BRANCH/ link or a trailing /src."""
    if not url:
        return ""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return ""
    path = [p for p in parts.path.split("/") if p]
    if len(path) < 2:
        return ""
    owner, repo, rest = path[0], path[1].removesuffix(".git"), path[2:]
    if rest[:1] in (["tree"], ["blob"]):
        rest = rest[2:]
    if rest[-1:] == ["src"]:
        rest = rest[:-1]
    return "/".join([parts.hostname.lower().removeprefix("www."), owner, repo, *rest]).lower()


def package_keys(routes: Iterable[Route]) -> set[str]:
    keys = set()
    for route in routes:
        if isinstance(route, PackageInstall):
            keys.add(package_key(route.registry, route.identifier))
    return keys


def package_key(registry: str, identifier: str) -> str:
    name = identifier.lower()
    if registry == "pypi":
        name = re.sub(r"[-_.]+", "-", name)
    return f"{registry}:{name}"


def item_keys(api: Api) -> set[str]:
    """What identifies a server item across catalogues: its packages (npm name, PyPI name, image), a package it
    names but could not be run from, and its repository folder (added by merge_items, where unambiguous)."""
    keys = package_keys(routes_of(api.details))
    named = api.details.get("unverified_package")
    if isinstance(named, dict):
        keys.add(package_key(str(named.get("registry", "")), str(named.get("identifier", ""))))
    return keys


def _catalogue(api: Api) -> str:
    refs = api.details.get("refs") or [""]
    return str(refs[0]).split(":", 1)[0]


# Which catalogue's words name a merged server: the official registry's namespace, then Docker's, then toolsdk's.
_PREFERENCE = {"registry": 0, "docker": 1, "toolsdk": 2}


def _rank(api: Api) -> int:
    return _PREFERENCE.get(_catalogue(api), 9)


def merge_items(apis: list[Api]) -> list[Api]:
    """Server items of several catalogues that describe one server (the same package, or the same repository
    folder where no other record of that catalogue claims it: a repository of many servers names none of them)
    merged into one, with every route and ref and the tools of the listing that names most; other items as they
    are, in order. Servers sharing a title are marked (mark_shared_titles)."""
    servers = [a for a in apis if a.kind == "server"]
    if not servers:
        return apis
    tools: dict[tuple[str, str], list[Api]] = defaultdict(list)  # by their server's source and namespace
    for api in apis:
        if api.kind == "tool" and api.details.get("of_server"):
            tools[(api.source, str(api.details["of_server"]))].append(api)
    claims: dict[tuple[str, str], int] = defaultdict(int)
    for api in servers:
        if key := repository_key(str(api.details.get("repository", ""))):
            claims[(key, _catalogue(api))] += 1
    parent = list(range(len(servers)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first: dict[str, int] = {}
    for index, api in enumerate(servers):
        keys = item_keys(api)
        repo = repository_key(str(api.details.get("repository", "")))
        if repo and claims[(repo, _catalogue(api))] == 1:
            keys.add(f"repo:{repo}")
        for key in keys:
            if key in first:
                parent[find(index)] = find(first[key])
            else:
                first[key] = index
    groups: dict[int, list[int]] = defaultdict(list)
    for index in range(len(servers)):
        groups[find(index)].append(index)
    merged_at: dict[int, list[Api]] = {}  # the group's first server's position -> the merged items
    for members in groups.values():
        records = [(servers[i], tools.get((servers[i].source, servers[i].provider), [])) for i in members]
        merged_at[min(members)] = merged(records)
    out: list[Api] = []
    position = {id(api): i for i, api in enumerate(servers)}
    for api in apis:
        if api.kind == "server":
            out += merged_at.pop(position[id(api)], [])
        elif not (api.kind == "tool" and api.details.get("of_server")):
            out.append(api)
    mark_shared_titles(out)
    return out


def _route_rank(route: Route) -> tuple:
    """Routes best first: a package over stdio (npm, then PyPI, then an image, then NuGet), then a remote endpoint
    (streamable HTTP before SSE), then a package that serves over HTTP (the user starts it, then connects)."""
    if isinstance(route, PackageInstall):
        order = ["npm", "pypi", "oci", "nuget"].index(route.registry)
        return (0, order) if route.transport == "stdio" else (2, order)
    return (1, route.transport != "streamable-http")


def route_key(route: Route) -> str:
    if isinstance(route, PackageInstall):
        return f"{route.registry}:{route.identifier.lower()}:{route.version}:{' '.join(route.args)}"
    return f"remote:{route.url}"


def best_routes(routes: Iterable[Route]) -> list[Route]:
    """Distinct routes best first; a package unpinned where another route pins its version is dropped."""
    seen: dict[str, Route] = {}
    for route in routes:
        seen.setdefault(route_key(route), route)
    pinned = {(r.registry, r.identifier.lower()) for r in seen.values() if isinstance(r, PackageInstall) and r.version}
    kept = [
        r
        for r in seen.values()
        if not (isinstance(r, PackageInstall) and not r.version and (r.registry, r.identifier.lower()) in pinned)
    ]
    return sorted(kept, key=_route_rank)


def merged(records: list[tuple[Api, list[Api]]]) -> list[Api]:
    """One server's items from its records in several catalogues (each with its tool items): the server item,
    named by the most official catalogue, then the tools of the record that lists most."""
    records = sorted(records, key=lambda pair: (_rank(pair[0]), pair[0].name))
    lead = records[0][0]
    if len(records) == 1:
        return [lead, *records[0][1]]
    servers = [r for r, _ in records]
    routes = best_routes(r for api in servers for r in routes_of(api.details))
    listed, listed_tools = max(records, key=lambda pair: (len(pair[1]), -_rank(pair[0])))
    description = lead.description if len(lead.description) >= 60 else max((s.description for s in servers), key=len)
    details = {**lead.details}
    for api in servers[1:]:
        for key, value in api.details.items():
            details.setdefault(key, value)
    details["refs"] = [ref for api in servers for ref in api.details.get("refs", [])]
    details["installs"] = [r.model_dump(mode="json") for r in routes]
    refused = [reason for api in servers for reason in api.details.get("install_refused", [])]
    if refused:
        details["install_refused"] = refused[:10]
    reasons = [api.details["not_for_use"] for api in servers if api.details.get("not_for_use")]
    if reasons:
        details["not_for_use"] = reasons[0]
    details["tools_count"] = len(listed_tools)
    if listed_tools:
        details["tools_from"] = listed.details.get("tools_from", "")
        details["tool_names"] = [t.tool for t in listed_tools]
    else:
        details.pop("tools_from", None)
        details.pop("tool_names", None)
    dead = next((api for api in servers if api.gone), None)
    live = next((api for api in servers if api.status == "active"), None)
    server = lead.model_copy(
        update={
            "description": description,
            "categories": list(dict.fromkeys(c for api in servers for c in api.categories))[:4],
            "status": "deprecated" if dead else "active" if live else lead.status,
            "status_source": dead.status_source if dead else live.status_source if live else lead.status_source,
            "url": lead.url or next((a.url for a in servers if a.url), ""),
            "link": lead.link or next((a.link for a in servers if a.link), ""),
            "details": details,
        }
    )
    tools = [
        tool.model_copy(
            update={
                "name": f"{tool.tool} ({server.name})",
                "provider": server.provider,
                "server": server.server,
                "status": server.status,
                "source": server.source,
                "details": {**tool.details, "of_server": server.provider, "server_title": server.title},
            }
        )
        for tool in listed_tools
    ]
    return [server, *tools]


# -- items -------------------------------------------------------------------------------------------------------------
def display_name(title: str, namespace: str) -> str:
    """What a plan calls a server: its title with its namespace, so that a record titled "GitHub" in another
    namespace is never read as GitHub's."""
    title, namespace = one_line(title)[:MAX_TITLE], one_line(namespace)[:200]
    if not title or title.casefold() == namespace.casefold():
        return namespace
    return f"{title} ({namespace})"


def config_key(namespace: str) -> str:
    """A short name for a client configuration: the last part of the namespace, letters, digits, '-', '_', '.'."""
    last = namespace.rstrip("/").rsplit("/", 1)[-1].split(":")[0]
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", last).strip("-.") or "server"


def items_of(server: Server) -> list[Api]:
    """The server's item, then one item per tool it lists. Ids are 0: numbered when the catalogue is assembled."""
    routes = best_routes(server.routes)
    reason = not_for_use(server.title, server.namespace, server.description)
    name = display_name(server.title, server.namespace)
    details: dict = {
        "title": one_line(server.title)[:MAX_TITLE],
        "namespace": server.namespace,
        "refs": [server.ref],
        "config_key": config_key(server.namespace),
        "installs": [r.model_dump(mode="json") for r in routes],
        **({"install_refused": server.refused[:10]} if server.refused else {}),
        **({"not_for_use": reason} if reason else {}),
        "tools_count": len(server.tools[:MAX_TOOLS]),
        **({"tools_from": server.tools_from} if server.tools else {}),
        **({"tool_names": [t.name[:100] for t in server.tools[:MAX_TOOLS]]} if server.tools else {}),
        **({"repository": server.repository} if server.repository else {}),
        **server.extra,
    }
    item = Api(
        id=0,
        name=name,
        kind="server",
        provider=server.namespace,
        server=details["config_key"],
        url=server.homepage or server.repository,
        link=server.homepage or server.repository,
        categories=server.categories[:4],
        description=server.description[:MAX_DESCRIPTION],
        source=server.source,
        status=server.status if server.status in ("active", "deprecated") else "unknown",
        status_source=server.status_source,
        details=details,
    )
    return [item, *tool_items(item, server.tools)]


def tool_items(server: Api, tools: Iterable[Tool]) -> list[Api]:
    """Each tool a server lists as an item of it (its name once, at most MAX_TOOLS of them): matched by what it
    does, awarded as its server (ranking/retrieval.py)."""
    items: list[Api] = []
    seen: set[str] = set()
    for tool in tools:
        name = one_line(tool.name)[:100]
        if not name or name in seen:
            continue
        if len(items) == MAX_TOOLS:
            break
        seen.add(name)
        items.append(
            Api(
                id=0,
                name=f"{name} ({server.name})",
                kind="tool",
                provider=server.provider,
                server=server.server,
                tool=name,
                description=tool.description[:MAX_TOOL_DESCRIPTION],
                source=server.source,
                status=server.status,
                status_source=server.status_source,
                link=server.link,
                categories=server.categories,
                details={
                    "of_server": server.provider,
                    "server_title": server.title,
                    **({"title": one_line(tool.title)[:MAX_TITLE]} if tool.title else {}),
                    **({"inputs": tool.inputs[:10]} if tool.inputs else {}),
                },
            )
        )
    return items


def mark_shared_titles(items: list[Api]) -> None:
    """A server titled like another one whose namespace is the title's own (a record titled "GitHub" beside
    io.github.github/github-mcp-server) is marked with the genuine one's namespace: the plan then says whose it is
    not. Community servers sharing a title no one of them owns ("Todoist MCP") are not marked. In place (details)."""
    by_title: dict[str, list[Api]] = defaultdict(list)
    for api in items:
        if api.kind == "server":
            title = re.sub(r"[^a-z0-9]+", "", str(api.details.get("title", "")).casefold())
            if title:
                by_title[title].append(api)
    for title, group in by_title.items():
        owners = [a for a in group if title in _owner(str(a.details.get("namespace", "")))]
        if len(group) < 2 or len(owners) != 1:
            continue
        genuine = owners[0]
        for api in group:
            if api is not genuine:
                api.details["same_title_as"] = [str(genuine.details.get("namespace"))]


def _owner(namespace: str) -> str:
    """The publisher part of a namespace, letters and digits only: io.github.github/x -> github; @scope/x -> scope;
    mcp/github (Docker's own images) -> the image's name."""
    head = namespace.split("/", 1)[0]
    if head.startswith("io.github."):
        head = head.removeprefix("io.github.")
    elif head.startswith("@"):
        head = head[1:]
    elif head == "mcp" and "/" in namespace:  # Docker's curated images are published by the services themselves
        head = namespace.split("/", 1)[1]
    return re.sub(r"[^a-z0-9]+", "", head.casefold())


def routes_of(details: dict) -> list[Route]:
    """An item's install routes read back from its details, each checked again (a catalogue file is data too);
    a route that no longer passes is left out. Reads the single `install` of catalogues built before."""
    raw = details.get("installs") if isinstance(details, dict) else None
    if raw is None and isinstance(details, dict) and isinstance(details.get("install"), dict):
        raw = [details["install"]]
    routes = []
    for entry in raw if isinstance(raw, list) else []:
        try:
            routes.append(INSTALL.validate_python(entry))
        except ValueError:  # a ValidationError, or Refused
            continue
    return routes
