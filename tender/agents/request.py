"""What a caller asks for: the requirement, its needs and their kind, the constraints that must hold, and how the
agents negotiate. The one definition of a request: the MCP tools, the A2A agent, the command line and the evaluation
take their parameters, bounds and help from these fields (ENTRANCES says which field each entrance offers), so a
new field is one line here and appears everywhere with one bound."""

from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError, field_validator, model_validator

from tender.errors import InputToFix
from tender.safety import clean, echo

from .form import Form

DEFAULT_PROTOCOL = "manager-led"
# The protocol registry, by name, in order (protocols.PROTOCOLS is this dict, filled by protocols.register): the
# protocols need the manager, which needs this module, so the names a request may give live here, below both.
REGISTRY: dict[str, object] = {}
Organisation = Literal["api", "category", "provider"]
MAX_REQUIREMENT_CHARS = 20_000
MAX_NEEDS = 12
MAX_NEED_CHARS = 300


class InvalidRequest(InputToFix):
    pass


class Constraints(BaseModel):
    max_apis: int | None = Field(None, ge=1, le=50, description="At most this many items in the plan.")
    required_categories: list[str] = Field(
        default_factory=list,
        description="Categories the plan must include an item of, as list_categories names them.",
    )
    excluded_categories: list[str] = Field(default_factory=list, description="Categories whose items are never used.")
    excluded_apis: list[int | str] = Field(default_factory=list, description="Items (ids or exact names) never used.")
    include_deprecated: bool = Field(
        False, description="Also award items marked gone, and server lists, templates and demos."
    )
    exclude_deprecated: bool = Field(
        False, description="Kept for older scripts: items marked gone are left out by default (see include_deprecated)."
    )

    @model_validator(mode="after")
    def _one_way(self):
        if self.include_deprecated and self.exclude_deprecated:
            raise ValueError("include_deprecated and exclude_deprecated contradict each other; give one")
        return self


class Request(BaseModel):
    requirement: str = Field(
        max_length=MAX_REQUIREMENT_CHARS,
        description="What is wanted, in plain words, e.g. 'read my calendar and make tasks'.",
    )
    needs: list[str] | None = Field(
        None,
        max_length=MAX_NEEDS,
        description="The functions needed, a short phrase each, in order, e.g. ['find nearby restaurants', 'show them "
        "on a map']; at most 12. Each becomes one step of the plan.",
    )
    kind: Form | None = Field(
        None,
        description="'mcp_server': abilities for you (servers to install); 'web_api': an app's APIs; 'any'. Omit: "
        "read from the request.",
    )
    protocol: str = Field(DEFAULT_PROTOCOL, description="How the agents negotiate (a registered protocol).")
    organisation: Organisation = Field(
        "api", description="One contractor per 'api' (default), 'category' or 'provider'."
    )
    routing: Literal["embedding", "broadcast"] = Field(
        "embedding",
        description="Whom a call for proposals reaches: the top_n contractors nearest the function, or every one.",
    )
    top_n: int = Field(12, ge=1, le=1000, description="Contractors reached per call for proposals.")
    constraints: Constraints = Field(default_factory=Constraints)

    # Where the needs came from when not from the caller's own words (the client's model, by sampling): that source's
    # note stands for them, so the plan never says two things about one list.
    needs_note: str | None = Field(None, exclude=True)

    @field_validator("needs")
    @classmethod
    def _stated_needs(cls, needs: list[str] | None) -> list[str] | None:
        if needs is None:
            return None
        kept = list(dict.fromkeys(" ".join(n.split()) for n in needs if n and n.strip()))
        if not kept:
            raise ValueError("every need is empty; give each need as a short phrase, or leave needs out")
        wordless = [n for n in kept if not any(ch.isalnum() for ch in clean(n))]
        if wordless:  # control characters, escape sequences, punctuation: no function to find
            raise ValueError(
                f"a need has no words ({echo(wordless[0], 40)}); give each need as a short phrase, or leave it out"
            )
        long = [n for n in kept if len(n) > MAX_NEED_CHARS]
        if long:
            raise ValueError(f"a need is over {MAX_NEED_CHARS} characters ({long[0][:40]!r}...); state it in a phrase")
        return kept

    @field_validator("protocol")
    @classmethod
    def _registered(cls, name: str) -> str:
        if name not in REGISTRY:
            raise ValueError(f"{echo(name)} is not a protocol; use one of {', '.join(REGISTRY)}")
        return name

    @field_validator("requirement")
    @classmethod
    def _readable_text(cls, text: str) -> str:
        text = text.strip()
        if not text:
            raise ValueError("the requirement is empty; describe the app in a sentence or two")
        if "\x00" in text or sum(not (ch.isprintable() or ch.isspace()) for ch in text) > len(text) * 0.1:
            raise ValueError("the requirement looks like binary data; send plain text describing the app")
        if not any(ch.isalpha() for ch in clean(text)):  # an escape sequence's letters are no words
            raise ValueError("the requirement has no words; describe the app in a sentence or two")
        return text

    @classmethod
    def create(cls, requirement, **fields) -> "Request":
        """Validate, turning pydantic's errors into one InvalidRequest a person (or a model) can act on. The
        constraints may be given flat (max_apis=2), as every entrance gives them, or as `constraints`."""
        fields = {k: v for k, v in fields.items() if v is not None}
        constraints = dict(fields.pop("constraints", None) or {})
        constraints |= {name: fields.pop(name) for name in CONSTRAINTS if name in fields}
        try:
            return cls(requirement=requirement, constraints=constraints, **fields)
        except ValidationError as error:
            raise InvalidRequest(describe_validation_error(error)) from None


CONSTRAINTS = tuple(Constraints.model_fields)
# The fields each entrance offers. An assistant asks for what it needs (recommend_apis, and an A2A agent, which may
# also name the protocol); the research bench (compare_protocols) sets the organisation; the command line, all.
ENTRANCES: dict[str, tuple[str, ...]] = {
    "assistant": ("requirement", "needs", "kind", *(c for c in CONSTRAINTS if c != "exclude_deprecated")),
    "agent": (
        "requirement",
        "needs",
        "kind",
        "protocol",
        "organisation",
        *(c for c in CONSTRAINTS if c != "exclude_deprecated"),
    ),
    "bench": ("requirement", "needs", "kind", "organisation", "max_apis"),
    "cli": ("needs", "kind", "protocol", "organisation", "routing", "top_n", *CONSTRAINTS),
}


def field(name: str) -> tuple[Any, Any]:
    """A request field's annotation and FieldInfo, whether the request holds it or its constraints do."""
    owner = Constraints if name in CONSTRAINTS else Request
    info = owner.model_fields[name]
    return info.annotation, info


def fields_of(entrance: str) -> list[tuple[str, Any, Any]]:
    """(name, annotation, FieldInfo) of each field an entrance offers, in order."""
    return [(name, *field(name)) for name in ENTRANCES[entrance]]


def describe_validation_error(error: ValidationError) -> str:
    problems = []
    for item in error.errors():
        where = ".".join(str(p) for p in item["loc"])
        message = item["msg"].removeprefix("Value error, ")
        if item["type"] == "string_too_long" and where == "requirement":
            message = (
                f"the requirement is over {MAX_REQUIREMENT_CHARS:,} characters; shorten it to the app's essentials"
            )
        elif item["type"] == "too_long" and where == "needs":
            message = f"at most {MAX_NEEDS} needs; merge the minor ones or leave them to a second request"
        elif item["type"] == "literal_error":
            message = f"{echo(item['input'])} is not allowed; use one of {item['ctx']['expected']}"
        problems.append(f"{where}: {message}")
    return "Invalid request: " + "; ".join(problems)
