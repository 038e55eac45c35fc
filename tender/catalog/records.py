"""The catalogue's records, as read from the source files and returned by the store."""

from pydantic import BaseModel, ConfigDict, Field, field_validator


class Api(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: int = Field(ge=0)
    name: str = Field(min_length=1)
    url: str = ""
    categories: list[str] = []
    description: str = ""
    source: str = ""

    @field_validator("name", "url", "description", "source", mode="before")
    @classmethod
    def _none_is_empty(cls, value):
        return "" if value is None else value

    @property
    def primary_category(self) -> str | None:
        return self.categories[0] if self.categories else None

    def text(self) -> str:
        """What is embedded for this API."""
        head = f"{self.name}. {', '.join(self.categories)}."
        return f"{head} {self.description}".strip()


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

    def text(self) -> str:
        """What is embedded for this mashup: its description, as a requirement would be written."""
        return self.description or self.name


class Category(BaseModel):
    name: str
    api_count: int
    primary_count: int = 0


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
