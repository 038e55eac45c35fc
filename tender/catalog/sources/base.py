"""What every source hands to the build: its items, and a description of itself for `tender catalog info`."""

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ...errors import SourceError
from ..records import Api, Mashup


def mapping(value: Any) -> dict:
    """A record's object, or an empty one where it holds anything else (a record is other people's data)."""
    return value if isinstance(value, dict) else {}


def read_records(
    path: Path, read_one, most_bytes: int, unreadable: tuple = ()
) -> tuple[list, dict[str, int], list[str]]:
    """Each JSON object line of a file read by `read_one`, with the counts of records, malformed and too large ones,
    and the first 20 left out, each named with its line and why. A line is other people's data: anything wrong
    with it leaves it out, never the file."""
    import json

    counts = {"records": 0, "malformed": 0, "too large": 0}
    named: list[str] = []
    found = []
    for number, line in enumerate(read_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        counts["records"] += 1
        if len(line) > most_bytes:
            counts["too large"] += 1
            named.append(f"line {number}: {len(line):,} bytes")
            continue
        try:
            row = json.loads(line)
            if not isinstance(row, dict):
                raise ValueError("is not an object")
            found.append(read_one(row))
        except (ValueError, TypeError, *unreadable) as error:  # json.JSONDecodeError is a ValueError
            counts["malformed"] += 1
            if len(named) < 20:
                named.append(f"line {number}: {str(error).splitlines()[0][:200]}")
    return found, counts, named[:20]


def read_text(path: Path) -> str:
    """A source file's text; SourceError, naming the file, when it is missing, unreadable or not UTF-8."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SourceError(path, "no such file") from None
    except IsADirectoryError:
        raise SourceError(path, "is a folder, not a file") from None
    except UnicodeDecodeError:
        raise SourceError(path, "is not UTF-8 text") from None
    except OSError as error:
        raise SourceError(path, (error.strerror or str(error)).lower()) from None


class SourceInfo(BaseModel):
    kind: str = Field(description="jsonl, openapi, mcp, mcp-listing, mcp-registry or public-apis.")
    name: str = Field(description="A file, folder or URL, or an MCP server's name.")
    detail: str = Field("", description="The server's command or URL, a document count.")
    sha256: dict[str, str] = Field(default_factory=dict, description="Each file read, with its sha256.")
    items: int = 0
    skipped: str = Field("", description="Why this source was left out (--skip-failed).")
    licence: str = Field("", description="The data's licence and where it came from, where the source has one.")
    counts: dict[str, int] = Field(
        default_factory=dict,
        description="Records or rows read, and those left out, by reason (a directory, a registry).",
    )
    left_out: list[str] = Field(default_factory=list, description="Records left out, each named with why (20 at most).")
    synced_at: str = Field(
        "",
        description="A registry read over HTTP: when (RFC 3339, UTC); the next build asks only for what changed since.",
    )


class Loaded(BaseModel):
    """One source's items. Ids are the source's own (JSONL) or 0 (numbered when the catalogue is assembled)."""

    info: SourceInfo
    apis: list[Api] = []
    mashups: list[Mashup] = []
