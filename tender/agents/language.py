"""Whether a requirement is written in English: the embedded reasoner's encoder and the ProgrammableWeb
catalogue are English, and a requirement in another language gets weak, misleading matches."""

import re

_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
# The commonest function words of each language: a requirement of a dozen words uses several.
_FUNCTION_WORDS = {
    "en": "the a an and or of to in on for with that which when my me i you your it is are be can from by".split(),
    "es": "el la los las un una y o de del en para con que cuando mi me yo tu es son por al se lo".split(),
    "fr": "le la les un une et ou de des du en pour avec que quand mon ma mes je tu est sont par au se".split(),
    "de": "der die das ein eine und oder von zu im in für mit dass wenn mein ich du ist sind auf den dem".split(),
    "pt": "o a os as um uma e ou de do da em para com que quando meu eu você é são por ao se".split(),
    "it": "il lo la gli le un una e o di del in per con che quando mio io tu è sono da al si".split(),
}
NAMES = {"es": "Spanish", "fr": "French", "de": "German", "pt": "Portuguese", "it": "Italian"}


def language(text: str) -> str | None:
    """'en', another code of _FUNCTION_WORDS, or None when the text has too few function words to tell."""
    words = [w.casefold() for w in _WORD.findall(text)]
    counts = {
        code: sum(w in vocabulary for w in words)
        for code, vocabulary in ((c, set(v)) for c, v in _FUNCTION_WORDS.items())
    }
    best = max(counts, key=lambda c: (counts[c], c == "en"))
    if counts[best] < 2 or counts[best] <= counts["en"] and best != "en":
        return "en" if counts["en"] >= 1 or not words else None
    # Accented letters outside English tip a tie.
    return best
