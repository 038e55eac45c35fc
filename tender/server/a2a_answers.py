"""Tender's answers as A2A parts: a plan or an explanation as a data part holding what the MCP tool returns as its
structured result (the same schema, the same lean JSON), beside a short text rendering for an agent that reads text;
and the agent's own short messages (progress, a request refused)."""

import uuid

from a2a.helpers import new_data_part, new_text_part
from a2a.types.a2a_pb2 import Message, Part, Role

from tender.answers.budget import lean
from tender.answers.schemas import Explanation, Recommendation
from tender.safety import clean

JSON = "application/json"
TEXT = "text/plain"
DOES_SHOWN = 80  # an item's "does" in the text rendering: the data part has it whole


def recommendation_parts(answer: Recommendation) -> list[Part]:
    """The plan's artifact: recommend_apis' structured result, and the plan in a few lines."""
    return [new_data_part(lean(answer), JSON), new_text_part(plan_brief(answer), TEXT)]


def explanation_parts(answer: Explanation) -> list[Part]:
    """The explanation's artifact: explain_bids' structured result, and the bidding in a few lines."""
    return [new_data_part(lean(answer), JSON), new_text_part(explanation_brief(answer), TEXT)]


def plan_brief(answer: Recommendation) -> str:
    """A plan as a few lines of text: each function with its item(s) or why it has none."""
    lines = [
        f"Plan {answer.run_id} ({answer.protocol}): {_count(len(answer.functions), 'function')}, "
        f"{_count(len(answer.apis), 'item')}."
    ]
    for function in answer.functions:
        if function.apis:
            chosen = "; ".join(
                f"{api.name} ({api.confidence:.2f})" + (f": {_short(api.does)}" if api.does else "")
                for api in function.apis
            )
        else:
            chosen = f"{function.status}: {function.reason or 'no item fits'}"
        lines.append(f"{function.id} {function.function} -> {chosen}")
    lines += [f"Note: {note}" for note in answer.notes]
    lines.append(f'Why: send {{"run_id": "{answer.run_id}"}} as a data part (or explain_bids over MCP).')
    return clean("\n".join(lines))


def explanation_brief(answer: Explanation) -> str:
    """An explanation as a few lines of text: per function, whom the call reached, who won and who came closest."""
    lines = [
        f"Run {answer.run_id} ({answer.protocol}, {answer.organisation} contractors): {answer.messages} messages, "
        f"{answer.contractors_contacted} contractors contacted."
    ]
    for function in answer.functions:
        won = ", ".join(f"{bid.name} ({bid.confidence:.2f})" for bid in function.winners) or "nobody"
        lost = function.best_losing
        closest = f"; best losing bid {lost.name} ({lost.confidence:.2f})" if lost else ""
        lines.append(f"{function.id or '-'} {function.function}: {function.bids} bids, won by {won}{closest}")
    if answer.next_page:
        lines.append(f'More: send the same data part with "page": {answer.next_page}.')
    lines += [f"Note: {note}" for note in answer.notes]
    return clean("\n".join(lines))


def agent_message(text: str, task_id: str, context_id: str) -> Message:
    """A short message from Tender about a task: its progress, or why it was refused."""
    return Message(
        message_id=uuid.uuid4().hex,
        role=Role.ROLE_AGENT,
        task_id=task_id,
        context_id=context_id,
        parts=[new_text_part(text, TEXT)],
    )


def _short(text: str) -> str:
    return text if len(text) <= DOES_SHOWN else text[: DOES_SHOWN - 1].rsplit(" ", 1)[0] + "…"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"
