"""The `tender` command. Each command opens what it needs, calls one library function and turns
TenderError into a clean message; the environment is read once, here."""

import json
import math
import os
import sys
from pathlib import Path

import click
from pydantic import ValidationError

from tender.agents.protocols import PROTOCOLS, described
from tender.catalog import MalformedInput, TenderError
from tender.catalog.sources.mcp_registry import OFFICIAL as REGISTRY_URL
from tender.catalog.sources.public_apis import URL as PUBLIC_APIS_URL
from tender.errors import InputToFix, SourceError
from .safety import echo, redact, shown
from .assembly import assemble, embedder_for, model_spec, open_catalog
from .settings import DEADLINE_S, LLM_IN_FLIGHT, LLM_TIMEOUT_S, Settings


class Seconds(click.FloatRange):
    """A number of seconds within a range; click's FloatRange lets nan through (it compares False with both ends)."""

    def convert(self, value, param, ctx):
        seconds = super().convert(value, param, ctx)
        if not math.isfinite(seconds):
            self.fail(f"{echo(value)} is not a number of seconds", param, ctx)
        return seconds


# The flat baselines `tender eval` runs beside the protocols (tender/evaluation/baselines.py).
BASELINE_NAMES = ("bm25", "dense", "hybrid", "knn", "popularity", "dense per need", "hybrid per need")


class TenderGroup(click.Group):
    """Turns every error into a one-line message instead of a traceback: exit 2 for input to fix, 1 otherwise.
    TENDER_DEBUG=1 lets an unexpected error's traceback through. A reader that stops early (`| head -1`) ends
    the command quietly with exit 1, as in other click tools."""

    def invoke(self, ctx):
        try:
            try:
                result = super().invoke(ctx)
            except BaseExceptionGroup as group:  # a task group's (the MCP server's lifespan): the error inside it
                raise _only(group) from None
            sys.stdout.flush()  # a closed pipe shows here, where click quiets it, not at exit as a traceback
            return result
        except BrokenPipeError:
            raise  # click swaps stdout and stderr for ones that ignore it and exits 1, silently
        except (MalformedInput, SourceError) as error:
            click.secho(f"Error: {redact(str(error))}", fg="red", err=True)  # a source's URL may hold a key
            click.echo("Nothing was written; the previous catalogue (if any) is intact.", err=True)
            sys.exit(2)
        except InputToFix as error:  # a requirement, a name, a file or a setting (TENDER_DATA) to give
            click.secho(f"Error: {error}", fg="red", err=True)
            sys.exit(2)
        except TenderError as error:
            click.secho(f"Error: {redact(str(error))}", fg="red", err=True)
            sys.exit(1)
        except ValidationError as error:  # a value no option checked; the message names the field and the rule
            from tender.agents.request import describe_validation_error

            click.secho(f"Error: {describe_validation_error(error)}", fg="red", err=True)
            sys.exit(2)
        except KeyboardInterrupt:
            click.echo("Interrupted.", err=True)
            sys.exit(130)
        except click.UsageError as error:  # click would print the usage and a hint over four lines
            where = error.ctx.command_path if error.ctx else "tender"
            click.secho(f"Error: {error.format_message()} (`{where} --help` shows the options)", fg="red", err=True)
            sys.exit(2)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise  # click prints these itself
        except Exception as error:
            if os.environ.get("TENDER_DEBUG"):
                raise
            click.secho(
                f"Error: {type(error).__name__}: {redact(' '.join(str(error).split()))} (TENDER_DEBUG=1 shows the "
                "traceback)",
                fg="red",
                err=True,
            )
            sys.exit(1)


def _only(error: BaseException) -> BaseException:
    """The one error a group holds (through nested groups), or the group where it holds several."""
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    return error


@click.group(cls=TenderGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="tender-mcp")
@click.pass_context
def main(ctx):
    """Tender recommends the Web APIs a composite service needs, by putting the requirement out to
    tender among contractor agents (Contract Net Protocol).

    \b
    Example:
        tender catalog build
        tender recommend "a site that shows nearby restaurants on a map with their reviews"
    """
    ctx.obj = Settings.from_env()


@main.group()
def catalog():
    """Build and inspect the SQLite API catalogue (catalog.db)."""


def mcp_source_options(command):
    """The flags that name MCP servers, shared by `catalog build` and `catalog list-tools`."""
    options = [
        click.option(
            "--mcp",
            "mcp",
            multiple=True,
            metavar="[NAME=]COMMAND|URL",
            help="An MCP server to list: a command line (stdio) or a streamable HTTP URL, optionally named "
            "NAME=... (repeatable).",
        ),
        click.option(
            "--mcp-config",
            "mcp_config",
            multiple=True,
            type=click.Path(path_type=Path),
            help="An MCP client configuration (Claude Desktop, Cursor: mcpServers; VS Code: servers); "
            "each server is listed under its configured name (repeatable).",
        ),
        click.option(
            "--mcp-timeout",
            type=Seconds(0.1, 3600),
            default=30,
            show_default=True,
            help="Seconds each server has to start and list its tools.",
        ),
        click.option(
            "--skip-failed", is_flag=True, help="Leave out servers that fail, and say which, instead of stopping."
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


@catalog.command("build")
@click.option(
    "--apis", "apis_path", type=click.Path(path_type=Path), help="APIs JSONL (default: the shared apis.jsonl)."
)
@click.option(
    "--mashups",
    "mashups_path",
    type=click.Path(path_type=Path),
    help="Mashups JSONL (default: the shared mashups.jsonl).",
)
@click.option(
    "--db", "db_path", type=click.Path(path_type=Path), help="Where to write (default: catalog.db, or TENDER_CATALOG)."
)
@click.option(
    "--exclude-mashups",
    type=click.Path(exists=True, path_type=Path),
    help="A file of mashup ids (one per line) to leave out of the catalogue entirely.",
)
@click.option("--no-mashups", is_flag=True, help="Build without usage history (no mashups file).")
@click.option(
    "--demo",
    is_flag=True,
    help="The demo catalogue, today's: the MCP Registry seed, toolsdk's and Docker's MCP catalogues and the "
    "public-apis directory from the shared data folder (beside TENDER_DATA's), and the harvest Tender ships.",
)
@mcp_source_options
@click.option(
    "--openapi",
    "openapi",
    multiple=True,
    type=click.Path(path_type=Path),
    help="An OpenAPI 3.x or Swagger 2.0 document, or a folder of them (repeatable); each operation is an item.",
)
@click.option(
    "--mcp-listing",
    "mcp_listing",
    multiple=True,
    type=click.Path(path_type=Path),
    help="A saved listing of MCP servers' tools (from `tender catalog list-tools --save`); starts nothing.",
)
@click.option(
    "--public-apis",
    "public_apis",
    multiple=True,
    is_flag=False,
    flag_value=PUBLIC_APIS_URL,
    metavar="[URL|FILE]",
    help="The public-apis directory's README (MIT): a file, or a URL (alone: the repository's README on GitHub); "
    "each API of its tables is an item, with its auth, HTTPS and CORS.",
)
@click.option(
    "--mcp-registry",
    "mcp_registry",
    multiple=True,
    is_flag=False,
    flag_value=REGISTRY_URL,
    metavar="[URL|FILE]",
    help=f"An MCP registry (MIT): its URL (alone: {REGISTRY_URL}) or a saved listing or seed file; each server "
    "is an item, with how to install it. A URL the catalogue was built from is asked only for what changed since.",
)
@click.option(
    "--toolsdk",
    "toolsdk",
    multiple=True,
    type=click.Path(path_type=Path),
    help="toolsdk's MCP registry (servers.jsonl of toolsdk-ai/toolsdk-mcp-registry, MIT): each server an item with "
    "its packages and remote endpoints, each tool it lists an item of its server.",
)
@click.option(
    "--docker-mcp",
    "docker_mcp",
    multiple=True,
    type=click.Path(path_type=Path),
    help="Docker's MCP catalogue (servers.jsonl of docker/mcp-registry, MIT): each server an item with its image or "
    "remote endpoint, each tool it lists an item of its server. A server several catalogues list is one item.",
)
@click.option(
    "--harvest",
    "harvest_files",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="What `tender catalog harvest` saw of the servers (a dated JSON lines file): a server that started gains "
    "the tools it listed, each server says whether it was started.",
)
@click.option(
    "--fetch-timeout",
    type=Seconds(0.1, 3600),
    default=30,
    show_default=True,
    help="Seconds each HTTP request of --public-apis and --mcp-registry URLs may take in all, headers and body.",
)
@click.option(
    "--full-sync", is_flag=True, help="With an --mcp-registry URL: read every server again, not only what changed."
)
@click.option("--quiet", is_flag=True, help="No progress bars.")
@click.pass_obj
def catalog_build(
    settings: Settings,
    apis_path,
    mashups_path,
    db_path,
    exclude_mashups,
    no_mashups,
    demo,
    mcp,
    mcp_config,
    mcp_timeout,
    skip_failed,
    openapi,
    mcp_listing,
    public_apis,
    mcp_registry,
    toolsdk,
    docker_mcp,
    harvest_files,
    fetch_timeout,
    full_sync,
    quiet,
):
    """Build the catalogue from ProgrammableWeb JSONL files, OpenAPI documents, MCP servers' tools, the public-apis
    directory and MCP registries.

    With no source named, builds from the shared ProgrammableWeb files. Several sources go into one catalogue.
    Embeds every item, category and mashup text with the local all-MiniLM-L6-v2 model; texts already
    embedded in the previous catalogue are reused. The new file replaces the old one only when complete:
    a source that cannot be read (a server that fails, hangs or lists nothing; a document that does not
    parse) stops the build with exit code 2, unless --skip-failed leaves failing servers out.

    \b
    Examples:
        tender catalog build --demo                             # today's MCP servers and web APIs
        tender catalog build                                    # the paper's ProgrammableWeb catalogue
        tender catalog build --apis ../shared/data/programmableweb/apis_large.jsonl --db /tmp/large.db
        tender catalog build --openapi ../shared/data/openapi/docs --db openapi.db
        tender catalog build --mcp-config ~/.config/Claude/claude_desktop_config.json --db tools.db
        tender catalog build --mcp "time=uvx mcp-server-time" --mcp http://127.0.0.1:9000/mcp --db tools.db
        tender catalog build --public-apis ../shared/data/public-apis/public-apis-README.md --db public.db
        tender catalog build --mcp-registry --db registry.db     # the official registry; again: what changed
        tender catalog build --mcp-registry ../shared/data/mcp-registry/seed_2025_05_16.json --public-apis --db all.db
    """
    from tender.catalog.build import MAX_EMBEDDED_CHARS, build_from_sources
    from tender.catalog.harvest import harvest_source, read_harvest
    from tender.catalog.sources.gather import gather
    from tender.catalog.sources.jsonl import read_mashup_ids

    if settings.reader_model:  # said before the build, not after it installed the catalogue
        model_spec(settings, settings.reader_model, "TENDER_READER_MODEL")
    if demo:
        from tender.catalog.demo import demo_harvest, demo_sources
        from tender.errors import DataMissing

        try:
            found = demo_sources(settings.data_dir.parent)
        except DataMissing as error:
            raise click.UsageError(
                f"--demo reads the MCP catalogue and public-apis snapshots beside the ProgrammableWeb data; "
                f"{error.folder}/{error.name} is not there. Set TENDER_DATA to the programmableweb folder of the "
                "shared data (its parent holds mcp-registry, toolsdk-mcp-registry, docker-mcp-catalog, public-apis)."
            ) from None
        mcp_registry = (*mcp_registry, *map(str, found["mcp_registry"]))
        public_apis = (*public_apis, *map(str, found["public_apis"]))
        toolsdk = (*toolsdk, *found["toolsdk"])
        docker_mcp = (*docker_mcp, *found["docker_mcp"])
        harvest_files = (*harvest_files, *demo_harvest())
        no_mashups = True
    others = bool(openapi or mcp or mcp_config or mcp_listing or public_apis or mcp_registry or toolsdk or docker_mcp)
    if not apis_path and not others:
        apis_path = settings.data_file(
            "apis.jsonl",
            "build from your own sources: --apis FILE, --openapi FOLDER, --mcp-config FILE, --mcp COMMAND, "
            "--public-apis or --mcp-registry (and --db to name the catalogue)",
        )
    if apis_path and not mashups_path and not no_mashups:
        mashups_path = settings.data_file(
            "mashups.jsonl", "name a mashups file with --mashups FILE, or build without usage history: --no-mashups"
        )
    sources = gather(
        apis=apis_path,
        mashups=None if no_mashups else mashups_path,
        openapi=list(openapi),
        mcp=list(mcp),
        mcp_config=list(mcp_config),
        mcp_listing=list(mcp_listing),
        public_apis=list(public_apis),
        mcp_registry=list(mcp_registry),
        toolsdk=list(toolsdk),
        docker_mcp=list(docker_mcp),
        timeout=mcp_timeout,
        fetch_timeout=fetch_timeout,
        skip_failed=skip_failed,
        previous=db_path or settings.catalog_path,
        full_sync=full_sync,
    )
    for source in sources:
        if source.info.skipped:
            click.echo(f"Skipped {source.info.skipped}", err=True)
        if source.info.kind in ("public-apis", "mcp-registry", "toolsdk", "docker-mcp"):
            click.echo(f"Read {source.info.name}: {source.info.items:,} items; {source.info.detail}.", err=True)
    harvested = [record for path in harvest_files for record in read_harvest(path)]
    sources += [harvest_source(path) for path in harvest_files]
    for source in sources[-len(harvest_files) :] if harvest_files else []:
        click.echo(f"Read {source.info.name}: {source.info.detail}.", err=True)
    excluded = read_mashup_ids(exclude_mashups) if exclude_mashups else []
    db_path = db_path or settings.catalog_path
    before = _built_from(db_path)
    meta = build_from_sources(
        sources,
        db_path,
        embedder_for(settings, threads=None, catalog=db_path),
        exclude_mashups=excluded,
        progress=not quiet,
        harvested=harvested,
    )
    click.echo(
        f"Built {db_path}: {meta['apis']} items of {meta['providers']} providers ({meta['deprecated']} deprecated), "
        f"{meta['mashups']} mashups, {meta['categories']} categories, "
        f"{meta['texts_embedded']} texts embedded, in {meta['build_seconds']} s, with {meta['model']}."
    )
    if before and before[0] != _kinds(json.loads(meta.get("sources", "[]"))):
        click.echo(
            f"It replaced the catalogue that file held (built from {', '.join(before[0])} on {before[1]}); "
            "build into another file with --db to keep both.",
            err=True,
        )
    if meta.get("texts_truncated", "0") != "0":
        click.echo(
            f"{meta['texts_truncated']} texts were longer than {MAX_EMBEDDED_CHARS:,} characters: only their "
            "beginning was embedded (the encoder reads no more); they are stored and searched whole.",
            err=True,
        )
    if settings.reader_model and int(meta["apis"]) <= READ_AT_BUILD:
        _read_ahead(settings, db_path, quiet)
    elif settings.reader_model:
        click.echo(
            f"The reader reads each item on its first plan ({meta['apis']} items is over {READ_AT_BUILD:,}); "
            "`tender catalog read-ahead` reads them all now.",
            err=True,
        )


def _kinds(sources: list[dict]) -> tuple[str, ...]:
    return tuple(sorted({str(s.get("kind", "?")) for s in sources}))


def _built_from(db_path: Path) -> tuple[tuple[str, ...], str] | None:
    """The kinds of source and the date of the catalogue at db_path, or None where there is none to read."""
    import sqlite3
    from contextlib import closing

    if not Path(db_path).is_file():
        return None
    try:
        with closing(sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)) as conn:
            meta = dict(conn.execute("select key, value from meta where key in ('sources', 'built_at')").fetchall())
        return _kinds(json.loads(meta.get("sources", "[]"))), meta.get("built_at", "?")[:10]
    except (sqlite3.Error, ValueError):  # not a catalogue Tender can read: the build says so elsewhere
        return None


@catalog.command("harvest")
@click.option(
    "--db",
    "db_path",
    type=click.Path(path_type=Path),
    help="The catalogue whose servers to start (default: TENDER_CATALOG).",
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="The harvest file to write (JSON lines, appended; a stopped harvest resumes from it).",
)
@click.option("--all-servers", is_flag=True, help="Also servers whose tools a catalogue already lists.")
@click.option("--limit", type=click.IntRange(1), help="At most this many servers (the first, in catalogue order).")
@click.option("--jobs", type=click.IntRange(1, 32), default=4, show_default=True, help="Servers started at once.")
@click.option(
    "--timeout",
    type=Seconds(5, 600),
    default=90,
    show_default=True,
    help="Seconds a server may take to install, start and list its tools.",
)
@click.option(
    "--run-third-party-code",
    is_flag=True,
    help="Required: this installs and runs other people's packages on this machine (no secrets, a throwaway folder, "
    "bounded in time and memory, but their code all the same).",
)
@click.pass_obj
def catalog_harvest(settings: Settings, db_path, out, all_servers, limit, jobs, timeout, run_third_party_code):
    """Start a catalogue's MCP servers from their install routes (npx, uvx) and record the tools each lists, for
    `tender catalog build --harvest FILE`.

    Each server runs with no secrets (PATH and a throwaway HOME only), in a throwaway folder, within --timeout and
    4 GB of memory; images and remote endpoints are not started. Nothing else in Tender starts a
    catalogue's server: this runs third-party code, so it asks for --run-third-party-code.

    \b
    Examples:
        tender catalog harvest --db demo.db --out harvest-2026-11-28.jsonl --run-third-party-code
        tender catalog build ... --harvest harvest-2026-11-28.jsonl
    """
    from tender.catalog.harvest import harvest, pending, read_harvest, summary, targets

    if not run_third_party_code:
        raise click.UsageError(
            "a harvest installs and runs other people's packages on this machine; pass --run-third-party-code "
            "if that is your choice"
        )
    catalog = open_catalog(with_db(settings, db_path), embed=False)
    found = targets(catalog.apis(), only_unlisted=not all_servers)[: limit or None]
    left = len(pending(found, out))
    done = f" ({len(found) - left:,} already in it)" if left < len(found) else ""
    click.echo(f"{left:,} servers to start ({jobs} at a time, {timeout:g} s each at most) into {out}{done}", err=True)

    def said(record) -> None:
        state = f"started, {len(record.tools)} tools" if record.started else f"did not start: {record.error[:120]}"
        click.echo(f"  {record.refs[0]}: {state}", err=True)

    harvest(found, out, timeout=timeout, jobs=jobs, on_done=said)
    click.echo(summary(read_harvest(out)))


@catalog.command("list-tools")
@mcp_source_options
@click.option(
    "--save", type=click.Path(path_type=Path), help="Write the listing here, for `catalog build --mcp-listing`."
)
@click.option("--json", "as_json", is_flag=True, help="Print the listing as JSON.")
def catalog_list_tools(mcp, mcp_config, mcp_timeout, skip_failed, save, as_json):
    """List the tools of MCP servers (tools/list), and optionally save the listing to build from later.

    \b
    Examples:
        tender catalog list-tools --mcp-config ~/.config/Claude/claude_desktop_config.json
        tender catalog list-tools --mcp "time=uvx mcp-server-time" --save listing.json
    """
    from tender.catalog.sources.gather import named_servers
    from tender.catalog.sources.mcp import Listing, list_servers, save_listing

    servers = named_servers(list(mcp), list(mcp_config))
    if not servers:
        raise click.UsageError("name servers with --mcp or --mcp-config")
    listings, failed = list_servers(servers, timeout=mcp_timeout, skip_failed=skip_failed)
    for _, reason in failed:
        click.echo(f"Skipped {reason}", err=True)
    if save:
        save_listing(listings, save)
        click.echo(f"Wrote {save}: {sum(len(x.tools) for x in listings)} tools of {len(listings)} servers.", err=True)
    if as_json:
        click.echo(Listing(servers=listings).model_dump_json(indent=1))
        return
    for listing in listings:
        click.echo(f"{listing.name} ({listing.url or listing.command}): {len(listing.tools)} tools")
        for tool in listing.tools:
            first = (tool.get("description") or "").strip().split("\n")[0][:100]
            click.echo(f"  {tool['name']}: {first}")


@catalog.command("info")
@click.option("--db", "db_path", type=click.Path(path_type=Path), help="Catalogue to describe (default: catalog.db).")
@click.option("--json", "as_json", is_flag=True, help="Print the meta table as JSON.")
@click.pass_obj
def catalog_info(settings: Settings, db_path, as_json):
    """Print the catalogue's counts, model, build time and source hashes.

    \b
    Example:
        tender catalog info
    """
    from tender.catalog import Catalog

    cat = Catalog(db_path or settings.catalog_path)
    meta = dict(cat.meta)
    if as_json:
        click.echo(json.dumps(meta, indent=2))
        return
    click.echo(f"{'catalogue':<22}{cat.path}")
    for key in (
        "apis",
        "providers",
        "deprecated",
        "mashups",
        "categories",
        "co_usage_pairs",
        "mean_apis_per_mashup",
        "model",
        "dimension",
        "built_at",
        "build_seconds",
        "texts_embedded",
        "excluded_mashups",
    ):
        click.echo(f"{key:<22}{meta.get(key, '')}")
    for source in cat.sources():
        items = f"skipped: {source['skipped']}" if source.get("skipped") else f"{source['items']} items"
        detail = f", {source['detail']}" if source.get("detail") else ""
        click.echo(f"{source['kind'] + ' source':<22}{source['name']} ({items}{detail})")
        if source.get("licence"):
            click.echo(f"{'':<22}licence: {source['licence']}")
        if source.get("synced_at"):
            click.echo(f"{'':<22}read at {source['synced_at']} (the next build asks only for what changed since)")
        for line in source.get("left_out", [])[:5]:
            click.echo(f"{'':<22}left out: {line}")
        hashes = source.get("sha256", {})
        if len(hashes) > 3:
            click.echo(f"{'':<22}{len(hashes)} files hashed (--json shows them)")
            continue
        for path, digest in hashes.items():
            click.echo(f"{'':<22}{path} sha256 {digest}")


@catalog.command("read-ahead")
@click.option("--db", "db_path", type=click.Path(path_type=Path), help="Catalogue to read (default: catalog.db).")
@click.option("--quiet", is_flag=True, help="No progress bar.")
@click.pass_obj
def catalog_read_ahead(settings: Settings, db_path, quiet):
    """Make the reader's vectors of every item now (TENDER_READER_MODEL), so that no plan waits for its
    candidates to be read: on every core, kept under TENDER_HOME/cache/reader, where a server finds them. Items
    already read are skipped; stop it at any time and run it again to go on.

    \b
    Example:
        TENDER_READER_MODEL=~/.local/share/tender/models/encoders/embeddinggemma-300m tender catalog read-ahead
    """
    if not settings.reader_model:
        raise click.UsageError(
            "Set TENDER_READER_MODEL to the encoder that reads the shortlists (see `tender models`)."
        )
    _read_ahead(settings, db_path or settings.catalog_path, quiet)


# A catalogue this small is read by the reader at build time (today's 2,158 items: 70 s on 2 cores); a larger one
# item by item, on each item's first plan, or all at once by `tender catalog read-ahead`. Chosen (a few minutes of
# reading at that rate), not fitted.
READ_AT_BUILD = 5_000


def _read_ahead(settings: Settings, path: Path, quiet: bool) -> None:
    from tqdm import tqdm

    from tender.catalog import Catalog, get_embedder
    from tender.ranking.reader import Reader

    assert settings.reader_model
    catalog = Catalog(path)
    spec = model_spec(settings, settings.reader_model, "TENDER_READER_MODEL")
    embedder = get_embedder(spec, threads=None, runtime=settings.embedding_runtime, cache_dir=settings.cache_dir)
    reader = Reader(embedder, settings.cache_dir)
    ids = [api.id for api in catalog.apis()]
    with tqdm(total=len(ids), desc="reading items", unit="item", disable=quiet) as bar:
        reader.read_ahead(catalog, ids, progress=bar.update)
    reader.close()
    catalog.close()
    click.echo(
        f"Read {len(ids):,} items of {path} with {embedder.encoder.name}; kept in {settings.cache_dir / 'reader'}."
    )


@catalog.command("search")
@click.argument("query")
@click.option("--category", "categories", multiple=True, help="Only APIs in this category (repeatable).")
@click.option("--limit", type=click.IntRange(1, 100), default=10, show_default=True, help="How many results.")
@click.option("--db", "db_path", type=click.Path(path_type=Path), help="Catalogue to search (default: catalog.db).")
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON.")
@click.pass_obj
def catalog_search(settings: Settings, query, categories, limit, db_path, as_json):
    """Find APIs by meaning (their descriptions), best match first: to look up an id or exact name for
    --exclude-api, or to browse. No negotiation; to choose the APIs of a whole app, use `tender recommend`.

    \b
    Examples:
        tender catalog search "send SMS messages"
        tender catalog search "photos" --category Photos --limit 5
    """
    from .answers.lookup import find_apis

    catalog = open_catalog(settings, path=db_path)
    checked_names(catalog, categories=categories)
    found = find_apis(catalog, query, categories, limit)
    if as_json:
        click.echo(found.model_dump_json(indent=2))
        return
    for hit in found.results:
        used = f"{hit.usage_count} mashup" + ("" if hit.usage_count == 1 else "s")
        click.echo(f"{hit.api_id:>6}  {hit.score:.2f}  {hit.name} [{', '.join(hit.categories)}], used by {used}")
    if not found.results:
        click.echo("No API matched.")


@catalog.command("categories")
@click.argument("query", required=False)
@click.option("--limit", type=click.IntRange(1, 1000), default=50, show_default=True, help="How many categories.")
@click.option("--db", "db_path", type=click.Path(path_type=Path), help="Catalogue to read (default: catalog.db).")
@click.option("--json", "as_json", is_flag=True, help="Print the categories as JSON.")
@click.pass_obj
def catalog_categories(settings: Settings, query, limit, db_path, as_json):
    """List the catalogue's API categories with their API counts, largest first; with QUERY, the closest in
    meaning first. Use these names with --require-category, --exclude-category and --category.

    \b
    Examples:
        tender catalog categories
        tender catalog categories "maps and places" --limit 5
    """
    from .answers.lookup import check_query

    if query:
        check_query(query)
    catalog = open_catalog(settings, path=db_path, embed=bool(query))
    counts = {c.name: c.api_count for c in catalog.categories()}
    if query:
        shown: list[tuple[str, int, float | None]] = [
            (str(hit.id), counts.get(str(hit.id), 0), round(hit.score, 4))
            for hit in catalog.search(query, kind="category", k=limit)
        ]
    else:
        shown = [(name, n, None) for name, n in sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:limit]]
    if as_json:
        click.echo(json.dumps([{"name": n, "api_count": c, "similarity": s} for n, c, s in shown], indent=2))
        return
    for name, count, similarity in shown:
        click.echo(f"{count:>6}  {name}" + (f"  ({similarity:.2f})" if similarity is not None else ""))


def llm_options(command):
    """The LLM backend's flags, shared by recommend and eval. Unset flags fall back to the environment."""
    options = [
        click.option(
            "--manager-backend",
            type=click.Choice(["offline", "llm"]),
            default="offline",
            show_default=True,
            help="Reasoner of the manager.",
        ),
        click.option(
            "--contractor-backend",
            type=click.Choice(["offline", "llm"]),
            default="offline",
            show_default=True,
            help="Reasoner of the contractors.",
        ),
        click.option("--llm-base-url", help="OpenAI-compatible endpoint (TENDER_LLM_BASE_URL)."),
        click.option("--llm-model", help="Model name (TENDER_LLM_MODEL)."),
        click.option("--llm-api-key", help="API key (TENDER_LLM_API_KEY, then OPENAI_API_KEY)."),
        click.option(
            "--max-tokens-per-request", type=click.IntRange(min=1), help="Past this, remaining steps run offline."
        ),
        click.option(
            "--llm-timeout",
            type=Seconds(*LLM_TIMEOUT_S),
            help="Seconds one attempt at a reply may take, first byte to last (TENDER_LLM_TIMEOUT, default 60). "
            "A local server on one core needs more.",
        ),
        click.option(
            "--llm-in-flight",
            type=click.IntRange(*LLM_IN_FLIGHT),
            help="LLM calls at once (TENDER_LLM_IN_FLIGHT, default 4). A server that answers one at a time "
            "queues the rest, and their wait counts against the timeout.",
        ),
        click.option("--no-cache", is_flag=True, help="Do not use the LLM response cache."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def make_tender(settings: Settings, catalog, backends: dict, scorer=None):
    """A Tender on `catalog` with the reasoners the flags ask for (offline unless told otherwise), ranking with
    `scorer` where given, else with TENDER_RANKING_MODEL's model or the shipped one (assembly.py)."""
    from tender.agents.reasoners.factory import llm_settings

    manager, contractors = backends.get("manager_backend", "offline"), backends.get("contractor_backend", "offline")
    llm = None
    if not manager == contractors == "offline":
        llm = llm_settings(
            settings,
            base_url=backends.get("llm_base_url"),
            model=backends.get("llm_model"),
            api_key=backends.get("llm_api_key"),
            timeout_s=backends.get("llm_timeout"),
            max_in_flight=backends.get("llm_in_flight"),
            use_cache=False if backends.get("no_cache") else None,
            max_tokens_per_request=backends.get("max_tokens_per_request"),
        )
    return assemble(settings, catalog, manager, contractors, llm=llm, scorer=scorer)


def _backends(kwargs: dict) -> dict:
    keys = (
        "manager_backend",
        "contractor_backend",
        "llm_base_url",
        "llm_model",
        "llm_api_key",
        "max_tokens_per_request",
        "no_cache",
        "llm_timeout",
        "llm_in_flight",
    )
    return {k: kwargs.pop(k) for k in keys}


def with_db(settings: Settings, db_path: Path | None) -> Settings:
    """The settings with --db as the catalogue, when given."""
    from dataclasses import replace

    return replace(settings, catalog_path=db_path) if db_path else settings


def did_you_mean(name, known: list[str]) -> str:
    import difflib

    if len(str(name)) > 200:  # difflib on a megabyte is minutes of CPU; nothing that long is a typo
        return ""
    close = difflib.get_close_matches(str(name), known, n=3, cutoff=0.6)
    return f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""


def checked_names(catalog, apis=(), required=(), excluded=(), categories=()) -> None:
    """Check API and category names before a run, so that a mistyped one is reported with the option the
    user typed and the closest names the catalogue has (the library's errors name the MCP tools)."""
    from tender.catalog import ApiNotFound, CategoryNotFound

    for api in apis:
        try:
            catalog.get_api(api)
        except ApiNotFound:
            raise click.BadParameter(
                f"no API {echo(api)} in the catalogue.{did_you_mean(api, [a.name for a in catalog.apis()])} "
                "`tender catalog search TEXT` finds ids and exact names.",
                param_hint="--exclude-api",
            ) from None
    options = (
        [("--require-category", name) for name in required]
        + [("--exclude-category", name) for name in excluded]
        + [("--category", name) for name in categories]
    )
    for option, name in options:
        try:
            catalog.check_category(name)
        except CategoryNotFound:
            raise click.BadParameter(
                f"no category {echo(name)} in the catalogue.{did_you_mean(name, catalog.category_names())} "
                "`tender catalog categories` lists them.",
                param_hint=option,
            ) from None


def read_requirement(requirement: str) -> str:
    """The requirement as given, or read from standard input when it is '-'."""
    if requirement != "-":
        return requirement
    text = sys.stdin.read()
    if not text.strip():
        raise click.BadParameter(
            "standard input was empty; pipe the requirement in, e.g. `echo 'a map of bike shops' | tender recommend -`",
            param_hint="REQUIREMENT",
        )
    return text


# The command line's spelling of a request field where it is not the field's own (one flag a value, in the singular).
FLAGS = {
    "needs": "--need",
    "required_categories": "--require-category",
    "excluded_categories": "--exclude-category",
    "excluded_apis": "--exclude-api",
}
HIDDEN = {"exclude_deprecated"}  # kept for older scripts


def request_option(name: str, annotation, info):
    """A request field (tender.agents.request) as a click option: its type and bounds, its choices, its help."""
    import types
    import typing

    from annotated_types import Ge, Le

    from pydantic_core import PydanticUndefined

    from tender.agents.request import REGISTRY

    flag = FLAGS.get(name, "--" + name.replace("_", "-"))
    inner = annotation
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):  # X | None: X
        kinds = [a for a in typing.get_args(annotation) if a is not type(None)]
        inner = kinds[0] if len(kinds) == 1 else str
    multiple = typing.get_origin(inner) is list
    if multiple:
        inner = typing.get_args(inner)[0]
        inner = inner if inner in (int, str) else str
    bounds = {type(m): m for m in info.metadata}
    options: dict = {"help": info.description, "hidden": name in HIDDEN}
    if name == "protocol":
        options |= {"type": click.Choice(list(REGISTRY)), "help": f"{info.description} {described(quote='')}"}
    elif typing.get_origin(inner) is typing.Literal:
        options["type"] = click.Choice(list(typing.get_args(inner)))
    elif inner is bool:
        options["is_flag"] = True
    elif inner is int and (Ge in bounds or Le in bounds):
        options["type"] = click.IntRange(getattr(bounds.get(Ge), "ge", None), getattr(bounds.get(Le), "le", None))
    elif inner is int:
        options["type"] = int
    if multiple:
        options |= {"multiple": True, "help": f"{info.description} One a flag: repeat it."}
    elif info.default not in (None, PydanticUndefined) and not options.get("is_flag"):
        options |= {"default": info.default, "show_default": True}
    return click.option(flag, name, **options)


def request_options(entrance: str):
    """Every field the entrance offers, as options (in the model's order)."""
    from tender.agents.request import fields_of

    def decorate(command):
        for name, annotation, info in reversed(fields_of(entrance)):
            command = request_option(name, annotation, info)(command)
        return command

    return decorate


@main.command()
@click.argument("requirement")
@request_options("cli")
@click.option(
    "--db",
    "db_path",
    type=click.Path(path_type=Path),
    help="Catalogue to recommend from (default: catalog.db, or TENDER_CATALOG).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the plan (and transcript) as JSON.")
@click.option(
    "--deadline",
    type=Seconds(*DEADLINE_S),
    help="Seconds the LLM steps may take in all (TENDER_DEADLINE); past it, the rest run offline. "
    "Default: no deadline, each call bounded by --llm-timeout.",
)
@llm_options
@click.pass_obj
def recommend(settings: Settings, requirement, as_json, **kwargs):
    """Recommend the MCP servers or web APIs a request needs, as a plan. REQUIREMENT is the request in plain
    words, or - to read it from standard input. A plan of MCP servers ends with their configuration for Claude
    Desktop, Cursor, VS Code and Claude Code. Every run is kept in the runs database: `tender runs list` shows them,
    `tender explain RUN_ID` tells the bidding behind one.

    \b
    Examples:
        tender recommend "let Claude read my Google Calendar and make Todoist tasks"
        tender recommend "a site that shows nearby restaurants on a map with their reviews"
        tender recommend "restaurants near me" --need "find nearby restaurants" --need "show them on a map"
        tender recommend "share photos with friends" --protocol contractor-led --max-apis 2 --json
        cat requirement.txt | tender recommend - --exclude-api "Google Maps"
    """
    from tender.agents.context import RunContext
    from tender.agents.request import ENTRANCES, Request

    backends = _backends(kwargs)
    deadline = kwargs.pop("deadline") or settings.deadline_s
    settings = with_db(settings, kwargs.pop("db_path"))
    asked = {name: kwargs.pop(name) for name in ENTRANCES["cli"]}
    asked = {name: (list(v) or None) if isinstance(v, tuple) else v for name, v in asked.items()}
    request = Request.create(read_requirement(requirement), **asked)
    catalog = open_catalog(settings)
    constraints = request.constraints
    checked_names(catalog, constraints.excluded_apis, constraints.required_categories, constraints.excluded_categories)
    tender = make_tender(settings, catalog, backends)
    run = tender.recommend(request, RunContext(deadline_s=deadline))
    from tender.answers.stores import keep_at

    # The run log, as the server keeps one (`tender explain` reads it). A plan that cannot be kept is printed
    # all the same, with a note: its LLM calls may have been paid for.
    not_kept = keep_at(settings.runs_location, run, catalog)
    if not_kept:
        click.secho(f"Warning: {not_kept}", fg="yellow", err=True)
    from tender.answers.install import install_line, installs, plan_client_config

    servers = installs(catalog, [api.api_id for api in run.plan.apis])  # the awarded servers that can be installed
    config = plan_client_config(run.plan, catalog)
    if as_json:
        if config is None:
            click.echo(shown(run.model_dump_json(indent=2)))
        else:
            click.echo(
                shown(
                    json.dumps(
                        {**run.model_dump(mode="json"), "client_config": config.model_dump(mode="json")},
                        indent=2,
                        ensure_ascii=False,
                    )
                )
            )
    else:
        from .answers.render import plan_text

        lines = {api_id: install_line(routes[0]) for api_id, (_, routes) in servers.items()}
        text = plan_text(run.plan, run.transcript, categories=catalog.real_categories, installs=lines, catalog=catalog)
        click.echo(shown(text))
        if config is not None:
            click.echo(shown(config_text(config)))
        if not not_kept:
            click.echo(f"How it was decided: tender explain {run.plan.run_id}")


def config_text(config) -> str:
    """The plan's servers as each client configures them, and what to fill in."""
    lines = [
        "",
        "The awarded MCP servers, as your client configures them (fill in each <PLACEHOLDER>):",
        "Claude Desktop (claude_desktop_config.json; Cursor: .cursor/mcp.json):",
        json.dumps(config.claude_desktop, indent=2),
        "VS Code (.vscode/mcp.json):",
        json.dumps(config.vscode, indent=2),
        "Claude Code:",
        *(f"  {line}" for line in config.claude_code),
    ]
    if config.variables:
        lines.append("To fill in:")
        for v in config.variables:
            marks = ", ".join(m for m, on in (("required", v.required), ("secret", v.secret)) if on) or "optional"
            about = f": {v.description}" if v.description else ""
            lines.append(f"  {v.server} {v.kind} {v.name} ({marks}){about}")
    return "\n".join(lines)


@main.group()
def runs():
    """The run log: every recommendation made by `tender recommend` or the MCP server (runs.db, or TENDER_RUNS)."""


@runs.command("list")
@click.option(
    "--limit", type=click.IntRange(1, 1000), default=20, show_default=True, help="How many runs, newest first."
)
@click.option("--json", "as_json", is_flag=True, help="Print the runs as JSON.")
@click.pass_obj
def runs_list(settings: Settings, limit, as_json):
    """List the latest runs, newest first: id, time, protocol, how many APIs, the catalogue each was made on
    (marked "gone" or "changed" when it no longer is what the run saw) and the requirement's start.

    \b
    Examples:
        tender runs list
        tender runs list --limit 5 --json
    """
    from tender.answers.provenance import state_of
    from tender.answers.runs import CatalogRef
    from tender.answers.stores import open_store

    store = open_store(settings.runs_location)
    try:
        rows = store.recent(limit)
    finally:
        store.close()
    states: dict[tuple, str] = {}
    for row in rows:
        ref = CatalogRef(**row["catalog"]) if row["catalog"] else None
        key = (ref.path, ref.fingerprint) if ref else ()
        if key not in states:
            states[key] = state_of(ref)[0]
        row["catalog_state"] = states[key]
    if as_json:
        click.echo(shown(json.dumps(rows, indent=2, ensure_ascii=False)))
        return
    if not rows:
        click.echo(f'No runs yet in {settings.runs_shown}. Make one with `tender recommend "..."`.')
    for row in rows:
        text = " ".join(row["requirement"].split())
        text = text if len(text) <= 60 else text[:59] + "…"
        where = _home_relative(row["catalog"]["path"]) if row["catalog"] else "catalogue not recorded"
        mark = f" ({row['catalog_state']})" if row["catalog_state"] in ("gone", "changed") else ""
        click.echo(
            f"{row['run_id']}  {row['created_at'][:19].replace('T', ' ')}  {row['protocol']:<14}  "
            f"{len(row['api_ids'])} APIs  {where}{mark}  {shown(text)}"
        )


def _home_relative(path: str) -> str:
    home = str(Path.home())
    return "~" + path[len(home) :] if path.startswith(home + os.sep) else path


@runs.command("delete")
@click.argument("run_ids", nargs=-1, required=True, metavar="RUN_ID...")
@click.pass_obj
def runs_delete(settings: Settings, run_ids):
    """Remove runs from the run log, by id. Nothing is removed if one of the ids is not there.

    \b
    Example:
        tender runs delete 5154ebb901684f9896196976d257d94c
    """
    from tender.answers.runs import UnknownRun
    from tender.answers.stores import open_store

    store = open_store(settings.runs_location)
    try:
        removed = store.delete(list(run_ids))
    except UnknownRun as error:
        raise click.BadParameter(
            f"no run {echo(error.run_id)} in {settings.runs_shown}; nothing was removed. `tender runs list` shows the ids.",
            param_hint="RUN_ID",
        ) from None
    finally:
        store.close()
    click.echo(f"Removed {removed} run{'s' if removed != 1 else ''} from {settings.runs_shown}.")


class Age(click.ParamType):
    """A span of time: a number and a unit (s, m, h, d, w), e.g. 30d or 12h."""

    name = "age"
    UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}

    def convert(self, value, param, ctx):
        import datetime

        if isinstance(value, datetime.timedelta):
            return value
        text = str(value).strip().lower()
        number, unit = text[:-1], text[-1:]
        try:
            amount = float(number)
        except ValueError:
            amount = -1
        if unit not in self.UNITS or not math.isfinite(amount) or amount < 0:  # nan, inf: no age
            self.fail(
                f"{echo(value)} is not an age; write a number and a unit (s, m, h, d or w), e.g. 30d or 12h", param
            )
        try:  # a span from before the year 1 is none either
            age = datetime.timedelta(seconds=amount * self.UNITS[unit])
            datetime.datetime.now(datetime.UTC) - age
        except OverflowError:
            self.fail(
                f"{echo(value)} is not an age: it reaches before the year 1; write a shorter one, e.g. 520w", param
            )
        return age


@runs.command("prune")
@click.option("--older-than", "older_than", type=Age(), required=True, help="Remove runs older than this (e.g. 30d).")
@click.option("--dry-run", is_flag=True, help="Only say how many runs would be removed.")
@click.pass_obj
def runs_prune(settings: Settings, older_than, dry_run):
    """Remove the runs stored longer ago than --older-than (s, m, h, d or w: 90m, 12h, 30d, 2w).

    \b
    Examples:
        tender runs prune --older-than 30d
        tender runs prune --older-than 2w --dry-run
    """
    from tender.answers.stores import open_store

    store = open_store(settings.runs_location)
    try:
        count = store.prune(older_than, dry_run=dry_run)
    finally:
        store.close()
    verb = "Would remove" if dry_run else "Removed"
    click.echo(f"{verb} {count} run{'s' if count != 1 else ''} older than {older_than} from {settings.runs_shown}.")


@main.command("explain")
@click.argument("run_id")
@click.option("--function", help="Only this plan step: its id (f1, f2, ...) or its text.")
@click.option(
    "--full", is_flag=True, help="Every call for proposals with every bid, refusal and decision, and the full diagram."
)
@click.option("--diagram", is_flag=True, help="Print only the Mermaid sequence diagram.")
@click.option(
    "--json", "as_json", is_flag=True, help="Print the explanation as JSON, as the explain_bids tool returns it."
)
@click.option(
    "--db",
    "db_path",
    type=click.Path(path_type=Path),
    help="Where the run's catalogue is now, if it moved (default: the catalogue the run recorded).",
)
@click.pass_obj
def explain_command(settings: Settings, run_id, function, full, diagram, as_json, db_path):
    """Tell how a stored run was decided: per function, whom the call for proposals reached, the winning and
    the best losing bids and why, and any backtracking. RUN_ID is the id `tender recommend` printed
    (`tender runs list` shows them).

    \b
    Examples:
        tender explain 5154ebb901684f9896196976d257d94c
        tender explain 5154ebb901684f9896196976d257d94c --function f2 --full
        tender explain 5154ebb901684f9896196976d257d94c --diagram > bidding.mmd
    """
    from tender.answers.explain import explain, explanation_text
    from tender.answers.provenance import UNRECORDED, RunCatalogues
    from tender.answers.runs import UnknownRun
    from tender.answers.stores import open_store

    store = open_store(settings.runs_location)
    try:
        entry = store.entry(run_id)
    except UnknownRun:
        raise click.BadParameter(
            f"no run {echo(run_id)} in {settings.runs_shown}. `tender runs list` shows the latest ids.",
            param_hint="RUN_ID",
        ) from None
    finally:
        store.close()
    # The run's own catalogue, never the default one: its ids mean something only there.
    catalog = RunCatalogues(moved="If it moved, name its new place with --db. ").for_run(
        entry.run.plan.run_id, entry.catalog, where=db_path
    )
    told = explain(entry.run, function, detail="full" if full else "summary", catalog=catalog, budget=None)
    if catalog is None:
        told.notes = [*told.notes, UNRECORDED]
    if as_json:
        from tender.answers.budget import lean

        click.echo(shown(json.dumps(lean(told), indent=2, ensure_ascii=False)))
    elif diagram:
        click.echo(shown(told.diagram), nl=False)
    else:
        click.echo(shown(explanation_text(told)))
        click.echo("\nThe diagram: add --diagram. Every message: --full --json.")


@main.command("eval")
@click.option("--dataset", "dataset_name", help="A dataset (see the list below); default: programmableweb.")
@click.option("--part", default="dev", show_default=True, help="dev or test (the R2API folds: fold-1 .. fold-10).")
@click.option("--variant", "variant_names", multiple=True, help="Only this variant (repeatable); default: all of them.")
@click.option(
    "--method",
    "method_names",
    multiple=True,
    type=click.Choice([*PROTOCOLS, *BASELINE_NAMES]),
    help=f"Only this protocol ({', '.join(PROTOCOLS)}) or baseline ({', '.join(BASELINE_NAMES)}); repeatable.",
)
@click.option("--sample", type=click.IntRange(min=1), help="Draw this many queries of the part (default: all).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the queries drawn with --sample.")
@click.option(
    "--mashups",
    "mashups_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Evaluate your own requests (mashups JSONL: description, api_ids) against --db.",
)
@click.option(
    "--db", "db_path", type=click.Path(path_type=Path), help="With --mashups: the catalogue (default: catalog.db)."
)
@click.option(
    "--all",
    "everything",
    is_flag=True,
    help="Every dataset, variant, protocol and baseline on the test parts; rewrites docs/results.md.",
)
@click.option("--quick", is_flag=True, help="With --all: a sample of each part, for day-to-day work; docs untouched.")
@click.option(
    "--jobs",
    type=click.IntRange(1, 64),
    default=lambda: min(2, os.cpu_count() or 1),
    show_default="2, or 1 on one core",
    help="With --all: parts run side by side in this many processes, one core each.",
)
@click.option(
    "--only",
    "only",
    multiple=True,
    help="With --all: only this dataset (repeatable); its records replace the earlier run's, and docs/results.md is "
    "made from them all.",
)
@click.option(
    "--compare",
    "compared",
    nargs=2,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Two record files (A then B): per-query differences with paired bootstrap 95% intervals.",
)
@click.option("--pair", help="With --compare: A's method against B's, as METHOD_A:METHOD_B (B may be the same file).")
@click.option(
    "--against",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="With --all: an earlier version's --all folder; docs/results.md then sets the default protocol against it, "
    "query by query.",
)
@click.option(
    "--encoder",
    "encoder_runs",
    multiple=True,
    metavar="NAME=FOLDER",
    help="With --all: another encoder's --all folder (run with TENDER_EMBEDDING_MODEL or TENDER_READER_MODEL set); "
    "docs/results.md then sets the default protocol with it against this run's, query by query (repeatable).",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder for the records and the summary (default: out/eval/<dataset>-<part> or out/eval/all).",
)
@click.option(
    "--docs",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path("docs/results.md"),
    show_default=True,
    help="With --all: the results page to regenerate.",
)
@click.option("--top-n", type=click.IntRange(1, 1000), help="Contractors reached per call for proposals.")
@click.option("--quiet", is_flag=True, help="No progress bars.")
@llm_options
@click.pass_obj
def evaluate_command(
    settings: Settings,
    dataset_name,
    part,
    variant_names,
    method_names,
    sample,
    seed,
    mashups_path,
    db_path,
    everything,
    quick,
    jobs,
    only,
    compared,
    pair,
    against,
    encoder_runs,
    out,
    docs,
    top_n,
    quiet,
    **kwargs,
):
    """Measure the protocols and the flat baselines on a dataset's dev or test part: one JSON line per query and
    method (records.jsonl: the functions found, the final set, the ranking, the gold and the metrics) and their
    means. Decide on dev parts; test parts are for reporting (--all).

    \b
    Datasets: programmableweb, r2api, metatool-multi, metatool-single, openapi-suite,
    programmableweb-suite, mcp-suite, today-suite, assistant-suite (docs/results.md says what each is).

    \b
    Examples:
        tender eval --dataset metatool-multi --part dev
        tender eval --dataset programmableweb --variant masked --method manager-led --method hybrid --sample 200
        tender eval --compare out/eval/before/records.jsonl out/eval/after/records.jsonl
        tender eval --compare out/eval/x/records.jsonl out/eval/x/records.jsonl --pair hybrid:manager-led
        tender eval --mashups my_requests.jsonl --db my.db --sample 300 --seed 1
        tender eval --all          # every test part; rewrites docs/results.md
    """
    from tender.evaluation import datasets as ds
    from tender.evaluation.catalogues import Catalogues
    from tender.evaluation.compare import report
    from tender.evaluation.runner import Job, methods_for, read_records, run_job, summarise, write_records
    from tender.assembly import one_thread_each

    # As the server answers: one core a query. With numpy's BLAS threads spinning on top, an R2API fold took
    # 80 s beside another process instead of about 40, and every latency figure counted the spinning.
    one_thread_each()

    if compared:
        a, b = (read_records(p) for p in compared)
        method_a, method_b = pair.split(":", 1) if pair else (None, None)
        click.echo(report(a, b, method_a, method_b))
        return
    backends = _backends(kwargs)
    paths = ds.Paths(settings.data_dir.parent)
    given = {"external": db_path or settings.catalog_path} if mashups_path else {}
    catalogues = Catalogues(settings, paths, progress=not quiet, given=given)

    def tender_for(catalog, scorer=None):
        return make_tender(settings, catalog, backends, scorer)

    if everything:
        from tender.evaluation.report import write_results
        from tender.evaluation.schedule import run_all

        out = out or Path("out/eval") / ("quick" if quick else "all")
        if not only:  # a whole run starts afresh; a run of some datasets replaces theirs and keeps the rest
            for stale in (out / "records").glob("*.jsonl"):
                stale.unlink()
            (out / "parts.json").unlink(missing_ok=True)
        summary = run_all(
            catalogues,
            tender_for,
            out,
            quick=quick,
            only=set(only) or None,
            progress=not quiet,
            say=lambda text: click.echo(text, err=True),
            jobs=jobs,
        )
        click.echo(f"Wrote {out}/records/*.jsonl and {out}/summary.json in {summary['stamp']['seconds']} s.", err=True)
        if not quick:
            from tender.evaluation.runner import records_of

            mine = records_of(out)
            earlier = records_of(against) if against else []
            others = {}
            for spec in encoder_runs:
                name, _, folder = spec.partition("=")
                if not name or not Path(folder).is_dir():
                    raise click.BadParameter(f"{echo(spec)}: give NAME=FOLDER, an --all folder", param_hint="--encoder")
                others[name] = records_of(Path(folder))
            write_results(summary, docs, mine, earlier, others)
            click.echo(f"Rewrote {docs} from every record under {out}.", err=True)
        return
    from tender.evaluation.kinds import any_dataset

    data = ds.external(mashups_path) if mashups_path else any_dataset(dataset_name or "programmableweb")
    if mashups_path:
        part = "all"
    variants = [v for v in data.variants if not variant_names or v.name in variant_names]
    if not variants:
        known = ", ".join(repr(v.name) for v in data.variants)
        raise click.BadParameter(f"{data.name} has no such variant; its variants: {known}", param_hint="--variant")
    records = []
    for variant in variants:
        methods = methods_for(data, variant, method_names or None)
        fold_model = ds.R2API_MODELS / f"{part}.json" if data.name == "r2api" else None
        job = Job(data, part, variant, methods, sample=sample, seed=seed)
        if fold_model is not None and fold_model.is_file():
            job.scorer = fold_model
        records += run_job(job, catalogues, tender_for, top_n=top_n, progress=not quiet)
    out = out or Path("out/eval") / f"{data.name}-{part}"
    write_records(records, out / "records.jsonl")
    summary = summarise(records)
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    from tender.evaluation.report import summary_table

    click.echo(summary_table(summary))
    click.echo(f"\nWrote {out}/records.jsonl (one line per query and method) and {out}/summary.json.", err=True)


@main.group()
def train():
    """Fit what Tender learns from past mashups (needs the `train` extra: torch, sentence-transformers)."""


@train.command("encoder")
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    help="Model folder to write (default: TENDER_HOME/models/minilm-finetuned), or with --rank the .npz file "
    "(default: TENDER_HOME/models/tender-minilm-lora.npz), or with --kinds the delta's folder (default: "
    "TENDER_HOME/models/encoders/tender-matcher-local).",
)
@click.option(
    "--kinds",
    help="Train the matcher on tool data of these kinds (comma-separated, or 'all': generated-functions, ml-models, "
    "code-functions, rapidapi-endpoints, free-web-apis, plugins, mashups; 'all,mcp-tools' adds MCP servers' tools "
    "with needs the local model wrote, python -m tender.training.tool_needs) instead of on mashups alone; writes a "
    "low-rank delta folder (training/matcher.py).",
)
@click.option("--leave-out", default="", help="With --kinds: kinds left out (comma-separated), to judge on them.")
@click.option(
    "--epochs",
    type=click.IntRange(min=1),
    default=None,
    help="Passes over the training pairs (default 2, or 1 with --kinds).",
)
@click.option("--learning-rate", type=float, help="The optimiser's learning rate (default 3e-5, or 1e-3 with --rank).")
@click.option(
    "--rank",
    type=click.IntRange(min=1),
    help="Learn a low-rank delta of this rank instead of new weights (16 made the shipped tender-minilm).",
)
@click.option("--quiet", is_flag=True, help="No progress bar.")
@click.pass_obj
def train_encoder(settings: Settings, out, kinds, leave_out, epochs, learning_rate, rank, quiet):
    """Fine-tune all-MiniLM-L6-v2 on past mashups (never the test, tuning or validation ones), or with --kinds on
    tool data of many kinds (the train parts of ../shared/data/tool-retrieval, MetaTool and ProgrammableWeb).

    About 12 minutes on 2 cores; with --rank 16, about 9; with --kinds all, hours (docs/matcher.md: it keeps a
    checkpoint and goes on from it when run again). Optional: Tender ships a ranking model fitted for the
    stock encoder. To use a model trained here, set TENDER_EMBEDDING_MODEL to the folder, rebuild the catalogues
    and refit the ranking model (`tender train ranker`, which writes it beside a folder encoder). A delta
    (--rank) is for replacing the shipped one in a checkout (tender/catalog/assets/tender-minilm-lora.npz).
    """
    if kinds:
        out = out or settings.models_dir / "encoders" / "tender-matcher-local"
        argv = ["--out", str(out), "--kinds", kinds, "--data", str(settings.data_dir.parent)]
        argv += ["--leave-out", leave_out] if leave_out else []
        argv += ["--epochs", str(epochs)] if epochs else []
        argv += ["--learning-rate", str(learning_rate)] if learning_rate else []
        argv += ["--rank", str(rank)] if rank else []
        from tender.training.matcher import main as matcher_main  # torch: only once the data is known to be there

        matcher_main(argv + (["--quiet"] if quiet else []))
        click.echo(
            f"Use it with: export TENDER_EMBEDDING_MODEL={out}; tender catalog build && tender train ranker "
            "(the ranking model is written beside the delta and found by itself)"
        )
        return
    default = "tender-minilm-lora.npz" if rank else "minilm-finetuned"
    out = out or settings.models_dir / default
    argv = [
        "--out",
        str(out),
        "--epochs",
        str(epochs or 2),
        "--apis",
        str(settings.data_file("apis.jsonl")),
        "--mashups",
        str(settings.data_file("mashups.jsonl")),
    ]
    argv += ["--learning-rate", str(learning_rate)] if learning_rate else []
    argv += ["--rank", str(rank)] if rank else []
    from tender.training.encoder import main as encoder_main  # torch: only once the data is known to be there

    encoder_main(argv + (["--quiet"] if quiet else []))
    if rank:
        return
    model = out.with_name(f"ranking-{out.name}.json")
    click.echo(
        f"Use it with: export TENDER_EMBEDDING_MODEL={out}; tender catalog build && tender train ranker --out {model}; "
        f"then set TENDER_RANKING_MODEL={model} and rebuild your other catalogues"
    )


@train.command("ranker", context_settings={"ignore_unknown_options": True})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def train_ranker(args):
    """Refit the ranking model on the training parts (about 10 minutes; options: --out FILE, --metatool N,
    --mashups N, --seed S; see --help). Use a model written elsewhere with TENDER_RANKING_MODEL=FILE."""
    from tender.training.ranker import main as ranker_main

    ranker_main(list(args))


@main.group()
def models():
    """Models Tender can fetch, check and remove: encoders (TENDER_HOME/models/encoders) and the language model that
    reads requests (TENDER_HOME/models/language). Only `tender models pull` downloads: recommending, building and
    serving never do."""


def known_model(name: str):
    """The known encoder called `name`; InputToFix with the closest names otherwise."""
    from tender.catalog.models import KNOWN

    if name not in KNOWN:
        raise InputToFix(
            f"No known encoder {echo(name)}.{did_you_mean(name, list(KNOWN))} `tender models list` shows them."
        )
    return KNOWN[name]


def can_ask() -> bool:
    """Whether a person can answer a prompt (standard input is a terminal)."""
    return sys.stdin.isatty()


def _size(count: int) -> str:
    return f"{count / 1e9:.2f} GB" if count >= 1e9 else f"{count / 1e6:.1f} MB"


@models.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the encoders as JSON.")
@click.pass_obj
def models_list(settings: Settings, as_json):
    """List the encoders Tender knows, pulled or not, with their size and licence, and any other folder under
    TENDER_HOME/models/encoders (shown as local, not verified). A pulled one shows the TENDER_EMBEDDING_MODEL to set.

    \b
    Examples:
        tender models list
        tender models list --json
    """
    from tender.catalog.models import list_models

    rows = list_models(settings.home)
    if as_json:
        click.echo(json.dumps([row.model_dump() for row in rows], indent=2))
        return
    for row in rows:
        licence = f"  {row.licence}" if row.licence else ""
        click.echo(f"{row.name:<22} {row.status:<20} {_size(row.size):>9}{licence}")
        if row.folder and row.kind == "language":
            click.echo(f"{'':<22} TENDER_REQUEST_MODEL={row.name}")
        elif row.folder:
            click.echo(f"{'':<22} TENDER_EMBEDDING_MODEL={row.folder}")


@models.command("pull")
@click.argument("name")
@click.option(
    "--endpoint",
    help="A Hugging Face-compatible server to fetch from (default: TENDER_HF_ENDPOINT, HF_ENDPOINT or "
    "https://huggingface.co).",
)
@click.option("--accept-licence", is_flag=True, help="Accept the model's licence without being asked (read it first).")
@click.option("--quiet", is_flag=True, help="No progress bar.")
@click.pass_obj
def models_pull(settings: Settings, name, endpoint, accept_licence, quiet):
    """Fetch a known encoder into TENDER_HOME/models/encoders/NAME and check every file's sha256. A model whose
    licence asks something of you is shown first and must be accepted. A gated model (EmbeddingGemma) needs a
    Hugging Face token that accepted it, in HF_TOKEN. An interrupted pull goes on from the files it has.

    \b
    Example:
        HF_TOKEN=hf_... tender models pull embeddinggemma-300m
    """
    import shlex

    from tqdm import tqdm

    from tender.catalog.models import LicenceNotAccepted, endpoint_from, licence_accepted, pull, token_from

    model = known_model(name)
    token = token_from(os.environ)
    if not accept_licence and not licence_accepted(model, settings.home):
        if not can_ask():
            raise LicenceNotAccepted(model)
        click.echo(f"{model.name} is under the {model.licence}: {model.licence_url}", err=True)
        click.echo(model.licence_note, err=True)
        if not click.confirm("Do you accept it?", default=False, err=True):
            raise TenderError("The licence was not accepted; nothing was downloaded.")
        accept_licence = True
    with tqdm(
        total=model.size, unit="B", unit_scale=True, desc=model.name, disable=quiet, file=sys.stderr, leave=False
    ) as bar:
        folder = pull(
            model.name,
            settings.home,
            endpoint or endpoint_from(os.environ),
            accept_licence=accept_licence,
            progress=lambda path, count: bar.update(count),
            token=token,
        )
    click.echo(f"{model.name}: every file verified, in {folder}. To use it:")
    if model.kind == "language":
        click.echo(f"export TENDER_REQUEST_MODEL={model.name}")
        click.echo("with llama-cpp-python installed (`pip install 'tender-mcp[local]'`): it reads requests into needs.")
        return
    click.echo(f"export TENDER_EMBEDDING_MODEL={shlex.quote(str(folder))}")
    from tender.catalog.encoders import folder_encoder
    from tender.ranking.scorer import shipped_model

    encoder = folder_encoder(folder)
    fitted = shipped_model(encoder.name, encoder.fingerprint, folder) is not None
    click.echo(
        "then rebuild the catalogue with it (`tender catalog build`)"
        + (
            "; the ranking model fitted on its vectors ships with Tender."
            if fitted
            else ", and fit a ranking model for it (`tender train ranker`), since none ships for this encoder."
        )
    )


@models.command("verify")
@click.argument("name")
@click.pass_obj
def models_verify(settings: Settings, name):
    """Hash a pulled encoder's files again and compare them with the table: print "ok", or each problem and exit 1.

    \b
    Example:
        tender models verify embeddinggemma-300m
    """
    from tender.catalog.models import verify

    model = known_model(name)
    problems = verify(model.name, settings.home)
    if problems:
        for problem in problems:
            click.echo(f"{model.name}: {problem}")
        raise TenderError(
            f"{model.name} does not match its table ({len(problems)} problem{'s' if len(problems) != 1 else ''}); "
            f"`tender models pull {model.name}` fetches the files again."
        )
    click.echo("ok")


@models.command("remove")
@click.argument("name")
@click.pass_obj
def models_remove(settings: Settings, name):
    """Delete an encoder's folder under TENDER_HOME/models/encoders (with a half pull, and any ranking model fitted
    beside it). Catalogues built with it will need another encoder and a rebuild.

    \b
    Example:
        tender models remove all-mpnet-base-v2
    """
    from tender.catalog.models import NotPulled, encoders_dir, list_models, remove

    try:
        removed = remove(name, settings.home)
    except NotPulled:
        there = [row.name for row in list_models(settings.home) if row.folder]
        raise InputToFix(
            f"No encoder {echo(name)} in {encoders_dir(settings.home)}.{did_you_mean(name, there)} "
            "`tender models list` shows them."
        ) from None
    for folder in removed:
        click.echo(f"Removed {folder}")


@main.command("serve")
@click.option(
    "--transport",
    type=click.Choice(["stdio", "http"]),
    default="stdio",
    show_default=True,
    help="stdio for Claude Desktop and IDEs; http for streamable HTTP (agents).",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP only: the address to listen on.")
@click.option("--port", type=click.IntRange(1, 65535), default=8765, show_default=True, help="HTTP only.")
@click.option(
    "--allow-host",
    "allowed_hosts",
    multiple=True,
    metavar="NAME",
    help="HTTP only: also accept requests addressed to this host name (repeatable). Loopback and --host are accepted.",
)
@click.option(
    "--db",
    "db_path",
    type=click.Path(path_type=Path),
    help="Catalogue to serve (default: catalog.db, or TENDER_CATALOG).",
)
@click.option(
    "--allow-unauthenticated",
    is_flag=True,
    help="HTTP only: serve beyond loopback without TENDER_HTTP_TOKEN (refused otherwise).",
)
@click.option(
    "--max-connections",
    type=click.IntRange(min=2),
    help="HTTP only: connections open at once, a quarter of them per client address; past it the oldest one "
    "waiting for a request is closed (default: half the file limit, at most 1,000).",
)
@click.option(
    "--idle-timeout",
    type=Seconds(0.5, 3600),
    default=10,
    show_default=True,
    help="HTTP only: seconds a connection may stay open without a complete request, headers and body.",
)
@click.option(
    "--max-sessions",
    type=click.IntRange(min=4),
    help="HTTP only: MCP sessions open at once, a quarter of them per client address; past it, an idle one "
    "is closed to make room (default: 1,000).",
)
@click.option(
    "--session-idle-timeout",
    type=Seconds(1, 86400),
    help="HTTP only: seconds an MCP session may go without a request before it is closed (default: 600).",
)
@click.option(
    "--a2a",
    is_flag=True,
    help="HTTP only: also serve A2A agents on the same port: JSON-RPC at /a2a, the agent card at "
    "/.well-known/agent-card.json (the a2a extra).",
)
@click.option(
    "--public-url",
    metavar="URL",
    help="With --a2a: the address agents reach this server at, as its agent card gives it (behind a reverse proxy, "
    "the proxy's). Default: http://HOST:PORT.",
)
@click.pass_obj
def serve_command(
    settings: Settings,
    transport,
    host,
    port,
    allowed_hosts,
    db_path,
    allow_unauthenticated,
    max_connections,
    idle_timeout,
    max_sessions,
    session_idle_timeout,
    a2a,
    public_url,
):
    """Serve Tender over MCP: the recommend_apis, explain_bids, compare_protocols, search_apis, get_api
    and list_categories tools, catalogue and run resources, and the compose_service prompt.

    Logs go to stderr. Over HTTP, DNS-rebinding and Origin checks are on, and TENDER_HTTP_TOKEN, when
    set, must be sent as `Authorization: Bearer <token>`. Runs are stored in runs.db (TENDER_RUNS).
    With --a2a, A2A agents are served on the same port, with the same token and limits.

    \b
    Examples:
        tender serve
        tender serve --transport http --port 8765
        TENDER_HTTP_TOKEN=... tender serve --transport http --host 0.0.0.0 --allow-host tender.example.org
        tender serve --transport http --max-connections 200 --idle-timeout 5
        tender serve --transport http --max-sessions 200 --session-idle-timeout 300
        tender serve --transport http --a2a          # and A2A agents, on the same port
    """
    from .server.app import serve

    if a2a:
        # The A2A SDK opens an OpenTelemetry span around each of its calls wherever opentelemetry is installed, collected
        # or not (2 ms of the event loop a request, measured), reading this when first imported: off unless asked for.
        os.environ.setdefault("OTEL_INSTRUMENTATION_A2A_SDK_ENABLED", "false")
    serve(
        with_db(settings, db_path),
        transport=transport,
        host=host,
        port=port,
        allowed_hosts=allowed_hosts,
        allow_unauthenticated=allow_unauthenticated,
        max_connections=max_connections,
        idle_s=idle_timeout,
        max_sessions=max_sessions,
        session_idle_s=session_idle_timeout,
        a2a=a2a,
        public_url=public_url,
    )


@main.command("doctor")
@click.option(
    "--db",
    "db_path",
    type=click.Path(path_type=Path),
    help="The catalogue `tender serve --db` would be given (default: catalog.db, or TENDER_CATALOG).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the checks, settings and client configurations as JSON.")
@click.pass_obj
def doctor_command(settings: Settings, db_path, as_json):
    """Check what `tender serve` started the same way would use: the catalogue, the encoder, the runs database,
    the bid model and the LLM endpoint (is it reachable?), with the settings it would run with; and print the
    client configurations (Claude Desktop, Cursor, VS Code, Claude Code) that start exactly that server.
    Exit 0 when everything is in place, 1 otherwise.

    \b
    Examples:
        tender doctor
        TENDER_CATALOG=tools.db tender doctor --json
    """
    from .server.doctor import diagnose

    found = diagnose(with_db(settings, db_path))
    if as_json:
        click.echo(json.dumps(found.model_dump() | {"ok": found.ok}, indent=2))
    else:
        for check in found.checks:
            mark = "ok  " if check.ok else "FAIL"
            click.echo(f"{mark} {check.name:<13} {check.found}")
            if check.fix:
                click.echo(f"     {'':<13} {check.fix}")
        click.echo("\nA server started by an MCP client gets only the environment its configuration gives it:")
        for name, value in found.settings.items():
            click.echo(f"  {name}={value}")
        for shown, name in found.placeholders.items():
            click.echo(f"Write your {name} in place of {shown}: it holds a secret, which Tender never prints.")
        for client, snippet in found.clients.items():
            click.echo(f"\n{client}:\n{snippet}")
    if not found.ok:
        sys.exit(1)
