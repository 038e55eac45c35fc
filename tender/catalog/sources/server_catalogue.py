"""A catalogue of MCP servers (toolsdk's registry, Docker's catalogue) as a build's source: its servers' items,
and what was read and left out."""

from pathlib import Path

from ..servers import Server, items_of
from .base import Loaded, SourceInfo
from .jsonl import file_hash


def servers_loaded(
    kind: str, path: Path, servers: list[Server], counts: dict[str, int], named: list[str], licence: str
):
    """A server catalogue as a build's source: its servers' items, and what was read and left out."""
    apis = [api for server in servers for api in items_of(server)]
    counts = {
        **counts,
        "servers": len(servers),
        "tools": sum(len(s.tools) for s in servers),
        "archived": sum(s.status == "deprecated" and "archived" in s.status_source for s in servers),
        "without install route": sum(not s.routes for s in servers),
    }
    where = str(path.resolve())
    return Loaded(
        info=SourceInfo(
            kind=kind,
            name=where,
            detail=f"{len(servers):,} servers, {counts['tools']:,} listed tools; "
            f"{counts['malformed'] + counts['too large']} records left out as unreadable",
            sha256={where: file_hash(path)},
            items=len(apis),
            licence=licence,
            counts=counts,
            left_out=named,
        ),
        apis=apis,
    )
