"""Where catalogue items come from: ProgrammableWeb JSONL (jsonl), OpenAPI and Swagger documents (openapi),
MCP servers, live or as a saved listing (mcp), the public-apis directory (public_apis) and MCP registries
(mcp_registry), files or URLs (http). Each reader returns `Loaded` items or raises an error that names the
source, before anything is written."""

from .base import Loaded, SourceInfo
from .jsonl import file_hash, load_jsonl, read_jsonl, read_sources

__all__ = ["Loaded", "SourceInfo", "file_hash", "load_jsonl", "read_jsonl", "read_sources"]
