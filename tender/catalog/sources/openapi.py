"""OpenAPI 3.x and Swagger 2.0 documents (JSON or YAML, a file or a folder of them): each operation is an item
of its API, named by its operationId (or method and path), described by its summary and description, grouped
by its tags. `deprecated: true` is kept as the item's status."""

from pathlib import Path

import yaml

from ...errors import SourceError
from ..records import Api
from .base import Loaded, SourceInfo, read_text
from .jsonl import file_hash

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
SUFFIXES = (".yaml", ".yml", ".json")
MAX_INPUTS = 10
MAX_DESCRIPTION = 2000  # some documents put whole manuals in a description; the embedder reads 128 tokens anyway
# What a document may expand to through YAML aliases, in values and characters: ten times its own length, and a
# million more for a small document of shared parameters. The largest public OpenAPI documents use no aliases
# and expand to less than their length.
EXPANSION_PER_CHAR = 10
EXPANSION_FLOOR = 1_000_000


def documents(path: Path) -> list[Path]:
    """The document itself, or every .yaml/.yml/.json file under a folder, in name order."""
    path = Path(path)
    if path.is_file():
        return [path]
    if path.is_dir():
        found = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in SUFFIXES)
        if not found:
            raise SourceError(path, "no OpenAPI documents (.yaml, .yml or .json files) in this folder")
        return found
    raise SourceError(path, "no such file or folder")


def load_openapi(path: Path) -> Loaded:
    """Every operation of every document at `path`, or a SourceError naming the document that cannot be read."""
    files = documents(path)
    apis = [api for document in files for api in read_document(document)]
    info = SourceInfo(
        kind="openapi",
        name=str(Path(path).resolve()),
        items=len(apis),
        detail=f"{len(files)} document{'s' if len(files) != 1 else ''}",
        sha256={str(f.resolve()): file_hash(f) for f in files},
    )
    return Loaded(info=info, apis=apis)


def parse(document: Path) -> dict:
    text = read_text(document)
    try:
        # libyaml's loader when present: ten times faster on the larger documents.
        spec = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as error:
        where = getattr(error, "problem_mark", None)
        line = f" at line {where.line + 1}" if where else ""
        raise SourceError(
            document, f"does not parse as YAML or JSON{line} ({getattr(error, 'problem', None) or error})"
        ) from None
    except (ValueError, RecursionError) as error:  # an integer of thousands of digits, nesting past the stack
        reason = str(error).split(";")[0] if isinstance(error, ValueError) else "nested too deeply"
        raise SourceError(document, f"cannot be read: {reason}") from None
    if "&" in text:  # an anchor: aliases of it may repeat one part of the document any number of times
        check_expansion(spec, document, EXPANSION_PER_CHAR * len(text) + EXPANSION_FLOOR)
    if not isinstance(spec, dict):
        raise SourceError(document, "is not an OpenAPI document (its top level is not a mapping)")
    version = str(spec.get("openapi") or spec.get("swagger") or "")
    if not (version.startswith("3.") or version == "2.0"):
        found = f"version {version!r}" if version else "no `openapi` or `swagger` field"
        raise SourceError(document, f"is not an OpenAPI 3.x or Swagger 2.0 document ({found})")
    if not isinstance(spec.get("paths"), dict) or not spec["paths"]:
        raise SourceError(document, "has no paths: it describes no operation to recommend")
    return spec


def check_expansion(spec, document: Path, budget: int) -> None:
    """SourceError unless the parsed document, read as a tree, holds at most `budget` values and characters.

    YAML aliases make a document a graph: nine lines of nine aliases each ("billion laughs") stand for 10^9
    strings, parsed in microseconds as shared objects, and expanded by the first `str()` of them (2.9 GB and a
    MemoryError in 60 s). Walking the tree as it would be read, counting each value and each string's length,
    stops at the budget instead; a cycle (an alias inside its own anchor) stops there too."""
    left = budget
    stack = [spec]
    while stack:
        value = stack.pop()
        left -= len(value) + 1 if isinstance(value, str) else 1
        if left < 0:
            raise SourceError(
                document,
                f"its YAML aliases expand it to more than {budget:,} values and characters (as a 'billion laughs' "
                "does); refused. Write the repeated parts out, or use $ref",
            )
        if isinstance(value, dict):
            stack.extend(value.keys())
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)


def read_document(document: Path) -> list[Api]:
    spec = parse(document)
    found = spec.get("info")
    info: dict = found if isinstance(found, dict) else {}
    title = str(info.get("title") or document.stem).strip()
    version = str(info.get("version") or "")
    base = base_url(spec)
    docs = (spec.get("externalDocs") or {}).get("url", "") if isinstance(spec.get("externalDocs"), dict) else ""
    items = []
    for route, operations in spec["paths"].items():
        if not isinstance(operations, dict):
            continue
        for method in METHODS:
            operation = operations.get(method)
            if not isinstance(operation, dict):
                continue
            label = str(operation.get("operationId") or f"{method.upper()} {route}")
            text = ". ".join(
                str(operation.get(k) or "").strip().rstrip(".") for k in ("summary", "description") if operation.get(k)
            )
            own_docs = (
                (operation.get("externalDocs") or {}).get("url", "")
                if isinstance(operation.get("externalDocs"), dict)
                else ""
            )
            deprecated = operation.get("deprecated") is True
            items.append(
                Api(
                    id=0,
                    name=f"{label} ({title})",
                    kind="operation",
                    provider=title,
                    source=document.name,
                    categories=[str(t) for t in operation.get("tags") or [] if str(t).strip()],
                    description=text[:MAX_DESCRIPTION],
                    url=f"{method.upper()} {route}",
                    status="deprecated" if deprecated else "active",
                    status_source="openapi deprecated: true" if deprecated else f"listed in {document.name}",
                    link=own_docs or docs or base,
                    details={
                        "method": method.upper(),
                        "path": route,
                        "operation_id": operation.get("operationId") or "",
                        "version": version,
                        "endpoint": f"{base}{route}" if base else "",
                        "inputs": parameter_names(operation.get("parameters") or [], operation),
                    },
                )
            )
    return items


def base_url(spec: dict) -> str:
    """The first server's URL (OpenAPI 3) or scheme://host/basePath (Swagger 2); empty when there is no absolute one."""
    servers = spec.get("servers")
    if isinstance(servers, list) and servers and isinstance(servers[0], dict):
        url = str(servers[0].get("url") or "")
        for name, variable in (servers[0].get("variables") or {}).items():
            if isinstance(variable, dict) and "default" in variable:
                url = url.replace("{" + name + "}", str(variable["default"]))
        return url.rstrip("/") if url.startswith(("http://", "https://")) else ""
    if spec.get("host") and "/" not in str(spec["host"]):
        scheme = (spec.get("schemes") or ["https"])[0]
        return f"{scheme}://{spec['host']}{spec.get('basePath') or ''}".rstrip("/")
    return ""


def parameter_names(parameters: list, operation: dict) -> list[str]:
    names = []
    for parameter in parameters:
        if isinstance(parameter, dict):
            name = parameter.get("name") or str(parameter.get("$ref", "")).rsplit("/", 1)[-1]
            if name and parameter.get("in") != "header":
                names.append(str(name))
    if operation.get("requestBody"):
        names.append("body")
    return list(dict.fromkeys(names))[
        :MAX_INPUTS
    ]  # path-level parameters (keys, formats) are left out: they say nothing of the function
