"""The datasets Tender is evaluated on, each with frozen dev and test parts (splits/*.json) and the variants it is
run in. A part's ids never change: what is fitted or chosen uses dev or training parts; test parts are reported.

| dataset | catalogue | gold | parts |
|---|---|---|---|
| programmableweb | the 940 ProgrammableWeb APIs, usage history = the train part | each mashup's APIs | dev, test |
| r2api | the same, history = every mashup outside the fold | the same | fold-1 .. fold-10 |
| metatool-multi | MetaTool's 199 plugins, no history | two plugins a request | dev, test |
| metatool-single | the same | one held-out plugin a request | dev, test |
| openapi-suite | 40 OpenAPI documents (294 operations) | judged functions | dev, test |
| programmableweb-suite | the 940 APIs, history = the train part | judged functions | dev, test |
| mcp-suite | the 601 tools of 52 real MCP servers (suites/mcp) | judged functions | dev, test |
| today-suite | the public-apis directory and the MCP Registry seed (2,158 items) | judged functions | dev, test |
| assistant-suite | the demo catalogue: the seed, toolsdk's and Docker's MCP catalogues, public-apis | judged functions | dev, test |
"""

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from tender.agents.text import mask_names
from tender.catalog import Catalog, Mashup, read_jsonl
from tender.errors import DataMissing, InputToFix

from .gold import GoldFunction, Query

HERE = Path(__file__).resolve().parent
SPLITS = HERE / "splits"
SUITES = HERE / "suites"
NEEDS = SUITES / "needs"
# One ranking model per R2API fold, fitted with the fold's mashups out of everything (tender train ranker
# --r2api-folds): a fold's figures come from the model that never saw it.
R2API_MODELS = HERE / "r2api_models"


class UnknownDataset(InputToFix):
    pass


@dataclass(frozen=True)
class Variant:
    """How a dataset's queries are put: names masked or not, usage history hidden or not, and whether the caller
    states the needs (`assistant`: written blind from the request by an assistant; `gold`: the judged functions'
    own needs)."""

    name: str
    mask: bool = False
    history: bool = True
    needs: str | None = None


WRITTEN = Variant("as written")
MASKED = Variant("masked", mask=True)
COLD = Variant("no history, masked", mask=True, history=False)
DECOMPOSED = Variant("decomposed")
ASSISTANT = Variant("needs given", needs="assistant")
GOLD = Variant("gold needs given", needs="gold")
SUITE_COLD = Variant("no history", history=False)


@dataclass(frozen=True)
class Paths:
    """Where the data lives: ../shared/data beside a clone (TENDER_DATA's parent for an installed tender)."""

    shared: Path

    def need(self, *parts: str) -> Path:
        path = self.shared.joinpath(*parts)
        if not path.exists():
            raise DataMissing(path.parent, path.name)
        return path


@dataclass(frozen=True)
class Dataset:
    name: str
    catalogue: str  # which catalogue it runs on (see catalogues.py)
    summary: str
    variants: tuple[Variant, ...]
    parts: tuple[str, ...]
    read: Callable[[Paths, str, Catalog], list[Query]]
    # Mashup ids the catalogue must not show for this part (the test and dev mashups, a fold's mashups).
    hidden: Callable[[Paths, str], list[int]] = lambda paths, part: []
    has_history: bool = False
    names_to_mask: bool = False
    # The paper's reproduction scores what 2010s mashups used: dead APIs included, as the paper did, and past use
    # allowed to lift an item, since past use is what it predicts. A judged suite is what a user is served now: a
    # dead item never takes a need, and history only orders the items whose descriptions serve it.
    include_deprecated: bool = False
    history_lifts: bool = False

    def queries(self, paths: Paths, part: str, catalog: Catalog, variant: Variant | None = None) -> list[Query]:
        """The part's queries, as the variant puts them (names masked against the catalogue's)."""
        if part not in self.parts:
            raise UnknownDataset(f"{self.name} has no part {part!r}; its parts: {', '.join(self.parts)}")
        queries = self.read(paths, part, catalog)
        if variant is not None and variant.mask:
            names = [a.name for a in catalog.apis()]
            queries = [q.model_copy(update={"text": mask_names(q.text, names) or q.text}) for q in queries]
        return queries


@cache
def split(name: str) -> dict:
    """A frozen split: {"dev": [...], "test": [...], ...}."""
    path = SPLITS / f"{name}.json"
    return json.loads(path.read_text())


def _ids(name: str, part: str) -> list:
    return list(split(name)[part])


# -- ProgrammableWeb mashups ------------------------------------------------------------------------------
def _mashup_queries(mashups: list[Mashup]) -> list[Query]:
    return [
        Query(
            id=str(m.id),
            text=m.description or m.name,
            functions=tuple(GoldFunction(need=n, acceptable=frozenset([a])) for a, n in zip(m.api_ids, m.api_names)),
        )
        for m in mashups
        if m.api_ids
    ]


@cache
def _pw_mashups(path: Path) -> dict[int, Mashup]:
    return {m.id: m for m in read_jsonl(path, Mashup)}


def _pw_read(paths: Paths, part: str, catalog: Catalog) -> list[Query]:
    mashups = _pw_mashups(paths.need("programmableweb", "mashups.jsonl"))
    return _mashup_queries([mashups[i] for i in _ids("programmableweb", part)])


def _pw_hidden(paths: Paths, part: str) -> list[int]:
    # dev and test are both hidden whichever is run: the history is the train part, the same for both.
    return sorted(set(_ids("programmableweb", "dev")) | set(_ids("programmableweb", "test")))


FOLDS = tuple(f"fold-{k}" for k in range(1, 11))


def fold_ids(paths: Paths, part: str) -> list[int]:
    """The R2API paper's test mashups of a fold: the first number of each line of r2api_folds/fold_k.txt."""
    k = int(part.removeprefix("fold-"))
    path = paths.need("programmableweb", "r2api_folds", f"fold_{k}.txt")
    return [int(line.split()[0]) for line in path.read_text().splitlines() if line.strip()]


def _r2api_read(paths: Paths, part: str, catalog: Catalog) -> list[Query]:
    mashups = _pw_mashups(paths.need("programmableweb", "mashups.jsonl"))
    return _mashup_queries([mashups[i] for i in fold_ids(paths, part)])


# -- MetaTool ------------------------------------------------------------------------------------------------
@cache
def _needs(file: str) -> dict[str, tuple[str, ...]]:
    return {i: tuple(r["needs"]) for i, r in _needs_rows(file).items()}


@cache
def _needs_rows(file: str) -> dict[str, dict]:
    path = NEEDS / file
    if not path.is_file():
        return {}
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return {str(r["id"]): r for r in rows}


def _metatool_multi(paths: Paths, part: str, catalog: Catalog) -> list[Query]:
    rows = {m.id: m for m in read_jsonl(paths.need("metatool", "queries.jsonl"), Mashup)}
    needs = _needs("metatool_multi.jsonl")
    return [
        q.model_copy(update={"needs": needs.get(q.id)})
        for q in _mashup_queries([rows[i] for i in _ids("metatool-multi", part)])
    ]


@cache
def _single_rows(path: Path) -> dict[int, dict]:
    rows = (json.loads(line) for line in path.read_text().splitlines() if line.strip())
    return {r["id"]: r for r in rows}


def _metatool_single(paths: Paths, part: str, catalog: Catalog) -> list[Query]:
    rows = _single_rows(paths.need("metatool", "single_tool_queries.jsonl"))
    return [
        Query(
            id=str(i),
            text=rows[i]["description"],
            functions=(GoldFunction(need=rows[i]["api_names"][0], acceptable=frozenset(rows[i]["api_ids"])),),
        )
        for i in _ids("metatool-single", part)
    ]


# -- judged suites ------------------------------------------------------------------------------------------
def suite_rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def as_id(item: object) -> int:
    return int(str(item))


def suite_query(
    row: dict,
    needs: dict[str, tuple[str, ...]],
    resolve: Callable[[object], int | Iterable[int]] = as_id,
    kinds: dict[str, str] | None = None,
) -> Query:
    """A judged request as a Query; `resolve` names an item's id (or the ids a reference stands for: a server and
    its tools)."""

    def ids(names) -> frozenset[int]:
        out: set[int] = set()
        for name in names:
            found = resolve(name)
            out |= {found} if isinstance(found, int) else set(found)
        return frozenset(out)

    functions = tuple(
        GoldFunction(need=f["need"], acceptable=ids(f["acceptable"]), form=f.get("form", "any"))
        for f in row.get("functions", [])
    )
    return Query(
        id=str(row["id"]),
        text=row["requirement"],
        functions=functions,
        irrelevant=ids(row.get("irrelevant", [])),
        expect_nothing=row.get("expect") == "nothing" or not any(f.acceptable for f in functions),
        needs=needs.get(str(row["id"])),
        kind=(kinds or {}).get(str(row["id"])),
        language=row.get("language", "en"),
    )


def resolve_by_ref(catalog: Catalog) -> Callable[[object], set[int]]:
    """Resolves a catalogue reference ("toolsdk:<key>", "docker:<name>", "registry:<name>", "public-apis:<name>")
    to the item that holds it and, for a server, the items of its tools: a server met in several catalogues is one
    item holding each of its references. UnknownDataset names a reference the catalogue lacks."""
    holders: dict[str, set[int]] = {}
    tools: dict[str, set[int]] = {}
    for api in catalog.apis():
        for ref in api.details.get("refs") or []:
            holders.setdefault(str(ref), set()).add(api.id)
        if api.kind == "tool" and api.details.get("of_server"):
            tools.setdefault(str(api.details["of_server"]), set()).add(api.id)

    def resolve(ref: object) -> set[int]:
        key = str(ref)
        if key not in holders:
            raise UnknownDataset(f"the suite names {key!r}, which the catalogue {catalog.path} lacks")
        found = set(holders[key])
        for item in list(found):
            api = catalog.get_api(item)
            if api.kind == "server":
                found |= tools.get(api.provider, set())
        return found

    return resolve


def resolve_by_name(catalog: Catalog) -> Callable[[object], int]:
    """Resolves an item's exact catalogue name to its id; UnknownDataset names any name the catalogue lacks (or holds
    twice, so that it names no one item)."""
    ids: dict[str, int] = {}
    twice: set[str] = set()
    for api in catalog.apis():
        if api.name in ids:
            twice.add(api.name)
        ids[api.name] = api.id

    def resolve(name: object) -> int:
        key = str(name)
        if key not in ids:
            raise UnknownDataset(f"the suite names {key!r}, which the catalogue {catalog.path} lacks")
        if key in twice:
            raise UnknownDataset(f"the suite names {key!r}, which the catalogue {catalog.path} holds twice")
        return ids[key]

    return resolve


def _suite(
    name: str,
    files: tuple[str, ...],
    needs_files: tuple[str, ...],
    by_tool: bool = False,
    by_name: bool = False,
    by_ref: bool = False,
) -> Callable[[Paths, str, Catalog], list[Query]]:
    """A judged suite's reader. `by_tool`: items are judged as "server/tool" (an MCP catalogue's ids depend on
    the build), resolved against the catalogue. `by_name`: items are judged by their exact catalogue name (a
    catalogue built from directories and registries numbers its items as it reads them)."""

    def read(paths: Paths, part: str, catalog: Catalog) -> list[Query]:
        wanted = set(_ids(name, part))
        needs: dict[str, tuple[str, ...]] = {}
        kinds: dict[str, str] = {}
        for file in needs_files:
            needs |= _needs(file)
            kinds |= {i: r["kind"] for i, r in _needs_rows(file).items() if r.get("kind")}
        resolve: Callable[[object], int | Iterable[int]] = as_id
        if by_tool:
            tools = {f"{a.server}/{a.tool}": a.id for a in catalog.apis()}

            def resolve(name: object) -> int:
                if str(name) not in tools:
                    raise UnknownDataset(f"the suite names {name}, which the catalogue {catalog.path} lacks")
                return tools[str(name)]

        elif by_name:
            resolve = resolve_by_name(catalog)
        elif by_ref:
            resolve = resolve_by_ref(catalog)

        rows = [r for file in files for r in suite_rows(SUITES / file) if str(r["id"]) in wanted]
        return [suite_query(r, needs, resolve, kinds) for r in rows]

    return read


DATASETS: dict[str, Dataset] = {
    d.name: d
    for d in (
        Dataset(
            "programmableweb",
            "programmableweb",
            "ProgrammableWeb mashups: the APIs each used, from its description",
            (WRITTEN, MASKED, COLD),
            ("dev", "test"),
            _pw_read,
            _pw_hidden,
            has_history=True,
            names_to_mask=True,
            include_deprecated=True,
            history_lifts=True,
        ),
        Dataset(
            "r2api",
            "programmableweb",
            "the R2API paper's ten folds of the same mashups (each fold's mashups hidden)",
            (WRITTEN, MASKED),
            FOLDS,
            _r2api_read,
            fold_ids,
            has_history=True,
            names_to_mask=True,
            include_deprecated=True,
            history_lifts=True,
        ),
        Dataset(
            "metatool-multi",
            "metatool",
            "MetaTool's two-tool requests over 199 plugins (their 15 plugins are in no training part)",
            (DECOMPOSED, ASSISTANT),
            ("dev", "test"),
            _metatool_multi,
        ),
        Dataset(
            "metatool-single",
            "metatool",
            "MetaTool's single-tool requests of the 50 held-out plugins",
            (DECOMPOSED,),
            ("dev", "test"),
            _metatool_single,
        ),
        Dataset(
            "openapi-suite",
            "openapi",
            "hand-judged requirements over the operations of 40 OpenAPI documents",
            (DECOMPOSED, ASSISTANT, GOLD),
            ("dev", "test"),
            _suite(
                "openapi-suite",
                ("openapi_tuning.jsonl", "openapi.jsonl"),
                ("suite_openapi.jsonl", "suite_openapi_tuning.jsonl"),
            ),
        ),
        Dataset(
            "programmableweb-suite",
            "programmableweb",
            "hand-judged requirements over the 940 ProgrammableWeb APIs",
            (DECOMPOSED, SUITE_COLD, ASSISTANT, GOLD),
            ("dev", "test"),
            _suite(
                "programmableweb-suite",
                ("tuning.jsonl", "requirements.jsonl"),
                ("suite_requirements.jsonl", "suite_tuning.jsonl"),
            ),
            _pw_hidden,
            has_history=True,
        ),
        Dataset(
            "mcp-suite",
            "mcp",
            "requests judged blind over the 601 tools of 52 real MCP servers (suites/mcp), a catalogue no training sees",
            (DECOMPOSED, ASSISTANT, GOLD),
            ("dev", "test"),
            _suite("mcp-suite", ("mcp.jsonl",), ("mcp_suite.jsonl",), by_tool=True),
        ),
        Dataset(
            "today-suite",
            "today",
            "requests judged blind over the public-apis directory and the MCP Registry seed (suites/today.jsonl), "
            "a catalogue no training sees",
            (DECOMPOSED, ASSISTANT, GOLD),
            ("dev", "test"),
            _suite("today-suite", ("today.jsonl",), ("today_suite.jsonl",), by_name=True),
        ),
        Dataset(
            "assistant-suite",
            "demo",
            "requests for an assistant's abilities, for apps and for both, judged blind over the demo catalogue (the "
            "MCP Registry seed, toolsdk's and Docker's MCP catalogues, public-apis): an ability of the assistant is "
            "served by an MCP server only (suites/assistant.jsonl)",
            (DECOMPOSED, ASSISTANT, GOLD),
            ("dev", "test"),
            _suite("assistant-suite", ("assistant.jsonl",), ("assistant_suite.jsonl",), by_ref=True),
        ),
    )
}


def external(path: Path) -> Dataset:
    """Requests in the mashups format (description, api_ids) against a catalogue the caller names (--db)."""

    def read(paths: Paths, part: str, catalog: Catalog) -> list[Query]:
        return _mashup_queries(read_jsonl(path, Mashup))

    return Dataset("external", "external", f"the requests of {path}", (WRITTEN, MASKED, COLD), ("all",), read)


def dataset(name: str) -> Dataset:
    if name not in DATASETS:
        raise UnknownDataset(f"no dataset {name!r}; use one of {', '.join(DATASETS)}")
    return DATASETS[name]
