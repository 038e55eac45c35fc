"""Plain-text helpers: a function's short name, whether it presents data, and masking API names out of a text."""

import re

from tender.ranking.names import name_forms

_PRESENTATION = re.compile(
    r"\b(show|shows|display|displays|map|maps|mapped|plot|plots|visuali[sz]e|view|views|overlay|chart|charts)\b", re.I
)


def is_presentation(text: str) -> bool:
    """Whether a function shows data to the user (it then depends on the functions that fetch it)."""
    return bool(_PRESENTATION.search(text))


def short_name(text: str, words: int = 8) -> str:
    tokens = text.split()
    return " ".join(tokens[:words]) + ("…" if len(tokens) > words else "")


def mask_names(text: str, names: list[str]) -> str:
    """Remove every API name (with a trailing 'API'), and each multi-word name without its last word,
    the way a user who does not know the API names would write.

    A full name goes in any case ('google maps', 'twitter'). Its first words go only where they are written
    as in the name: 'Travel' of a 'Travel Deals' API, 'Your' of 'Your Mechanic', 'Internet' of 'Internet
    Archive' are ordinary words in lower case, and removing 'travel', 'your' or 'internet' wherever they
    appeared stripped words a user would write from 42% of the masked queries of a validation sample."""
    # Longest first, ties in a fixed order: a set's order follows the hash seed, and masked queries differed
    # between processes.
    forms = sorted(
        {(form, strength == 1.0) for name in names for form, strength in name_forms(name) if len(form) >= 2},
        key=lambda item: (-len(item[0]), item[0], not item[1]),
    )
    for form, full in forms:
        if form.casefold() in text.casefold():
            text = re.sub(rf"(?<![\w-]){re.escape(form)}(?:\s+API)?(?![\w-])", "", text, flags=re.I if full else 0)
    return re.sub(r"\s{2,}", " ", text).strip()
