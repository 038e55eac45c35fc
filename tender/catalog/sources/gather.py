"""Every source named for one build, read in a fixed order (JSONL, OpenAPI, listings, live servers), each
raising a SourceError that names it before anything is written."""

from collections.abc import Sequence
from pathlib import Path

from ...errors import SourceError
from .base import Loaded
from .jsonl import load_jsonl
from .mcp import Server, load_listing, load_servers, server_from_argument, servers_from_config
from .openapi import load_openapi


def named_servers(mcp: Sequence[str] = (), mcp_config: Sequence[Path] = ()) -> list[Server]:
    return [server_from_argument(text) for text in mcp] + [s for path in mcp_config for s in servers_from_config(path)]


def gather(
    *,
    apis: Path | None = None,
    mashups: Path | None = None,
    openapi: Sequence[Path] = (),
    mcp: Sequence[str] = (),
    mcp_config: Sequence[Path] = (),
    mcp_listing: Sequence[Path] = (),
    timeout: float = 30.0,
    skip_failed: bool = False,
) -> list[Loaded]:
    sources = [load_jsonl(apis, mashups)] if apis else []
    sources += [load_openapi(path) for path in openapi]
    sources += [loaded for path in mcp_listing for loaded in load_listing(path)]
    servers = named_servers(mcp, mcp_config)
    if servers:
        sources += load_servers(servers, timeout=timeout, skip_failed=skip_failed)
    names = [s.info.name for s in sources if s.info.kind.startswith("mcp")]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise SourceError(
            f"MCP server {twice[0]!r}",
            "comes from two sources (a listing and a live server, or two listings); name one differently",
        )
    return sources
