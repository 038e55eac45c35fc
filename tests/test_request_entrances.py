"""One request model, every entrance (issue 58): the MCP tools, the A2A agent and the command line take their
parameters, bounds, choices and help from the request's fields (tender.agents.request), each entrance the fields
ENTRANCES gives it. A field added to the model appears at each entrance that lists it, with the same bound."""

import pytest
from mcp import Client

from tender.agents.request import ENTRANCES, fields_of
from tender.cli import FLAGS, main
from tender.server.app import build_server
from tests.server_support import settings  # noqa: F401 (fixture)

BOUNDS = ("minimum", "maximum", "exclusiveMinimum", "maxItems", "maxLength", "enum")


def facts(schema: dict) -> dict:
    """A property's bounds and choices, wherever pydantic put them (an optional one nests them in anyOf)."""
    found = {}
    for part in [schema, *schema.get("anyOf", [])]:
        found |= {k: v for k, v in part.items() if k in BOUNDS}
    return found


def model_facts(entrance: str) -> dict[str, dict]:
    """What each field of the entrance says: its bounds and choices, and its description."""
    from typing import Annotated

    from pydantic import Field, TypeAdapter

    out = {}
    for name, annotation, info in fields_of(entrance):
        schema = TypeAdapter(Annotated[(annotation, *info.metadata, Field())]).json_schema()  # type: ignore[valid-type]
        out[name] = facts(schema) | {"description": info.description}
    return out


async def test_the_tools_parameters_are_the_request_model_s_fields(settings):  # noqa: F811
    async with Client(build_server(settings)) as client:
        tools = {t.name: t.input_schema for t in (await client.list_tools()).tools}
    for tool, entrance, own in (
        ("recommend_apis", "assistant", {"detail"}),
        ("compare_protocols", "bench", {"manager_backend", "contractor_backend", "deadline_s"}),
    ):
        properties = tools[tool]["properties"]
        assert set(properties) == set(ENTRANCES[entrance]) | own, tool
        for name, expected in model_facts(entrance).items():
            said = facts(properties[name]) | {"description": properties[name].get("description")}
            assert said == expected, (tool, name)
        assert tools[tool]["required"] == ["requirement"]


def test_the_command_line_s_options_are_the_request_model_s_fields():
    options = {p.name: p for p in main.commands["recommend"].params}
    for name, annotation, info in fields_of("cli"):
        option = options[name]
        assert option.opts == [FLAGS.get(name, "--" + name.replace("_", "-"))]
        expected = model_facts("cli")[name]
        if "enum" in expected:
            assert list(option.type.choices) == expected["enum"], name
        if "minimum" in expected or "maximum" in expected:
            assert (option.type.min, option.type.max) == (expected.get("minimum"), expected.get("maximum")), name
        assert option.multiple == (annotation == list[str] or "list" in str(annotation)), name
        assert info.description in option.help, name


def test_the_a2a_agent_reads_the_request_model_s_fields():
    pytest.importorskip("a2a")
    from tender.server.a2a_asks import RECOMMEND_FIELDS

    assert RECOMMEND_FIELDS == (*ENTRANCES["agent"], "detail")


def test_every_entrance_offers_only_fields_the_model_has():
    from tender.agents.request import CONSTRAINTS, Request

    known = set(Request.model_fields) | set(CONSTRAINTS)
    for entrance, names in ENTRANCES.items():
        assert set(names) <= known, entrance
        assert len(names) == len(set(names)), entrance
