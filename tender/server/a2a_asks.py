"""What an A2A message asks of Tender, read from its parts: a recommendation (the text parts are the requirement; a data
part may carry the fields of recommend_apis) or the explanation of a past run (a data part with its run_id).

The fields are validated by the one request model (tender.agents.request.Request), so a bad value is told as the MCP
tool tells it; anything else a message may hold (files, several data parts, unknown fields) is refused here, each
with a message that says what to send instead."""

from typing import Any

from a2a.types.a2a_pb2 import Message
from google.protobuf.json_format import MessageToDict
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tender.agents.request import Request, describe_validation_error
from tender.answers.schemas import Detail
from tender.errors import InputToFix
from tender.safety import echo

# recommend_apis' arguments, and the protocol knobs of compare_protocols that a single run takes.
CONSTRAINTS = ("max_apis", "required_categories", "excluded_categories", "excluded_apis", "include_deprecated")
RECOMMEND_FIELDS = ("requirement", "needs", "kind", "protocol", "organisation", *CONSTRAINTS, "detail")
EXPLAIN_FIELDS = ("run_id", "function", "detail", "page")
SEND = (
    "Send the requirement as a text part; a data part (one JSON object) may add "
    f"{', '.join(f for f in RECOMMEND_FIELDS if f != 'requirement')}, or hold "
    '{"run_id": ...} alone to explain a past run.'
)


class InvalidAsk(InputToFix):
    """A message Tender cannot read as a request: the task is rejected with this message."""


class Recommend(BaseModel):
    """Recommend what a request needs: the request as recommend_apis validates it, and how much to tell."""

    model_config = ConfigDict(frozen=True)

    request: Request
    detail: Detail = "summary"


class Explain(BaseModel):
    """Explain a past run by its run id (an A2A task's id is its run's), as explain_bids does."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    run_id: str = Field(min_length=1, max_length=200)
    function: str | None = Field(None, max_length=1000)
    detail: Detail = "summary"
    page: int = Field(1, ge=1, le=10_000)


Ask = Recommend | Explain


def ask_of(message: Message) -> Ask:
    """The request a message makes; InvalidAsk (or the request model's InvalidRequest) saying what to fix."""
    texts, data = _parts(message)
    fields = _fields(data)
    if "run_id" in fields:
        return _explain(fields, texts)
    detail = fields.pop("detail", "summary")
    if texts and "requirement" in fields:
        raise InvalidAsk(
            "The requirement is given twice, as text and as the data part's `requirement`: give it once, as text."
        )
    requirement = "\n".join(texts) if texts else fields.pop("requirement", "")
    request = Request.create(
        requirement,
        needs=fields.get("needs"),
        kind=fields.get("kind"),
        protocol=fields.get("protocol"),
        organisation=fields.get("organisation"),
        constraints={name: fields[name] for name in CONSTRAINTS if name in fields},
    )
    try:
        return Recommend(request=request, detail=detail)
    except ValidationError as error:
        raise InvalidAsk(describe_validation_error(error)) from None


def _parts(message: Message) -> tuple[list[str], list[Any]]:
    """The text and data of a message's parts; a file or a part of no kind Tender knows is refused."""
    texts: list[str] = []
    data: list[Any] = []
    if not message.parts:
        raise InvalidAsk(f"The message has no parts. {SEND}")
    for number, part in enumerate(message.parts, start=1):
        kind = part.WhichOneof("content")
        if kind == "text":
            texts.append(part.text)
        elif kind == "data":
            data.append(MessageToDict(part.data))
        elif kind in ("raw", "url"):
            raise InvalidAsk(f"Part {number} is a file ({kind}); Tender reads no files. {SEND}")
        else:
            raise InvalidAsk(f"Part {number} has no text, data, raw or url content Tender can read. {SEND}")
    if len(data) > 1:
        raise InvalidAsk(f"The message has {len(data)} data parts: put every field in one JSON object.")
    return texts, data


def _fields(data: list[Any]) -> dict[str, Any]:
    if not data:
        return {}
    fields = data[0]
    if not isinstance(fields, dict):
        raise InvalidAsk(
            f"The data part holds {type(fields).__name__ if fields is not None else 'null'}, not a JSON object: send "
            'its fields as an object, e.g. {"needs": ["find nearby restaurants"], "kind": "web_api"}.'
        )
    unknown = [name for name in fields if name not in RECOMMEND_FIELDS and name not in EXPLAIN_FIELDS]
    if unknown:
        raise InvalidAsk(
            f"The data part has {'fields' if len(unknown) > 1 else 'a field'} Tender does not take: "
            f"{', '.join(echo(name, 40) for name in unknown[:5])}. A recommendation takes "
            f"{', '.join(RECOMMEND_FIELDS)}; an explanation takes {', '.join(EXPLAIN_FIELDS)}."
        )
    return dict(fields)


def _explain(fields: dict[str, Any], texts: list[str]) -> Explain:
    others = [name for name in fields if name not in EXPLAIN_FIELDS]
    if others or texts:
        mixed = ", ".join(others) if others else "a text part"
        raise InvalidAsk(
            f"A run_id asks for the explanation of a past run, which takes only {', '.join(EXPLAIN_FIELDS)}; this "
            f"message also has {mixed}. Send a recommendation and an explanation as two messages."
        )
    try:
        return Explain(**fields)
    except ValidationError as error:
        raise InvalidAsk(describe_validation_error(error)) from None
