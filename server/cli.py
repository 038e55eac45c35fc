"""The `tender` command. Each command opens what it needs, calls one library function and turns
TenderError into a clean message; the environment is read once, here."""

import json
import sys
from pathlib import Path

import click

from catalog import MalformedInput, TenderError
from .settings import Settings


class TenderGroup(click.Group):
    """Turns TenderError into a one-line message instead of a traceback."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except MalformedInput as error:
            click.secho(f"Error: {error}", fg="red", err=True)
            click.echo("Nothing was written; the previous catalogue (if any) is intact.", err=True)
            sys.exit(2)
        except TenderError as error:
            click.secho(f"Error: {error}", fg="red", err=True)
            sys.exit(1)
        except KeyboardInterrupt:
            click.echo("Interrupted.", err=True)
            sys.exit(130)


@click.group(cls=TenderGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="tender")
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


def open_catalog(settings: Settings, *, embed: bool = True, exclude_mashups=()):
    from catalog import Catalog, get_embedder

    return Catalog(settings.catalog_path, embedder=get_embedder(settings.embedding_model) if embed else None,
                   exclude_mashups=exclude_mashups)


@main.group()
def catalog():
    """Build and inspect the SQLite API catalogue (catalog.db)."""


@catalog.command("build")
@click.option("--apis", "apis_path", type=click.Path(path_type=Path), help="APIs JSONL (default: the shared apis.jsonl).")
@click.option("--mashups", "mashups_path", type=click.Path(path_type=Path), help="Mashups JSONL (default: the shared mashups.jsonl).")
@click.option("--db", "db_path", type=click.Path(path_type=Path), help="Where to write (default: catalog.db, or TENDER_CATALOG).")
@click.option("--exclude-mashups", type=click.Path(exists=True, path_type=Path),
              help="A file of mashup ids (one per line) to leave out of the catalogue entirely.")
@click.option("--quiet", is_flag=True, help="No progress bars.")
@click.pass_obj
def catalog_build(settings: Settings, apis_path, mashups_path, db_path, exclude_mashups, quiet):
    """Build the catalogue from ProgrammableWeb JSONL files.

    Embeds every API, category and mashup text with the local all-MiniLM-L6-v2 model; texts already
    embedded in the previous catalogue are reused. The new file replaces the old one only when complete.

    \b
    Examples:
        tender catalog build
        tender catalog build --apis ../shared/data/programmableweb/apis_large.jsonl --db /tmp/large.db
    """
    from catalog import build_catalog, get_embedder

    excluded = [int(line) for line in exclude_mashups.read_text().split()] if exclude_mashups else []
    db_path = db_path or settings.catalog_path
    meta = build_catalog(
        apis_path or settings.data_dir / "apis.jsonl",
        mashups_path or settings.data_dir / "mashups.jsonl",
        db_path,
        get_embedder(settings.embedding_model),
        exclude_mashups=excluded,
        progress=not quiet,
    )
    click.echo(
        f"Built {db_path}: {meta['apis']} APIs, {meta['mashups']} mashups, {meta['categories']} categories, "
        f"{meta['texts_embedded']} texts embedded, in {meta['build_seconds']} s."
    )


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
    from catalog import Catalog

    cat = Catalog(db_path or settings.catalog_path)
    meta = dict(cat.meta)
    if as_json:
        click.echo(json.dumps(meta, indent=2))
        return
    click.echo(f"{'catalogue':<22}{cat.path}")
    for key in ("apis", "mashups", "categories", "co_usage_pairs", "mean_apis_per_mashup", "model", "dimension",
                "built_at", "build_seconds", "texts_embedded", "excluded_mashups"):
        click.echo(f"{key:<22}{meta.get(key, '')}")
    for name, source in json.loads(meta.get("sources", "{}")).items():
        click.echo(f"{name + ' source':<22}{source['path']}\n{'':<22}sha256 {source['sha256']}")
