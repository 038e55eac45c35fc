"""The caller's own model, through MCP sampling (`sampling/createMessage`): where the client declares the
capability and a call asks for it (manager_backend="client"), the server asks the client's model to state the
requirement's needs, one short phrase each, and those become the plan's steps. No API key, no endpoint to
configure: the client runs the model it already uses, with its user's consent.

Bounded: one request, at most MAX_TOKENS tokens and TIMEOUT_S seconds. A client without the capability, a refusal,
an error, a timeout or an answer that is no list of needs leaves the decomposition to the embedded reader, and
the plan says so. The MCP specification deprecated sampling on 2026-07-28 (SEP-2577), and a client speaking that
version or later takes no request from a server: it works with clients that connect with the initialize handshake
(the protocol before it) and declare sampling, and everywhere else the embedded reader answers, saying so."""

import json
import logging
import re
import warnings

import anyio
from mcp import types

from tender.agents.request import MAX_NEED_CHARS, MAX_NEEDS

log = logging.getLogger("tender.server")

MAX_TOKENS = 400
TIMEOUT_S = 30.0
SYSTEM = (
    "You split a request for an app, a service or an agent's task into the functions that an API or a tool must "
    "perform. Answer with a JSON array of short phrases (3 to 8 words each), one per function, in the order they "
    f"run, at most {MAX_NEEDS}. Leave out what is no function of an API or tool: the kind of app, who it is for, "
    'why. Example: for "a site that shows nearby restaurants on a map with their reviews" answer '
    '["find nearby restaurants", "show places on a map", "get restaurant reviews"]. Answer with the array alone.'
)


class Unusable(Exception):
    """The client's answer holds no list of needs."""


# A model asked for at most MAX_TOKENS tokens answers in far fewer characters than this; a longer answer is not
# read at all, so no client can make the parse cost more than a bounded, linear pass.
MAX_ANSWER_CHARS = 16_000
BULLET = re.compile(r"[ \t]*(?:[-*•]|\d+[.)])[ \t]+(\S.*)")


def parse_needs(text: str) -> list[str]:
    """The needs in a model's answer: a JSON array of strings, possibly inside a code fence or prose; else one
    need per bulleted or numbered line. Linear in the answer's length (no backtracking across lines), and an answer
    over MAX_ANSWER_CHARS is refused unread. Raises Unusable."""
    if len(text) > MAX_ANSWER_CHARS:
        raise Unusable(f"{len(text):,} characters, over the {MAX_ANSWER_CHARS:,} a list of needs can take")
    needs: list[str] = []
    start, end = text.find("["), text.rfind("]")
    if 0 <= start < end:
        try:
            data = json.loads(text[start : end + 1])
        except json.JSONDecodeError:
            data = None
        if isinstance(data, list):
            needs = [" ".join(str(n).split()) for n in data if isinstance(n, str | int | float) and str(n).strip()]
    if not needs:
        needs = [m.group(1).strip() for line in text.splitlines() if (m := BULLET.fullmatch(line))]
    needs = list(dict.fromkeys(n for n in needs if n))
    if not needs:
        raise Unusable("no list of needs in its answer")
    if len(needs) > MAX_NEEDS or any(len(n) > MAX_NEED_CHARS for n in needs):
        raise Unusable(f"more than {MAX_NEEDS} needs, or one over {MAX_NEED_CHARS} characters")
    return needs


def offers_sampling(session) -> bool:
    return bool(session.check_client_capability(types.ClientCapabilities(sampling=types.SamplingCapability())))


async def needs_from_client(
    session, requirement: str, related_request_id=None, timeout_s: float | None = None, max_tokens: int = MAX_TOKENS
) -> tuple[list[str] | None, str]:
    """(the needs, a note for the plan), or (None, a note saying why the embedded reader decomposed instead). The
    request goes out on the back-channel of the tool call it serves (`related_request_id`)."""
    timeout_s = TIMEOUT_S if timeout_s is None else timeout_s
    fallback = "Tender's embedded reader decomposed the requirement instead."
    if not offers_sampling(session):
        return None, f"Asked to decompose with your model, but this client does not offer MCP sampling; {fallback}"
    if not getattr(session, "can_send_request", True):
        return None, (
            "Asked to decompose with your model, but the MCP protocol version this client speaks lets no server ask "
            f"its model (server-initiated requests end with 2026-07-28): pass the needs instead; {fallback}"
        )
    try:
        with anyio.fail_after(timeout_s), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the SDK marks sampling deprecated (SEP-2577); it still works
            result = await session.create_message(
                [types.SamplingMessage(role="user", content=types.TextContent(type="text", text=requirement))],
                max_tokens=max_tokens,
                system_prompt=SYSTEM,
                temperature=0.0,
                related_request_id=related_request_id,
            )
        content = result.content
        text = content.text if isinstance(content, types.TextContent) else ""
        # Off the event loop: whatever the answer, other clients of a shared server are never held up by it.
        needs = await anyio.to_thread.run_sync(parse_needs, text)
    except TimeoutError:
        return None, f"Your model did not answer within {timeout_s:g} s; {fallback}"
    except Unusable as error:
        return None, f"Your model's answer could not be used ({error}); {fallback}"
    except Exception as error:  # a refusal or any error the client returns: the embedded reader answers
        log.info("sampling failed: %s", error)
        reason = " ".join(str(error).split())[:160] or type(error).__name__
        return None, f"Your model could not decompose the requirement ({reason}); {fallback}"
    model = getattr(result, "model", "") or "your model"
    return needs, f"The plan's {len(needs)} step(s) are the needs {model} stated through MCP sampling."
