"""The demo catalogue, today's: the MCP servers of the MCP Registry seed, toolsdk's registry and Docker's catalogue
(one item a server, with how to install it, and each of its tools), the public-apis directory of free web APIs, and
what the latest harvest Tender ships saw when it started the servers. `make demo`, `tender catalog build --demo` and
the evaluation's "demo" catalogue are all built from here, so the judged suites judge what a user is given."""

from pathlib import Path

from tender.errors import DataMissing

from .harvest import shipped_harvest

# Each source's snapshot, as a folder of the shared data and a file in it.
SNAPSHOTS: dict[str, tuple[str, str]] = {
    "mcp_registry": ("mcp-registry", "seed_2025_05_16.json"),
    "toolsdk": ("toolsdk-mcp-registry", "servers.jsonl"),
    "docker_mcp": ("docker-mcp-catalog", "servers.jsonl"),
    "public_apis": ("public-apis", "public-apis-README.md"),
}


def demo_sources(shared: Path) -> dict[str, list[Path]]:
    """The snapshots under `shared` (the shared data folder), by the source each is read as; DataMissing names the
    first one not there."""
    found: dict[str, list[Path]] = {}
    for source, (folder, name) in SNAPSHOTS.items():
        path = Path(shared) / folder / name
        if not path.exists():
            raise DataMissing(path.parent, path.name)
        found[source] = [path]
    return found


def demo_harvest() -> list[Path]:
    """The harvest the demo catalogue applies: the latest Tender ships, or none."""
    shipped = shipped_harvest()
    return [shipped] if shipped else []
