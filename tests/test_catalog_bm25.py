"""The lexical search of a large catalogue: a BM25 index built on first use beside the catalogue and reused, which
ranks as the catalogue's FTS5 table does (here on the fixture catalogue, indexed as if it were large)."""

import importlib.util
import sys

import pytest

from tender.catalog import Catalog, bm25
from tender.ranking.lexical import query_terms

QUERIES = [
    "show restaurants on a map with their reviews",
    "send an SMS alert when a package ships",
    "weather forecast for a city",
    "share photos with friends",
    "music charts and artists",
]


def rankings(catalog: Catalog) -> list[list[int]]:
    """Each query's items by BM25, those that share a word of weight with it (FTS5 also lists, at a score near 0,
    the items that share only words found in most items, such as "and"; the index leaves them out)."""
    return [[h.id for h in catalog.lexical(query_terms(q), k=10) if h.score > 1e-3] for q in QUERIES]


def test_a_large_catalogue_ranks_by_bm25_as_fts5_does(catalog_path, embedder, monkeypatch):
    fts5 = Catalog(catalog_path, embedder=embedder)
    expected = rankings(fts5)
    assert fts5._bm25() is None

    monkeypatch.setattr(bm25, "FROM_ITEMS", 0)  # every catalogue is large
    indexed = Catalog(catalog_path, embedder=embedder)
    assert indexed._bm25() is not None
    assert rankings(indexed) == expected
    some = expected[0][:3]
    assert [h.id for h in indexed.lexical(query_terms(QUERIES[0]), k=10, among=some)] == [
        h.id for h in fts5.lexical(query_terms(QUERIES[0]), k=10, among=some)
    ]


def test_the_index_is_built_once_beside_the_catalogue_and_reused(catalog_path, embedder, monkeypatch):
    monkeypatch.setattr(bm25, "FROM_ITEMS", 0)
    first = rankings(Catalog(catalog_path, embedder=embedder))
    folders = list(catalog_path.parent.glob(f"{catalog_path.name}.*.bm25s"))
    assert len(folders) == 1 and not list(catalog_path.parent.glob("*.tmp-*"))
    stamp = (folders[0] / "rowids.npy").stat().st_mtime_ns
    assert rankings(Catalog(catalog_path, embedder=embedder)) == first  # a second server reads it
    assert (folders[0] / "rowids.npy").stat().st_mtime_ns == stamp


def test_without_bm25s_a_large_catalogue_says_what_to_install(catalog_path, embedder, monkeypatch):
    monkeypatch.setattr(bm25, "FROM_ITEMS", 0)
    monkeypatch.setitem(sys.modules, "bm25s", None)
    catalog = Catalog(catalog_path, embedder=embedder)
    with pytest.raises(bm25.TenderError, match=r"pip install 'bm25s"):
        catalog.lexical(["maps"])


@pytest.fixture(autouse=True)
def no_index_left(catalog_path):
    """The fixture catalogue is shared: each test's index goes with it."""
    yield
    import shutil

    for folder in catalog_path.parent.glob(f"{catalog_path.name}.*.bm25s"):
        shutil.rmtree(folder)


@pytest.mark.skipif(importlib.util.find_spec("usearch") is None, reason="the vectors' index needs the large extra")
def test_growth_measures_latency_and_both_indexes_recall(catalog_path, monkeypatch, capsys):
    import argparse
    import json

    from tender.catalog import ann
    from tender.evaluation import growth

    monkeypatch.setenv("TENDER_EMBEDDING_MODEL", "hashing")
    monkeypatch.setattr(bm25, "FROM_ITEMS", 0)
    monkeypatch.setattr(ann, "EXACT_BELOW", 0)
    growth.bench(argparse.Namespace(db=catalog_path, requests=3, seed=0))
    timed = json.loads(capsys.readouterr().out)
    assert timed["requests"] == 3 and timed["p50_ms"] > 0
    growth.recall(argparse.Namespace(db=catalog_path, queries=3, seed=0))
    measured = json.loads(capsys.readouterr().out)
    assert 0 <= measured["lexical_recall_at_50"] <= 1 and measured["api_recall_at_50"] > 0
    for path in catalog_path.parent.glob("*.usearch"):
        path.unlink()
