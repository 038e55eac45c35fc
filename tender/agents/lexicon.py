"""Lexical evidence: which of a function's words an API's own text contains, weighted by how rare each word is
in the catalogue (inverse document frequency). Dense similarity misses exact terms ("SMS", "shipment", "stock");
on tool retrieval, term matching holds its own against small sentence encoders, and it needs no usage history."""

import functools
import math
import re
from collections import Counter
from collections.abc import Iterable

import numpy as np

_WORD = re.compile(r"[A-Za-z0-9]+")
# Where a name written in camel case parts into words: NewsTool, PDF&URLTool, weatherForecast, HTTPServer.
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
STOPWORDS = frozenset(
    """
a an the and or but if then else when while of to in on at by for with from into onto over under about as is are was were
be been being it its this that these those there here i me my we our you your he she they them their his her what which who
whom whose how why where can could would should will shall may might must do does did doing done have has had having not no
nor so such than too very just also only own same both each few more most other some any all one two app apps application
applications site sites website web page service services tool tools user users using use used uses via get gets let lets
allow allows allowing provide provides providing want need needs like well new make makes based simple easy etc e g i e
api apis data information info people way ways thing things something within without across around show shows showing
display displays build builds built create creates lets online platform system small big best good great
""".split()
)
# Irregular or frequent endings folded so that "ships", "shipping" and "shipment" meet "shipment"'s stem.
_SUFFIXES = ("ations", "ation", "ments", "ment", "ings", "ing", "ies", "ers", "er", "ed", "s")


def stem(word: str) -> str:
    """A light stemmer: one common suffix off, then a final 'e' ('prices', 'price' and 'priced' meet)."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            if suffix == "ies":
                word += "y"
            break
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


def terms(text: str) -> list[str]:
    """Content words of a text, lower-cased and stemmed, in order (stop words and glue words dropped). A word in
    camel case counts whole and by its parts: a tool named NewsTool is about news, and a requirement may write
    its name whole."""
    out = []
    for token in _WORD.findall(text):
        parts = _CAMEL.split(token)
        for word in [token, *parts] if len(parts) > 1 else [token]:
            word = word.lower()
            if word not in STOPWORDS and not word.isdigit() and len(word) > 1:
                out.append(stem(word))
    return out


@functools.lru_cache(maxsize=65536)
def name_terms(name: str) -> frozenset[str]:
    """Content words of an API's or tool's name, a camel-case word by its parts only (CourseTool: "cours";
    sendEmailWithTemplate: "send", "email", "template"), for matching a function's words."""
    out = set()
    for token in _WORD.findall(name):
        parts = _CAMEL.split(token)
        out.update(terms(" ".join(parts)) if len(parts) > 1 else terms(token))
    return frozenset(out)


_SENTENCE_END = re.compile(r"[.!?:;\n]")


def common_terms(text: str) -> frozenset[str]:
    """The terms of a text's words written as common words: in lower case, or capitalised only to open a
    sentence ("Google" names a maker; "Weather forecast for Tokyo" asks for weather)."""
    out: set[str] = set()
    opening, end = True, 0
    for match in _WORD.finditer(text):
        opening = opening or bool(_SENTENCE_END.search(text, end, match.start()))
        word = match.group()
        if opening or not word[:1].isupper():
            out.update(terms(word))
        opening, end = False, match.end()
    return frozenset(out)


def as_written(text: str) -> dict[str, str]:
    """Each of a text's terms, as the text writes it (the first word that gives it): "time" for "tim"."""
    written: dict[str, str] = {}
    for token in _WORD.findall(text):
        for term in terms(token):
            written.setdefault(term, token)
    return written


class Lexicon:
    """Inverse document frequencies of the catalogue's API texts, and which APIs use each word. Built once per
    catalogue; `ids` gives the row order of `scores`."""

    def __init__(self, documents: Iterable[str], ids: Iterable[int] = ()):
        frequency: Counter[str] = Counter()
        self.ids = np.array(list(ids), dtype=np.int64)
        rows_of: dict[str, list[int]] = {}
        count = 0
        for row, text in enumerate(documents):
            count += 1
            words = set(terms(text))
            frequency.update(words)
            for word in words:
                rows_of.setdefault(word, []).append(row)
        self._rows = {w: np.array(r, dtype=np.int64) for w, r in rows_of.items()}
        self.documents = max(count, 1)
        self._idf = {t: math.log(1 + self.documents / n) for t, n in frequency.items()}
        # A word the catalogue never uses says nothing about any API; it counts as a rare word would.
        self._unknown = math.log(1 + self.documents)

    def idf(self, term: str) -> float:
        return self._idf.get(term, self._unknown)

    def known(self, term: str) -> bool:
        return term in self._idf

    def coverage(self, function_terms: Iterable[str], api_terms: frozenset[str]) -> float:
        """The IDF-weighted share of the function's words found in the API's text: 0 (none) to 1 (all)."""
        wanted = set(function_terms)
        total = sum(self.idf(t) for t in wanted)
        if not total:
            return 0.0
        return sum(self.idf(t) for t in wanted if t in api_terms) / total

    def name_coverage(self, name: str, asked: frozenset[str]) -> float:
        """The IDF-weighted share of the API name's words that a function asks for (`asked`: its common_terms): a
        name says in a word or two what the API is for (CourseTool for "find me a course"; Google Maps for "show
        them on a map"). A word written as a proper name ("Google") names a maker, not a need: `named` weighs that."""
        named = name_terms(name)
        total = sum(self.idf(t) for t in named)
        if not total:
            return 0.0
        return sum(self.idf(t) for t in named if t in asked) / total

    def scores(self, text: str) -> np.ndarray:
        """`coverage` of the text's words for every API, in row order."""
        out = np.zeros(len(self.ids), dtype=np.float32)
        wanted = set(terms(text))
        total = sum(self.idf(t) for t in wanted)
        if not total or not len(self.ids):
            return out
        for word in wanted:
            rows = self._rows.get(word)
            if rows is not None:
                out[rows] += self.idf(word)
        return out / total

    def known_share(self, text: str) -> float:
        """How much of a text's (IDF-weighted) vocabulary the catalogue knows at all: near 0 for gibberish or a
        language the catalogue is not written in."""
        words = terms(text)
        if not words:
            return 0.0
        return sum(1 for t in words if self.known(t)) / len(words)
