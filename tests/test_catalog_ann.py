"""The dense search of a large catalogue: an approximate index, built on first use beside the catalogue and reused,
whose shortlists are those of exact search (here on the fixture catalogue, indexed as if it were large)."""

import importlib.util

import pytest

from tender.catalog import Catalog, ann
from tender.catalog.ann import Similarities
from tender.ranking.retrieval import Ranker
from tender.ranking.vectors import QueryEncoder
from tender.ranking.choice import ranking_model

FUNCTIONS = ["show restaurants on a map", "send an SMS alert", "weather forecast for a city", "share photos"]

# Found without importing it: Tender imports usearch itself, in the order that keeps ONNX Runtime loadable.
NEEDS_USEARCH = pytest.mark.skipif(importlib.util.find_spec("usearch") is None, reason="usearch is not installed")


def shortlists(catalog: Catalog) -> list[list[tuple[int, float]]]:
    ranker = Ranker(catalog, QueryEncoder(catalog.embedder), ranking_model(None, catalog.embedder))
    return [[(c.item, c.score) for c in ranker.shortlist(f, f, exclude={1}).candidates] for f in FUNCTIONS]


@NEEDS_USEARCH
def test_an_indexed_catalogue_shortlists_as_exact_search_does(catalog_path, embedder, monkeypatch):
    exact = Catalog(catalog_path, embedder=embedder)
    expected = shortlists(exact)
    assert not isinstance(exact.dense_search("api").similarities(exact.vectors("api").matrix[0]), Similarities)

    monkeypatch.setattr(ann, "EXACT_BELOW", 0)  # every catalogue is large
    indexed = Catalog(catalog_path, embedder=embedder)
    assert isinstance(indexed.dense_search("api").similarities(indexed.vectors("api").matrix[0]), Similarities)
    assert shortlists(indexed) == expected
    files = sorted(p.name.split(".")[-2] for p in catalog_path.parent.glob("*.usearch"))
    assert files == ["api", "name"]  # beside the catalogue, one per kind

    again = Catalog(catalog_path, embedder=embedder)  # a second server reads the index, not builds it
    stamps = {p: p.stat().st_mtime_ns for p in catalog_path.parent.glob("*.usearch")}
    assert shortlists(again) == expected
    assert stamps == {p: p.stat().st_mtime_ns for p in catalog_path.parent.glob("*.usearch")}
    for path in stamps:
        path.unlink()


def test_without_usearch_a_large_catalogue_says_what_to_install(catalog_path, embedder, monkeypatch):
    import sys

    monkeypatch.setattr(ann, "EXACT_BELOW", 0)
    monkeypatch.setitem(sys.modules, "usearch.index", None)
    catalog = Catalog(catalog_path, embedder=embedder)
    with pytest.raises(ann.TenderError, match=r"pip install 'tender-mcp\[large\]'"):
        catalog.dense_search("api")


@NEEDS_USEARCH
def test_the_encoder_runtime_still_loads_once_the_approximate_index_has():
    import subprocess
    import sys

    code = "from tender.catalog.ann import _usearch; _usearch(1); import onnxruntime; print('loaded')"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "loaded" in done.stdout, (done.returncode, done.stderr[-500:])
