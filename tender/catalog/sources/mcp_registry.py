"""The MCP Registry (registry.modelcontextprotocol.io; modelcontextprotocol/registry, MIT) as a catalogue source:
one item per server, not per tool (a registry record describes a server; its tools are known only once it
runs). Read from a file (the seed of 2025-05-16 with its early field names, a saved `/v0.1/servers` page, a
list of ServerResponses, or JSON lines of them) or from a registry's URL, page by page within bounds.

Each item carries how to run the server (`details["install"]`): a package as a command and a list of
arguments, never a shell string (the registry warns that arguments may hold shell metacharacters), its
environment variables and transport; or a remote endpoint with its headers. Status is the registry's own:
deleted servers are left out, deprecated ones kept and marked with the registry's message. Only a name's latest
version is kept.

A catalogue built from a registry URL records when it was read; building it again from the same URL asks only
for the servers changed since (`updated_since`) and keeps the others as they were."""

import json
import re
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit


from ...errors import SourceError
from ...safety import one_line
from .. import install
from ..database import connect_read_only
from ..install import RUNNERS, Arg, MAX_VARIABLES, PackageInstall, Refused, RemoteInstall, Variable
from ..records import Api
from ..servers import Server, archived, items_of
from .base import Loaded, SourceInfo, read_text
from .http import Fetcher, NotFound, Retries, is_url, shown_url
from .jsonl import file_hash

OFFICIAL = "https://registry.modelcontextprotocol.io"
LICENCE = "MIT, Copyright (c) 2025 GitHub (modelcontextprotocol/registry); each record is its publisher's"
OFFICIAL_META = "io.modelcontextprotocol.registry/official"
PAGE_SIZE = 100  # the most /v0.1/servers gives at once
MAX_PAGES = 1000  # 100,000 servers: a registry whose cursors never end is broken, not large
MAX_RECORD_BYTES = 256 * 1024  # a server.json is a few KB; the largest in the seed is 9 KB
MAX_DESCRIPTION = 2000
MAX_NAMED = 20  # records named in the source info when left out
# What a sync asks for: changes since the last read, less this margin, against clocks that disagree.
SYNC_OVERLAP = timedelta(minutes=10)


# -- how to run a server --------------------------------------------------------------------------
class Malformed(ValueError):
    """A record that cannot be read; its message says why."""


def pick(data: Any, *keys: str, default: Any = None) -> Any:
    """The first of `keys` that `data` has (the registry spelled its fields three ways over 2025: registry_name,
    registry_type, registryType)."""
    if isinstance(data, dict):
        for key in keys:
            if data.get(key) not in (None, ""):
                return data[key]
    return default


def objects(value: Any, what: str) -> list[dict]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise Malformed(f"{what} is not a list of objects")
    return value


def text(value: Any, what: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str | int | float) or isinstance(value, bool):
        raise Malformed(f"{what} is not a string")
    return str(value)


_BRACES = re.compile(r"\{([A-Za-z_][\w.-]*)\}")


def filled(value: str, variables: Any) -> str:
    """`{name}` in a value replaced by its variable's value or default, else by the placeholder `<name>`; a name
    the record does not declare stays as written (the schema's rule)."""
    if not isinstance(variables, dict):
        return value

    def one(match: re.Match) -> str:
        known = variables.get(match.group(1))
        if not isinstance(known, dict):
            return match.group(0)
        given = pick(known, "value", "default")
        secret = pick(known, "isSecret", "is_secret", default=False)
        return str(given) if given is not None and not secret else f"<{match.group(1)}>"

    return _BRACES.sub(one, value)


def arguments(items: Any, what: str) -> list[Arg]:
    """A record's runtime or package arguments as it states them, for `install.package` to check: a fixed value as
    written ("{name}" filled from the argument's variables), a value that is the user's as a hint."""
    out: list[Arg] = []
    for argument in objects(items, what):
        kind = pick(argument, "type", default="positional")
        if kind not in ("named", "positional"):
            raise Malformed(f"{what}: an argument of type {str(kind)[:30]!r}")
        name = text(argument.get("name"), f"{what}: name")
        value = pick(argument, "value")
        if value is None:
            value = pick(argument, "default")
        hint = text(pick(argument, "valueHint", "value_hint"), f"{what}: valueHint")
        if kind == "named" and not name:
            raise Malformed(f"{what}: a named argument has no name")
        given = filled(text(value, f"{what}: value"), argument.get("variables")) if value is not None else None
        out.append(
            Arg(
                kind=kind,
                name=name,
                value=given,
                hint=hint,
                required=bool(pick(argument, "isRequired", "is_required", default=False)),
                boolean=argument.get("format") == "boolean",
            )
        )
    return out


def variables(items: Any, what: str) -> list[Variable]:
    found = []
    for item in objects(items, what)[:MAX_VARIABLES]:
        name = text(item.get("name"), f"{what}: name").strip()
        if not name:
            raise Malformed(f"{what}: a variable has no name")
        try:
            found.append(
                Variable(
                    name=name,
                    required=bool(pick(item, "isRequired", "is_required", default=False)),
                    secret=bool(pick(item, "isSecret", "is_secret", default=False)),
                    description=one_line(text(item.get("description"), f"{what}: description"))[:200],
                )
            )
        except ValueError:
            raise Refused(f"{what}: {name[:40]!r} is not a variable name") from None
    return found


def package_install(package: dict, number: int) -> PackageInstall | None:
    """How to run a package, checked (install.package); None where the record names no registry Tender runs
    (`unknown`, mcpb, cargo). Refused, saying why, where its parts would run anything but its package."""
    what = f"packages[{number}]"
    registry = text(pick(package, "registryType", "registry_type", "registry_name"), f"{what}: registryType").lower()
    registry = "oci" if registry == "docker" else registry
    if registry not in RUNNERS:
        return None
    return install.package(
        registry,
        text(pick(package, "identifier", "name"), f"{what}: identifier"),
        text(pick(package, "version"), f"{what}: version"),
        runner_hint=text(pick(package, "runtimeHint", "runtime_hint"), f"{what}: runtimeHint"),
        runner_arguments=arguments(pick(package, "runtimeArguments", "runtime_arguments"), f"{what}: runtimeArguments"),
        arguments=arguments(pick(package, "packageArguments", "package_arguments"), f"{what}: packageArguments"),
        env=variables(pick(package, "environmentVariables", "environment_variables"), f"{what}: environmentVariables"),
        transport=text(pick(package.get("transport"), "type"), f"{what}: transport") or "stdio",
        source="registry",
    )


def remote_install(entry: dict, number: int) -> RemoteInstall | None:
    """A remote endpoint, checked; None for one on this machine (a server the user starts is not a remote one)."""
    what = f"remotes[{number}]"
    url = text(entry.get("url"), f"{what}: url").strip()
    if (urlsplit(url).hostname or "") in install.LOCAL_HOSTS:
        return None
    return install.remote(
        url,
        text(pick(entry, "type", "transport_type"), f"{what}: type"),
        variables(entry.get("headers"), f"{what}: headers"),
        source="registry",
    )


def installs_of(detail: dict) -> tuple[list[PackageInstall | RemoteInstall], list[str]]:
    """Every way to run the server that passes the checks, best first (a package over stdio, then any package, then
    a remote, streamable HTTP before SSE), and why each other way was refused."""
    routes: list[PackageInstall | RemoteInstall] = []
    refused: list[str] = []
    for kind, maker in (("packages", package_install), ("remotes", remote_install)):
        for n, raw in enumerate(objects(detail.get(kind), kind)[:MAX_VARIABLES]):
            try:
                route = maker(raw, n)
            except Refused as error:
                refused.append(f"{kind}[{n}]: {error}")
                continue
            if route is not None:
                routes.append(route)
    routes.sort(
        key=lambda r: (
            r.kind != "package",
            r.kind == "package" and r.transport != "stdio",
            r.kind == "remote" and r.transport != "streamable-http",
        )
    )
    return routes, refused


# -- records to items -----------------------------------------------------------------------------
@dataclass
class Entry:
    """One record as read: its server's name and version, the registry's status, and the item (for every status
    but deleted)."""

    name: str
    version: str
    status: str
    latest: bool
    published: str
    api: Api | None


def read_record(raw: Any, origin: str, listed: str) -> Entry:
    """A ServerResponse (`{"server": ..., "_meta": ...}`), a bare server.json, or a seed record, as an Entry;
    Malformed when it cannot be read. `listed` is the status source of a record without a registry status."""
    if not isinstance(raw, dict):
        raise Malformed("is not an object")
    detail = raw["server"] if isinstance(raw.get("server"), dict) else raw
    meta = pick(raw, "_meta") or pick(detail, "_meta") or {}
    official = pick(meta, OFFICIAL_META) if isinstance(meta, dict) else None
    official = official if isinstance(official, dict) else {}
    version_detail = detail.get("version_detail") if isinstance(detail.get("version_detail"), dict) else {}
    name = text(detail.get("name"), "name").strip()
    if not name:
        raise Malformed("has no name")
    version = text(pick(detail, "version") or pick(version_detail, "version"), "version")
    status = text(pick(official, "status") or pick(detail, "status") or "active", "status").lower()
    message = text(pick(official, "statusMessage", "status_message"), "statusMessage")
    latest = pick(official, "isLatest", "is_latest", default=pick(version_detail, "is_latest", default=True))
    published = text(pick(official, "publishedAt", "published_at") or pick(version_detail, "release_date"), "date")
    updated = text(pick(official, "updatedAt", "updated_at"), "updatedAt") or published
    if status == "deleted":
        return Entry(name, version, status, latest is not False, published, None)
    title = text(detail.get("title"), "title").strip()
    description = text(detail.get("description"), "description").strip()
    repository: dict = detail["repository"] if isinstance(detail.get("repository"), dict) else {}
    website = text(pick(detail, "websiteUrl", "website_url"), "websiteUrl")
    home = next((u for u in (website, text(repository.get("url"), "repository.url")) if is_url(u)), "")
    routes, refused = installs_of(detail)
    if status == "deprecated":
        said = message or "the registry marks it deprecated"
    elif status == "active":
        said = f"MCP Registry status: active{f' ({message})' if message else ''}" if official else listed
    else:
        said = f"MCP Registry status: {status}"
    server = Server(
        ref=f"registry:{name}",
        namespace=name,
        title=title,
        description=description,
        source=origin,
        repository=text(repository.get("url"), "repository.url")
        if is_url(text(repository.get("url"), "repository.url"))
        else "",
        homepage=home,
        routes=routes,
        refused=refused,
        status=status if status in ("active", "deprecated") else "unknown",
        status_source=said,
        extra={
            "registry": {
                "name": name,
                "title": title,
                "version": version,
                "published_at": published,
                "updated_at": updated,
            }
        },
    )
    if status == "active" and archived(title, description):
        server.status, server.status_source = "deprecated", "its record says it is archived or deprecated"
    api = items_of(server)[0]
    return Entry(name, version, status, latest is not False, published, api)


@dataclass
class Read:
    """Records read into entries, and those left out, counted and named."""

    entries: list[Entry] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=lambda: {"records": 0, "malformed": 0, "too large": 0})
    named: list[str] = field(default_factory=list)

    def add(self, raw: Any, where: str, origin: str, listed: str) -> None:
        self.counts["records"] += 1
        label = where
        if isinstance(raw, dict):
            inner: dict = raw["server"] if isinstance(raw.get("server"), dict) else raw
            if isinstance(inner.get("name"), str) and inner["name"].strip():
                label = f"{where} ({inner['name'].strip()[:100]})"
        size = len(json.dumps(raw, ensure_ascii=False).encode())
        if size > MAX_RECORD_BYTES:
            self.counts["too large"] += 1
            self.name(f"{label}: {size:,} bytes, more than {MAX_RECORD_BYTES:,}")
            return
        try:
            self.entries.append(read_record(raw, origin, listed))
        except (Malformed, ValueError, TypeError, AttributeError) as error:  # a ValidationError is a ValueError
            self.counts["malformed"] += 1
            self.name(f"{label}: {str(error).splitlines()[0][:200]}")

    def name(self, line: str) -> None:
        if len(self.named) < MAX_NAMED:
            self.named.append(line)


def newest(entries: Iterable[Entry]) -> tuple[dict[str, Entry], int]:
    """Each name's latest version (the registry's isLatest, then the later publication, then the later record),
    and how many older versions were left out."""
    chosen: dict[str, Entry] = {}
    older = 0
    for entry in entries:
        known = chosen.get(entry.name)
        if known is not None:
            older += 1
            if (entry.latest, entry.published) < (known.latest, known.published):
                continue
        chosen[entry.name] = entry
    return chosen, older


# -- reading a file -------------------------------------------------------------------------------
def raw_records(path: Path) -> tuple[list[tuple[str, Any]], list[str]]:
    """(where, record) pairs of a registry file, and the lines of a JSON lines file that are not JSON."""
    content = read_text(path)
    try:
        data = json.loads(content)
    except json.JSONDecodeError:
        data = None
        if "\n" not in content.strip():
            raise SourceError(path, "is neither JSON nor JSON lines") from None
    if data is None:
        found, bad = [], []
        for number, line in enumerate(content.splitlines(), start=1):
            if line.strip():
                try:
                    found.append((f"line {number}", json.loads(line)))
                except json.JSONDecodeError as error:
                    bad.append(f"line {number}: not JSON ({error.msg})")
        return found, bad
    if isinstance(data, dict) and isinstance(data.get("servers"), list):
        data = data["servers"]
    if not isinstance(data, list):
        raise SourceError(
            path,
            "is not a registry listing: write a /v0.1/servers page, a list of its servers, or one server per line",
        )
    return [(f"record {n}", raw) for n, raw in enumerate(data, start=1)], []


# -- reading a registry over HTTP -----------------------------------------------------------------
@dataclass
class Fetched:
    records: list[tuple[str, Any]]
    pages: int
    api: str


def base_of(url: str) -> str:
    """A registry's base URL, from itself or from the URL of its list of servers; its query (an API key, say) kept."""
    parts = urlsplit(url.strip())
    return urlunsplit(parts._replace(path=re.sub(r"/(v0\.1|v0)/servers/?$", "", parts.path.rstrip("/")), fragment=""))


def fetch_records(
    url: str,
    *,
    fetcher: Fetcher,
    updated_since: str | None = None,
    max_pages: int = MAX_PAGES,
    page_size: int = PAGE_SIZE,
) -> Fetched:
    """Every server the registry lists (latest versions; those changed since `updated_since` if given), following
    `metadata.nextCursor` over /v0.1/servers, or /v0/servers where /v0.1 answers 404. SourceError when a page
    cannot be had or read, a cursor comes again, or there are more than `max_pages` pages. The pages draw on one
    budget of retries; the query of `url` goes with each."""
    base = base_of(url)
    retries = fetcher.budget()
    try:
        return _pages(base, "v0.1", fetcher, retries, updated_since, max_pages, page_size)
    except NotFound:
        return _pages(base, "v0", fetcher, retries, updated_since, max_pages, page_size)


def _pages(
    base: str, api: str, fetcher: Fetcher, retries: Retries, since: str | None, max_pages: int, size: int
) -> Fetched:
    parts = urlsplit(base)
    root, own = urlunsplit(parts._replace(query="")), parse_qsl(parts.query, keep_blank_values=True)
    records: list[tuple[str, Any]] = []
    cursor: str | None = None
    offset = 0
    seen: set[str] = set()
    for page in range(1, max_pages + 1):
        query: dict[str, Any] = {"limit": size}
        if api == "v0.1":
            query["version"] = "latest"
        if cursor:
            query["cursor"] = cursor
        elif offset:
            query["offset"] = offset
        if since:
            query["updated_since"] = since
        address = f"{root}/{api}/servers?{urlencode(own + list(query.items()))}"
        body = fetcher.get_json(address, retries)
        servers = body.get("servers") if isinstance(body, dict) else None
        if not isinstance(servers, list):
            raise SourceError(shown_url(address), "is not a page of servers (no `servers` list)")
        records += [(f"page {page}, record {n}", raw) for n, raw in enumerate(servers, start=1)]
        metadata = body.get("metadata") if isinstance(body.get("metadata"), dict) else {}
        cursor = pick(metadata, "nextCursor", "next_cursor")
        if cursor is not None:
            cursor = str(cursor)
            if cursor in seen:
                raise SourceError(
                    shown_url(address), f"gives the cursor {cursor!r} again: the listing goes round in a circle"
                )
            seen.add(cursor)
            continue
        total = pick(body, "total_count", default=pick(metadata, "count_total"))
        offset += len(servers)
        more = bool(body.get("next")) or (isinstance(total, int) and offset < total)
        if api == "v0" and servers and more:
            continue
        return Fetched(records, page, api)
    raise SourceError(
        f"{shown_url(root)}/{api}/servers", f"has more than {max_pages:,} pages; refused (--mcp-registry)"
    )


# -- a previous catalogue, for a sync ------------------------------------------------------------
@dataclass
class Previous:
    synced_at: str
    apis: list[Api]


def previous_of(db_path: Path | None, source: str) -> Previous | None:
    """What a catalogue at `db_path` holds of the registry `source` and when it was read; None when it holds none
    (no file, another kind of file, built from elsewhere or from a file)."""
    if db_path is None or not Path(db_path).is_file():
        return None
    try:
        conn = connect_read_only(db_path)
        try:
            conn.row_factory = sqlite3.Row
            meta = dict(conn.execute("select key, value from meta").fetchall())
            sources = json.loads(meta.get("sources", "[]"))
            synced = next(
                (
                    s.get("synced_at")
                    for s in sources
                    if isinstance(s, dict) and s.get("kind") == "mcp-registry" and s.get("name") == source
                ),
                None,
            )
            if not synced:
                return None
            categories: dict[int, list[str]] = {}
            for row in conn.execute(
                "select api_id, category from api_categories join apis on apis.id = api_id "
                "where apis.source = ? order by api_id, position",
                (source,),
            ):
                categories.setdefault(row["api_id"], []).append(row["category"])
            apis = []
            for row in conn.execute("select * from apis where source = ? and kind = 'server' order by id", (source,)):
                details = json.loads(row["details"] or "{}")
                own = details.get("registry") or {}
                values = {**dict(row), "details": details, "categories": categories.get(row["id"], [])}
                apis.append(
                    Api(**values).model_copy(
                        update={"id": 0, "name": own.get("title") or own.get("name") or row["name"]}
                    )
                )
        finally:
            conn.close()
    except (sqlite3.DatabaseError, json.JSONDecodeError, ValueError, TypeError):
        return None  # not a catalogue this build can read: everything is fetched again
    return Previous(synced, apis)


def rfc3339(text: str) -> datetime:
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        raise SourceError(f"updated_since {text!r}", "is not an RFC 3339 time (2025-09-01T00:00:00Z)") from None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def stamp(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# -- the source -----------------------------------------------------------------------------------
def load_registry(
    where: str | Path,
    *,
    fetcher: Fetcher | None = None,
    previous: Path | None = None,
    full: bool = False,
    updated_since: str | None = None,
    max_pages: int = MAX_PAGES,
    page_size: int = PAGE_SIZE,
) -> Loaded:
    """The servers of a registry file or URL, one item each. For a URL, a catalogue at `previous` built from the
    same registry is synced: only the servers changed since its recorded read are asked for (less SYNC_OVERLAP),
    the others kept as they were, unless `full`. `updated_since` asks for the changes since that time only.
    SourceError, naming the file or URL, when it cannot be read."""
    read = Read()
    if is_url(str(where)):
        base = base_of(str(where))
        name = shown_url(base)  # as printed and kept, in the catalogue and each item's source: credentials masked
        old = None if full or updated_since else previous_of(previous, name)
        since = updated_since or (stamp(rfc3339(old.synced_at) - SYNC_OVERLAP) if old else None)
        if since:
            since = stamp(rfc3339(since))
        started = datetime.now(UTC)
        fetched = fetch_records(
            base, fetcher=fetcher or Fetcher(), updated_since=since, max_pages=max_pages, page_size=page_size
        )
        for where_in, raw in fetched.records:
            read.add(raw, where_in, name, "listed by the registry")
        hashes: dict[str, str] = {}
        extra = {"pages": fetched.pages}
        synced = stamp(started)
        how = f"/{fetched.api}/servers, {fetched.pages} page{'s' if fetched.pages != 1 else ''}"
    else:
        path = Path(where)
        name = str(path.resolve())
        records, bad = raw_records(path)
        for where_in, raw in records:
            read.add(raw, where_in, name, f"listed in {path.name}")
        read.counts["records"] += len(bad)
        read.counts["malformed"] += len(bad)
        for line in bad:
            read.name(line)
        hashes, extra, synced, how, old, since = {name: file_hash(path)}, {}, "", "a file", None, None
    chosen, older = newest(read.entries)
    deleted = {n for n, e in chosen.items() if e.api is None}
    fresh = [e.api for e in chosen.values() if e.api is not None]
    counts = {**read.counts, **extra, "older versions": older, "deleted": len(deleted)}
    if old is not None:  # the previous items in their order (so their ids), changed ones in place, new ones last
        changed = {e.name: e.api for e in chosen.values()}
        apis, kept = [], 0
        for api in old.apis:
            own = api.details.get("registry", {}).get("name")
            if own not in changed:
                apis.append(api)
                kept += 1
            elif (new := changed.pop(own)) is not None:
                apis.append(new)
        apis += [api for api in changed.values() if api is not None]
        counts.update(changed=len(chosen), kept=kept)
        how += f"; {len(chosen)} changed since {since}, {kept} kept from the previous catalogue"
    else:
        apis = fresh
        if not apis and not since:
            raise SourceError(name, "lists no server to recommend (every record was left out or deleted)")
    counts.update(
        deprecated=sum(a.gone for a in apis),
        **{"without install route": sum(not a.details.get("installs") for a in apis)},
        **{"routes refused": sum(len(a.details.get("install_refused", [])) for a in apis)},
    )
    left = counts["malformed"] + counts["too large"]
    info = SourceInfo(
        kind="mcp-registry",
        name=name,
        detail=f"{counts['records']:,} records ({how}); {left} left out as unreadable, {older} older versions, "
        f"{len(deleted)} deleted",
        sha256=hashes,
        items=len(apis),
        licence=LICENCE,
        counts=counts,
        left_out=read.named,
        synced_at=synced,
    )
    return Loaded(info=info, apis=apis)
