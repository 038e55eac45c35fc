"""The read-only Catalog: records, usage history, co-usage, vector search and leaving mashups out."""

import os

import numpy as np
import pytest

from tender.catalog import (
    ApiNotFound,
    Catalog,
    CatalogMissing,
    CategoryNotFound,
    SentenceTransformerEmbedder,
    build_catalog,
)
from tender.catalog.pooling import pool_parts
from tests.conftest import SHARED_DATA
from tests.fixture_data import MASHUPS


def test_get_api_by_id_digits_or_name(catalog):
    assert catalog.get_api(3).name == "Yelp"
    assert catalog.get_api("3").name == "Yelp"
    assert catalog.get_api("  yelp ").id == 3
    with pytest.raises(ApiNotFound, match="search_apis"):
        catalog.get_api("Nope")
    with pytest.raises(ApiNotFound):
        catalog.get_api(999)


def test_categories_with_counts(catalog):
    counts = {c.name: c.api_count for c in catalog.categories()}
    assert counts["Mapping"] == 3 and counts["Weather"] == 2
    assert catalog.check_category("mapping") == "Mapping"
    with pytest.raises(CategoryNotFound, match="Mapping"):
        catalog.check_category("Mapings")


def test_usage_history_lists_the_mashups_that_used_an_api(catalog):
    assert {m.id for m in catalog.usage_history(3)} == {i for i, _, _, ids in MASHUPS if 3 in ids}
    assert catalog.usage_count(0) == sum(1 for *_, ids in MASHUPS if 0 in ids)


def test_co_usage_neighbours_heaviest_first(catalog):
    neighbours = catalog.co_usage(3)
    assert neighbours[0].api_id == 0 and neighbours[0].count == 3
    assert [n.weight for n in neighbours] == sorted((n.weight for n in neighbours), reverse=True)
    assert catalog.co_usage_weight(3, 0) == catalog.co_usage_weight(0, 3) > 0


def test_vector_search_ranks_by_cosine(catalog):
    hits = catalog.search("weather forecast", kind="api", k=3)
    assert hits[0].id in (9, 10)
    assert hits == sorted(hits, key=lambda h: -h.score)
    query = catalog.embed(["weather forecast"])[0]
    table = catalog.vectors("api")
    assert hits[0].score == pytest.approx(float(table.vector(hits[0].id) @ query), abs=1e-6)


def test_vector_search_restricted_to_categories(catalog):
    hits = catalog.search("weather forecast", kind="api", k=5, categories=["Mapping"])
    assert {h.id for h in hits} <= {0, 1, 2}
    assert [h.id for h in catalog.search("mapping", kind="category", k=1)] == ["Mapping"]


def test_vector_search_over_mashups_can_exclude_ids(catalog):
    first = catalog.search("restaurants reviews map", kind="mashup", k=3)
    dropped = catalog.search("restaurants reviews map", kind="mashup", k=3, exclude_mashups={first[0].id})
    assert first[0].id not in {h.id for h in dropped}


def test_excluded_mashups_are_gone_from_history_co_usage_and_search(catalog_path, embedder):
    left_out = {0, 2, 25}  # every mashup pairing Google Maps with Yelp
    cat = Catalog(catalog_path, embedder=embedder, exclude_mashups=left_out)
    assert not left_out & {m.id for m in cat.usage_history(0)}
    assert not left_out & {m.id for m in cat.mashups()}
    assert cat.co_usage_weight(0, 3) == 0 and 0 not in {n.api_id for n in cat.co_usage(3)}
    assert not left_out & set(cat.vectors("mashup").ids)
    assert not left_out & {h.id for h in cat.search("restaurants reviews map", kind="mashup", k=40)}
    full = Catalog(catalog_path, embedder=embedder)
    assert cat.usage_count(0) == full.usage_count(0) - 3
    # Weights are recomputed from the remaining history, not just filtered.
    assert cat.co_usage_weight(0, 5) > full.co_usage_weight(0, 5)


def test_missing_catalogue_says_how_to_build_it(tmp_path):
    with pytest.raises(CatalogMissing, match="tender catalog build"):
        Catalog(tmp_path / "none.db")


@pytest.mark.real_model
def test_the_bundled_minilm_model_embeds_offline(sources, tmp_path):
    embedder = SentenceTransformerEmbedder()
    vectors = embedder.embed(["a map of restaurants", "restaurant locations on a map", "send a text message"])
    assert vectors.shape == (3, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.2
    path = tmp_path / "catalog.db"
    build_catalog(*sources, path, embedder)
    cat = Catalog(path, embedder=embedder)
    assert cat.model_name == "all-MiniLM-L6-v2"
    assert cat.search("forecast of rain and sun", k=1)[0].id in (9, 10)


@pytest.mark.real_data
def test_the_real_programmableweb_catalogue_has_the_documented_counts(tmp_path):
    from tender.catalog import HashingEmbedder

    if not (SHARED_DATA / "apis.jsonl").is_file() and not os.environ.get("CI"):
        pytest.skip(f"the ProgrammableWeb data is not at {SHARED_DATA} (CI always has it)")
    path = tmp_path / "catalog.db"
    meta = build_catalog(SHARED_DATA / "apis.jsonl", SHARED_DATA / "mashups.jsonl", path, HashingEmbedder(32))
    assert (meta["apis"], meta["mashups"], meta["categories"]) == ("940", "4493", "355")
    cat = Catalog(path)
    assert len(cat.apis()) == 940 and len(cat.mashups()) == 4493 and len(cat.categories()) == 355
    assert cat.usage_count(cat.get_api("Google Maps").id) == 1687


@pytest.mark.real_model
def test_one_model_pass_gives_a_text_and_its_parts_read_in_context():
    embedder = SentenceTransformerEmbedder()
    text = "Show restaurants on a map, read their reviews, and send a text message reminder."
    parts = ["Show restaurants on a map", "read their reviews", "send a text message reminder", "not in the text"]
    whole, vectors = pool_parts(text, parts, *embedder.tokens(text))
    assert float(whole @ embedder.embed([text])[0]) == pytest.approx(1.0, abs=1e-5)
    assert vectors[3] is None
    alone = embedder.embed(parts[:3])
    for i, vector in enumerate(vectors[:3]):
        assert np.linalg.norm(vector) == pytest.approx(1.0, abs=1e-5)
        # Each part in context stays closest to the same part embedded alone.
        assert int(np.argmax(alone @ vector)) == i


def test_the_apis_of_several_categories_come_each_once_in_the_categories_order(catalog):
    names = [c.name for c in sorted(catalog.categories(), key=lambda c: -c.api_count)[:3]]
    each = [[a.id for a in catalog.apis() if name in a.categories] for name in names]
    union = list(dict.fromkeys(i for ids in each for i in ids))
    assert catalog.apis_in_categories(names) == union
    assert catalog.first_apis_in_categories([*names, names[0]], 2) == (union[:2], len(union))
    assert catalog.first_apis_in_categories([], 5) == ([], 0)
