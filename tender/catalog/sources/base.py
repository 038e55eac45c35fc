"""What every source hands to the build: its items, and a description of itself for `tender catalog info`."""

from pydantic import BaseModel, Field

from ..records import Api, Mashup


class SourceInfo(BaseModel):
    kind: str = Field(description="jsonl, openapi, mcp or mcp-listing.")
    name: str = Field(description="A file or folder, or an MCP server's name.")
    detail: str = Field("", description="The server's command or URL, a document count.")
    sha256: dict[str, str] = Field(default_factory=dict, description="Each file read, with its sha256.")
    items: int = 0
    skipped: str = Field("", description="Why this source was left out (--skip-failed).")


class Loaded(BaseModel):
    """One source's items. Ids are the source's own (JSONL) or 0 (numbered when the catalogue is assembled)."""

    info: SourceInfo
    apis: list[Api] = []
    mashups: list[Mashup] = []
