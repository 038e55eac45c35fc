"""The words of an item's name, for the lexical index: a tool's name is a summary of its job, written as one token
(CourseTool, get_weather, sendEmailWithTemplate) that a search for "course", "weather" or "email" would miss."""

import re

_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def name_words(name: str) -> str:
    """'sendEmailWithTemplate' -> 'send email with template'; 'get_weather' -> 'get weather'; 'HTMLParser' ->
    'html parser'."""
    return " ".join(part.lower() for part in _PARTS.findall(name))


def own_name(kind: str, name: str, tool: str = "", operation: str = "", route: str = "") -> str:
    """An item's name without its provider: a tool's name on its server, an operation's operationId (else its
    method and path), an API's name."""
    if kind == "tool" and tool:
        return tool
    if kind == "operation":
        return operation or route or name
    return name
