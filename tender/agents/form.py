"""The form a need is served in, read from the request when the caller does not say: an ability for the assistant
itself (an MCP server it can install) or a part of an app someone builds (a web API), per need where a request mixes
both ("build a site that shows the weather, and let Claude manage its repo").

Read by words that say who will use the ability: the assistant ("Claude", "my agent", "Cursor", "which MCP
server", "can you ...") or an app ("an app", "a site", "a bot", "my dashboard", "I'm building"). A need takes the
form of the nearest such words before it (else after it, else the request's); where none are found, any form serves."""

import re
from typing import Literal

from pydantic import BaseModel, Field

Form = Literal["mcp_server", "web_api", "any"]
FORMS: tuple[str, ...] = ("mcp_server", "web_api", "any")
SAID = {"mcp_server": "an ability for the assistant (MCP servers)", "web_api": "a part of an app (web APIs)"}

# Who will use what is asked for: the assistant itself ...
_ASSISTANT = re.compile(
    r"\b(?:(?:claude(?: desktop| code)?|chatgpt|copilot|cursor|windsurf|cline|zed|continue\.dev|goose)\b|"
    r"(?:my|our|the|your) (?:ai |coding |llm |local |personal )?(?:assistant|agent|model|llm|chatbot|copilot)s?|"
    r"ai (?:assistant|agent)s?|llm|mcp(?: servers?| tools?)?|which servers?|a server (?:to|i can) install|"
    r"install(?:ed)? (?:a |an |the )?(?:mcp )?server|"
    r"(?:can|could|would|will) you\b|help me\b|let me\b|for me\b|"
    r"give (?:you|yourself)\b|you (?:can|could|to) )|\(assistant\)",
    re.I,
)
# ... or an app, a site, a bot someone builds (which calls web APIs).
_APP = re.compile(
    r"\b(?:(?:an?|my|our|the|this) (?:\w+(?:-\w+)*[- ])?(?:web ?)?(?:app|application|site|website|web ?page|page|bot|"
    r"dashboard|backend|frontend|service|platform|product|widget|plugin|extension|game|tool for (?:our|my) users)s?|"
    r"(?:i'?m|i am|we'?re|we are) (?:building|making|creating|developing|writing|designing)|"
    r"(?:build|make|create|develop|code|write) (?:an?|my|our) |web api|rest api|an api\b|apis? (?:for|to|that)|"
    r"endpoints?|mashup|my users|our (?:users|customers|visitors)|dashboards?|websites?|web ?pages?|web apps?|"
    r"(?:mobile|ios|android|web|react|flask|django|rails) apps?)\b",  # \b: "my Apple Reminders" is not "my app"
    re.I,
)


# ... or a request titled by what is built ("family travel app: enter a flight number ...", "Expense bot: ...").
_APP_TITLE = re.compile(
    r"^\s*(?:[\w'’-]+\s+){0,3}(?:app|application|site|website|web ?page|bot|dashboard|extension|plugin|widget)s?"
    r"(?=\s*:)",
    re.I,
)


class FormReading(BaseModel):
    """The form of each need, and what it was read from (the words, or the caller's kind)."""

    forms: list[str]
    said: list[str] = Field(default_factory=list, description="The words each form was read from, per need.")
    source: str = Field(
        "read",
        description="'given' (the caller's kind), 'read' (from the request's words by rules) or 'model' (a language "
        "model read them with the needs).",
    )


def cues(text: str) -> list[tuple[int, int, str, str]]:
    """(start, end, form, words) of every cue in the text, in order."""
    found = [(m.start(), m.end(), "mcp_server", m.group(0)) for m in _ASSISTANT.finditer(text)]
    found += [(m.start(), m.end(), "web_api", m.group(0)) for m in _APP.finditer(text)]
    titled = _APP_TITLE.match(text)
    if titled and not any(start < titled.end() for start, *_ in found):  # one cue for the title, not two
        found.append((titled.start(), titled.end(), "web_api", titled.group(0).strip()))
    return sorted(found)


def read_forms(requirement: str, needs: list[str]) -> FormReading:
    """Each need's form by its own words where they say it ("a weather API for the club site"), else by the cue
    nearest before it in the requirement (after it where none comes before);
    a need that is not in the requirement's words (the caller's own phrase) takes the request's form: the only
    form its cues name, else any. A request with no cue: any form, for every need."""
    found = cues(requirement)
    named = {form for _, _, form, _ in found}
    overall = next(iter(named)) if len(named) == 1 else "any"
    overall_said = next((words for _, _, form, words in found if form == overall), "")
    forms, said = [], []
    for need in needs:
        where, exact = _locate(requirement, need)
        if where is not None and exact:
            asked = _with_address(requirement, where, found)
            need = requirement[asked[0] : where[0]] + need
            where = asked
        elif where is not None:
            address = _clause_address(found, where)
            if address is not None and not _SAYS_API.search(need):
                # The caller's own phrase of a clause said to the assistant: what it names ("click through my
                # site", "read a Notion page") is what the ability acts on, not who will use it.
                forms.append("mcp_server")
                said.append(address[3])
                continue
        own = cues(need)
        if {form for _, _, form, _ in own} in ({"mcp_server"}, {"web_api"}):  # the need says it itself
            forms.append(own[0][2])
            said.append(own[0][3])
            continue
        if where is None or not found:
            forms.append(overall)
            said.append(overall_said)
            continue
        start, end = where
        inside = [c for c in found if start <= c[0] < end]
        before = [c for c in found if c[1] <= start]
        after = [c for c in found if c[0] >= end]
        cue = inside[0] if inside else before[-1] if before else after[0] if after else None
        forms.append(cue[2] if cue else overall)
        said.append(cue[3] if cue else overall_said)
    return FormReading(forms=forms, said=said)


# Between who is asked and what they are asked to do: "let Claude read ...", "my assistant should be able to ...".
_ASKED_TO = re.compile(r"\s*(?:(?:to|should|can|could|will|would|must|shall|needs? to)\s+(?:be able to\s+)?)?", re.I)


def _with_address(text: str, where: tuple[int, int], found) -> tuple[int, int]:
    """The need's span with the assistant cue that asks for it, where one stands right before it: the reading
    sets "let Claude" apart from "drive a browser through my news site" as context, but it still says who will use
    the need, before the need's own words (which name the site only as what the browser visits)."""
    start, end = where
    for cue_start, cue_end, form, _ in found:
        if form == "mcp_server" and cue_end <= start and _ASKED_TO.fullmatch(text[cue_end:start]):
            return cue_start, end
    return where


# A need that says it wants an API ("a recipe search API for the app") asks for a part of an app, whoever is asked.
_SAYS_API = re.compile(r"\b(?:apis?|endpoints?)\b", re.I)


def _clause_address(found, clause: tuple[int, int]):
    """The assistant cue a clause opens with ("Claude, read ...", "Have Claude drive ..."): the clause's first cue,
    where it is the assistant's; else None."""
    start, end = clause
    inside = [c for c in found if start <= c[0] < end]
    return inside[0] if inside and inside[0][2] == "mcp_server" else None


def _locate(text: str, need: str) -> tuple[tuple[int, int] | None, bool]:
    """Where a need stands in the requirement, and whether its own words stand there: its words, blanks aside;
    else the clause that shares most of its words (a need the caller phrased itself, "read my Sentry issues" for
    "Claude should go through my Sentry issues"); None when no clause shares a word of it."""
    pattern = r"\s+".join(re.escape(word) for word in need.split())
    if not pattern:
        return None, False
    match = re.search(pattern, text, re.I)
    if match:
        return (match.start(), match.end()), True
    wanted = _stems(need)
    best, where = 0, None
    for clause in _CLAUSE.finditer(text):
        shared = len(wanted & _stems(clause.group(0)))
        if shared > best:
            best, where = shared, (clause.start(), clause.end())
    return where, False


# Clauses: sentences, and their parts set apart by a dash or by ", and", ", but", ", while" (a request that asks
# the assistant for one thing and an app for another joins them so).
_CLAUSE = re.compile(r"(?:[^.;!?\n\u2013\u2014,]|,(?!\s*(?:and|but|while|whereas)\b))+")
_STOP = frozenset("a an the and or of to in on for with my our your me us it its this that from by as at be".split())


def _stems(text: str) -> set[str]:
    """Content words cut to their first five letters ("issues", "issue"; "appointments", "appointment")."""
    return {w[:5] for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _STOP and len(w) > 2}


def describe(reading: FormReading, functions: list[str]) -> str:
    """The note a plan carries: what form each need was read as, and how to ask for another."""
    if reading.source == "given":
        form = reading.forms[0] if reading.forms else "any"
        if form == "any":
            return "Asked for any form: MCP servers and web APIs both considered."
        return f"Asked for {SAID[form]} (kind={form})."
    kinds = set(reading.forms)
    if kinds == {"any"}:
        return (
            "The request does not say who will use these abilities, so MCP servers and web APIs are both "
            "considered: pass kind='mcp_server' for servers your assistant installs, kind='web_api' for an app's APIs."
        )
    if len(kinds) == 1:
        form = next(iter(kinds))
        words = next((w for w in reading.said if w), "")
        other = "web_api" if form == "mcp_server" else "mcp_server"
        said = (
            f" (from {words!r})" if words else " (as the model read the request)" if reading.source == "model" else ""
        )
        return (
            f"Read as {SAID[form]}{said}; pass kind='{other}' for "
            f"{SAID[other].split('(')[1].rstrip(')')} instead, or kind='any'."
        )
    parts = [f"{f!r}: {SAID.get(form, 'any form')}" for f, form in zip(functions, reading.forms)]
    return "Read per need: " + "; ".join(parts) + ". Pass kind to ask for one form for every need."
