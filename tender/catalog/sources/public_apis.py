"""The public-apis directory (github.com/public-apis/public-apis, MIT) as a catalogue source: its README, a file
or a URL, read as published. Each `### Category` heading holds a Markdown table
`| [Name](link) | Description | Auth | HTTPS | CORS |`; every row is an API of that category, its auth, HTTPS and
CORS kept as facts (`details`). Tables with other columns (the sponsors' at the top) are not read; a row without
a link is left out and counted; an API listed under two headings (same name and link) is one item of both
categories. The directory lists live APIs: an item is active unless its description says it is gone."""

import hashlib
import re
from pathlib import Path

from ...errors import SourceError
from ..records import Api
from ..status import status_from_description
from .base import Loaded, SourceInfo, read_text
from .http import Fetcher, is_url, shown_url
from .jsonl import file_hash

LICENCE = "MIT, Copyright (c) 2022 public-apis (github.com/public-apis/public-apis); keep the notice with any copy"
URL = "https://raw.githubusercontent.com/public-apis/public-apis/master/README.md"
COLUMNS = ["api", "description", "auth", "https", "cors"]
MAX_BYTES = 8 << 20  # the README is 240 KB
MAX_DESCRIPTION = 2000
# The Markdown is read by hand, in one pass over each line: the patterns this replaced backtracked, and a hostile
# file took cubic time on a heading line (a 3 KB one: 35 s) and quadratic time on a separator line or a link cell.


def heading(line: str) -> str | None:
    """The title of a `#` to `######` heading line (its closing #s and blanks left out), None for another line:
    what `^#{1,6}\\s+(.*?)\\s*#*\\s*$` matched."""
    level = len(line) - len(line.lstrip("#"))
    if not 1 <= level <= 6 or level == len(line) or not line[level].isspace():
        return None
    return line[level:].strip().rstrip("#").rstrip()


def is_separator(line: str) -> bool:
    """Whether a line is a table's separator row (`|---|:---:|`, outer pipes optional)."""
    text = line.strip()
    text = text[1:] if text.startswith("|") else text
    text = text[:-1] if text.endswith("|") else text
    for cell in text.split("|"):
        dashes = cell.strip()
        dashes = dashes[1:] if dashes.startswith(":") else dashes
        dashes = dashes[:-1] if dashes.endswith(":") else dashes
        if len(dashes) < 3 or dashes.strip("-"):
            return False
    return True


def link_of(cell: str) -> tuple[str, str] | None:
    """(name, link) of a `[name](link)` cell, None for another: what `^\\[(.+?)\\]\\(\\s*([^)\\s]+)\\s*\\)$` matched
    (the name up to the first `](` after which a link follows alone)."""
    if not (cell.startswith("[") and cell.endswith(")")):
        return None
    body = cell[:-1]
    end = len(body.rstrip())
    start = end  # the link is a run of characters other than `)` and blanks, ending the cell
    while start > 0 and body[start - 1] != ")" and not body[start - 1].isspace():
        start -= 1
    if start == end:
        return None
    before = len(body[:start].rstrip())
    if before < start and before >= 4 and body[before - 2 : before] == "](":  # `[name](  link)`
        return cell[1 : before - 2], body[start:end]
    bracket = body.find("](", max(start, 2))  # `[name](link)`: the first `](` with a name before it
    if bracket < 0 or bracket + 2 >= end:
        return None
    return cell[1:bracket], body[bracket + 2 : end]


def cells(line: str) -> list[str]:
    """A table row's cells, with or without its outer pipes; an escaped pipe (\\|) stays in its cell."""
    text = line.strip()
    if text.startswith("|"):
        text = text[1:]
    if text.endswith("|") and not text.endswith("\\|"):
        text = text[:-1]
    return [cell.strip().replace("\\|", "|") for cell in re.split(r"(?<!\\)\|", text)]


def auth_of(cell: str) -> str | None:
    """`apiKey`, `OAuth`, `X-Mashape-Key`...; None for "No"."""
    value = cell.strip().strip("`").strip()
    return None if value.casefold() in ("no", "none", "") else value


def parse(text: str, origin: str) -> tuple[list[Api], dict[str, int], list[str]]:
    """The directory's APIs, what was read and left out (by reason), and the sections read."""
    items: dict[tuple[str, str], Api] = {}
    more: dict[tuple[str, str], dict[str, None]] = {}  # the other headings an item is listed under
    counts = {"rows": 0, "without a link": 0, "malformed": 0, "listed again": 0, "tables of other columns": 0}
    sections: list[str] = []
    section = ""
    lines = text.splitlines()
    n = 0
    while n < len(lines):
        line = lines[n]
        title = heading(line)
        if title is not None:
            section = title
            n += 1
            continue
        is_table = "|" in line and n + 1 < len(lines) and is_separator(lines[n + 1])
        if not is_table:
            n += 1
            continue
        header = [c.casefold() for c in cells(line)]
        n += 2
        rows = []
        while n < len(lines) and lines[n].strip().startswith("|"):
            rows.append(lines[n])
            n += 1
        if header[: len(COLUMNS)] != COLUMNS or not section:
            counts["tables of other columns"] += 1
            continue
        sections.append(section)
        for row in rows:
            counts["rows"] += 1
            found = cells(row)
            if len(found) < len(COLUMNS):
                counts["malformed"] += 1
                continue
            name_cell, description, auth, https, cors = found[: len(COLUMNS)]
            link = link_of(name_cell)
            if not link or not is_url(link[1]):
                counts["without a link"] += 1
                continue
            name, url = link[0].strip(), link[1]
            key = (name.casefold(), url)
            if key in items:
                counts["listed again"] += 1
                more.setdefault(key, {})[section] = None
                continue
            status, said = status_from_description(description)
            items[key] = Api(
                id=0,
                name=name,
                url=url,
                link=url,
                categories=[section],
                description=description[:MAX_DESCRIPTION],
                source=origin,
                kind="api",
                provider=name,
                status="deprecated" if status == "deprecated" else "active",
                status_source=said or "listed in the public-apis directory",
                details={
                    "refs": [f"public-apis:{name}"],
                    "auth": auth_of(auth),
                    "https": https.strip().casefold() == "yes",
                    "cors": cors.strip().strip("`").casefold() if cors.strip() else "unknown",
                },
            )
    for key, categories in more.items():  # an API under several headings: one item of each category, in order
        api = items[key]
        items[key] = api.model_copy(update={"categories": list(dict.fromkeys([*api.categories, *categories]))})
    return list(items.values()), counts, sections


def load_public_apis(where: str | Path, *, fetcher: Fetcher | None = None) -> Loaded:
    """The directory at `where`: a README file, or a URL (fetched within `fetcher`'s limits). SourceError, naming
    it, when it cannot be read or holds no table of APIs."""
    if is_url(str(where)):
        name = shown_url(str(where))  # as printed and kept, in the catalogue and each item's source
        body = (fetcher or Fetcher(max_bytes=MAX_BYTES)).get(str(where))
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            raise SourceError(name, "is not UTF-8 text") from None
        hashes = {name: hashlib.sha256(body).hexdigest()}
    else:
        path = Path(where)
        name = str(path.resolve())
        text = read_text(path)
        hashes = {name: file_hash(path)}
    apis, counts, sections = parse(text, name)
    if not apis:
        raise SourceError(
            name,
            "holds no table of APIs (a `### Category` heading over `| API | Description | Auth | HTTPS | CORS |`); "
            "name the public-apis README",
        )
    left = sum(v for k, v in counts.items() if k in ("without a link", "malformed"))
    info = SourceInfo(
        kind="public-apis",
        name=name,
        detail=f"{counts['rows']:,} rows in {len(sections)} sections; {left} left out, "
        f"{counts['listed again']} listed again (one item each)",
        sha256=hashes,
        items=len(apis),
        licence=LICENCE,
        counts=counts,
    )
    return Loaded(info=info, apis=apis)
