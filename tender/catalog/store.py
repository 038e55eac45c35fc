"""The read-only catalogue the agents and the server query.

Everything the agents touch per request lives in memory after open: records, usage history,
the co-usage graph and the embedding matrices. Opening with `exclude_mashups` makes every query
behave as if those mashups never existed (the evaluation's leave-out)."""

import difflib
import json
import sqlite3
import threading
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import sqlite_utils

from . import bm25
from .ann import DenseSearch, build_key
from .bm25 import LexicalIndex
from .database import connect_read_only
from .embeddings import Embedder
from .encoders import EncoderId, check_encoder, recorded_encoder
from .graph import co_usage_counts, jaccard
from ..errors import ApiNotFound, CatalogError, CatalogMissing, CategoryNotFound, NotACatalogue
from ..safety import clean
from .records import Api, Category, CoUser, Hit, Mashup
from .schema import SCHEMA_VERSION
from .summary import fingerprint_of

KINDS = ("api", "name", "category", "mashup")


@dataclass(frozen=True)
class VectorTable:
    """One kind's vectors: row i of `matrix` belongs to `ids[i]`."""

    ids: list
    matrix: np.ndarray
    row: dict

    def vector(self, item_id) -> np.ndarray:
        return self.matrix[self.row[item_id]]


def built_with(path: Path | str) -> str | None:
    """The name of the encoder that embedded the catalogue at `path`; None where there is none to read."""
    if not Path(path).is_file():
        return None
    try:
        conn = connect_read_only(path)
        try:
            row = conn.execute("select value from meta where key = 'model'").fetchone()
        finally:
            conn.close()
    except sqlite3.Error:
        return None
    return row[0] if row else None


class Catalog:
    """Read-only access to catalog.db. Raises CatalogMissing if there is none, EncoderMismatch if `embedder`
    runs another encoder than the one that embedded it, ApiNotFound and CategoryNotFound for names it does
    not know."""

    def __init__(
        self,
        path: Path | str,
        *,
        embedder: Embedder | None = None,
        exclude_mashups: Iterable[int] = (),
        held: bool = False,
    ):
        """`held`: read whole at open, the file never read again (a server's catalogue: a `cp` over the file
        rewrites it where it stands, and a catalogue still reading it read half of the new one and failed)."""
        self.path = Path(path)
        if not self.path.is_file():
            raise CatalogMissing(self.path)
        try:
            self.db = sqlite_utils.Database(connect_read_only(self.path, check_same_thread=False))
            self.meta = {row["key"]: row["value"] for row in self.db["meta"].rows}
        except sqlite3.DatabaseError as error:
            raise NotACatalogue(self.path, str(error)) from None
        if self.meta.get("schema_version") != SCHEMA_VERSION:
            raise CatalogError(
                f"{self.path} was built by another version of Tender (catalogue schema {self.meta.get('schema_version', '?')}, "
                f"this one reads {SCHEMA_VERSION}). Rebuild it with `tender catalog build` and the same sources; "
                "texts already embedded are reused."
            )
        if embedder is not None:
            check_encoder(
                f"The catalogue {self.path}",
                self.encoder,
                embedder.encoder,
                "Rebuild it with this encoder (`tender catalog build`), or load the one it was built with "
                "(TENDER_EMBEDDING_MODEL: all-MiniLM-L6-v2 for the stock one, tender-minilm or tender-matcher for a "
                "tuned one, else the model folder).",
            )
        self._lock = threading.Lock()
        self._dense: dict[str, DenseSearch] = {}
        self._dense_lock = threading.Lock()  # apart: a large catalogue's index may take minutes to build
        self._lexical: LexicalIndex | bool | None = None  # False: FTS5 answers
        self.embedder = embedder
        self.excluded = frozenset(exclude_mashups)
        self._load()
        if held:
            self._hold()

    def __repr__(self):
        return (
            f"<Catalog {self.path} apis={len(self._apis)} mashups={len(self._mashups)} excluded={len(self.excluded)}>"
        )

    # -- loading -------------------------------------------------------------------------------
    def _load(self) -> None:
        categories_of: dict[int, list[str]] = defaultdict(list)
        for row in self.db.query("select api_id, category from api_categories order by api_id, position"):
            categories_of[row["api_id"]].append(clean(row["category"]))  # as the Api and Category records hold it
        self._apis = {
            row["id"]: Api(
                **{**row, "details": json.loads(row["details"] or "{}")}, categories=categories_of.get(row["id"], [])
            )
            for row in self.db.query("select * from apis order by id")
        }
        self._by_name = {api.name.casefold(): api.id for api in self._apis.values()}
        self._real_categories = frozenset(c for a in self._apis.values() if a.kind == "api" for c in a.categories)
        self._provider_apis: dict[str, list[int]] = defaultdict(list)
        for api in self._apis.values():
            self._provider_apis[api.provider_name].append(api.id)
        self._categories = [Category(**row) for row in self.db["categories"].rows_where(order_by="name")]
        members: dict[str, list[int]] = defaultdict(list)
        for api_id, names in categories_of.items():
            for name in dict.fromkeys(names):  # two raw names may clean to one
                members[name].append(api_id)
        # Arrays, for the union over an id mask in first_apis_in_categories.
        self._category_apis = {name: np.asarray(ids, dtype=np.int64) for name, ids in members.items()}

        apis_of: dict[int, list[int]] = defaultdict(list)
        for row in self.db.query("select mashup_id, api_id from mashup_apis order by mashup_id, rowid"):
            if row["mashup_id"] not in self.excluded:
                apis_of[row["mashup_id"]].append(row["api_id"])
        self._mashups = {
            row["id"]: Mashup(
                id=row["id"],
                name=row["name"],
                url=row["url"],
                description=row["description"],
                categories=json.loads(row["categories"] or "[]"),
                api_ids=apis_of.get(row["id"], []),
                api_names=[self._apis[a].name for a in apis_of.get(row["id"], [])],
            )
            for row in self.db.query("select * from mashups order by id")
            if row["id"] not in self.excluded
        }
        self._history: dict[int, list[int]] = defaultdict(list)
        for mashup_id, api_ids in apis_of.items():
            for api_id in api_ids:
                self._history[api_id].append(mashup_id)
        self._load_co_usage()
        self._vectors = {kind: self._load_vectors(kind) for kind in KINDS}

    def _hold(self) -> None:
        """What is still read from the file after _load, the lexical index (items_fts), copied into memory, and the
        fingerprint computed; the file's connection closed. For 16,469 items: 14 MB of memory (the file is 82 MB) and
        0.2 s more to open; a catalogue whose BM25 index answers (bm25.FROM_ITEMS items) opens that instead."""
        try:
            self.fingerprint  # noqa: B018 (computed now, where a catalogue predates recorded fingerprints)
            if self._bm25() is None:
                memory = sqlite3.connect("file::memory:", uri=True, check_same_thread=False)
                memory.execute("attach database ? as file", [f"{self.path.resolve().as_uri()}?mode=ro"])
                (table,) = memory.execute("select sql from file.sqlite_master where name = 'items_fts'").fetchone()
                memory.execute(table.replace("items_fts", "main.items_fts", 1))
                memory.execute(
                    "insert into main.items_fts (rowid, name, body) select rowid, name, body from file.items_fts"
                )
                memory.commit()
                memory.execute("detach database file")
                self.db.close()
                self.db = sqlite_utils.Database(memory)
        except sqlite3.DatabaseError as error:
            raise NotACatalogue(self.path, str(error)) from None

    def _load_co_usage(self) -> None:
        counts: dict[tuple[int, int], int] = {
            (row["api_a"], row["api_b"]): row["count"]
            for row in self.db.query("select api_a, api_b, count from co_usage where api_a < api_b")
        }
        if self.excluded:
            # Take the left-out mashups' pairs back out of the stored graph.
            gone = co_usage_counts(
                [row["api_id"] for row in self.db.query("select api_id from mashup_apis where mashup_id = ?", [m])]
                for m in self.excluded
            )
            for pair, n in gone.items():
                if pair in counts:
                    counts[pair] -= n
        self._co: dict[int, dict[int, CoUser]] = defaultdict(dict)
        for (a, b), n in counts.items():
            if n <= 0:
                continue
            weight = jaccard(n, self.usage_count(a), self.usage_count(b))
            self._co[a][b] = CoUser(api_id=b, count=n, weight=weight)
            self._co[b][a] = CoUser(api_id=a, count=n, weight=weight)

    def _load_vectors(self, kind: str) -> VectorTable:
        model = self.meta.get("model")
        ids, blobs = [], []
        for row in self.db.query(
            "select item_id, vector from embeddings where kind = ? and model = ? order by rowid", [kind, model]
        ):
            item_id = row["item_id"] if kind == "category" else int(row["item_id"])
            if kind == "mashup" and item_id not in self._mashups:
                continue
            ids.append(item_id)
            blobs.append(row["vector"])
        dimension = int(self.meta.get("dimension", 0))
        matrix = (
            np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(ids), dimension)
            if ids
            else np.zeros((0, dimension), np.float32)
        )
        return VectorTable(ids=ids, matrix=matrix, row={item_id: i for i, item_id in enumerate(ids)})

    # -- records ---------------------------------------------------------------------------------
    @property
    def model_name(self) -> str:
        return self.meta.get("model", "")

    @property
    def encoder(self) -> EncoderId:
        """The encoder that embedded the catalogue."""
        return recorded_encoder(self.model_name, self.meta.get("encoder_fingerprint"))

    @property
    def fingerprint(self) -> str:
        """What the catalogue's ids mean, as a hash (see summary.py); a run records it."""
        if "fingerprint" not in self.meta:  # built before fingerprints were recorded
            with self._lock:
                self.meta["fingerprint"] = fingerprint_of(self.db.conn)
        return self.meta["fingerprint"]

    @property
    def real_categories(self) -> frozenset[str]:
        """The categories a directory gave its Web APIs. An OpenAPI document's tags and an MCP catalogue's
        (absent) categories are not among them: a plan does not show those as categories."""
        return self._real_categories

    def api_ids(self) -> list[int]:
        return list(self._apis)

    def apis(self) -> list[Api]:
        return list(self._apis.values())

    def get_api(self, api: int | str) -> Api:
        """By id (an int or a string of digits) or by exact name, case-insensitive."""
        if isinstance(api, str) and api.strip().isdigit():
            api = int(api.strip())
        if isinstance(api, int):
            if api in self._apis:
                return self._apis[api]
        elif api.strip().casefold() in self._by_name:
            return self._apis[self._by_name[api.strip().casefold()]]
        raise ApiNotFound(api)

    def providers(self) -> list[str]:
        """Every provider (an API, an OpenAPI document's API, an MCP server), by name."""
        return sorted(self._provider_apis)

    def apis_of_provider(self, provider: str) -> list[int]:
        """The ids of the provider's items (empty for a name the catalogue does not know)."""
        return list(self._provider_apis.get(provider, []))

    def sources(self) -> list[dict]:
        """What the catalogue was built from: kind, name, detail, files, items (see sources.SourceInfo)."""
        return json.loads(self.meta.get("sources", "[]"))

    def source_kinds(self) -> set[str]:
        """The kinds of source the catalogue was built from (jsonl, openapi, mcp, mcp-listing, mcp-registry,
        public-apis, toolsdk, docker-mcp): the kinds of catalogue a ranking model's words may or may not have been
        calibrated on."""
        return {str(s.get("kind", "")) for s in self.sources() if s.get("kind")}

    def categories(self) -> list[Category]:
        """Every category tag with the number of APIs carrying it, by name (empty for a catalogue without
        categories, such as one built from MCP servers only)."""
        return list(self._categories)

    def category_names(self) -> list[str]:
        return [c.name for c in self._categories]

    def check_category(self, name: str) -> str:
        """The catalogue's spelling of a category name (case-insensitive); CategoryNotFound otherwise."""
        names = {c.casefold(): c for c in self._category_apis}
        if name.strip().casefold() in names:
            return names[name.strip().casefold()]
        # Close names only for a name of a name's length: difflib on a megabyte is minutes of CPU.
        close = difflib.get_close_matches(name, list(self._category_apis), n=3, cutoff=0.6) if len(name) <= 200 else []
        raise CategoryNotFound(name, close)

    def apis_in_categories(self, names: Iterable[str]) -> list[int]:
        """The APIs of these categories, each once, in the categories' order."""
        return self.first_apis_in_categories(names, None)[0]

    def first_apis_in_categories(self, names: Iterable[str], limit: int | None) -> tuple[list[int], int]:
        """The first `limit` APIs of these categories (each once, in the categories' order) and how many they hold.
        At a million items a few categories hold hundreds of thousands: their union is made over an id mask, not a
        dict of every id, and only the first `limit` become Python ints."""
        none = np.zeros(0, dtype=np.int64)
        arrays = [self._category_apis.get(name, none) for name in dict.fromkeys(names)]
        if len(arrays) == 1:  # a category lists each API once
            return arrays[0][:limit].tolist(), len(arrays[0])
        if not arrays:
            return [], 0
        seen = np.zeros(max((int(a.max()) for a in arrays if len(a)), default=0) + 1, dtype=bool)
        union = []
        for ids in arrays:
            ids = ids[~seen[ids]]
            seen[ids] = True
            union.append(ids)
        every = np.concatenate(union)
        return every[:limit].tolist(), len(every)

    def mashups(self) -> list[Mashup]:
        """Every mashup the catalogue may use (left-out ones are absent)."""
        return list(self._mashups.values())

    def get_mashup(self, mashup_id: int) -> Mashup:
        if mashup_id not in self._mashups:
            raise CatalogError(f"No mashup {mashup_id} in the catalogue (or it is left out).")
        return self._mashups[mashup_id]

    def usage_history(self, api_id: int) -> list[Mashup]:
        """The mashups that used this API, oldest id first."""
        self.get_api(api_id)
        return [self._mashups[m] for m in self._history.get(api_id, [])]

    def usage_count(self, api_id: int) -> int:
        return len(self._history.get(api_id, ()))

    def usage_counts(self) -> Counter:
        return Counter({api_id: len(ms) for api_id, ms in self._history.items()})

    def co_usage(self, api_id: int, limit: int | None = None) -> list[CoUser]:
        """The API's neighbours in the tool graph, heaviest first."""
        neighbours = sorted(self._co.get(api_id, {}).values(), key=lambda c: (-c.weight, -c.count, c.api_id))
        return neighbours[:limit] if limit else neighbours

    def co_usage_weight(self, a: int, b: int) -> float:
        edge = self._co.get(a, {}).get(b)
        return edge.weight if edge else 0.0

    # -- vectors -------------------------------------------------------------------------------
    def vectors(self, kind: str) -> VectorTable:
        if kind not in KINDS:
            raise CatalogError(f"Unknown vector kind {kind!r}; use one of {', '.join(KINDS)}.")
        return self._vectors[kind]

    def dense_search(self, kind: str) -> DenseSearch:
        """Search over one kind's vectors for the ranking: exact in a catalogue under 50,000 items, through an
        approximate index above (ann.py), made on first use."""
        with self._dense_lock:
            if kind not in self._dense:
                self._dense[kind] = DenseSearch.of(self.vectors(kind).matrix, self.path, build_key(self.meta), kind)
            return self._dense[kind]

    def embed(self, texts: list[str]) -> np.ndarray:
        if self.embedder is None:
            raise CatalogError("This catalogue was opened without an embedder, so it cannot embed text.")
        return self.embedder.embed(texts)

    def search(
        self,
        query: str | np.ndarray,
        kind: str = "api",
        k: int = 10,
        *,
        categories: Iterable[str] | None = None,
        exclude_mashups: Iterable[int] = (),
    ) -> list[Hit]:
        """Top-k items of `kind` by cosine similarity to `query` (a text or a unit vector).
        `categories` restricts APIs to those categories (categories to those names, mashups to those tags);
        `exclude_mashups` drops mashups on top of the catalogue's own leave-out."""
        table = self.vectors(kind)
        vector = self.embed([query])[0] if isinstance(query, str) else np.asarray(query, dtype=np.float32)
        scores = table.matrix @ vector
        mask = np.ones(len(table.ids), dtype=bool)
        if categories is not None:
            wanted = set(categories)
            if kind == "api":
                mask &= np.array([bool(wanted.intersection(self._apis[i].categories)) for i in table.ids], dtype=bool)
            elif kind == "category":
                mask &= np.array([name in wanted for name in table.ids], dtype=bool)
            else:
                mask &= np.array(
                    [bool(wanted.intersection(self._mashups[i].categories)) for i in table.ids], dtype=bool
                )
        if kind == "mashup" and exclude_mashups:
            dropped = set(exclude_mashups)
            mask &= np.array([i not in dropped for i in table.ids], dtype=bool)
        scores = np.where(mask, scores, -np.inf)
        k = min(k, int(mask.sum()))
        if k <= 0:
            return []
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.lexsort((top, -scores[top]))]
        return [Hit(kind=kind, id=table.ids[i], score=float(scores[i])) for i in top]

    def lexical(self, terms: Iterable[str], k: int = 50, among: Iterable[int] | None = None) -> list[Hit]:
        """Items that contain any of `terms`, ranked by BM25 (FTS5's bm25() over the name's words and the item's
        text, Porter-stemmed), best first; `among` keeps only those ids. Scores are positive, larger is better."""
        return self.lexical_scorer(terms)(k, among)

    def lexical_scorer(self, terms: Iterable[str]) -> Callable[[int, Iterable[int] | None], list[Hit]]:
        """`lexical` for these terms, asked as often as needed for one query read once: a need's best items, then
        the scores of candidates found otherwise (a second FTS5 query cost as much as the first)."""
        words = list(dict.fromkeys(t for t in terms if t))
        index = self._bm25() if words else None
        if index is not None:
            search = index.scorer(words)

            def indexed(k: int, among: Iterable[int] | None = None) -> list[Hit]:
                return [Hit(kind="api", id=i, score=s) for i, s in search(k, among)] if k > 0 else []

            return indexed
        # (rowid, score) of every item holding a word, best first; a Hit made only for what is asked
        every = self._fts5_rows(words, None, None) if words else []

        def answer(k: int, among: Iterable[int] | None = None) -> list[Hit]:
            if among is None:
                rows = every[: max(k, 0)]
            else:
                wanted = {int(i) for i in among}
                rows = [r for r in every if r[0] in wanted][: max(k, 0)]
            return [Hit(kind="api", id=int(i), score=float(score)) for i, score in rows]

        return answer

    def fts5(self, words: list[str], k: int = 50, among: Iterable[int] | None = None) -> list[Hit]:
        """FTS5's answer to `lexical`, whatever the catalogue's size: what the BM25 index of a large one is
        measured against (evaluation/growth.py)."""
        return [Hit(kind="api", id=int(i), score=float(score)) for i, score in self._fts5_rows(words, k, among)]

    def _fts5_rows(self, words: list[str], k: int | None, among: Iterable[int] | None) -> list[tuple[int, float]]:
        """(rowid, score) of the best k (every one where `k` is None)."""
        match = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
        sql = "select rowid, -bm25(items_fts) from items_fts where items_fts match ?"
        params: list = [match]
        if among is not None:
            ids = [int(i) for i in among]
            if not ids:
                return []
            sql += f" and rowid in ({','.join('?' * len(ids))})"
            params += ids
        sql += " order by bm25(items_fts)"
        if k is not None:
            sql += " limit ?"
            params.append(k)
        with self._lock:
            return self.db.execute(sql, params).fetchall()

    def _bm25(self) -> LexicalIndex | None:
        """A large catalogue's BM25 index (bm25.py), made on first use; None below bm25.FROM_ITEMS items, where
        FTS5 answers."""
        if self._lexical is None:
            with self._dense_lock:
                if self._lexical is None:
                    with self._lock:
                        items = self.db.execute("select count(*) from items_fts").fetchone()[0]

                    def rows() -> list[tuple[int, str, str]]:
                        with self._lock:
                            return self.db.execute("select rowid, name, body from items_fts order by rowid").fetchall()

                    path = bm25.index_path(self.path, build_key(self.meta))
                    self._lexical = False if items < bm25.FROM_ITEMS else LexicalIndex.open(rows, items, path)
        return self._lexical if isinstance(self._lexical, LexicalIndex) else None

    def close(self) -> None:
        self.db.close()
