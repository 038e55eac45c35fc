"""The catalogue's tables, made with sqlite-utils."""

import sqlite_utils

# 2: items have a kind, a provider, a status (with its source), a link, and for MCP tools the server and tool.
# 3: the lexical index `items_fts` (BM25 over the name's words and the item's text, Porter-stemmed), and a
# vector of each item's own name (embeddings of kind "name").
SCHEMA_VERSION = "3"
# FTS5's Porter stemmer over Unicode words, accents folded: "sending" finds "send", "café" finds "cafe".
TOKENIZER = "porter unicode61 remove_diacritics 2"


def create_tables(db: sqlite_utils.Database) -> None:
    db["apis"].create(
        {
            "id": int,
            "name": str,
            "url": str,
            "description": str,
            "source": str,
            "kind": str,
            "provider": str,
            "status": str,
            "status_source": str,
            "link": str,
            "server": str,
            "tool": str,
            "details": str,
        },
        pk="id",
    )
    db["categories"].create({"name": str, "api_count": int, "primary_count": int}, pk="name")
    db["api_categories"].create(
        {"api_id": int, "category": str, "is_primary": int, "position": int},
        pk=("api_id", "category"),
        foreign_keys=[("api_id", "apis", "id"), ("category", "categories", "name")],
    )
    db["mashups"].create({"id": int, "name": str, "url": str, "description": str, "categories": str}, pk="id")
    db["mashup_apis"].create(
        {"mashup_id": int, "api_id": int},
        pk=("mashup_id", "api_id"),
        foreign_keys=[("mashup_id", "mashups", "id"), ("api_id", "apis", "id")],
    )
    db["embeddings"].create(
        {"kind": str, "item_id": str, "model": str, "dimension": int, "vector": bytes, "text_hash": str},
        pk=("kind", "item_id", "model"),
    )
    db["co_usage"].create(
        {"api_a": int, "api_b": int, "count": int, "weight": float},
        pk=("api_a", "api_b"),
        foreign_keys=[("api_a", "apis", "id"), ("api_b", "apis", "id")],
    )
    db["meta"].create({"key": str, "value": str}, pk="key")
    db.execute(f"create virtual table items_fts using fts5(name, body, tokenize = '{TOKENIZER}')")


def create_indexes(db: sqlite_utils.Database) -> None:
    db["api_categories"].create_index(["category"])
    db["mashup_apis"].create_index(["api_id"])
    db["co_usage"].create_index(["api_b"])
    db["embeddings"].create_index(["text_hash", "model"])
    db["apis"].create_index(["name"])
    db["apis"].create_index(["provider"])
