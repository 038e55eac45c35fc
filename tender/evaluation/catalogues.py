"""The catalogues the datasets run on, built once under TENDER_HOME/eval from the shared data (and the MCP listing
kept in suites/mcp), and opened with a dataset part's mashups hidden."""

from collections.abc import Callable, Sequence
from pathlib import Path

from tender.catalog import Catalog, CatalogError
from tender.catalog.build import build_from_sources
from tender.catalog.demo import demo_harvest, demo_sources
from tender.catalog.harvest import harvest_source, read_harvest
from tender.catalog.sources.gather import gather
from tender.settings import Settings

from .datasets import SUITES, Paths, UnknownDataset
from tender.assembly import embedder_for
from .kinds import TOOLS_PREFIX, read_set

MCP_LISTING = SUITES / "mcp" / "listing.json"


def _sources(name: str, paths: Paths, folder: Path):
    if name.startswith(TOOLS_PREFIX):
        return gather(apis=tool_items_file(name.removeprefix(TOOLS_PREFIX), paths, folder), mashups=None)
    if name == "programmableweb":
        return gather(
            apis=paths.need("programmableweb", "apis.jsonl"), mashups=paths.need("programmableweb", "mashups.jsonl")
        )
    if name == "metatool":
        return gather(apis=paths.need("metatool", "apis.jsonl"), mashups=None)
    if name == "openapi":
        return gather(openapi=[paths.need("openapi", "docs")])
    if name == "mcp":
        return gather(mcp_listing=[MCP_LISTING])
    if name == "today":
        return gather(
            mcp_registry=[str(paths.need("mcp-registry", "seed_2025_05_16.json"))],
            public_apis=[str(paths.need("public-apis", "public-apis-README.md"))],
        )
    if name == "demo":
        found = demo_sources(paths.shared)
        return gather(
            mcp_registry=[str(p) for p in found["mcp_registry"]],
            public_apis=[str(p) for p in found["public_apis"]],
            toolsdk=found["toolsdk"],
            docker_mcp=found["docker_mcp"],
        ) + [harvest_source(path) for path in demo_harvest()]
    raise UnknownDataset(f"no catalogue {name!r}")


def tool_items_file(name: str, paths: Paths, folder: Path) -> Path:
    """A tool-retrieval set's items as a catalogue file (kinds.tool_item: as training reads them), written into
    `folder`."""
    import json

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{TOOLS_PREFIX}{name}.apis.jsonl"
    rows = [
        item.model_dump(include={"id", "name", "description", "provider", "categories", "kind", "source"})
        for item in read_set(paths, name).items
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


class Catalogues:
    """Opens (building where needed) the evaluation's catalogues with the configured encoder."""

    def __init__(
        self,
        settings: Settings,
        paths: Paths,
        folder: Path | None = None,
        progress: bool = True,
        given: dict[str, Path] | None = None,
    ):
        self.settings = settings
        self.paths = paths
        self.folder = folder or settings.home / "eval"
        self.progress = progress
        self.given = dict(given or {})  # catalogues named by the caller (--db), used as they are

    def path(self, name: str) -> Path:
        return self.given.get(name) or self.folder / f"{name}.db"

    def ensure(self, name: str, rebuild: bool = False) -> Path:
        path = self.path(name)
        if name in self.given:
            return path
        stale = rebuild or not path.is_file()
        if not stale:
            try:
                Catalog(path).close()
            except CatalogError:  # another schema: rebuild (embeddings already made are reused)
                stale = True
        if stale:
            self.folder.mkdir(parents=True, exist_ok=True)
            build_from_sources(
                _sources(name, self.paths, self.folder),
                path,
                embedder_for(self.settings, threads=None, catalog=path),
                progress=self.progress,
                harvested=[r for f in demo_harvest() for r in read_harvest(f)] if name == "demo" else (),
            )
        return path

    def open(self, name: str, hidden: Sequence[int] = (), history: bool = True) -> Catalog:
        """The catalogue with `hidden` mashups left out, or every mashup where `history` is False."""
        path = self.ensure(name)
        embedder = embedder_for(self.settings, catalog=path)
        if not history:
            probe = Catalog(path)
            hidden = [m.id for m in probe.mashups()]
            probe.close()
        return Catalog(path, embedder=embedder, exclude_mashups=hidden)


Opener = Callable[[str, list[int], bool], Catalog]
