"""Plain-text helpers: splitting a requirement into clauses, and spotting API names in it."""

import re

from .lexicon import terms

_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
_CLAUSE = re.compile(
    r"(,\s+(?:and\s+|then\s+|while\s+)?|\s+(?:and then|and also|as well as|along with|while|whereas)\s+|\s+and\s+(?=[a-z]+s?\b))",
    re.I,
)
_PRESENTATION = re.compile(
    r"\b(show|shows|display|displays|map|maps|mapped|plot|plots|visuali[sz]e|view|views|overlay|chart|charts)\b", re.I
)


def clauses(text: str, max_clauses: int = 6, min_words: int = 3) -> list[str]:
    """The requirement's clauses in order: sentences, split further at conjunctions. A fragment shorter
    than min_words is joined back to its neighbour with the words that separated them."""
    parts: list[str] = []
    for sentence in _SENTENCE.split(text.strip()):
        pieces = _CLAUSE.split(sentence)  # [clause, separator, clause, ...]
        current = ""
        for i in range(0, len(pieces), 2):
            piece = pieces[i].strip(" ,;.")
            separator = pieces[i - 1] if i else ""
            if not piece:
                continue
            if current and (len(piece.split()) < min_words or len(current.split()) < min_words):
                current = f"{current}{separator.rstrip()} {piece}" if separator.strip() else f"{current} {piece}"
            else:
                if current:
                    parts.append(current)
                current = piece
        if current:
            parts.append(current)
    if not parts:
        return [text.strip()]
    while len(parts) > max_clauses:
        # Merge the shortest neighbouring pair.
        i = min(range(len(parts) - 1), key=lambda k: len(parts[k]) + len(parts[k + 1]))
        parts[i : i + 2] = [f"{parts[i]}; {parts[i + 1]}"]
    return parts


def is_presentation(text: str) -> bool:
    """Whether a function shows data to the user (it then depends on the functions that fetch it)."""
    return bool(_PRESENTATION.search(text))


_ANAPHORIC = re.compile(r"^(?:their|its|his|her|them|these|those)\b", re.I)


def refers_back(piece: str) -> bool:
    """Whether a piece is about something named before it ("their reviews", "its price"): part of that need."""
    return bool(_ANAPHORIC.match(piece.strip()))


def names_a_thing(piece: str) -> bool:
    """Whether a piece holds a content word besides words of showing ("nearby restaurants", not "on a map")."""
    return any(not _PRESENTATION.fullmatch(w) for w in re.findall(r"[A-Za-z]+", piece) if terms(w))


def short_name(text: str, words: int = 8) -> str:
    tokens = text.split()
    return " ".join(tokens[:words]) + ("…" if len(tokens) > words else "")


def name_forms(name: str) -> list[tuple[str, float]]:
    """Ways a requirement may name an API, with how sure the match is: the full name (without a
    trailing 'API'), and for multi-word names the name without its last word."""
    full = re.sub(r"\s+API$", "", name.strip(), flags=re.I)
    forms = [(full, 1.0)]
    words = full.split()
    if len(words) > 1:
        forms.append((" ".join(words[:-1]), 0.5))
    return forms


_pattern_cache: dict[str, re.Pattern] = {}


def mentions(name: str, text: str) -> float:
    """1.0 if the API is named in full in the text, 0.5 if only by its first words, else 0.
    Case-sensitive for short names, which are often common words ('Box', 'Events'), and for first words,
    which are often ordinary words in lower case ('internet' does not name 'Internet Archive'; see mask_names)."""
    best = 0.0
    for form, strength in name_forms(name):
        if len(form) < 3 or strength <= best:
            continue
        exact = len(form) <= 5 or form.islower() or strength < 1.0
        key = f"{form}\x00{exact}"
        pattern = _pattern_cache.get(key)
        if pattern is None:
            pattern = _pattern_cache[key] = re.compile(rf"(?<![\w-]){re.escape(form)}(?![\w-])", 0 if exact else re.I)
        if form.casefold() in text.casefold() and pattern.search(text):
            best = strength
    return best


def mask_names(text: str, names: list[str]) -> str:
    """Remove every API name (with a trailing 'API'), and each multi-word name without its last word,
    the way a user who does not know the API names would write.

    A full name goes in any case ('google maps', 'twitter'). Its first words go only where they are written
    as in the name: 'Travel' of a 'Travel Deals' API, 'Your' of 'Your Mechanic', 'Internet' of 'Internet
    Archive' are ordinary words in lower case, and removing 'travel', 'your' or 'internet' wherever they
    appeared stripped words a user would write from 42% of the masked queries of a validation sample."""
    forms = sorted(
        {(form, strength == 1.0) for name in names for form, strength in name_forms(name) if len(form) >= 2},
        key=lambda item: len(item[0]),
        reverse=True,
    )
    for form, full in forms:
        if form.casefold() in text.casefold():
            text = re.sub(rf"(?<![\w-]){re.escape(form)}(?:\s+API)?(?![\w-])", "", text, flags=re.I if full else 0)
    return re.sub(r"\s{2,}", " ", text).strip()


# A comma cuts, except inside a number ("$10,000").
_BOUNDARY = re.compile(
    r"[.!?;:]+\s+|\n+|(?<!\d),\s*|,\s+|\s+(?:and then|and also|as well as|along with|together with|so that|in order to|including|"
    r"and|with|when|whenever|once|then|plus|also|while|where|that|which|on an?|onto an?|via|alongside)\s+",
    re.I,
)


# A conjunction left at the head of a piece cut at a comma (", and fetch the page"): not part of the need.
_LEADING = re.compile(r"^(?:(?:and|then|also|plus|or|but|so)\s+)+", re.I)


# Words of asking, not of needing: a piece made only of these ("Additionally", "can you find", "Any suggestions?",
# "I'm going", "remember" before "that ...") is how the request is put, and joins the next piece.
_ASKING = frozenset(
    """
additionally furthermore moreover besides afterwards finally first next lastly along addition please kindly thank
thanks hi hello hey suggest suggestion suggestions recommend recommendation recommendations find tell know give help
wonder wondering interested interest planning plan going looking look trying try able possible sure idea ideas im ive
id ll re ve don isn doesn let lets remember note ensure
""".split()
)


def is_asking(piece: str) -> bool:
    """Whether a piece holds no content word but words of asking."""
    return all(w in _ASKING for w in re.findall(r"[a-z]+", piece.lower()) if terms(w))


def fragments(text: str) -> list[str]:
    """Candidate needs: the requirement cut at conjunctions, relative pronouns and 'with'/'when'/'on a', each
    piece keeping at least one content word (a piece with none, such as 'an app', 'me' or 'can you tell me',
    joins the next).
    Many pieces are parts of one need ('nearby restaurants' ... 'their reviews'); the manager merges those that
    the same APIs explain."""
    pieces = [p.strip(" ,;.:!?\"'") for p in _BOUNDARY.split(text.strip())]
    out: list[str] = []
    pending = ""
    for piece in pieces:
        if not piece:
            continue
        joined = f"{pending} {piece}".strip() if pending else piece
        if not is_asking(piece):
            out.append(joined)
            pending = ""
        else:
            pending = joined
    if pending:
        if out:
            out[-1] = f"{out[-1]} {pending}"
        else:
            out.append(pending)
    return [_LEADING.sub("", piece) or piece for piece in out] or [text.strip()]


_REQUEST = re.compile(
    r"^(?:additionally|also|furthermore|moreover|besides|lastly|finally|next|please|kindly|"
    r"(?:can|could|would|will)\s+you|i'?d\s+(?:also\s+)?like|i\s+(?:also\s+)?(?:want|need))\b",
    re.I,
)


def opens_request(piece: str) -> bool:
    """Whether a piece puts a request of its own ("Additionally, are there any news articles ...", "Could you
    also recommend some songs"), as a user asking for several things does, not as prose goes on describing one."""
    return bool(_REQUEST.match(piece.strip()))
