"""The real MCP servers the tests start: three from npm (installed by `make mcp-servers` into .mcp-servers/),
two from PyPI (into .venv-mcp/), Tender's own, and the paged test server. Tests skip, saying how to install
them, where they are missing."""

import sys
from pathlib import Path

import pytest

from tender.catalog.sources.mcp import Server

ROOT = Path(__file__).resolve().parents[2]
NPM_BIN = ROOT / ".mcp-servers" / "node_modules" / ".bin"
PYPI_BIN = ROOT / ".venv-mcp" / "bin"
INSTALL = "install them with `make mcp-servers` (npm and PyPI)"


def _require(path: Path) -> str:
    if not path.exists():
        pytest.skip(f"{path.relative_to(ROOT)} is not installed; {INSTALL}")
    return str(path)


def npm_and_pypi_servers(folder: Path) -> list[Server]:
    """Five real servers, named as a user would configure them. The filesystem server may touch only `folder`."""
    return [
        Server(name="everything", command=_require(NPM_BIN / "mcp-server-everything")),
        Server(name="filesystem", command=_require(NPM_BIN / "mcp-server-filesystem"), args=[str(folder)]),
        Server(
            name="memory",
            command=_require(NPM_BIN / "mcp-server-memory"),
            env={"MEMORY_FILE_PATH": str(folder / "memory.jsonl")},
        ),
        Server(name="time", command=_require(PYPI_BIN / "mcp-server-time")),
        Server(name="fetch", command=_require(PYPI_BIN / "mcp-server-fetch")),
    ]


def tender_server(catalog: Path) -> Server:
    """Tender's own MCP server over stdio, on a test catalogue."""
    return Server(
        name="tender",
        command=str(Path(sys.executable).with_name("tender")),
        args=["serve"],
        env={"TENDER_CATALOG": str(catalog), "TENDER_EMBEDDING_MODEL": "hashing", "HF_HUB_OFFLINE": "1"},
    )


def paged_server() -> Server:
    return Server(name="shop", command=sys.executable, args=[str(ROOT / "tests" / "mcp_servers" / "paged.py")])
