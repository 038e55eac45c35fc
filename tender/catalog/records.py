"""The catalogue's records, as read from the source files and returned by the store."""

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..safety import clean, one_line

from .words import name_words, own_name

Status = Literal["active", "deprecated", "unknown"]
STATUSES: tuple[str, ...] = ("active", "deprecated", "unknown")
ItemKind = Literal["api", "operation", "tool", "server"]  # server: an MCP registry record


ONE_LINE = frozenset({"name", "url", "source", "provider", "status_source", "link", "server", "tool"})


class Api(BaseModel):
    """One item of the catalogue: a Web API (ProgrammableWeb, public-apis), an operation of an OpenAPI document, a
    tool of an MCP server, or an MCP server as a registry lists it. The name `Api` stays because every agent and
    answer speaks of APIs."""

    model_config = ConfigDict(frozen=True)

    id: int = Field(ge=0)
    name: str = Field(min_length=1)
    url: str = Field("", description="The source's own reference; for ProgrammableWeb a path that leads nowhere today.")
    categories: list[str] = []
    description: str = ""
    source: str = ""
    kind: ItemKind = "api"
    provider: str = Field(
        "", description="The API or MCP server the item belongs to (a ProgrammableWeb API is its own)."
    )
    status: Status = "unknown"
    status_source: str = Field("", description='Where the status came from, e.g. "openapi deprecated: true".')
    link: str = Field("", description="Documentation or endpoint URL, only where the source has a real one.")
    server: str = Field("", description="MCP tools: the server's name as configured.")
    tool: str = Field("", description="MCP tools: the name to call it by.")
    details: dict[str, Any] = Field(
        default_factory=dict, description="Source-specific extras (method, path, input schema, annotations)."
    )

    @field_validator(
        "name", "url", "description", "source", "provider", "status_source", "link", "server", "tool", mode="before"
    )
    @classmethod
    def _none_is_empty(cls, value):
        return "" if value is None else value

    # Third-party text: its control and bidirectional characters never reach a terminal or an assistant,
    # whether the catalogue was built before this check or after (it holds at reading too).
    @model_validator(mode="before")
    @classmethod
    def _clean(cls, data):
        data = cleaned(data)
        if isinstance(data, dict):  # what names a thing is one line; a description keeps its paragraphs
            data = {k: one_line(v) if k in ONE_LINE and isinstance(v, str) else v for k, v in data.items()}
            if isinstance(data.get("categories"), list):
                data["categories"] = [one_line(c) if isinstance(c, str) else c for c in data["categories"]]
        return data

    @property
    def primary_category(self) -> str | None:
        return self.categories[0] if self.categories else None

    @property
    def provider_name(self) -> str:
        return self.provider or self.name

    @property
    def gone(self) -> bool:
        """Whether its source marks it deprecated or gone (archived): it takes no need unless the caller asks
        (ranking/policy.py). The one place the status is read as that."""
        return is_gone(self.status)

    @property
    def of_server(self) -> bool:
        """A server of an MCP catalogue (a registry's, toolsdk's, Docker's) or one of the tools it lists."""
        return self.kind == "server" or (self.kind == "tool" and bool(self.details.get("of_server")))

    @property
    def title(self) -> str:
        """A server's own title (its name without its namespace), else the name."""
        if self.kind == "server":
            namespace = str(self.details.get("namespace") or self.provider)
            return str(self.details.get("title") or "") or name_words(namespace.rsplit("/", 1)[-1]) or self.name
        return self.name

    def name_text(self) -> str:
        """The words of the item's own name ('read_file' -> 'read file'): what the name says it does, embedded
        apart from the description. A server's is its title, never its namespace ("io.github.x" says nothing)."""
        if self.kind == "server":
            return self.title
        own = own_name(self.kind, self.name, self.tool, str(self.details.get("operation_id") or ""), self.url)
        return name_words(own) or own

    def lexical_name(self) -> str:
        """The name as the word index reads it: a server's title and the words of its package's own name (not its
        namespace's "io github", which every registry server shares); other items their name and its words."""
        if self.kind == "server":
            own = str(self.details.get("namespace") or self.provider).rsplit("/", 1)[-1]
            return f"{self.title} {name_words(own)}"
        if self.kind == "tool" and self.details.get("of_server"):
            return f"{self.tool} {name_words(self.tool)}"
        return f"{self.name} {name_words(self.name)}"

    def text(self) -> str:
        """What is embedded for this item. A provider other than the item itself is named too (an operation or a
        tool reads better with its API or server); ProgrammableWeb texts are unchanged, so are their vectors. A server
        of an MCP catalogue reads as its title, categories, description and the names of its tools; each of its
        tools as its name, its server's title and what it does."""
        if self.of_server:
            return self._server_text()
        if self.kind == "api":
            provider = f" {self.provider}." if self.provider and self.provider != self.name else ""
            head = f"{self.name}.{provider} {', '.join(self.categories)}."
            return f"{head} {self.description}".strip()
        description = self.description.strip()
        title = str(self.details.get("title") or "")
        if title and title.casefold() not in description.casefold():  # a tool's title reads as its first sentence
            description = f"{title}. {description}".strip()
        provider = self.provider if self.provider != self.name else ""  # a tool that is its own provider: once
        parts = [self.name, provider, ", ".join(self.categories), description]
        inputs = self.details.get("inputs")
        if inputs:
            parts.append("Inputs: " + ", ".join(inputs))
        return " ".join(p if p.endswith((".", "!", "?")) else f"{p}." for p in parts if p)

    def _server_text(self) -> str:
        if self.kind == "server":
            tools = [name_words(str(t)) for t in self.details.get("tool_names") or []][:30]
            parts = [self.title, ", ".join(self.categories), self.description.strip()]
            if tools:
                parts.append("Tools: " + ", ".join(tools))
        else:
            server = str(self.details.get("server_title") or "")
            parts = [name_words(self.tool) or self.tool, server, self.description.strip()]
            inputs = self.details.get("inputs")
            if inputs:
                parts.append("Inputs: " + ", ".join(inputs))
        return " ".join(p if p.endswith((".", "!", "?")) else f"{p}." for p in parts if p)


def is_gone(status: str) -> bool:
    """Whether a status (an item's, or an award's copy of it) marks the item deprecated or gone."""
    return status == "deprecated"


class Mashup(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: int = Field(ge=0)
    name: str = ""
    url: str = ""
    categories: list[str] = []
    description: str = ""
    api_ids: list[int] = []
    api_names: list[str] = []

    @field_validator("name", "url", "description", mode="before")
    @classmethod
    def _none_is_empty(cls, value):
        return "" if value is None else value

    @model_validator(mode="before")
    @classmethod
    def _clean(cls, data):  # third-party text, as the Api's
        return cleaned(data)

    def text(self) -> str:
        """What is embedded for this mashup: its description, as a requirement would be written."""
        return self.description or self.name


def cleaned(value):
    """`clean` applied to every string in a value of strings, lists and dicts."""
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, list):
        return [cleaned(item) for item in value]
    if isinstance(value, dict):
        return {cleaned(key) if isinstance(key, str) else key: cleaned(item) for key, item in value.items()}
    return value


class Category(BaseModel):
    name: str
    api_count: int
    primary_count: int = 0

    @model_validator(mode="before")
    @classmethod
    def _clean(cls, data):
        return cleaned(data)


class CoUser(BaseModel):
    """A neighbour in the tool graph: an API used in the same mashups as another."""

    api_id: int
    count: int
    weight: float


class Hit(BaseModel):
    """One vector-search result."""

    kind: str
    id: int | str
    score: float
