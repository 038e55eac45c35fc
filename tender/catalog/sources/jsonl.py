"""Reading the ProgrammableWeb JSONL files, line by line, with errors that name the file and the line."""

import hashlib
import json
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from ..errors import MalformedInput
from .records import Api, Mashup

R = TypeVar("R", bound=BaseModel)



def read_jsonl(path: Path, model: type[R]) -> list[R]:
    path = Path(path)
    if not path.is_file():
        raise MalformedInput(path, 0, "file not found")
    records: list[R] = []
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
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


def read_sources(apis_path: Path, mashups_path: Path) -> tuple[list[Api], list[Mashup]]:
    """Both files, checked against each other: unique ids, and every mashup's APIs in the API file."""
    apis = read_jsonl(apis_path, Api)
    mashups = read_jsonl(mashups_path, Mashup)
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


def file_hash(path: Path) -> str:
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
