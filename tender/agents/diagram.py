"""A Mermaid sequence diagram of a contract-net exchange, for people reading a transcript.

Calls for proposals are solid arrows to each contractor the routing reached, answers come back dashed;
refusals and rejections end in a cross. Backtracking and fallbacks appear as notes."""

import re
from collections.abc import Mapping

from .messages import MANAGER, Transcript

MAX_LABEL = 90

ARROWS = {
    "cfp": "->>",
    "propose": "-->>",
    "refuse": "--x",
    "accept": "->>",
    "reject": "-x",
    "inform": "-->>",
    "failure": "--x",
}


def sequence_diagram(transcript: Transcript, *, names: Mapping[str, str] | None = None, max_arrows: int = 250) -> str:
    """The transcript as Mermaid `sequenceDiagram` source. `names` labels contractors ('api:370' ->
    'Google Maps'); without it, a contractor is named by its proposals, else by its id. Past
    `max_arrows` arrows, the rest are summarised in a closing note, so a broadcast stays readable."""
    contacted = {r.task_id: [c.contractor for c in r.contacted] for r in transcript.routing}
    names = _contractor_names(transcript) | {c: f"{n} ({c.replace(':', ' ')})" for c, n in (names or {}).items()}
    participants: dict[str, str] = {MANAGER: "manager"}

    def alias(party: str) -> str:
        if party not in participants:
            participants[party] = f"c{len(participants)}"
        return participants[party]

    apis = {m.api_id: m.api_name for m in transcript.messages if m.kind == "propose"}
    body: list[str] = []
    arrows = 0
    omitted = 0
    backtracks = {(b.function_id, b.round): b for b in transcript.backtracking}
    for message in transcript.messages:
        if message.kind == "cfp":
            receivers = contacted.get(message.task_id) or ([message.receiver] if message.receiver != "*" else [])
            back = backtracks.get((message.function_id, message.round))
            if back:
                body.append(f"    Note over manager: {_text(f'backtrack {back.function_id}: {back.reason}')}")
            label = f"CFP {message.task_id}"
            if message.function_id:
                label += f" {message.function_id}"
            if message.round > 1:
                label += f" round {message.round}"
            if message.categories:
                label += f" in {', '.join(message.categories)}"
            if not receivers:
                body.append(f"    Note over manager: {_text(label + ' reached no contractor')}")
            for receiver in receivers:
                if arrows >= max_arrows:
                    omitted += 1
                    continue
                body.append(f"    manager{ARROWS['cfp']}{alias(receiver)}: {_text(label)}")
                arrows += 1
            continue
        if arrows >= max_arrows:
            omitted += 1
            continue
        sender = alias(message.sender) if message.sender != "*" else None
        receiver = alias(message.receiver) if message.receiver != "*" else None
        label = _label(message, apis)
        if sender is None or receiver is None:
            body.append(f"    Note over {sender or receiver or 'manager'}: {_text(label)}")
        else:
            body.append(f"    {sender}{ARROWS[message.kind]}{receiver}: {_text(label)}")
        arrows += 1
    if omitted:
        body.append(f"    Note over manager: {omitted} more messages not drawn")
    for note in transcript.notes:
        body.append(f"    Note over manager: {_text(note)}")

    head = ["sequenceDiagram", "    participant manager as Manager"]
    head += [f"    participant {a} as {_text(names.get(p, p), 80)}" for p, a in participants.items() if p != MANAGER]
    return "\n".join(head + body) + "\n"


def _label(message, apis: dict[int, str]) -> str:
    match message.kind:
        case "propose":
            return f"propose {message.api_name} ({message.score:.2f})"
        case "refuse":
            return f"refuse: {message.reason}"
        case "accept":
            return f"accept {apis.get(message.api_id, message.api_id)}: {message.reason}"
        case "reject":
            return f"reject {apis.get(message.api_id, message.api_id)}: {message.reason}"
        case "inform":
            return f"inform: {message.result}"
        case "failure":
            return f"failure: {message.reason}"
    return message.kind


def _contractor_names(transcript: Transcript) -> dict[str, str]:
    """'api:12' becomes 'Google Maps (api 12)' when one of its proposals names it."""
    names = {}
    for message in transcript.messages:
        if message.kind == "propose" and message.sender.startswith("api:"):
            names[message.sender] = f"{message.api_name} ({message.sender.replace(':', ' ')})"
    for routing in transcript.routing:
        for contractor in routing.contacted:
            kind, _, name = contractor.contractor.partition(":")
            names.setdefault(contractor.contractor, f"{name} ({kind})" if kind == "category" else f"{kind} {name}")
    return names


_UNSAFE = re.compile(r"[;#\s]+")


def _text(text: str, limit: int = MAX_LABEL) -> str:
    """One short line Mermaid will not misread: no line breaks, statement separators or entity codes."""
    text = _UNSAFE.sub(" ", str(text)).strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
