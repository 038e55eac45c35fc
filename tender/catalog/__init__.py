"""The SQLite API catalogue: building it, and reading it."""

from .build import build_catalog
from .embeddings import Embedder, HashingEmbedder, SentenceTransformerEmbedder, get_embedder
from ..errors import ApiNotFound, CatalogError, CatalogMissing, CategoryNotFound, MalformedInput, TenderError
from .records import Api, Category, CoUser, Hit, Mashup
from .sources import read_jsonl, read_sources
from .store import Catalog

__all__ = [
    "Api",
    "ApiNotFound",
    "Catalog",
    "CatalogError",
    "CatalogMissing",
    "Category",
    "CategoryNotFound",
    "CoUser",
    "Embedder",
    "HashingEmbedder",
    "Hit",
    "MalformedInput",
    "Mashup",
    "SentenceTransformerEmbedder",
    "TenderError",
    "build_catalog",
    "get_embedder",
    "read_jsonl",
    "read_sources",
]
