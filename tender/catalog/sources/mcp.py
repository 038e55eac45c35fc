"""MCP servers as a catalogue source. Tender connects as an MCP client (stdio or streamable HTTP), lists every
tool (tools/list, following nextCursor) and records each as an item of its server. Servers are named on the
command line, by a client configuration file (Claude Desktop, Cursor: `mcpServers`; VS Code: `servers`), or by
a saved listing, which rebuilds a catalogue without starting anything. Every server is bounded by a timeout;
a failure names the server."""

import json
import logging
import re
import shlex
import sys
import tempfile
from pathlib import Path
from urllib.parse import urlparse

import anyio
from pydantic import BaseModel, Field, ValidationError

from ...errors import SourceError
from ..records import Api
from ..status import status_from_tool
from .base import Loaded, SourceInfo, read_text
from .jsonl import file_hash

MAX_PAGES = 1000  # a server whose cursors never end is broken, not large
LAUNCHER = Path(__file__).with_name("launcher.py")
MARK = "[tender launcher]"  # launcher.py's lines on the server's stderr
# The SDK logs a server's malformed output with a traceback; the error raised here names the server instead.
logging.getLogger("mcp.client").addHandler(logging.NullHandler())
logging.getLogger("mcp.client").propagate = False


class Server(BaseModel):
    """One MCP server as configured: a command (stdio) or a URL (streamable HTTP)."""

    name: str
    command: str = ""
    args: list[str] = []
    env: dict[str, str] = {}
    cwd: str | None = None
    url: str = ""
    origin: str = Field("", description="Where it was named: --mcp, or a configuration file.")

    def describe(self) -> str:
        return self.url or shlex.join([self.command, *self.args])


class ServerListing(BaseModel):
    """A server's tools/list result, as saved by `tender catalog list-tools --save`."""

    name: str
    command: str = ""
    url: str = ""
    tools: list[dict]


class Listing(BaseModel):
    servers: list[ServerListing]


# -- naming servers -------------------------------------------------------------------------------
_RUNNERS = {"npx", "uvx", "pipx", "bunx", "node", "deno", "python", "python3", "uv", "run", "-m", "exec", "dlx", "pnpm"}


def server_from_argument(text: str) -> Server:
    """`--mcp` values: "URL", "COMMAND ARGS", or either prefixed by "NAME=" to choose the server's name."""
    text = text.strip()
    name = ""
    prefix = re.match(r"^([\w.-]+)=(?!=)", text)
    if prefix and " " not in prefix.group(1):
        name, text = prefix.group(1), text[prefix.end() :].strip()
    if not text:
        raise SourceError(f"--mcp {name}=", "names no command or URL")
    if text.startswith(("http://", "https://")):
        return Server(name=name or urlparse(text).netloc, url=text, origin="--mcp")
    try:
        words = shlex.split(text)
    except ValueError as error:
        raise SourceError(f"--mcp {text!r}", f"cannot be split into a command and arguments ({error})") from None
    return Server(name=name or derived_name(words), command=words[0], args=words[1:], origin="--mcp")


def derived_name(words: list[str]) -> str:
    """A server's name from its command: the package or program it runs ("@scope/server-x@1.0" -> "server-x")."""
    for word in words:
        if word.startswith("-") or Path(word).name in _RUNNERS:
            continue
        base = word.rstrip("/").rsplit("/", 1)[-1]
        return re.sub(r"@[\w.^~-]*$", "", base) or word
    return Path(words[0]).name


def servers_from_config(path: Path) -> list[Server]:
    """The servers of a Claude Desktop, Cursor (`mcpServers`) or VS Code (`servers`) configuration file."""
    path = Path(path)
    try:
        config = json.loads(read_text(path))
    except json.JSONDecodeError as error:
        raise SourceError(path, f"is not valid JSON ({error})") from None
    entries = config.get("mcpServers", config.get("servers")) if isinstance(config, dict) else None
    if not isinstance(entries, dict):
        raise SourceError(path, "has no `mcpServers` (Claude Desktop, Cursor) or `servers` (VS Code) object")
    if not entries:
        raise SourceError(path, "configures no servers")
    servers = []
    for name, entry in entries.items():
        if not isinstance(entry, dict) or not (entry.get("command") or entry.get("url")):
            raise SourceError(f"{path}, server {name!r}", "has neither a `command` nor a `url`")
        if entry.get("disabled"):
            continue
        try:
            servers.append(
                Server(
                    name=name,
                    command=entry.get("command") or "",
                    args=entry.get("args") or [],
                    env=entry.get("env") or {},
                    cwd=entry.get("cwd"),
                    url=entry.get("url") or "",
                    origin=str(path),
                )
            )
        except ValidationError as error:
            raise SourceError(f"{path}, server {name!r}", f"is malformed ({error.errors()[0]['msg']})") from None
    return servers


def check_unique(servers: list[Server]) -> None:
    seen: dict[str, Server] = {}
    for server in servers:
        if server.name in seen:
            raise SourceError(
                f"MCP server {server.name!r}",
                f"is named twice ({seen[server.name].origin or '--mcp'}: "
                f"{seen[server.name].describe()}; {server.origin or '--mcp'}: {server.describe()}); "
                "give one another name (NAME=... with --mcp)",
            )
        seen[server.name] = server


# -- listing tools --------------------------------------------------------------------------------
async def _list_tools(server: Server) -> list[dict]:
    from mcp import ClientSession, types

    async def pages(session: ClientSession) -> list[dict]:
        await session.initialize()
        tools: list[dict] = []
        cursor, seen = None, set()
        for _ in range(MAX_PAGES):
            result = await session.list_tools(params=types.PaginatedRequestParams(cursor=cursor) if cursor else None)
            tools.extend(t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in result.tools)
            cursor = result.next_cursor
            if not cursor:
                return tools
            if cursor in seen:
                raise SourceError(f"MCP server {server.name!r}", f"repeats the cursor {cursor!r} in tools/list")
            seen.add(cursor)
        raise SourceError(f"MCP server {server.name!r}", f"returned more than {MAX_PAGES} pages of tools")

    if server.url:
        from mcp.client.streamable_http import streamable_http_client

        async with streamable_http_client(server.url) as (read, write), ClientSession(read, write) as session:
            return await pages(session)
    from mcp.client.stdio import StdioServerParameters, stdio_client

    # Through the launcher, which writes how the server ended to its stderr (the SDK never says).
    params = StdioServerParameters(
        command=sys.executable,
        args=[str(LAUNCHER), server.command, *server.args],
        env=server.env or None,
        cwd=server.cwd,
    )
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errlog:
        try:
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
                return await pages(session)
        except BaseException as error:
            errlog.seek(0)
            error.add_note(errlog.read()[-4000:])  # the server's own last words, and how it ended
            raise


async def _list_one(server: Server, timeout: float) -> ServerListing:
    where = f"MCP server {server.name!r} ({server.describe()})"
    try:
        with anyio.fail_after(timeout):
            tools = await _list_tools(server)
    except SourceError:
        raise
    except TimeoutError:
        raise SourceError(where, f"did not list its tools within {timeout:g} s (--mcp-timeout)") from None
    except FileNotFoundError:
        raise SourceError(where, f"cannot be started: no command {server.command!r}") from None
    except BaseException as error:  # an exception group from the transport, a protocol error, a dead process
        raise SourceError(where, _ended(server, error)) from None
    if not tools:
        raise SourceError(where, "lists no tools")
    return ServerListing(
        name=server.name,
        command=shlex.join([server.command, *server.args]) if server.command else "",
        url=server.url,
        tools=tools,
    )


def _ended(server: Server, error: BaseException) -> str:
    """How a server failed, from what the launcher and the server wrote to stderr: it could not be started,
    it exited (with which status) before listing its tools, or the exchange failed; with its last words."""
    stderr = "\n".join(n for n in _notes(error) if n)
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    said = [line for line in lines if not line.startswith(MARK)][-3:]
    marks = [line[len(MARK) :].strip() for line in lines if line.startswith(MARK)]
    last_words = f"; its stderr ends: {' / '.join(line[:200] for line in said)}" if said else ""
    if marks and marks[-1].startswith("no such command"):
        return f"cannot be started: no command {server.command!r}"
    if marks and marks[-1].startswith("cannot start"):
        return f"cannot be started: {marks[-1].removeprefix('cannot start ')}"
    if marks and marks[-1].startswith("exit status"):
        code = int(marks[-1].split()[-1])
        how = f"was killed by signal {-code}" if code < 0 else f"exited with status {code}"
        return f"{how} before listing its tools{last_words}"
    return f"failed: {_describe(error, with_notes=False)}{last_words}"


def _notes(error: BaseException) -> list[str]:
    notes = list(getattr(error, "__notes__", []))
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            notes += _notes(inner)
    return notes


def _describe(error: BaseException, with_notes: bool = True) -> str:
    notes = [n for n in getattr(error, "__notes__", []) if n]
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
        notes += [n for n in getattr(error, "__notes__", []) if n]
    if isinstance(error, BaseExceptionGroup):
        return "; ".join(_describe(e, with_notes) for e in error.exceptions)
    text = str(error) or type(error).__name__
    stderr = " ".join(dict.fromkeys(notes)) if with_notes else ""
    if isinstance(error, FileNotFoundError):
        text = f"no such command ({error.filename or error})"
    return f"{text}; its stderr: {stderr}" if stderr else text


def list_servers(
    servers: list[Server], *, timeout: float = 30.0, skip_failed: bool = False
) -> tuple[list[ServerListing], list[tuple[Server, str]]]:
    """Every server's tools, listed concurrently (all started at once), each within `timeout` seconds. Failures
    raise one SourceError naming every failed server and how it failed, unless skip_failed, which returns the
    failures beside the listings."""
    check_unique(servers)
    results: dict[str, ServerListing | SourceError] = {}

    async def one(server: Server) -> None:
        try:
            results[server.name] = await _list_one(server, timeout)
        except SourceError as error:
            results[server.name] = error

    async def all_of() -> None:
        async with anyio.create_task_group() as group:
            for server in servers:
                group.start_soon(one, server)

    anyio.run(all_of)
    listings, failed = [], []
    for server in servers:
        result = results[server.name]
        if isinstance(result, SourceError):
            failed.append((server, str(result)))
        else:
            listings.append(result)
    if failed and not skip_failed:
        if len(failed) == 1:
            raise results[failed[0][0].name]  # type: ignore[misc]  # a SourceError, by the test above
        raise SourceError(
            f"{len(failed)} of {len(servers)} MCP servers",
            "failed: " + " | ".join(reason for _, reason in failed) + " (--skip-failed builds from the others)",
        )
    return listings, failed


# -- listings to items ----------------------------------------------------------------------------
def read_listing(path: Path) -> list[ServerListing]:
    path = Path(path)
    try:
        listing = Listing.model_validate_json(read_text(path))
    except ValidationError as error:
        first = error.errors()[0]
        raise SourceError(
            path,
            f"is not a listing ({'.'.join(map(str, first['loc']))}: {first['msg']}); "
            "write one with `tender catalog list-tools --save`",
        ) from None
    if not listing.servers or not any(s.tools for s in listing.servers):
        raise SourceError(path, "is an empty listing: no server, or no tools")
    return listing.servers


def save_listing(listings: list[ServerListing], path: Path) -> None:
    Path(path).write_text(Listing(servers=listings).model_dump_json(indent=1), encoding="utf-8")


def tools_of(listing: ServerListing, status_source: str, origin: str) -> list[Api]:
    from mcp import types

    items = []
    for number, raw in enumerate(listing.tools, start=1):
        try:
            tool = types.Tool.model_validate(raw)
        except ValidationError as error:
            first = error.errors()[0]
            raise SourceError(
                f"MCP server {listing.name!r} ({origin})",
                f"tool {number} is malformed ({'.'.join(map(str, first['loc']))}: {first['msg']})",
            ) from None
        title = tool.title or (tool.annotations.title if tool.annotations else None) or ""
        text = (tool.description or "").strip()  # what it does; its title is kept apart (Api.text() joins them)
        status, said = status_from_tool(title, text)
        schema: dict = tool.input_schema if isinstance(tool.input_schema, dict) else {}
        found = schema.get("properties")
        properties: dict = found if isinstance(found, dict) else {}
        required = [r for r in schema.get("required") or [] if r in properties]
        inputs = {
            name: (spec.get("type", "any") if isinstance(spec, dict) else "any") for name, spec in properties.items()
        }
        items.append(
            Api(
                id=0,
                name=f"{tool.name} ({listing.name})",
                kind="tool",
                provider=listing.name,
                server=listing.name,
                tool=tool.name,
                description=text[:2000],
                source=origin,
                status=status,
                status_source=said or status_source,
                link=listing.url,
                details={
                    "title": title,
                    "inputs": [*required, *(n for n in properties if n not in required)][:10],
                    "input_schema": {"properties": inputs, "required": required},
                    "annotations": tool.annotations.model_dump(by_alias=True, exclude_none=True)
                    if tool.annotations
                    else {},
                },
            )
        )
    return items


def loaded_from_listings(
    listings: list[ServerListing],
    *,
    kind: str,
    origin: str = "",
    status_source: str,
    hashes: dict[str, str] | None = None,
) -> list[Loaded]:
    """One Loaded source per server."""
    return [
        Loaded(
            info=SourceInfo(
                kind=kind,
                name=listing.name,
                detail=origin or listing.url or listing.command,
                items=len(listing.tools),
                sha256=hashes or {},
            ),
            apis=tools_of(listing, status_source, origin or listing.url or listing.command),
        )
        for listing in listings
    ]


def load_listing(path: Path) -> list[Loaded]:
    path = Path(path)
    listings = read_listing(path)
    check_unique([Server(name=s.name, command=s.command or "?", url=s.url, origin=str(path)) for s in listings])
    return loaded_from_listings(
        listings,
        kind="mcp-listing",
        origin=str(path.resolve()),
        status_source=f"listed in {path.name}",
        hashes={str(path.resolve()): file_hash(path)},
    )


def load_servers(servers: list[Server], *, timeout: float = 30.0, skip_failed: bool = False) -> list[Loaded]:
    """Start (or reach) every server, list its tools, and return them as sources; a skipped server is a source
    with no items and the reason, so that `tender catalog info` shows it."""
    listings, failed = list_servers(servers, timeout=timeout, skip_failed=skip_failed)
    loaded = loaded_from_listings(listings, kind="mcp", status_source="listed by the server")
    loaded += [
        Loaded(info=SourceInfo(kind="mcp", name=s.name, detail=s.describe(), skipped=reason)) for s, reason in failed
    ]
    return loaded
