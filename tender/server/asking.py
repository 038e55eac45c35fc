"""A tool's parameters made from the one request model (tender.agents.request): the SDK reads a tool's signature as
its input schema, so the signature is written from the request's fields, their descriptions and bounds, for the
entrance the tool is (ENTRANCES). The tool itself takes them as keyword arguments and hands them to Request.create."""

import inspect
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

from pydantic import Field
from pydantic_core import PydanticUndefined

from tender.agents.request import fields_of

F = TypeVar("F", bound=Callable[..., Any])


def parameter(name: str, annotation: Any, info: Any) -> inspect.Parameter:
    """A request field as a tool's parameter: its type with its bounds and description; its default."""
    if info.default is not PydanticUndefined:
        default = info.default
    elif info.default_factory is not None:
        default = info.default_factory()
    else:
        default = inspect.Parameter.empty
    typed = Annotated[(annotation, *info.metadata, Field(description=info.description))]  # type: ignore[valid-type]
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=typed)


def asking(entrance: str) -> Callable[[F], F]:
    """The decorated tool's signature with the request fields of `entrance` after its first parameter (the SDK's
    Context) and before its own (detail, page...), in place of its `**asked`."""

    def decorate(tool: F) -> F:
        signature = inspect.signature(tool)
        own = [p for p in signature.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
        context, rest = own[0], [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in own[1:]]
        asked = [parameter(*f) for f in fields_of(entrance)]
        tool.__signature__ = signature.replace(parameters=[context, *asked, *rest])  # type: ignore[attr-defined]
        return tool

    return decorate
