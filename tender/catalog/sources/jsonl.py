"""Reading the ProgrammableWeb JSONL files, line by line, with errors that name the file and the line."""

import hashlib
import json
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from ...errors import MalformedInput
from ..records import Api, Mashup
from ..status import status_from_description
from .base import Loaded, SourceInfo

R = TypeVar("R", bound=BaseModel)


def read_jsonl(path: Path, model: type[R]) -> list[R]:
    path = Path(path)
    if not path.is_file():
        raise MalformedInput(path, 0, "file not found")
    records: list[R] = []
    with path.open("rb") as lines:
        for number, raw in enumerate(lines, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as error:
                raise MalformedInput(
                    path,
                    number,
                    f"not valid UTF-8 (byte 0x{raw[error.start]:02x} at column "
                    f"{error.start + 1}); save the file as UTF-8",
                ) from None
            if not line.strip():
                continue
            try:
                records.append(model.model_validate(json.loads(line)))
            except json.JSONDecodeError as error:
                raise MalformedInput(path, number, f"not valid JSON ({error.msg})") from None
            except ValidationError as error:
                first = error.errors()[0]
                where = ".".join(str(part) for part in first["loc"]) or "record"
                raise MalformedInput(path, number, f"{where}: {first['msg']}") from None
    return records


def read_sources(apis_path: Path, mashups_path: Path | None) -> tuple[list[Api], list[Mashup]]:
    """Both files, checked against each other: unique ids, and every mashup's APIs in the API file.
    Without a mashups file there is no usage history, which is allowed."""
    apis = read_jsonl(apis_path, Api)
    mashups = read_jsonl(mashups_path, Mashup) if mashups_path is not None else []
    seen: set[int] = set()
    for number, api in enumerate(apis, start=1):
        if api.id in seen:
            raise MalformedInput(apis_path, number, f"duplicate API id {api.id}")
        seen.add(api.id)
    seen_mashups: set[int] = set()
    for number, mashup in enumerate(mashups, start=1):
        if mashup.id in seen_mashups:
            raise MalformedInput(mashups_path, number, f"duplicate mashup id {mashup.id}")
        seen_mashups.add(mashup.id)
        unknown = [api_id for api_id in mashup.api_ids if api_id not in seen]
        if unknown:
            raise MalformedInput(mashups_path, number, f"api_ids {unknown} are not in {Path(apis_path).name}")
    return apis, mashups


def with_status(api: Api) -> Api:
    """An API as the catalogue keeps it: its own provider; a status from its description unless the line gave
    one; its url as a link only if it is one (ProgrammableWeb's `/api/twilio` paths lead nowhere today)."""
    update: dict = {"provider": api.provider or api.name}
    if api.status == "unknown" and not api.status_source:
        update["status"], update["status_source"] = status_from_description(api.description)
    elif not api.status_source:
        update["status_source"] = "the JSONL line's status"
    if not api.link and api.url.startswith(("http://", "https://")):
        update["link"] = api.url
    return api.model_copy(update=update)


def load_jsonl(apis_path: Path, mashups_path: Path | None = None) -> Loaded:
    apis, mashups = read_sources(apis_path, mashups_path)
    hashes = {str(Path(p).resolve()): file_hash(p) for p in (apis_path, mashups_path) if p is not None}
    info = SourceInfo(
        kind="jsonl",
        name=str(Path(apis_path).resolve()),
        sha256=hashes,
        items=len(apis),
        detail=f"{len(mashups)} mashups" if mashups_path else "no mashups",
    )
    return Loaded(info=info, apis=[with_status(a) for a in apis], mashups=mashups)


def read_mashup_ids(path: Path) -> list[int]:
    """Mashup ids, one per line (blank lines skipped), for --exclude-mashups."""
    ids = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8", errors="replace").splitlines(), start=1):
        if line.strip():
            try:
                ids.append(int(line))
            except ValueError:
                raise MalformedInput(
                    path, number, f"{line.strip()[:40]!r} is not a mashup id; write one whole number per line"
                ) from None
    return ids


def file_hash(path: Path) -> str:
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
