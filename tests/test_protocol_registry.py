"""Protocols are registered objects (issue 20): the command line's choices, the MCP tools' enum and
descriptions, the prompt's completions and `tender eval --protocol all` all come from PROTOCOLS."""

import json
import subprocess
import sys

import pytest
from mcp import Client

from tender.agents import protocols
from tender.agents.protocols import PROTOCOLS, Protocol
from tender.agents.request import InvalidRequest, Request
from tender.agents.service import Tender
from tender.catalog import Catalog
from tender.cli import main
from tender.server.app import build_server
from tests.server_support import ROOT, settings  # noqa: F401 (fixture)

NAMES = ["manager-led", "contractor-led", "collaborative", "single-agent"]


def option(command: str, name: str):
    return next(p for p in main.commands[command].params if p.name == name)


def test_the_registry_holds_the_four_protocols_in_order():
    assert list(PROTOCOLS) == NAMES
    assert [p.name for p in PROTOCOLS.values() if not p.contract_net] == ["single-agent"]
    with pytest.raises(ValueError, match="already registered"):
        protocols.register(Protocol("manager-led", "again", protocols.manager_led))


def test_the_command_line_offers_the_registered_protocols():
    recommend = option("recommend", "protocol")
    assert list(recommend.type.choices) == list(PROTOCOLS)
    for protocol in PROTOCOLS.values():
        assert protocol.name in recommend.help and protocol.summary in recommend.help
    evaluate = option("eval", "method_names")
    assert list(evaluate.type.choices)[: len(PROTOCOLS)] == list(PROTOCOLS)
    assert all(name in evaluate.help for name in PROTOCOLS)


def test_eval_runs_every_registered_protocol_and_the_baselines_the_command_names():
    from tender.cli import BASELINE_NAMES
    from tender.evaluation.baselines import BASELINES
    from tender.evaluation.datasets import dataset
    from tender.evaluation.runner import methods_for

    data = dataset("programmableweb")
    assert [m for m in methods_for(data, data.variants[0]) if m in PROTOCOLS] == list(PROTOCOLS)
    assert list(BASELINE_NAMES) == list(BASELINES)


async def test_the_research_bench_lists_the_registered_protocols(settings):  # noqa: F811
    async with Client(build_server(settings)) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert ", ".join(PROTOCOLS) in tools["compare_protocols"].description
    assert "{protocols}" not in tools["compare_protocols"].description
    # The assistant's main tool runs the default protocol; choosing one is the bench's (and the CLI's) knob.
    assert "protocol" not in tools["recommend_apis"].input_schema["properties"]


def test_a_request_names_a_registered_protocol():
    with pytest.raises(InvalidRequest, match="'haggling' is not a protocol; use one of manager-led, contractor-led"):
        Request.create("a map of bike shops", protocol="haggling")


def test_a_newly_registered_protocol_is_run_by_the_service(catalog_path, embedder, monkeypatch):
    asked = []

    def echo(manager, negotiation):
        asked.append(negotiation.request.requirement)
        return protocols.manager_led(manager, negotiation)

    monkeypatch.setitem(PROTOCOLS, "echo", Protocol("echo", "the manager-led protocol, recorded", echo))
    tender = Tender(Catalog(catalog_path, embedder=embedder))
    run = tender.recommend(Request.create("Read restaurant reviews and ratings", protocol="echo"))
    assert asked == ["Read restaurant reviews and ratings"]
    assert run.plan.protocol == "echo" and run.plan.apis


# Registered before the command line, the server and the evaluation are imported, as a plug-in would be.
PLUGIN = """
import asyncio, json
from tender.agents import protocols
protocols.register(protocols.Protocol("echo", "the manager-led protocol under another name", protocols.manager_led))
from tender.cli import main
from tender.evaluation.datasets import dataset
from tender.evaluation.runner import methods_for
from tender.server.tools import register
from mcp.server.mcpserver import MCPServer

server = MCPServer("t")
register(server)
tools = {t.name: t for t in asyncio.run(server.list_tools())}
recommend = next(p for p in main.commands["recommend"].params if p.name == "protocol")
evaluate = next(p for p in main.commands["eval"].params if p.name == "method_names")
pw = dataset("programmableweb")
print(json.dumps({"cli": list(recommend.type.choices), "cli_help": recommend.help,
                  "eval": list(evaluate.type.choices), "methods": methods_for(pw, pw.variants[0]),
                  "compare": tools["compare_protocols"].description}))
"""


def test_a_protocol_registered_before_import_shows_up_everywhere():
    done = subprocess.run([sys.executable, "-c", PLUGIN], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    expected = [*NAMES, "echo"]
    assert seen["cli"] == expected
    assert "echo" in seen["eval"] and "echo" in seen["methods"]
    assert "the manager-led protocol under another name" in seen["cli_help"]
    assert "single-agent, echo" in seen["compare"]
