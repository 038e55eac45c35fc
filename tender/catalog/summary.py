"""What a catalogue is, read from its file without loading it: the kinds of item it holds, its counts, whether it
has usage history, and its fingerprint.

The fingerprint names what the catalogue's ids mean: it is a hash of every item (id, name, kind, provider, status,
description) and of the usage history, so it stays the same when a catalogue is rebuilt from the same sources and
changes when an id could name another item or a usage count could differ. A run records it (answers/runs.py), so
that its explanation is never told with another catalogue's facts."""

import hashlib
import sqlite3
from pathlib import Path

from pydantic import BaseModel, Field

from ..errors import CatalogMissing, NotACatalogue
from .database import connect_read_only

# What each kind of item is called where the catalogue is described (server instructions, `tender doctor`).
NOUNS = {"api": "Web APIs", "operation": "API operations", "tool": "tools", "server": "MCP servers"}


def fingerprint_of(conn: sqlite3.Connection) -> str:
    """The catalogue's fingerprint, computed from its tables (16 hex digits)."""
    digest = hashlib.sha256()
    for row in conn.execute("select id, name, kind, provider, status, server, tool, description from apis order by id"):
        digest.update(repr(row).encode())
    digest.update(b"\x00mashups")
    for row in conn.execute("select mashup_id, api_id from mashup_apis order by mashup_id, api_id"):
        digest.update(repr(row).encode())
    return digest.hexdigest()[:16]


class KindCount(BaseModel):
    kind: str = Field(
        description="api (a Web API), operation (of an OpenAPI document), tool (of an MCP server) or server (an MCP "
        "registry's record)."
    )
    items: int
    providers: list[str] = Field(description="The providers of these items; for tools, the MCP servers.")


class CatalogSummary(BaseModel):
    """A catalogue as a person or an assistant is told about it."""

    path: str
    fingerprint: str
    kinds: list[KindCount]
    categories: int
    real_categories: int = Field(description="Categories a directory gave its APIs (not an OpenAPI document's tags).")
    mashups: int
    deprecated: int
    model: str
    built_at: str = ""

    @property
    def items(self) -> int:
        return sum(k.items for k in self.kinds)

    @property
    def has_history(self) -> bool:
        return self.mashups > 0

    @property
    def noun(self) -> str:
        """What the catalogue's items are called: 'Web APIs', 'tools', 'API operations', or 'APIs and tools'."""
        kinds = [k.kind for k in self.kinds]
        return NOUNS[kinds[0]] if len(kinds) == 1 else "APIs and tools"

    def describe(self) -> str:
        """'940 Web APIs in 477 categories, with the usage history of 4,493 past mashups', and the like."""
        parts = []
        for k in self.kinds:
            if k.kind == "tool":
                servers = ", ".join(k.providers[:8]) + (", ..." if len(k.providers) > 8 else "")
                parts.append(f"{k.items:,} tools of {_count(len(k.providers), 'MCP server')} ({servers})")
            elif k.kind == "operation":
                parts.append(f"{k.items:,} operations of {_count(len(k.providers), 'API')} (OpenAPI documents)")
            elif k.kind == "server":
                parts.append(f"{k.items:,} MCP servers (an MCP registry's, each with how to install it)")
            else:
                parts.append(f"{k.items:,} Web APIs")
        text = " and ".join(parts)
        if self.real_categories:
            text += f" in {_count(self.real_categories, 'category', 'categories')}"
        if self.deprecated:
            text += f" ({self.deprecated:,} marked deprecated)"
        if self.has_history:
            return f"{text}, with the usage history of {self.mashups:,} past mashups"
        return f"{text}, without usage history (bids rest on what each item's description says)"


def _count(n: int, one: str, many: str = "") -> str:
    return f"{n:,} {one if n == 1 else many or one + 's'}"


def summarise(path: Path | str) -> CatalogSummary:
    """The catalogue at `path`, described; CatalogMissing or NotACatalogue when there is none to read."""
    path = Path(path)
    if not path.is_file():
        raise CatalogMissing(path)
    try:
        conn = connect_read_only(path)
        try:
            meta = dict(conn.execute("select key, value from meta").fetchall())
            counts: dict[str, int] = {}
            providers: dict[str, dict[str, None]] = {}
            for kind, provider in conn.execute(
                "select kind, coalesce(nullif(provider, ''), name) from apis order by id"
            ):
                counts[kind] = counts.get(kind, 0) + 1
                providers.setdefault(kind, {})[provider] = None
            real = conn.execute(
                "select count(distinct category) from api_categories join apis on apis.id = api_id "
                "where apis.kind = 'api'"
            ).fetchone()[0]
            fingerprint = meta.get("fingerprint") or fingerprint_of(conn)
        finally:
            conn.close()
    except sqlite3.DatabaseError as error:
        raise NotACatalogue(path, str(error)) from None
    return CatalogSummary(
        path=str(path.resolve()),
        fingerprint=fingerprint,
        kinds=[KindCount(kind=kind, items=n, providers=list(providers[kind])) for kind, n in counts.items()],
        categories=int(meta.get("categories", 0)),
        real_categories=real,
        mashups=int(meta.get("mashups", 0)),
        deprecated=int(meta.get("deprecated", 0)),
        model=meta.get("model", ""),
        built_at=meta.get("built_at", ""),
    )
