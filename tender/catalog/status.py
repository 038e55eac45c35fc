"""Whether an API is still alive, read from what its description says in words.

ProgrammableWeb's editors marked dead APIs in the description ("[This API is no longer available...",
"(2018 update: API DEFUNCT)", "(Deprecated in November, 2016)"). Only statements about the API itself
count: "the SOAP interface was deprecated", "the now deprecated Safe2Pee" or "sunset times" do not, so the
patterns name the API (or the service) as the subject, or stand at the start as an editor's note."""

import re

from .records import Status

# Up to four words of a name ("The IBM Watson AlchemyLanguage API"), within one sentence and one line.
_SUBJECT = r"(?:this|the)[ \t]+(?:[\w.&'-]*[\w&'-][ \t]+){0,4}?(?:api|service)"
_DEAD = [
    re.compile(p, re.I)
    for p in (
        rf"{_SUBJECT}\s+(?:is|appears\s+to\s+be)\s+(?:now\s+)?no\s+longer\s+(?:publicly\s+)?(?:available|availble|supported|valid|in\s+operation|active|offered)",
        rf"{_SUBJECT}\s+(?:has\s+been|was|is\s+now|will\s+be)\s+(?:deprecated|discontinued|retired|shut\s*down|closed|sunset(?:t?ed)?)",
        rf"{_SUBJECT}\s+(?:is|has\s+been)\s+(?:now\s+)?(?:deprecated|defunct|discontinued|retired|closed)",
        rf"{_SUBJECT}\s+appears\s+to\s+be\s+(?:discontinued|defunct)",
        r"\bAPI\s+(?:is\s+)?DEFUNCT\b",
        r"\*\*\s*no\s+longer\s+available\s*\*\*",
        r"^\W*deprecated\b",  # "(Deprecated in November, 2016) Using Panoramio API..."
        r"^\W*\[?(?:editor's\s+note:\s*)?this\s+api\s+has\s+been\s+deprecated",
        r"(?:this|the)\s+service\s+appears\s+to\s+be\s+no\s+longer\s+in\s+operation",
        r"\bshut\s+down\s+the\s+service\b",
        r"\bpermanently\s+closed\b",
    )
]


def status_from_description(description: str) -> tuple[Status, str]:
    """("deprecated", "description: '<the words>'") when the description says the API is gone, else ("unknown", "")."""
    for pattern in _DEAD:
        found = pattern.search(description or "")
        if found:
            return "deprecated", f"description: '{found.group(0).strip(' [(*')}'"
    return "unknown", ""


# A tool (or operation) that says it is deprecated: in its title ("Read File (Deprecated)"), or in its description
# as a marker ("DEPRECATED: Use read_text_file instead", "(deprecated)") or a sentence about itself. A parameter
# or an option said to be deprecated ("the `x` argument is deprecated") does not count.
_TITLE_DEPRECATED = re.compile(r"\bdeprecated\b", re.I)
_TOOL_DEPRECATED = [
    re.compile(r"\bDEPRECATED\b"),  # written in capitals, as a marker
    re.compile(r"^\W*deprecated\b", re.I),
    re.compile(r"\(deprecated\)", re.I),
    re.compile(r"\bthis\s+(?:tool|endpoint|operation|method)\s+(?:is|has\s+been)\s+(?:now\s+)?deprecated\b", re.I),
]


def status_from_tool(title: str, description: str) -> tuple[Status, str]:
    """("deprecated", "title: '<title>'" or "description: '<the words>'") when a tool says it is deprecated,
    else ("active", "")."""
    if _TITLE_DEPRECATED.search(title or ""):
        return "deprecated", f"title: '{title.strip()}'"
    for pattern in _TOOL_DEPRECATED:
        found = pattern.search(description or "")
        if found:
            return "deprecated", f"description: '{found.group(0).strip(' (')}'"
    return "active", ""
