"""Which items a requirement names: a developer who writes "post it to Twitter" has chosen Twitter."""

import re


_SERVER_SUFFIX = re.compile(r"^(.*?\w)\s+MCP\b.*$", re.I)


_KIND_WORDS = re.compile(r"(?:\s*\b(?:the|an?|mcp|model|context|protocol|servers?)\b)+\s*", re.I)


def service_name(title: str) -> str:
    """What a request calls an MCP server: its title without "MCP" and what follows ("Google Calendar MCP Server"
    -> "Google Calendar"): "read my Google Calendar" names the server as "post it to Twitter" names the API. A
    title of the protocol's words alone ("MCP Server") names no service: "Which MCP server lets ..." names none."""
    cut = _SERVER_SUFFIX.match(title.strip())
    name = cut.group(1) if cut else title
    return "" if _KIND_WORDS.fullmatch(name) else name


def name_forms(name: str) -> list[tuple[str, float]]:
    """Ways a requirement may name an item, with how sure the match is: the full name (without a trailing 'API'),
    and for a name of several words the name without its last word."""
    full = name.strip()
    if len(full) > 3 and full[-3:].casefold() == "api" and full[-4].isspace():
        full = full[:-3].rstrip()
    forms = [(full, 1.0)]
    words = full.split()
    if len(words) > 1:
        forms.append((" ".join(words[:-1]), 0.5))
    return forms


def _inside_a_word(ch: str) -> bool:
    return ch.isalnum() or ch in "_-"


def _occurs(form: str, text: str) -> bool:
    """Whether `form` occurs in `text` as whole words: neither glued to a letter, digit, '_' or '-' before it
    nor after it. (No regular expression per name: compiling one for each of a million names' forms cost more
    than the rest of a request.)"""
    start = text.find(form)
    while start >= 0:
        end = start + len(form)
        if (start == 0 or not _inside_a_word(text[start - 1])) and (end == len(text) or not _inside_a_word(text[end])):
            return True
        start = text.find(form, start + 1)
    return False


def mentions(name: str, text: str, text_lower: str | None = None, common: frozenset[str] = frozenset()) -> float:
    """1.0 if the item is named in full in the text, 0.5 if only by its first words, else 0. Case-sensitive for
    short names, which are often common words ('Box', 'Events'), for first words, which are often ordinary words in
    lower case ('internet' does not name 'Internet Archive'), and for a one-word name the catalogue's own
    descriptions use as an ordinary word (`common`: "generate images" does not name an API called 'Images').
    `text_lower`: text.lower(), where the caller has it."""
    best = 0.0
    for form, strength in name_forms(name):
        if len(form) < 3 or strength <= best:
            continue
        exact = len(form) <= 5 or form.islower() or strength < 1.0 or form.casefold() in common
        if (
            _occurs(form, text)
            if exact
            else _occurs(form.lower(), text_lower if text_lower is not None else text.lower())
        ):
            best = strength
    return best


_RUN = re.compile(r"[^\W_]+")
_LOWER_WORD = re.compile(r"\b[a-z]{3,}\b")


def common_words(descriptions: list[str], share: float = 0.01, sample: int = 20_000) -> frozenset[str]:
    """Words the catalogue's descriptions use in lower case, as ordinary words, in at least `share` of them (at
    least 3): an item named by one of them ('Images', 'Weather') is named only where a text writes it as a name. An
    evenly spaced sample of `sample` descriptions stands for a larger catalogue. The 1% is chosen, not fitted: with it no
    judged suite's dev figure moved (docs/tuning.md, "Honest plans")."""
    if len(descriptions) > sample:
        step = len(descriptions) / sample
        descriptions = [descriptions[int(i * step)] for i in range(sample)]
    counts: dict[str, int] = {}
    for text in descriptions:
        for word in set(_LOWER_WORD.findall(text)):
            counts[word] = counts.get(word, 0) + 1
    floor = max(3, share * len(descriptions))
    return frozenset(word for word, n in counts.items() if n >= floor)


class NameIndex:
    """The catalogue's names, for finding those a text names without a regular expression per item and text.

    Items are filed under the first word of their shortest name form, so a text is checked only against the
    items whose first word it holds: a name is mentioned only where it starts a word, and there its first word is
    one of the text's words. (A form that does not start with a letter or digit is checked always.) A scan of
    every name took 268 ms a requirement at 100,000 items."""

    def __init__(self, names: list[tuple[int, str]], common: frozenset[str] = frozenset()):
        self._names = dict(names)
        self._common = common
        self._by_word: dict[str, list[tuple[int, int, str]]] = {}
        self._always: list[tuple[int, int, str]] = []
        for order, (item, name) in enumerate(names):
            key = name_forms(name)[-1][0].casefold()
            if len(key) < 3:
                continue
            first = _RUN.match(key)
            if first is None:
                self._always.append((order, item, key))
            else:
                self._by_word.setdefault(first.group(0), []).append((order, item, key))
        self._cache: dict[str, dict[int, float]] = {}

    def named(self, text: str) -> dict[int, float]:
        """The items the text names, with how surely (see mentions), in catalogue order."""
        found = self._cache.get(text)
        if found is None:
            lowered, text_lower = text.casefold(), text.lower()
            filed = [entry for word in set(_RUN.findall(lowered)) for entry in self._by_word.get(word, ())]
            found = {
                item: m
                for _, item, key in sorted(filed + self._always)
                if key in lowered and (m := mentions(self._names[item], text, text_lower, self._common)) > 0
            }
            if len(self._cache) > 256:
                self._cache.clear()
            self._cache[text] = found
        return found

    def mentions(self, item: int, text: str) -> float:
        return self.named(text).get(item, 0.0)
