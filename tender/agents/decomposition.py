"""The embedded decomposition: a requirement's needs, and the parts of it that are context, from its text alone.

The requirement is cut at sentence ends, commas, conjunctions and relative words; then each piece is
- context, where it frames the request rather than asking for a function: the app or service being built ("An app",
  "I'm building a Discord bot for our gaming group", "Online shop"), a piece made only of words of asking ("Could
  you", "Additionally"), or a time the request runs at ("Every Friday", "every morning");
- part of the piece before it, where it has at most one content word ("on a map" after "show the options",
  "with OCR", "a photo"): a detail of that need, not a need of its own; a single word with no need before it and
  "and" or "or" after it is part of the next one ("reads and writes files": two verbs, one object);
- else a need, in the requirement's own words.
Nothing is dropped: every piece is a need's or the context's. Unrelated pieces are never merged; what the same
item serves is left to the selection, whose objective counts an item once for every need it serves."""

import re
from dataclasses import dataclass, field

# Cut points: sentence ends, commas (not inside numbers), conjunctions and words that start a new clause; a comma
# before such a word is one cut with it (", along with" is not a piece "along").
_CUT = re.compile(
    r"([.!?;:]+\s+|\n+|(?:(?<!\d),\s*|,\s+|\s+)(?:and then|and also|as well as|along with|together with|so that|in order to|"
    r"including|and|with|when|whenever|once|then|plus|also|while|where|that|which|who|on an?|onto an?|via|alongside)\s+|"
    r"(?<!\d),\s*|,\s+)",
    re.I,
)
_COORDINATION = re.compile(r"\s+(?:and|or)\s+", re.I)
_LEADING = re.compile(r"^(?:(?:and|then|also|plus|or|but|so)\s+)+", re.I)
_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*|\d+")
# Words that carry no function of their own.
_FUNCTION_WORDS = frozenset(
    """a an the and or but of to in on onto into at by for from with without as is are be been being it its it's
    this that these those them they their there here me my mine our ours we us you your yours i i'm im he she his
    her him who which where when what how all any each some every can could would will should shall may might must
    do does did done get gets got let lets please also just only very so than then too more most other another
    such same own new""".split()
)
# Words that say the form of the answer, not what it is to do: the form is the caller's cue (agents/form.py).
_FORM = frozenset("mcp mcps server servers tool tools plugin plugins integration integrations".split())
# Words of asking, not of needing: a piece made only of these ("Additionally", "can you find", "I'm going", "Any
# suggestions?", "what do I install", "which one should we use") is how the request is put; so is one that asks only
# for the answer's form ("Is there any MCP server", "Are there tools", "Do you know of a plugin").
_ASKING = _FORM | frozenset(
    """additionally furthermore moreover besides afterwards finally first next lastly along addition kindly thank
    thanks hi hello hey suggest suggestion suggestions recommend recommendation recommendations find tell know give
    help wonder wondering interested interest planning plan going looking look trying try able possible sure idea
    ideas ive id ll re ve don isn doesn remember note ensure want need like would love wish exist exists existing
    anyone install installed plug use using one ones""".split()
)
# A request often opens by naming what is being built or who runs it: that piece is context.
_FRAMING_OPENING = re.compile(
    r"^(?:i'?m|i am|we'?re|we are|we)\s+(?:also\s+|now\s+)?(?:building|making|creating|writing|developing|designing|organi[sz]ing|"
    r"planning|running|run|have|own|need|want)\b|^(?:i|we)\s+(?:want|need|would like|'d like)\s+(?:a|an|to build|to make)\b|"
    r"^(?:need|want)\s+(?:a|an)\b",
    re.I,
)
# Who is asked, opening a piece: "let Claude", "I want my assistant to", "Can Claude", "Which MCP server lets my coding
# agent", "Claude,". Who will use an ability is the form's cue (agents/form.py), not words of the need: a need read as
# "I want my assistant to file Jira tickets" is matched as if the assistant were part of what it does.
_ASSISTANT_NAME = (
    r"(?:claude(?: desktop| code)?|chatgpt|copilot|cursor|windsurf|cline|goose|(?<=can |uld |ill )you|"
    r"(?:my|our|the|your)\s+(?:ai\s+|coding\s+|llm\s+|local\s+|personal\s+)?(?:assistant|agent|model|llm|chatbot)s?)"
)
_ADDRESS = re.compile(
    r"^(?:(?:(?:i|we)\s+(?:want|need|would like|'d like)\s+|(?:please\s+)?(?:lets?|have|get|allow|make|help)\s+|"
    rf"(?:can|could|would|will)\s+)?{_ASSISTANT_NAME}|"
    r"(?:(?:which|what)\s+|is there\s+(?:an?\s+)?|(?:find|recommend|suggest) (?:me\s+)?(?:an?\s+)?)(?:mcp\s+)?"
    rf"(?:servers?|tools?)(?:\s+(?:that\s+)?(?:lets?|allows?|can let|would let|helps?)(?:\s+{_ASSISTANT_NAME})?)?)"
    r"(?:\s*,\s*|\s+(?:to|should|can|could|will|would|must|shall|needs? to)(?:\s+be able to)?\s+|\s+(?=\w)|$)",
    re.I,
)
# A time the request runs at: "Every Friday", "every morning", "each night", "daily", "automatically".
_WHEN = re.compile(
    r"^(?:every|each)\s+\w+(?:\s+\w+)?$|^(?:daily|weekly|monthly|hourly|nightly|automatically|tonight|today|tomorrow)$",
    re.I,
)


def content_words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in _FUNCTION_WORDS and len(w) > 1]


_POINTING = frozenset("it its them their this these those me him her his us there".split())


# A value the request hands over, not a word of what it needs: a number, a date, a path or a file name, a token
# with digits ("rent 1200", "2026-11-02", "/home/me/app/src/utils.js", "track.mp3", "eyJhbGciOi...").
_VALUE = re.compile(r"\S*\d\S*|\S+[/\\]\S*|\S+\.[A-Za-z0-9]{1,5}\b")


def dangling(piece: str) -> bool:
    """A piece that is a detail of the need before it: at most one content word once the values it hands over
    are set aside, and no word pointing at a thing ("on a map", "a photo", "OCR", "rent 1200", "and utils.js"; not
    "translates them", which is a need of its own)."""
    said = _VALUE.sub(" ", piece)
    return len(content_words(said)) <= 1 and not _POINTING.intersection(_WORD.findall(said.lower()))


def is_asking(piece: str) -> bool:
    """A piece with no content word but words of asking."""
    return all(w in _ASKING for w in content_words(piece))


@dataclass
class Reading:
    """A requirement read as needs and context, each in the requirement's own words."""

    needs: list[str] = field(default_factory=list)
    context: list[str] = field(default_factory=list)


# Words an opening that asks for an ability is made of, besides words with no function of their own: who is asked,
# the form of the answer, and how a question or a wish is put ("Is there any MCP server that lets Claude", "What's
# the best MCP server so Claude can", "Hey Claude — could you", "Does an MCP server exist for"). Never a verb a need
# starts with (find, look, get, give, help): those stay the need's.
_ASKER = frozenset(
    "claude chatgpt copilot cursor windsurf cline goose gpt assistant assistants agent agents llm chatbot".split()
)
_OPENING = (
    _FUNCTION_WORDS
    | _ASKER
    | _FORM
    | frozenset(
        """hey hi hello ok okay please know knows anyone anybody exist exists existing looking possible best good recommend
        recommended suggest install need needs want wants like love wish would able what's whats i'd id i've ai
        coding personal local""".split()
    )
)
_ASKER_SECOND = frozenset(("desktop", "code"))  # "Claude Desktop", "Claude Code": words of a need elsewhere
_TOKEN = re.compile(r"[A-Za-z][A-Za-z'’]*|\d+|[^\w\s]+")


def _opening(piece: str) -> int:
    """Where an opening that asks for an ability ends: the first word of the piece that is not of _OPENING (0 where
    the words before it name neither who is asked nor the form of the answer)."""
    said, end = False, 0
    for token in _TOKEN.finditer(piece):
        word = token.group(0).lower().replace("’", "'")
        if not word[0].isalnum():
            continue  # "Hey Claude — could you", "Claude, can you"
        if word not in _OPENING and not (word in _ASKER_SECOND and said):
            break
        said = said or word in _ASKER or word in _FORM
        end = token.end()
    else:
        end = len(piece)
    return end if said else 0


def addressed(piece: str) -> tuple[str, str]:
    """(who is asked, the rest) of a piece that opens by asking the assistant ("let Claude", "read my calendar") or
    by asking for the form of the answer ("Does an MCP server exist for", "searching arXiv"); ("", piece) where it
    does not, or where nothing of substance follows."""
    match = _ADDRESS.match(piece)
    end = max(match.end() if match else 0, _opening(piece))
    if end == 0:
        return "", piece
    rest = piece[end:].strip(" ,—–-:")
    if rest and not content_words(rest):
        return "", piece
    return piece[:end].strip(" ,—–-:"), rest


# "I'm", "we are": a piece that is only its subject, cut from its verb by "also" ("and I'm also building a site").
_SUBJECT = re.compile(r"(?:i'?m|i am|we'?re|we are)", re.I)


def _pieces(text: str) -> list[tuple[str, str]]:
    """(separator before it, piece) in order; the separators keep the text between pieces."""
    parts = _CUT.split(text.strip())
    out: list[tuple[str, str]] = []
    separator = ""
    for i, part in enumerate(parts):
        if i % 2:
            separator += part
        elif part.strip(" ,;.:!?\"'"):
            piece = part.strip(" ,;:!?\"'").rstrip(".")
            lead = _LEADING.match(piece)
            if lead and lead.end() < len(piece):  # ", and orders an album": the conjunction is the separator's
                separator, piece = separator + lead.group(0), piece[lead.end() :]
            if (
                out
                and separator.strip().lower() == "also"
                and (_SUBJECT.fullmatch(out[-1][1]) or content_words(out[-1][1]))
            ):
                # "also" between a subject and its verb: one clause. "and I'm also building a site" reads as the
                # framing it is; "the signup form also needs to reject fake emails" as one need, not its subject.
                separator, piece = out[-1][0], f"{out.pop()[1]} also {piece}"
            out.append((separator, piece))
            separator = ""
    return out


# The user doing something, after "when", "while", "whenever" or "once": when the request is used ("when I plan my
# runs", "While I debug"), not a need, where it names no service (capitalised) and says little; "when I publish on
# WordPress" names one, and is a need (a trigger).
_USER_DOING = re.compile(r"^(?:(when|whenever|while|once)\s+)?(?:i|we)(?:'m|’m|'re|’re| am| are)?\s+(.+)$", re.I)


def _user_time(separator: str, piece: str) -> bool:
    found = _USER_DOING.match(piece)
    if found is None:
        return False
    opened = found.group(1) or re.search(r"\b(?:when|whenever|while|once)\s*$", separator, re.I)
    rest = found.group(2)
    return bool(opened) and not re.search(r"[A-Z]", rest) and 0 < len(content_words(rest)) <= 3


def _phrases(pieces: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """A listed word with a detail of its own is a need's phrase: after a comma, "music" cut from "while running"
    is read as "music while running", not as two details of the need before; a bare list ("price, power, weight")
    is not touched."""
    out: list[tuple[str, str]] = []
    index = 0
    while index < len(pieces):
        separator, piece = pieces[index]
        if index + 1 < len(pieces):
            joint, detail = pieces[index + 1]
            listed = "," in separator and len(content_words(piece)) == 1
            subordinate = joint.strip() and not re.fullmatch(r"[\s,.;:!?]*(?:and|or)?\s*", joint, re.I)
            if listed and subordinate and dangling(detail) and content_words(detail):
                out.append((separator, f"{piece}{joint}{detail}"))
                index += 2
                continue
        out.append((separator, piece))
        index += 1
    return out


def _framing(index: int, piece: str, after: str) -> bool:
    """The piece names what is built, not a function of it: an opening such as "I'm building a bot for our group";
    or, opening the requirement, a noun phrase before a relative word, a colon or a comma ("An app that ...",
    "Expense bot: ...", "a site that ...", "Mashup that ...")."""
    if _FRAMING_OPENING.match(piece):
        return True
    if index != 0:
        return False
    words = piece.split()
    determined = words[0].lower() in ("a", "an", "the", "my", "our")
    relative = re.match(r"\s*(?:that|which|who|where)\b", after, re.I) is not None
    introduces = re.match(r"\s*(?:with\b|:|,)", after, re.I) is not None
    if determined and (relative or introduces):
        return len(content_words(piece)) <= 2
    return (relative and len(words) <= 3) or (after.strip().startswith(":") and len(words) <= 4)


# The separator before a list's last item: "and", "or", ", and" (not "and then", "and also": a new clause).
_LIST_END = re.compile(r"\s*,?\s*(?:and|or)\s+", re.I)


# A verb whose object comes after the next "and"/"or": an infinitive that ends its piece ("want it to read and edit
# the files", "a way to create and update records"). Not "to me", "to Slack": a person or a place, not a verb.
_INFINITIVE_END = re.compile(r"\bto\s+([a-z]+)$")
# A verb whose object is the clause that follows: "look up which tags exist", "check which ports are open".
_VERB_BEFORE_CLAUSE = re.compile(r"\s*which\s+", re.I)


# Words a clause opens with, not a verb: "list flats to rent and the prices are wrong", "... and I am seeking".
_CLAUSE_OPENING = frozenset("a an the i we you he she they it this that these those there my our your their".split())


def _shares_next(piece: str, after: str, following: str, first: bool) -> bool:
    """The piece is a verb whose object is in the next piece:
    - one word, no need before it, "and"/"or" after it ("reads and writes files"; not "Read notes.md and ...",
      whose object is its own);
    - an infinitive before "and"/"or" and a verb taking an object ("create and update records"; not "flats to rent
      and show them on a map", whose verb has its own object, pointed at by its first words);
    - a verb of one or two words before "which"."""
    coordinated = _COORDINATION.fullmatch(after) is not None
    if first and coordinated and len(piece.split()) == 1:
        return True
    infinitive = _INFINITIVE_END.search(piece)
    if infinitive and content_words(infinitive.group(1)) and coordinated:
        words = _WORD.findall(following.lower())
        if words and words[0] not in _CLAUSE_OPENING and not _POINTING.intersection(words[:3]):
            return True
    return len(piece.split()) <= 2 and piece == piece.lower() and _VERB_BEFORE_CLAUSE.fullmatch(after) is not None


def _open_bracket(group: list[tuple[str, str]]) -> bool:
    text = "".join(separator + piece for separator, piece in group)
    return text.count("(") > text.count(")")


def read(requirement: str, max_needs: int = 12) -> Reading:
    """The requirement's needs and context (see the module's docstring)."""
    pieces = _phrases(_pieces(requirement))
    reading = Reading()
    groups: list[list[tuple[str, str]]] = []  # each need's pieces, with their separators
    ahead: list[tuple[str, str]] = []  # pieces that belong to the next need
    listing = False  # the piece before was a lower-case item of a list, after a comma ("calories, protein, carbs")
    for index, (separator, piece) in enumerate(pieces):
        after, following = pieces[index + 1] if index + 1 < len(pieces) else ("", "")
        list_end = listing and _LIST_END.fullmatch(separator) is not None
        if groups and (list_end or _open_bracket(groups[-1])):
            # Inside brackets ("Pokémon data (types, stats, sprites)"), or the last item of a list ("calories,
            # protein, carbs and fat for each food"), which ends it: the same need's words.
            groups[-1].append((separator, piece))
            listing = listing and not list_end
            continue
        listing = False
        asked, piece = addressed(piece)
        if asked:
            reading.context.append(asked)
            if not piece:
                continue
        # What the assistant is asked to do is a need, never the framing of one ("let Claude look up which ...").
        framing = not asked and _framing(index, piece, after)
        if _WHEN.match(piece) or (is_asking(piece) and content_words(piece)) or framing or _user_time(separator, piece):
            reading.context.append(piece)
        elif dangling(piece) and groups:
            groups[-1].append((separator, piece))  # a detail of the need before it
            # Lower-case items are a need's details; named ones ("Amazon, eBay and Best Buy") are services each.
            listing = "," in separator and piece == piece.lower()
        elif content_words(piece) and _shares_next(piece, after, following, first=not groups):
            ahead.append((separator, piece))  # "want it to read" and "edit the files": one need
        elif not content_words(piece):
            reading.context.append(piece)
        else:
            groups.append([*ahead, (separator, piece)])
            ahead = []
    if ahead:  # nothing followed after all: a need of its own
        groups.append(ahead)
    for group in groups:
        text = group[0][1] + "".join(
            f"{sep.rstrip(',; ') or ','} {piece}" if sep.strip() in (",", ";") else f"{sep}{piece}"
            for sep, piece in group[1:]
        )
        reading.needs.append(" ".join(text.split()))
    if not reading.needs:
        reading.needs = [" ".join(requirement.split())]
    while len(reading.needs) > max_needs:  # too many for one plan: join the shortest neighbouring pair
        k = min(range(len(reading.needs) - 1), key=lambda j: len(reading.needs[j]) + len(reading.needs[j + 1]))
        reading.needs[k : k + 2] = [f"{reading.needs[k]}; {reading.needs[k + 1]}"]
    return reading
