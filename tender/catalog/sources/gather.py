"""Every source named for one build, read in a fixed order (JSONL, OpenAPI, directories, registries, listings,
live servers), each raising a SourceError that names it before anything is written."""

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from ...errors import SourceError
from .base import Loaded
from .http import Fetcher
from .jsonl import load_jsonl
from .mcp import Server, load_listing, load_servers, server_from_argument, servers_from_config
from .docker_mcp import load_docker_mcp
from .mcp_registry import load_registry
from .openapi import load_openapi
from .public_apis import MAX_BYTES as PUBLIC_APIS_BYTES
from .public_apis import load_public_apis
from .toolsdk import load_toolsdk


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
    public_apis: Sequence[str] = (),
    mcp_registry: Sequence[str] = (),
    toolsdk: Sequence[Path] = (),
    docker_mcp: Sequence[Path] = (),
    timeout: float = 30.0,
    fetch_timeout: float = 30.0,
    skip_failed: bool = False,
    previous: Path | None = None,
    full_sync: bool = False,
    fetcher: Fetcher | None = None,
) -> list[Loaded]:
    """`public_apis` and `mcp_registry` are files or URLs; a URL is fetched within `fetch_timeout` seconds a request,
    in all (or within `fetcher`'s limits). A registry URL that the catalogue at `previous` was built from is synced (what
    changed since), unless `full_sync`."""
    sources = [load_jsonl(apis, mashups)] if apis else []
    sources += [load_openapi(path) for path in openapi]
    fetcher = fetcher or Fetcher(timeout=fetch_timeout)
    sources += [load_public_apis(where, fetcher=replace(fetcher, max_bytes=PUBLIC_APIS_BYTES)) for where in public_apis]
    sources += [load_registry(where, fetcher=fetcher, previous=previous, full=full_sync) for where in mcp_registry]
    sources += [load_toolsdk(path) for path in toolsdk]
    sources += [load_docker_mcp(path) for path in docker_mcp]
    sources += [loaded for path in mcp_listing for loaded in load_listing(path)]
    servers = named_servers(mcp, mcp_config)
    if servers:
        sources += load_servers(servers, timeout=timeout, skip_failed=skip_failed)
    read = [s.info.name for s in sources if s.info.kind in ("public-apis", "mcp-registry", "toolsdk", "docker-mcp")]
    again = sorted({n for n in read if read.count(n) > 1})
    if again:
        raise SourceError(again[0], "is named twice; its items would be listed twice")
    names = [s.info.name for s in sources if s.info.kind in ("mcp", "mcp-listing")]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise SourceError(
            f"MCP server {twice[0]!r}",
            "comes from two sources (a listing and a live server, or two listings); name one differently",
        )
    return sources
