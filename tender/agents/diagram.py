"""Mermaid sequence diagrams of a contract-net exchange, for people reading a transcript.

Calls for proposals are solid arrows to each contractor the routing reached, answers come back dashed;
refusals and rejections end in a cross. Backtracking and fallbacks appear as notes. `summary_diagram`
draws the winners and folds everyone else into one lane, so it fits a chat pane; `sequence_diagram`
draws every contractor and message."""

import re
from collections.abc import Mapping

from .messages import MANAGER, Backtrack, Transcript

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
    backtracks: dict[tuple[str | None, int], Backtrack] = {(b.function_id, b.round): b for b in transcript.backtracking}
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
        target = alias(message.receiver) if message.receiver != "*" else None
        label = _label(message, apis)
        if sender is None or target is None:
            body.append(f"    Note over {sender or target or 'manager'}: {_text(label)}")
        else:
            body.append(f"    {sender}{ARROWS[message.kind]}{target}: {_text(label)}")
        arrows += 1
    if omitted:
        body.append(f"    Note over manager: {omitted} more messages not drawn")
    for note in transcript.notes:
        body.append(f"    Note over manager: {_text(note)}")

    head = ["sequenceDiagram", "    participant manager as Manager"]
    head += [f"    participant {a} as {_text(names.get(p, p), 80)}" for p, a in participants.items() if p != MANAGER]
    return "\n".join(head + body) + "\n"


MAX_WINNER_LANES = 6  # with the manager and the others' lane: at most 8 participants


def summary_diagram(
    transcript: Transcript, *, names: Mapping[str, str] | None = None, max_lanes: int = MAX_WINNER_LANES
) -> str:
    """The exchange as a person reads it: one lane per winning contractor (at most `max_lanes`, best
    first), one lane for all the other contractors, and per call for proposals a handful of arrows:
    the call, the winners' bids, the others' bids in one line (their count and best), the awards."""
    tasks = {m.task_id: m for m in transcript.of_kind("cfp")}
    scores: dict[tuple[str, int], float] = {}
    for m in transcript.of_kind("propose"):
        scores[m.sender, m.api_id] = max(scores.get((m.sender, m.api_id), 0.0), m.score)
    best: dict[str, float] = {}  # in the order of their first award
    for m in transcript.of_kind("accept"):
        best[m.receiver] = max(best.get(m.receiver, 0.0), scores.get((m.receiver, m.api_id), 0.0))
    # The best-scored winners get lanes, drawn left to right in the order they won: fewer crossing arrows.
    kept = set(sorted(best, key=lambda c: -best[c])[:max_lanes])
    lanes = [c for c in best if c in kept]
    contacted = {r.task_id: [c.contractor for c in r.contacted] for r in transcript.routing}
    everyone = {c for cs in contacted.values() for c in cs} | {
        m.sender for m in transcript.messages if m.kind in ("propose", "refuse")
    }
    others = sorted(everyone - set(lanes))
    # Lanes by name alone: the ids are in the explanation beside the diagram.
    labels = {c: n.rsplit(" (", 1)[0] for c, n in _contractor_names(transcript).items()} | dict(names or {})
    alias = {c: f"w{i}" for i, c in enumerate(lanes, start=1)}

    body: list[str] = []
    others_lane = False
    backtracks = {(b.function_id, b.round): b for b in transcript.backtracking}
    for task_id, call in tasks.items():
        back = backtracks.get((call.function_id, call.round))
        if back:
            body.append(f"Note over manager: {_text(f'backtrack {back.function_id}: {back.reason}', 70)}")
        messages = transcript.for_task(task_id)
        reached = contacted.get(task_id) or ([call.receiver] if call.receiver != "*" else [])
        label = f"CFP {call.function_id or 'requirement'}" + (f" round {call.round}" if call.round > 1 else "")
        if call.function:
            label += f": {call.function}"
        # This call's own winners get their lanes; everyone else it reached, other calls' winners
        # included, answers in the others' lane.
        won = {m.receiver for m in messages if m.kind == "accept" and m.receiver in alias}
        mine = [c for c in reached if c in won] + sorted(won - set(reached))
        rest = [c for c in reached if c not in won]
        if not reached:
            body.append(f"Note over manager: {_text(label + ' reached no contractor', 70)}")
        for c in mine:
            body.append(f"manager->>{alias[c]}: {_text(label, 60)}")
        if rest:
            others_lane = True
            short = f"CFP {call.function_id or 'requirement'}" if mine else _text(label, 50)
            body.append(f"manager->>others: {short} (to {len(rest)})")
        proposals = [m for m in messages if m.kind == "propose"]
        for m in proposals:
            if m.sender in won:
                body.append(f"{alias[m.sender]}-->>manager: {_text(f'{m.api_name} {m.score:.2f}', 60)}")
        theirs = sorted((m for m in proposals if m.sender not in won), key=lambda m: -m.score)
        refused = sum(1 for m in messages if m.kind == "refuse" and m.sender not in won)
        if theirs or refused:
            text = f"{len(theirs)} bid{'s' if len(theirs) != 1 else ''}"
            if theirs:
                text += f", best {theirs[0].api_name} {theirs[0].score:.2f}"
            if refused:
                text += f", {refused} refused"
            others_lane = True
            body.append(f"others-->>manager: {_text(text, 70)}")
        if not any(m.kind == "accept" for m in messages):
            body.append(f"Note over manager: {call.function_id or 'requirement'}: no award")
        for m in messages:
            if m.kind == "accept" and m.receiver in won:
                body.append(f"manager->>{alias[m.receiver]}: accept")
            elif m.kind == "failure":
                body.append(f"Note over manager: {_text(f'failure: {m.reason}', 70)}")
    for note in transcript.notes[:3]:
        body.append(f"Note over manager: {_text(note, 70)}")
    head = ["sequenceDiagram", "participant manager as Manager"]
    head += [f"participant {alias[c]} as {_text(labels.get(c, c), 60)}" for c in lanes]
    if others_lane:
        count = f"{len(others)} other" if others else "Other"
        head.append(f"participant others as {count} contractor{'s' if len(others) != 1 else ''}")
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
