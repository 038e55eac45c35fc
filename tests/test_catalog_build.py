"""Building catalog.db: schema, counts, incremental rebuilds, bad input, interruptions."""

import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from tender.catalog import Api, Catalog, HashingEmbedder, MalformedInput, build_catalog
from tests.conftest import write_jsonl
from tests.fixture_data import APIS, MASHUPS, api_rows, mashup_rows


class CountingEmbedder(HashingEmbedder):
    """The hashing embedder, counting the texts it is asked to embed."""

    def __init__(self):
        super().__init__(256)
        self.texts = []

    def embed(self, texts, progress=False, role="query"):
        self.texts.extend(texts)
        return super().embed(texts, progress)


def table_counts(path):
    db = sqlite3.connect(path)
    return {
        t: db.execute(f"select count(*) from [{t}]").fetchone()[0]
        for t in ("apis", "categories", "api_categories", "mashups", "mashup_apis", "embeddings", "co_usage", "meta")
    }


def test_build_creates_every_table_with_the_source_counts(catalog_path):
    counts = table_counts(catalog_path)
    categories = {c for _, _, cs, _ in APIS for c in cs}
    assert counts["apis"] == len(APIS)
    assert counts["mashups"] == len(MASHUPS)
    assert counts["categories"] == len(categories)
    assert counts["api_categories"] == sum(len(cs) for _, _, cs, _ in APIS)
    assert counts["mashup_apis"] == sum(len(ids) for *_, ids in MASHUPS)
    assert counts["embeddings"] == 2 * len(APIS) + len(categories) + len(MASHUPS)  # an item's text and its name


def test_schema_has_foreign_keys_indexes_and_full_text_search(catalog_path):
    db = sqlite3.connect(catalog_path)
    fks = {row[2] for row in db.execute("pragma foreign_key_list(api_categories)")}
    assert fks == {"apis", "categories"}
    assert {row[2] for row in db.execute("pragma foreign_key_list(mashup_apis)")} == {"mashups", "apis"}
    indexed = {row[1] for row in db.execute("select * from sqlite_master where type = 'index'")}
    assert any("mashup_apis" in name for name in indexed)
    hits = db.execute("select rowid from items_fts where items_fts match 'restaurant'").fetchall()
    assert {r[0] for r in hits} == {3, 4}
    assert not db.execute("pragma foreign_key_check").fetchall()


def test_the_lexical_index_stems_and_splits_names_into_words(tmp_path, embedder):
    from tender.catalog import Api, Catalog
    from tender.catalog.build import build_from_sources
    from tender.catalog.sources import Loaded
    from tender.catalog.sources.base import SourceInfo

    path = tmp_path / "tools.db"
    apis = [
        Api(id=0, name="CourseTool", description="Find online classes."),
        Api(id=1, name="sendEmailWithTemplate", description="Delivers a message to an inbox."),
        Api(id=2, name="get_weather", description="Forecasts for a city."),
    ]
    build_from_sources([Loaded(info=SourceInfo(kind="jsonl", name="test"), apis=apis)], path, embedder)
    catalog = Catalog(path)
    assert [h.id for h in catalog.lexical(["courses"])] == [0]  # the name's word, stemmed
    assert [h.id for h in catalog.lexical(["emails", "sending"])] == [1]
    assert [h.id for h in catalog.lexical(["weather", "forecast"], among=[1, 2])] == [2]
    assert catalog.lexical(["zebra"]) == []


def test_co_usage_counts_pairs_of_apis_used_together(catalog_path):
    db = sqlite3.connect(catalog_path)
    count, weight = db.execute("select count, weight from co_usage where api_a = 0 and api_b = 3").fetchone()
    together = sum(1 for *_, ids in MASHUPS if 0 in ids and 3 in ids)
    either = sum(1 for *_, ids in MASHUPS if 0 in ids or 3 in ids)
    assert count == together == 3
    assert weight == pytest.approx(together / either)
    assert db.execute("select count from co_usage where api_a = 3 and api_b = 0").fetchone()[0] == count


def test_meta_records_model_counts_and_source_hashes(catalog_path):
    meta = Catalog(catalog_path).meta
    assert meta["model"] == "hashing-256"
    assert meta["apis"] == str(len(APIS))
    assert len(meta["sources"]) > 100 and "sha256" in meta["sources"]
    assert float(meta["build_seconds"]) >= 0


def test_rebuild_with_nothing_changed_embeds_nothing(sources, tmp_path):
    path = tmp_path / "catalog.db"
    first = CountingEmbedder()
    build_catalog(*sources, path, first)
    assert len(first.texts) > 0
    again = CountingEmbedder()
    meta = build_catalog(*sources, path, again)
    assert again.texts == []
    assert meta["texts_embedded"] == "0"


def test_rebuild_embeds_only_changed_texts(sources, tmp_path):
    path = tmp_path / "catalog.db"
    build_catalog(*sources, path, CountingEmbedder())
    rows = api_rows()
    rows[5]["description"] = "Flickr, now with a brand-new description."
    apis = write_jsonl(tmp_path / "apis.jsonl", rows)
    counting = CountingEmbedder()
    build_catalog(apis, sources[1], path, counting)
    assert counting.texts == [Api(**rows[5]).text()]


class WordCountingEmbedder(CountingEmbedder):
    """Counts its tokens as words, and keeps each call's texts apart."""

    def __init__(self):
        super().__init__()
        self.calls = []

    def lengths(self, texts, role="document"):
        return [len(text.split()) for text in texts]

    def embed(self, texts, progress=False, role="query"):
        self.calls.append(list(texts))
        return super().embed(texts, progress)


def test_texts_reach_the_model_shortest_first_so_that_batches_pad_little(sources, tmp_path):
    embedder = WordCountingEmbedder()
    build_catalog(*sources, tmp_path / "catalog.db", embedder)
    assert len(embedder.calls) >= 2  # one call a kind of text at this size
    for texts in embedder.calls:
        words = embedder.lengths(texts)
        assert words == sorted(words)
    assert len(set(embedder.lengths(embedder.calls[0]))) > 1  # the order was not given by the data


@pytest.mark.parametrize(
    "line, problem",
    [
        ('{"id": 3, "name": ', "not valid JSON"),
        ('{"id": "x", "name": "Bad"}', "id"),
        ('{"id": 99}', "name"),
    ],
)
def test_malformed_line_names_file_and_line_and_writes_nothing(sources, tmp_path, line, problem):
    path = tmp_path / "catalog.db"
    build_catalog(*sources, path, HashingEmbedder())
    before = path.read_bytes()
    text = sources[0].read_text().splitlines()
    text.insert(6, line)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(text) + "\n")
    with pytest.raises(MalformedInput) as caught:
        build_catalog(bad, sources[1], path, HashingEmbedder())
    assert caught.value.line == 7 and str(bad) in str(caught.value) and problem in str(caught.value)
    assert path.read_bytes() == before
    assert not list(tmp_path.glob("catalog.db.tmp-*"))


def test_unknown_api_in_a_mashup_is_malformed(sources, tmp_path):
    rows = mashup_rows()
    rows[2]["api_ids"] = [0, 999]
    bad = write_jsonl(tmp_path / "mashups.jsonl", rows)
    with pytest.raises(MalformedInput, match=r"line 3: api_ids \[999\]"):
        build_catalog(sources[0], bad, tmp_path / "catalog.db", HashingEmbedder())


def test_cli_malformed_input_exits_2_with_the_line(sources, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(sources[0].read_text() + "{oops\n")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "tender",
            "catalog",
            "build",
            "--apis",
            str(bad),
            "--mashups",
            str(sources[1]),
            "--db",
            str(tmp_path / "c.db"),
            "--quiet",
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "TENDER_EMBEDDING_MODEL": "hashing"},
    )
    assert result.returncode == 2
    assert f"line {len(APIS) + 1}" in result.stderr
    assert not (tmp_path / "c.db").exists()


class SlowEmbedder(HashingEmbedder):
    def embed(self, texts, progress=False, role="query"):
        time.sleep(30)
        return super().embed(texts, progress)


def test_interrupted_build_leaves_the_previous_catalogue_intact(sources, tmp_path):
    path = tmp_path / "catalog.db"
    build_catalog(*sources, path, HashingEmbedder(128))  # a different model: the next build must embed
    before = path.read_bytes()
    script = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "from tests.test_catalog_build import SlowEmbedder; from tender.catalog import build_catalog;"
        "build_catalog(sys.argv[2], sys.argv[3], sys.argv[4], SlowEmbedder())"
    )
    from tests.conftest import ROOT

    proc = subprocess.Popen([sys.executable, "-c", script, str(ROOT), str(sources[0]), str(sources[1]), str(path)])
    deadline = time.time() + 20
    while not list(tmp_path.glob("catalog.db.tmp-*")) and time.time() < deadline:
        time.sleep(0.05)
    assert list(tmp_path.glob("catalog.db.tmp-*")), "the build never started writing"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert path.read_bytes() == before
    assert Catalog(path).meta["model"] == "hashing-128"
    # The next build clears the dead build's temporary file.
    build_catalog(*sources, path, HashingEmbedder())
    assert not list(tmp_path.glob("catalog.db.tmp-*"))


def test_build_can_leave_mashups_out(sources, tmp_path):
    path = tmp_path / "catalog.db"
    build_catalog(*sources, path, HashingEmbedder(), exclude_mashups={0, 2})
    cat = Catalog(path)
    assert {m.id for m in cat.mashups()}.isdisjoint({0, 2})
    assert cat.meta["excluded_mashups"] == "2"


def test_a_build_over_a_catalogue_of_other_sources_says_it_replaced_it(sources, tmp_path):
    from click.testing import CliRunner

    from tender.cli import main

    db = tmp_path / "catalog.db"
    env = {"TENDER_EMBEDDING_MODEL": "hashing", "TENDER_HOME": str(tmp_path / "home")}
    (tmp_path / "README.md").write_text(
        "## Weather\n\n| API | Description | Auth | HTTPS | CORS |\n|---|---|---|---|---|\n"
        "| [Sky](https://sky.example) | Forecasts for a city | No | Yes | Yes |\n"
    )
    build = ["catalog", "build", "--quiet", "--db", str(db)]
    first = CliRunner().invoke(main, [*build, "--apis", str(sources[0]), "--no-mashups"], env=env)
    same = CliRunner().invoke(main, [*build, "--apis", str(sources[0]), "--no-mashups"], env=env)
    other = CliRunner().invoke(main, [*build, "--public-apis", str(tmp_path / "README.md")], env=env)

    assert first.exit_code == same.exit_code == other.exit_code == 0, (first.output, same.output, other.output)
    assert "replaced" not in first.output and "replaced" not in same.output
    assert "replaced the catalogue that file held (built from jsonl" in other.output


def test_one_lexical_query_answers_a_need_s_best_items_and_any_candidate_s_score_as_fts5_does(catalog_path):
    from tender.catalog import Catalog

    catalog = Catalog(catalog_path)
    terms = ["restaurant", "map", "photos", "weather"]
    scorer = catalog.lexical_scorer(terms)
    assert scorer(3, None) == catalog.fts5(terms, 3)
    every = [h.id for h in catalog.fts5(terms, 100)]
    assert len(every) >= 2
    among = every[::-1][:2] + [10_000]  # an id no item has
    assert scorer(5, among) == catalog.fts5(terms, 5, among)
    assert catalog.lexical_scorer([])(5, None) == []
