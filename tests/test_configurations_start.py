"""The configuration a plan prints starts real servers (issue: plans an assistant can install): three from npm and
one from PyPI, pinned to the versions `make mcp-servers` installs, recommended by `tender recommend --json` and
started exactly as its Claude Desktop configuration writes them (npx -y pkg@version; uvx pkg@version), each
listing its tools. npx finds the packages installed under .mcp-servers; uvx fetches from PyPI, as a user's does."""

import json
import os
import subprocess

import pytest
from click.testing import CliRunner

from tender.catalog.sources.mcp import Server, list_servers
from tender.cli import main
from tests.mcp_servers.installed import NPM_BIN, PYPI_BIN, ROOT

pytestmark = [pytest.mark.install, pytest.mark.servers]  # it installs and runs real MCP servers' packages

NPM = ROOT / ".mcp-servers"


def npm_version(name: str) -> str:
    manifest = NPM / "node_modules" / "@modelcontextprotocol" / name / "package.json"
    if not manifest.is_file():
        pytest.skip(f"{manifest.relative_to(ROOT)} is not installed; install it with `make mcp-servers`")
    return json.loads(manifest.read_text())["version"]


def pypi_version(name: str) -> str:
    python = PYPI_BIN / "python"
    if not (PYPI_BIN / "uvx").exists():
        pytest.skip("uv is not installed in .venv-mcp; install it with `make mcp-servers`")
    done = subprocess.run(
        [str(python), "-c", f"import importlib.metadata as m; print(m.version({name!r}))"],
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


def record(name: str, title: str, description: str, registry: str, identifier: str, version: str) -> dict:
    return {
        "name": name,
        "title": title,
        "description": description,
        "version": version,
        "packages": [{"registryType": registry, "identifier": identifier, "version": version}],
    }


def test_the_configuration_a_plan_prints_starts_each_server_and_lists_its_tools(tmp_path):
    servers = [
        record(
            "io.example/memory",
            "Memory",
            "A knowledge graph memory: remember entities and relations",
            "npm",
            "@modelcontextprotocol/server-memory",
            npm_version("server-memory"),
        ),
        record(
            "io.example/everything",
            "Everything",
            "Echo a message back and add numbers, to test clients",
            "npm",
            "@modelcontextprotocol/server-everything",
            npm_version("server-everything"),
        ),
        record(
            "io.example/filesystem",
            "Filesystem",
            "Read and write files in allowed folders",
            "npm",
            "@modelcontextprotocol/server-filesystem",
            npm_version("server-filesystem"),
        ),
        record(
            "io.example/time",
            "Time",
            "The current time in a timezone, and conversion between timezones",
            "pypi",
            "mcp-server-time",
            pypi_version("mcp-server-time"),
        ),
    ]
    (tmp_path / "registry.json").write_text(json.dumps(servers))
    env = {
        "TENDER_HOME": str(tmp_path / "home"),
        "TENDER_EMBEDDING_MODEL": "hashing",
        "TENDER_CATALOG": str(tmp_path / "servers.db"),
        "TENDER_RUNS": str(tmp_path / "runs.db"),
    }
    built = CliRunner().invoke(
        main, ["catalog", "build", "--quiet", "--mcp-registry", str(tmp_path / "registry.json")], env=env
    )
    assert built.exit_code == 0, built.output
    needs = [
        "remember entities in a knowledge graph memory",
        "echo a message back",
        "read and write files",
        "the current time in a timezone",
    ]
    args = ["recommend", "give my assistant these abilities", "--kind", "mcp_server", "--json"]
    for need in needs:
        args += ["--need", need]
    done = CliRunner().invoke(main, args, env=env)
    assert done.exit_code == 0, done.output
    configured = json.loads(done.output)["client_config"]["claude_desktop"]["mcpServers"]
    assert set(configured) == {"memory", "everything", "filesystem", "time"}  # keyed by the last part of the name
    assert configured["time"] == {"command": "uvx", "args": [f"mcp-server-time@{pypi_version('mcp-server-time')}"]}
    assert configured["memory"]["args"] == ["-y", f"@modelcontextprotocol/server-memory@{npm_version('server-memory')}"]

    files = tmp_path / "files"
    files.mkdir()
    path = os.pathsep.join([str(PYPI_BIN), str(NPM_BIN), os.environ["PATH"]])
    started = [
        Server(
            name=key,
            command=entry["command"],
            # the filesystem server's folder is the user's to name: the placeholder filled in, as the user would
            args=[*entry["args"], *([str(files)] if key == "filesystem" else [])],
            # the machine's certificates, as a user's uvx has them (UV_NATIVE_TLS: a company's CA among them)
            env={
                "PATH": path,
                "HOME": str(tmp_path),
                "UV_NATIVE_TLS": "1",
                **{k: "unused" for k in entry.get("env", {})},
            },
            cwd=str(NPM),
        )
        for key, entry in configured.items()
    ]
    listings, failed = list_servers(started, timeout=180, skip_failed=True)
    assert not failed, failed
    tools = {listing.name: {t["name"] for t in listing.tools} for listing in listings}
    assert {"create_entities", "search_nodes"} <= tools["memory"]
    assert "echo" in tools["everything"] and "write_file" in tools["filesystem"]
    assert "get_current_time" in tools["time"]
