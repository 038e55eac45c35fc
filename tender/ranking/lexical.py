"""The words a text is searched by in the catalogue's lexical index (BM25 by FTS5, which stems them)."""

import re

from tender.catalog.words import name_words

_TOKEN = re.compile(r"[^\W_]+(?:['’][a-z]+)?|[A-Za-z]+(?:_[A-Za-z]+)+")


def query_terms(text: str) -> list[str]:
    """The text's words, lower case, once each; a word written in camel or snake case adds its parts
    ("sendEmail" -> "sendemail", "send", "email")."""
    out: dict[str, None] = {}
    for token in _TOKEN.findall(text):
        out[token.lower().replace("_", "")] = None
        parts = name_words(token).split()
        if len(parts) > 1:
            out.update(dict.fromkeys(parts))
    return [t for t in out if len(t) > 1 or t.isdigit()]
