"""Resources, resource templates and the compose_service prompt, through the in-memory client."""

import json

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp.types import PromptReference, ResourceTemplateReference

from tender.server.app import build_server
from tests.server_support import REQUIREMENT, ok, settings  # noqa: F401 (fixture)


async def test_lists_the_resources_and_templates(settings):
    async with Client(build_server(settings)) as client:
        resources = (await client.list_resources()).resources
        templates = (await client.list_resource_templates()).resource_templates
    assert [(r.uri, r.mime_type) for r in resources] == [("catalog://categories", "application/json")]
    assert {t.uri_template for t in templates} == {
        "catalog://apis/{api_id}",
        "runs://{run_id}",
        "runs://{run_id}/transcript/{page}",
    }
    assert all(t.description for t in templates)


async def test_categories_resource(settings):
    async with Client(build_server(settings)) as client:
        contents = (await client.read_resource("catalog://categories")).contents
    categories = json.loads(contents[0].text)
    assert {"name": "Mapping", "api_count": 3, "primary_count": 3} in categories
    assert [c["name"] for c in categories] == sorted(c["name"] for c in categories)


async def test_api_resource(settings):
    async with Client(build_server(settings)) as client:
        card = json.loads((await client.read_resource("catalog://apis/3")).contents[0].text)
        with pytest.raises(MCPError, match="No API 999 "):
            await client.read_resource("catalog://apis/999")
    assert card["name"] == "Yelp" and card["usage_count"] > 0 and card["co_used"]


async def test_run_resource(settings):
    async with Client(build_server(settings)) as client:
        plan = ok(await client.call_tool("recommend_apis", {"requirement": REQUIREMENT}))
        stored = json.loads((await client.read_resource(f"runs://{plan['run_id']}")).contents[0].text)
        first = json.loads((await client.read_resource(stored["next"])).contents[0].text)
        with pytest.raises(MCPError, match="No run 'missing'"):
            await client.read_resource("runs://missing")
        with pytest.raises(MCPError, match="pages 1 to 1"):
            await client.read_resource(f"runs://{plan['run_id']}/transcript/2")
    assert stored["plan"]["run_id"] == plan["run_id"]
    assert [a["name"] for a in stored["plan"]["apis"]] == plan["apis"]
    assert stored["transcript"] == {"messages": stored["plan"]["cost"]["messages"], "pages": 1}
    assert first["messages"][0]["kind"] == "cfp" and first["routing"] and first["next"] is None


async def test_compose_service_prompt(settings):
    async with Client(build_server(settings)) as client:
        prompts = (await client.list_prompts()).prompts
        result = await client.get_prompt("compose_service", {"requirement": "  A map of bike shops  "})
    assert [(p.name, [a.name for a in p.arguments]) for p in prompts] == [
        ("compose_service", ["requirement", "kind", "category", "needs"])
    ]
    assert [a.required for a in prompts[0].arguments] == [True, False, False, False]
    assert all(len(a.description) > 30 for a in prompts[0].arguments)
    [message] = result.messages
    assert message.role == "user"
    text = message.content.text
    assert "A map of bike shops\n" in text
    assert text.index("recommend_apis") < text.index("client_config") < text.index("explain_bids")
    assert "Never fill in a value yourself" in text and 'kind: "mcp_server"' in text


async def test_compose_service_prompt_passes_on_kind_and_category(settings):
    async with Client(build_server(settings)) as client:
        result = await client.get_prompt(
            "compose_service", {"requirement": "bike shops", "kind": "web_api", "category": "Mapping"}
        )
    text = result.messages[0].content.text
    assert 'required_categories ["Mapping"]' in text and 'kind "web_api"' in text


async def test_compose_service_prompt_passes_on_the_needs_or_asks_the_assistant_for_them(settings):
    async with Client(build_server(settings)) as client:
        given = await client.get_prompt(
            "compose_service", {"requirement": "bike shops", "needs": "find bike shops; show them on a map"}
        )
        asked = await client.get_prompt("compose_service", {"requirement": "bike shops"})
    assert 'needs ["find bike shops", "show them on a map"]' in given.messages[0].content.text
    assert "needs: the functions it takes" in asked.messages[0].content.text


async def test_prompt_arguments_and_api_ids_complete(settings):
    prompt = PromptReference(type="ref/prompt", name="compose_service")
    async with Client(build_server(settings)) as client:
        kinds = await client.complete(prompt, {"name": "kind", "value": "m"})
        categories = await client.complete(prompt, {"name": "category", "value": "ma"})
        everything = await client.complete(prompt, {"name": "category", "value": ""})
        apis = await client.complete(
            ResourceTemplateReference(type="ref/resource", uri="catalog://apis/{api_id}"),
            {"name": "api_id", "value": "goo"},
        )
    assert kinds.completion.values == ["mcp_server"]
    assert categories.completion.values[0] == "Mapping"
    assert everything.completion.total == len(everything.completion.values) > 5
    assert apis.completion.values[0] == "Google Maps"
