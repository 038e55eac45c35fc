"""Building catalog.db from the JSONL sources: atomic (temporary file, then rename), one build of a
catalogue at a time (a lock file beside it), and incremental (a text whose hash is already in the old
catalogue is never embedded again)."""

import contextlib
import json
import os
import sqlite3
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import numpy as np
import sqlite_utils
from tqdm import tqdm

from ..errors import CatalogError
from ..errors import SourceError
from .database import PRIVATE_FILE, connect_read_only, private_folder
from .embeddings import Embedder, text_hash
from .encoders import EncoderId, recorded_encoder
from .graph import co_usage_counts, jaccard
from .records import Api, Mashup
from .schema import SCHEMA_VERSION, create_indexes, create_tables
from .harvest import Harvested, apply_harvest
from .servers import merge_items
from .summary import fingerprint_of
from .sources import Loaded, load_jsonl


# What the encoder reads of one text: MiniLM stops at 256 tokens (about 1,000 characters), and a 50 MB
# description sent whole took 6.1 GB to tokenize. The full text is still stored and searched.
MAX_EMBEDDED_CHARS = 4_000


def capped(items: Sequence[tuple[int | str, str]]) -> tuple[list[tuple[int | str, str]], int]:
    """(items with each text cut at MAX_EMBEDDED_CHARS, how many were cut)."""
    cut = sum(len(text) > MAX_EMBEDDED_CHARS for _, text in items)
    return [(key, text[:MAX_EMBEDDED_CHARS]) for key, text in items], cut


class BuildInProgress(CatalogError):
    def __init__(self, path: Path):
        super().__init__(f"Another build of {path} is running; wait for it to finish, or build to another --db.")
        self.path = path


class IncompleteBuild(CatalogError):
    def __init__(self, path: Path, problem: str):
        super().__init__(
            f"The new catalogue for {path} is incomplete ({problem}); the previous one was kept. Build it again."
        )
        self.path = path


@contextlib.contextmanager
def build_lock(db_path: Path) -> Iterator[None]:
    """Hold `<db>.lock` for the whole build: a second build of the same file would otherwise delete the
    first one's temporary file, and the first would install what was left of it. The lock is released
    by the kernel when a build dies, so a killed build never blocks the next one."""
    try:
        import fcntl
    except ImportError:  # Windows: no flock; builds are not guarded there
        yield
        return
    lock = db_path.with_name(db_path.name + ".lock")
    with open(os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_APPEND, PRIVATE_FILE), "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise BuildInProgress(db_path) from None
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def check_complete(path: Path, meta: dict) -> None:
    """Raise IncompleteBuild unless the file at `path` holds what `meta` says was written."""
    try:
        db = connect_read_only(path)
        try:
            apis = db.execute("select count(*) from apis").fetchone()[0]
            vectors = db.execute("select count(*) from embeddings where kind = 'api'").fetchone()[0]
            stored = dict(db.execute("select key, value from meta").fetchall())
        finally:
            db.close()
    except sqlite3.DatabaseError as error:
        raise IncompleteBuild(path, str(error)) from None
    expected = int(meta["apis"])
    if apis != expected or vectors != expected or stored.get("apis") != meta["apis"]:
        raise IncompleteBuild(path, f"{apis} APIs and {vectors} API vectors where {expected} were written")


def _cached_vectors(db_path: Path, encoder: EncoderId) -> dict[tuple[str, str], bytes]:
    """Vectors of the previous catalogue by (kind, text hash), for reuse if the same encoder made them."""
    if not db_path.is_file():
        return {}
    try:
        old = connect_read_only(db_path)
        meta = dict(old.execute("select key, value from meta").fetchall())
        rows = old.execute("select kind, text_hash, vector from embeddings where model = ?", (encoder.name,)).fetchall()
        old.close()
    except sqlite3.DatabaseError:
        return {}  # not a catalogue (or a broken one): embed everything anew
    if recorded_encoder(meta.get("model", ""), meta.get("encoder_fingerprint")) != encoder:
        return {}  # a retrained model of the same name: its vectors differ
    return {(kind, digest): blob for kind, digest, blob in rows}


_PLURAL = {"category": "categories"}  # for the progress bar


def _embed_items(
    kind: str, items: list[tuple[int | str, str]], embedder: Embedder, cache: dict, progress: bool
) -> tuple[list[dict], int]:
    """Rows for the embeddings table; only texts missing from the cache go through the model."""
    hashes = [text_hash(text) for _, text in items]
    missing = sorted({digest: text for (_, text), digest in zip(items, hashes) if (kind, digest) not in cache}.items())
    if missing:
        # Chunks of texts of one length: a batch is padded to its longest text, and chunks in the order of the
        # hashes padded the demo catalogue's texts to 5% more tokens and its names to 18% more than this order.
        lengths = getattr(embedder, "lengths", None)
        sizes = lengths([text for _, text in missing]) if lengths else [len(text) for _, text in missing]
        missing = [pair for _, pair in sorted(zip(sizes, missing))]
        batch = 1024  # a chunk a step of the progress bar
        bar = tqdm(
            total=len(missing), desc=f"embedding {_PLURAL.get(kind, kind + 's')}", unit="text", disable=not progress
        )
        for start in range(0, len(missing), batch):
            chunk = missing[start : start + batch]
            vectors = embedder.embed([text for _, text in chunk], role="document")
            for (digest, _), vector in zip(chunk, vectors):
                cache[(kind, digest)] = np.asarray(vector, dtype=np.float32).tobytes()
            bar.update(len(chunk))
        bar.close()
    # Read the dimension off a stored vector so that a rebuild with nothing new never loads the model.
    dimension = len(cache[(kind, hashes[0])]) // 4 if hashes else 0
    rows = [
        {
            "kind": kind,
            "item_id": str(item_id),
            "model": embedder.model_name,
            "dimension": dimension,
            "vector": cache[(kind, digest)],
            "text_hash": digest,
        }
        for (item_id, _), digest in zip(items, hashes)
    ]
    return rows, len(missing)


def build_catalog(
    apis_path: Path | None,
    mashups_path: Path | None,
    db_path: Path,
    embedder: Embedder,
    *,
    sources: Iterable[Loaded] = (),
    exclude_mashups: Iterable[int] = (),
    progress: bool = False,
) -> dict:
    """Build the catalogue at db_path from a ProgrammableWeb JSONL pair (either may be None) and any other
    loaded sources, and return its meta. The previous file stays in place until the new one is complete: an
    error or an interruption leaves it untouched."""
    loaded = (
        [load_jsonl(Path(apis_path), Path(mashups_path) if mashups_path else None)] if apis_path else []
    )  # raises before anything is written
    return build_from_sources(
        [*loaded, *sources], db_path, embedder, exclude_mashups=exclude_mashups, progress=progress
    )


def assemble(sources: list[Loaded], harvested: Sequence[Harvested] = ()) -> tuple[list[Api], list[Mashup]]:
    """One list of items from every source. JSONL items keep their ids (the evaluation's gold sets name them);
    the others are numbered after them, in source order, and get a name no other item has. A server listed by
    several catalogues is one item; what a harvest saw of each server is added to it (harvest.py)."""
    apis: list[Api] = []
    mashups: list[Mashup] = []
    owner: dict[int, str] = {}
    for source in sources:
        if source.info.kind != "jsonl":
            continue
        for api in source.apis:
            if api.id in owner:
                raise SourceError(source.info.name, f"API id {api.id} is also in {owner[api.id]}")
            owner[api.id] = source.info.name
        apis.extend(source.apis)
        mashups.extend(source.mashups)
    next_id = max(owner, default=-1) + 1
    names = {api.name.casefold() for api in apis}
    # A server listed by several catalogues (the MCP Registry, toolsdk's, Docker's) becomes one item.
    others = merge_items([api for source in sources if source.info.kind != "jsonl" for api in source.apis])
    if harvested:
        others = apply_harvest(others, list(harvested))
    for api in others:
        name, n = api.name, 1
        while name.casefold() in names:
            n += 1
            name = f"{api.name} #{n}"
        names.add(name.casefold())
        apis.append(api.model_copy(update={"id": next_id, "name": name}))
        next_id += 1
    if not apis:
        raise SourceError(
            "catalogue", "no source gave any item; name JSONL files, --openapi documents or --mcp servers"
        )
    return apis, mashups


def build_from_sources(
    sources: list[Loaded],
    db_path: Path,
    embedder: Embedder,
    *,
    exclude_mashups: Iterable[int] = (),
    progress: bool = False,
    harvested: Sequence[Harvested] = (),
) -> dict:
    """Build the catalogue at db_path from loaded sources (and what harvests saw of their servers); see
    build_catalog."""
    started = time.perf_counter()
    db_path = Path(db_path)
    apis, mashups = assemble(sources, harvested)
    excluded = set(exclude_mashups)
    mashups = [m for m in mashups if m.id not in excluded]

    private_folder(db_path.parent)
    with build_lock(db_path):
        for stale in db_path.parent.glob(f"{db_path.name}.tmp-*"):
            stale.unlink(missing_ok=True)  # left by a build that was killed: only the lock holder writes one
        handle, name = tempfile.mkstemp(prefix=f"{db_path.name}.tmp-", dir=db_path.parent)  # 0600, as installed
        os.close(handle)
        tmp_path = Path(name)
        cache = _cached_vectors(db_path, embedder.encoder)
        try:
            meta = _write(tmp_path, apis, mashups, embedder, cache, progress)
            meta.update(
                sources=json.dumps([source.info.model_dump() for source in sources]),
                excluded_mashups=str(len(excluded)),
                built_at=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                build_seconds=f"{time.perf_counter() - started:.2f}",
            )
            synced = {source.info.name: source.info.synced_at for source in sources if source.info.synced_at}
            if synced:  # when each registry was read: the next build asks it only for what changed since
                meta["registry_synced_at"] = json.dumps(synced)
            db = sqlite_utils.Database(tmp_path)
            meta["fingerprint"] = fingerprint_of(db.conn)  # what a run records of the catalogue it was made on
            db["meta"].upsert_all([{"key": k, "value": str(v)} for k, v in meta.items()], pk="key")
            db.close()
            check_complete(tmp_path, meta)
            os.replace(tmp_path, db_path)
        except BaseException:
            tmp_path.unlink(missing_ok=True)
            raise
    return meta


def _write(path: Path, apis: list[Api], mashups: list[Mashup], embedder: Embedder, cache: dict, progress: bool) -> dict:
    # `path` is the empty file mkstemp made 0600: SQLite writes into it (a file it created would be 0644).
    db = sqlite_utils.Database(path)
    db.execute("pragma journal_mode = off")
    db.execute("pragma synchronous = off")  # durability comes from the rename, not from the journal
    create_tables(db)

    category_counts: Counter = Counter()
    primary_counts: Counter = Counter()
    links = []
    for api in apis:
        for position, category in enumerate(dict.fromkeys(api.categories)):
            category_counts[category] += 1
            primary_counts[category] += position == 0
            links.append(
                {"api_id": api.id, "category": category, "is_primary": int(position == 0), "position": position}
            )
    usage: Counter = Counter(api_id for m in mashups for api_id in set(m.api_ids))
    pairs = co_usage_counts(m.api_ids for m in mashups)

    with db.conn:
        db["apis"].insert_all(
            {**api.model_dump(exclude={"categories", "details"}), "details": json.dumps(api.details)} for api in apis
        )
        db["categories"].insert_all(
            {"name": name, "api_count": count, "primary_count": primary_counts[name]}
            for name, count in sorted(category_counts.items())
        )
        db["api_categories"].insert_all(links)
        db["mashups"].insert_all(
            {
                "id": m.id,
                "name": m.name,
                "url": m.url,
                "description": m.description,
                "categories": json.dumps(m.categories),
            }
            for m in mashups
        )
        db["mashup_apis"].insert_all(
            {"mashup_id": m.id, "api_id": a} for m in mashups for a in dict.fromkeys(m.api_ids)
        )
        db.conn.executemany(
            "insert into items_fts (rowid, name, body) values (?, ?, ?)",
            ((api.id, api.lexical_name(), api.text()) for api in apis),
        )
        db["co_usage"].insert_all(
            {"api_a": x, "api_b": y, "count": n, "weight": jaccard(n, usage[x], usage[y])}
            for (a, b), n in sorted(pairs.items())
            for x, y in ((a, b), (b, a))
        )

    embedded = truncated = 0
    for kind, items in (
        ("api", [(api.id, api.text()) for api in apis]),
        ("name", [(api.id, api.name_text()) for api in apis]),
        ("category", [(name, f"{name} APIs") for name in sorted(category_counts)]),
        ("mashup", [(m.id, m.text()) for m in mashups]),
    ):
        items, cut = capped(items)
        truncated += cut
        rows, fresh = _embed_items(kind, items, embedder, cache, progress)
        embedded += fresh
        with db.conn:
            db["embeddings"].insert_all(rows, batch_size=500)
    create_indexes(db)
    dimension = _dimension(db)
    db.close()
    return {
        "schema_version": SCHEMA_VERSION,
        "model": embedder.model_name,
        "encoder_fingerprint": embedder.encoder.fingerprint,
        "dimension": str(dimension),
        "apis": str(len(apis)),
        "providers": str(len({api.provider_name for api in apis})),
        "deprecated": str(sum(api.gone for api in apis)),
        "mashups": str(len(mashups)),
        "categories": str(len(category_counts)),
        "co_usage_pairs": str(len(pairs)),
        "texts_embedded": str(embedded),
        "texts_truncated": str(truncated),
        "mean_apis_per_mashup": f"{sum(len(set(m.api_ids)) for m in mashups) / max(1, len(mashups)):.3f}",
    }


def _dimension(db: sqlite_utils.Database) -> int:
    row = db.execute("select dimension from embeddings limit 1").fetchone()
    return row[0] if row else 0
