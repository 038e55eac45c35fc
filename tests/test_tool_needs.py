"""MCP servers' tools as a kind of tool data (training/tool_needs.py): a need the local model writes for a tool,
kept only where it does not give the tool away, split by server, and never a tool of the MCP suite's servers."""

import json
import random

import pytest

from tender.errors import TenderError
from tender.evaluation.datasets import Paths
from tender.evaluation.kinds import read_set
from tender.training.tool_needs import candidates, judged_servers, part_of, usable


def registry(folder, servers: dict[str, dict[str, str]]):
    (folder / "toolsdk-mcp-registry").mkdir(parents=True)
    lines = [
        json.dumps({"key": key, "tools": {n: {"name": n, "description": d} for n, d in tools.items()}})
        for key, tools in servers.items()
    ]
    (folder / "toolsdk-mcp-registry" / "servers.jsonl").write_text("\n".join(lines) + "\n")
    return Paths(shared=folder)


def test_no_tool_of_a_server_the_mcp_suite_judges_is_a_candidate(tmp_path):
    packages, _ = judged_servers()
    judged = sorted(packages)[0]
    paths = registry(
        tmp_path,
        {
            judged: {"list_things": "List the things this judged server keeps for you."},
            "notes-server": {"add_note": "Add a note to the user's notebook with a title and body."},
        },
    )
    assert [c["server"] for c in candidates(paths, random.Random(0))] == ["notes-server"]


def test_a_need_that_names_its_tool_or_says_nothing_is_not_kept():
    tool = {"name": "add_note", "description": "Add a note"}
    assert usable("write down that the plumber comes on Tuesday", tool)
    assert not usable("use add_note to save this", tool)
    assert not usable("please add note about the plumber", tool)
    assert not usable("notes", tool)


def test_a_servers_tools_share_one_part():
    assert {part_of("notes-server") for _ in range(3)} == {part_of("notes-server")}
    parts = [part_of(f"server-{i}") for i in range(1000)]
    assert 0.7 < parts.count("train") / 1000 < 0.9 and parts.count("dev") and parts.count("test")


def test_a_generated_set_not_yet_written_says_how_to_write_it(tmp_path, monkeypatch):
    monkeypatch.setenv("TENDER_HOME", str(tmp_path))
    with pytest.raises(TenderError, match="tender.training.tool_needs"):
        read_set(Paths(shared=tmp_path), "mcp-tools")
