"""Harvest: start a catalogue's MCP servers from their install routes and record what each lists.

A registry says what a server is; only running it says what it can do. `tender catalog harvest` starts each server
of a catalogue from its checked route (npx for npm, uvx for PyPI; an image or a remote endpoint is skipped here),
with no secrets (a minimal environment: PATH and a throwaway HOME), in a throwaway folder, within a time limit and a
memory limit, lists its tools and records the result, one JSON line per server: whether it started, its tools, the
variables it asked for, and why it did not. Running third-party code is the user's choice, so the command asks for
it (`--run-third-party-code`); nothing else in Tender ever starts a catalogue's server.

The file is dated and read by a build (`tender catalog build --harvest FILE`): a server that started gains its tools
as items ("started on DATE with N tools"), one that did not says why."""

import os
import re
import shutil
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

import anyio
from pydantic import BaseModel, Field

from ..errors import SourceError
from ..safety import one_line
from . import install
from .install import PackageInstall
from .records import Api
from .servers import MAX_TOOL_DESCRIPTION, MAX_TOOLS, Tool, best_routes, repository_key, routes_of, tool_items
from .sources.base import Loaded, SourceInfo, mapping
from .sources.http import Fetcher, NotFound
from .sources.mcp import Server, _list_one

CODE_HOSTS = ("github.com/", "gitlab.com/", "bitbucket.org/", "codeberg.org/")
PLACEHOLDER = "tender-harvest-placeholder"  # what a setting a server asks for is given: a word, no secret


def placeholder_for(name: str) -> str:
    """A value for a setting that is no secret and reaches nothing: a URL on the reserved .invalid domain, a port,
    else a word."""
    upper = name.upper()
    if any(w in upper for w in ("URL", "URI", "ENDPOINT")):
        return "https://example.invalid"
    if "HOST" in upper:
        return "example.invalid"
    if "PORT" in upper:
        return "1"
    return PLACEHOLDER


MEMORY_BYTES = 4 * 1024**3  # the memory a started server may write to (RLIMIT_DATA, launcher.py)
_ASKS = re.compile(r"\b([A-Z][A-Z0-9]*_[A-Z0-9_]+|[A-Z]{3,}[0-9]*_?KEY|[A-Z]{3,}_TOKEN)\b")
_ASKING_WORDS = re.compile(r"required|missing|must be set|not set|is not defined|provide|environment variable", re.I)


class HarvestedTool(BaseModel):
    name: str
    description: str = ""
    inputs: list[str] = Field(default_factory=list)


NOTHING_TO_RUN = "could not determine executable to run"


class Harvested(BaseModel):
    """One server's harvest: started or not, with its tools, or why not."""

    refs: list[str]
    route: str = Field(description="The command that was run, as a line.")
    date: str
    started: bool
    registry: str = ""
    identifier: str = ""
    version: str = Field("", description="The version that was run: the source's pin where its registry has it.")
    tools: list[HarvestedTool] = Field(default_factory=list)
    asked_for: list[str] = Field(default_factory=list, description="Variables its output asked for.")
    error: str = ""
    not_its_package: bool = Field(
        False, description="The package of that name belongs to another project than the server's repository."
    )

    @property
    def nothing_to_run(self) -> bool:
        """The route ran a package that holds no program to run (npm: "could not determine executable to run"): it
        cannot start the server whatever is configured, unlike one that stopped for a missing variable."""
        return not self.started and NOTHING_TO_RUN in self.error

    @property
    def refusal(self) -> str:
        """Why the route this harvest ran is no install route ("" where it is one): a package of another project, or
        one with no program to run."""
        if self.not_its_package:
            return self.error[:300] or f"{self.identifier} belongs to another project"
        if self.nothing_to_run:
            return f"{self.route}: its package holds no program to run (tried on {self.date})"
        return ""


@dataclass(frozen=True)
class Target:
    refs: list[str]
    route: PackageInstall
    repository: str = ""
    guessed: bool = False  # a package name a catalogue only guessed (toolsdk's unverified PyPI names)


def targets(apis: Iterable[Api], only_unlisted: bool = True) -> list[Target]:
    """The servers a harvest can start from here: their first npm or PyPI route (over stdio), or the PyPI name a
    catalogue guessed for them (checked against the server's repository before it runs); with `only_unlisted`,
    only those no catalogue lists tools for."""
    found = []
    for api in apis:
        if api.kind != "server" or (only_unlisted and api.details.get("tools_count")):
            continue
        refs = [str(r) for r in api.details.get("refs") or [api.provider]]
        repository = str(api.details.get("repository") or "")
        route = next(
            (
                r
                for r in routes_of(api.details)
                if isinstance(r, PackageInstall) and r.registry in ("npm", "pypi") and r.transport == "stdio"
            ),
            None,
        )
        guessed = api.details.get("unverified_package")
        if route is None and isinstance(guessed, dict) and repository:
            try:
                route = install.package(str(guessed.get("registry")), str(guessed.get("identifier")), source="harvest")
            except install.Refused:
                continue
            found.append(Target(refs=refs, route=route, repository=repository, guessed=True))
        elif route is not None:
            found.append(Target(refs=refs, route=route, repository=repository))
    return found


@dataclass(frozen=True)
class Facts:
    """What a package registry says of a package: its versions, the latest, and the repository it names."""

    versions: frozenset[str]
    latest: str
    repositories: tuple[str, ...]


def package_facts(route: PackageInstall, fetcher: Fetcher) -> Facts:
    """npm's or PyPI's record of the route's package; NotFound where the registry has no such package."""
    if route.registry == "npm":
        data = fetcher.get_json(f"https://registry.npmjs.org/{quote(route.identifier, safe='@')}")
        repository = data.get("repository") if isinstance(data, dict) else None
        url = repository.get("url", "") if isinstance(repository, dict) else str(repository or "")
        tags = mapping(data.get("dist-tags"))
        versions = mapping(data.get("versions"))
        homepage = data.get("homepage") if isinstance(data.get("homepage"), str) else ""
        return Facts(frozenset(versions), str(tags.get("latest", "")), tuple(u for u in (url, homepage) if u))
    data = fetcher.get_json(f"https://pypi.org/pypi/{quote(route.identifier)}/json")
    info = mapping(data.get("info"))
    urls = mapping(info.get("project_urls"))
    releases = mapping(data.get("releases"))
    named = [str(u) for u in urls.values()] + [str(info.get("home_page") or "")]
    return Facts(frozenset(releases), str(info.get("version") or ""), tuple(u for u in named if u))


def same_project(repository: str, named: Iterable[str]) -> bool:
    """Whether a package's own record names the server's repository (owner and name; a folder of it counts)."""
    wanted = repository_key(repository).split("/")[:3]
    return len(wanted) == 3 and any(repository_key(_plain_url(u)).split("/")[:3] == wanted for u in named)


def _plain_url(url: str) -> str:
    """git+https://github.com/x/y.git, git://..., github:x/y as https URLs."""
    url = re.sub(r"^git\+", "", url.strip())
    url = re.sub(r"^git://", "https://", url)
    url = re.sub(r"^ssh://git@", "https://", url)
    url = re.sub(r"^git@([^:]+):", r"https://\1/", url)
    return re.sub(r"^github:", "https://github.com/", url)


def pinned(target: Target, facts: Facts) -> tuple[PackageInstall, str]:
    """The route to run: the source's pin where the registry has that version, else the latest; with a note when
    the pin was not there."""
    route = target.route
    if route.version and route.version in facts.versions:
        return route, ""
    if not facts.latest:
        return route, ""
    said = f"the source pins {route.version}, which {route.registry} does not have; " if route.version else ""
    return route.model_copy(update={"version": facts.latest}), said


def _path() -> str:
    """PATH, with the folder of this Python's scripts first (where uvx is when uv is installed beside Tender)."""
    return os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "/usr/bin:/bin")])


def sandbox_env(home: Path, caches: Path) -> dict[str, str]:
    """What a started server sees: PATH, a throwaway HOME, shared package caches, no secret of the caller's."""
    machine = {k: os.environ[k] for k in ("SSL_CERT_FILE", "SSL_CERT_DIR") if k in os.environ}
    return machine | {
        "PATH": _path(),
        "HOME": str(home),
        "TMPDIR": str(home),
        "LANG": "C.UTF-8",
        "npm_config_cache": str(caches / "npm"),
        "npm_config_yes": "true",
        "npm_config_update_notifier": "false",
        "npm_config_fund": "false",
        "npm_config_audit": "false",
        "UV_CACHE_DIR": str(caches / "uv"),
        "UV_NO_PROGRESS": "1",
        "UV_NATIVE_TLS": "1",  # the machine's certificates, as pip and npm use them (a company's CA among them)
        "NO_COLOR": "1",
        "TENDER_LAUNCH_LIMIT_AS": str(MEMORY_BYTES),
    }


def asked_for(route: PackageInstall, said: str) -> list[str]:
    """Variables a server's last words asked for: its route's own that they name, and NAME_LIKE_THIS words said
    beside "required", "missing", "not set"."""
    names = {v.name for v in route.env if v.name in said}
    for line in said.splitlines():
        if _ASKING_WORDS.search(line):
            names |= set(_ASKS.findall(line))
    return sorted(names)[:20]


async def harvest_one(target: Target, timeout: float, caches: Path, date: str, fetcher: Fetcher) -> Harvested:
    route = target.route
    base = dict(refs=target.refs, date=date, registry=route.registry, identifier=route.identifier)
    try:
        facts = await anyio.to_thread.run_sync(package_facts, route, fetcher)
    except NotFound:
        return Harvested(**base, route="", started=False, error=f"{route.registry} has no package {route.identifier}")
    except SourceError as error:
        return Harvested(**base, route="", started=False, error=f"{route.registry} could not be asked: {error}"[:600])
    if target.repository and not same_project(target.repository, facts.repositories):
        hosted = [u for u in facts.repositories if repository_key(_plain_url(u)).startswith(CODE_HOSTS)]
        if hosted:  # the package names another repository: another project of the same name
            return Harvested(
                **base,
                route="",
                started=False,
                not_its_package=True,
                error=f"{route.registry}'s {route.identifier} is another project ({hosted[0]}), not {target.repository}",
            )
        if target.guessed:  # a name a catalogue guessed, which nothing ties to the server: not run
            return Harvested(
                **base,
                route="",
                started=False,
                not_its_package=True,
                error=f"{route.registry}'s {route.identifier} names no repository: nothing ties it to {target.repository}",
            )
    route, note = pinned(target, facts)
    command = [route.command, *route.args]
    line = " ".join(command)
    base["version"] = route.version
    if shutil.which(route.command, path=_path()) is None:
        return Harvested(**base, route=line, started=False, error=f"{route.command} is not installed here")
    # A server that refuses to start without its settings is started once more with placeholders for those it asked
    # for and those its route requires (never a secret: see placeholder_for).
    given: set[str] = set()
    for attempt in (1, 2):
        with tempfile.TemporaryDirectory(prefix="tender-harvest-") as folder:
            env = sandbox_env(Path(folder), caches) | {name: placeholder_for(name) for name in sorted(given)}
            server = Server(
                name=target.refs[0][:100], command=route.command, args=list(route.args), env=env, cwd=folder
            )
            try:
                listing = await _list_one(server, timeout)
                break
            except SourceError as error:
                said = str(error)
                asked = set(asked_for(route, said))
                if attempt == 1 and asked and "within" not in said:
                    given = asked | {v.name for v in route.env if v.required}
                    continue
                return Harvested(
                    **base, route=line, started=False, asked_for=sorted(asked), error=one_line(note + said)[:600]
                )
    tools = []
    for raw in listing.tools[:MAX_TOOLS]:
        schema = mapping(raw.get("inputSchema"))
        properties = mapping(schema.get("properties"))
        tools.append(
            HarvestedTool(
                name=one_line(str(raw.get("name") or ""))[:100],
                description=str(raw.get("description") or "")[:MAX_TOOL_DESCRIPTION],
                inputs=list(properties)[:10],
            )
        )
    placed = f"started with placeholder values for {', '.join(sorted(given))}" if given else ""
    return Harvested(
        **base,
        route=line,
        started=True,
        tools=[t for t in tools if t.name],
        asked_for=sorted(given),
        error="; ".join(p for p in (note.rstrip("; "), placed) if p),
    )


def harvest(
    found: list[Target],
    out: Path,
    *,
    timeout: float = 90.0,
    jobs: int = 4,
    caches: Path | None = None,
    on_done=None,
) -> int:
    """Harvest each target (`jobs` at a time), appending one line per server to `out` as each ends (a harvest that
    is stopped resumes: servers already in `out` are skipped). Returns how many were harvested now."""
    todo = pending(found, out)
    caches = caches or Path(tempfile.gettempdir()) / "tender-harvest-caches"
    fetcher = Fetcher(timeout=20, retries=2)
    caches.mkdir(parents=True, exist_ok=True)
    date = datetime.now(UTC).strftime("%Y-%m-%d")
    out.parent.mkdir(parents=True, exist_ok=True)

    async def run() -> int:
        limiter = anyio.Semaphore(max(1, jobs))
        count = 0
        with out.open("a", encoding="utf-8") as sink:

            async def one(target: Target) -> None:
                nonlocal count
                async with limiter:
                    record = await harvest_one(target, timeout, caches, date, fetcher)
                sink.write(record.model_dump_json() + "\n")
                sink.flush()
                count += 1
                if on_done is not None:
                    on_done(record)

            async with anyio.create_task_group() as group:
                for target in todo:
                    group.start_soon(one, target)
        return count

    return anyio.run(run)


def pending(found: list[Target], out: Path) -> list[Target]:
    """The targets a harvest file does not hold yet (a stopped harvest resumes from them)."""
    done = {ref for record in read_harvest(out) for ref in record.refs} if out.is_file() else set()
    return [t for t in found if not done & set(t.refs)]


def read_harvest(path: Path) -> list[Harvested]:
    """A harvest file's records; a line that is not one is skipped (a harvest killed mid-line)."""
    records = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        try:
            records.append(Harvested.model_validate_json(line))
        except ValueError:
            continue
    return records


def apply_harvest(apis: list[Api], records: list[Harvested]) -> list[Api]:
    """The catalogue's items with what a harvest saw: each server it tried says so (`details["harvest"]`), and one
    that started with tools no catalogue lists gains them as items. Servers are matched by any of their refs; the
    latest record of a server wins."""
    by_ref: dict[str, Harvested] = {}
    for record in records:
        for ref in record.refs:
            by_ref[ref] = record
    out: list[Api] = []
    for api in apis:
        if api.kind != "server":
            out.append(api)
            continue
        found = next((by_ref[r] for r in api.details.get("refs") or [] if r in by_ref), None)
        if found is None:
            out.append(api)
            continue
        record = found
        # "ran": whether anything was run; a package its registry did not give us was never started.
        seen = {"date": record.date, "started": record.started, "tools": len(record.tools), "ran": bool(record.route)}
        if record.asked_for:
            seen["asked_for"] = record.asked_for
        if record.error:
            seen["error"] = record.error[:300]
        details = {**api.details, "harvest": seen, "installs": _verified_routes(api, record)}
        if record.refusal:
            details["install_refused"] = [*api.details.get("install_refused", []), record.refusal][:10]
        listed = bool(api.details.get("tools_count"))
        gains = record.started and record.tools and not listed
        if gains:
            details.update(
                tools_count=len(record.tools),
                tools_from=f"it was started here on {record.date}",
                tool_names=[t.name for t in record.tools],
            )
        server = api.model_copy(update={"details": details})
        out.append(server)
        if gains:
            out += tool_items(
                server, [Tool(name=t.name, description=t.description, inputs=t.inputs) for t in record.tools]
            )
    return out


def _verified_routes(api: Api, record: Harvested) -> list[dict]:
    """The server's routes, its harvested package's pinned to the version that was run where it started (the
    source's pin where its registry had it, else the release the harvest found); a package a catalogue only guessed
    becomes a route once it started; one that belongs to another project is dropped."""
    routes = routes_of(api.details)
    same = [
        r
        for r in routes
        if isinstance(r, PackageInstall) and (r.registry, r.identifier) == (record.registry, record.identifier)
    ]
    if record.refusal:
        routes = [r for r in routes if r not in same]
    elif record.started and record.version:
        if same:
            routes = [r.model_copy(update={"version": record.version}) if r in same else r for r in routes]
        elif record.registry in ("npm", "pypi"):
            try:
                routes.insert(0, install.package(record.registry, record.identifier, record.version, source="harvest"))
            except install.Refused:
                pass
    return [r.model_dump(mode="json") for r in best_routes(routes)]


ASSETS = Path(__file__).with_name("assets")


def shipped_harvest() -> Path | None:
    """The latest harvest that ships with Tender (tender/catalog/assets/harvest-DATE.jsonl), or None."""
    found = sorted(ASSETS.glob("harvest-*.jsonl"))
    return found[-1] if found else None


def harvest_source(path: Path) -> Loaded:
    """A harvest file as the build lists it among its sources (it holds no items of its own)."""
    from .sources.jsonl import file_hash

    records = read_harvest(path)
    dates = sorted({r.date for r in records})
    when = f", {dates[0]} to {dates[-1]}" if len(dates) > 1 else f", {dates[0]}" if dates else ""
    return Loaded(
        info=SourceInfo(
            kind="harvest",
            name=str(Path(path).resolve()),
            detail=summary(records) + when,
            sha256={str(Path(path).resolve()): file_hash(Path(path))},
            counts={"servers": len(records), "started": sum(r.started for r in records)},
        )
    )


def summary(records: list[Harvested]) -> str:
    started = [r for r in records if r.started]
    tools = sum(len(r.tools) for r in started)
    return f"{len(records):,} servers tried: {len(started):,} started ({tools:,} tools), {len(records) - len(started):,} did not"
