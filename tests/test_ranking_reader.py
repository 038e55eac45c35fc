"""A reader (a strong encoder) re-reads each function's shortlist: the candidates are the catalogue encoder's and
BM25's, their evidence the reader's, and an item's vectors are made once and kept."""

import numpy as np

from tender.agents.request import Request
from tender.agents.service import Tender
from tender.catalog import HashingEmbedder
from tender.ranking.reader import Reader
from tender.ranking.retrieval import Ranker
from tender.ranking.scorer import MODEL_FILE, Scorer
from tender.ranking.vectors import QueryEncoder


class Counting(HashingEmbedder):
    """Another encoder than the catalogue's (other dimensions), counting the documents it embeds."""

    def __init__(self):
        super().__init__(64)
        self.documents = 0

    def embed(self, texts, progress=False, role="query"):
        if role == "document":
            self.documents += len(texts)
        return super().embed(texts, progress, role)


def test_with_a_reader_the_evidence_is_the_reader_s_similarity_over_the_shortlist(catalog, tmp_path):
    reader = Reader(Counting(), tmp_path / "cache")
    ranker = Ranker(catalog, QueryEncoder(catalog.embedder), Scorer.load(MODEL_FILE), reader)
    plain = Ranker(catalog, QueryEncoder(catalog.embedder), Scorer.load(MODEL_FILE))
    read, alone = ranker.shortlist("weather forecast", "weather forecast"), plain.shortlist("weather", "weather")
    assert {c.item for c in read.candidates} == {
        c.item for c in plain.shortlist("weather forecast", "weather forecast").candidates
    }
    best = read.candidates[0]
    api = catalog.get_api(best.item)
    expected = float(
        reader.embedder.embed([api.text()], role="document")[0] @ reader.embedder.embed(["weather forecast"])[0]
    )
    assert best.evidence.dense == round(expected, 6)
    # Ranks and gaps are the shortlist's: its best candidate by the reader has rank 1 and gap 0.
    top = max(read.candidates, key=lambda c: c.evidence.dense)
    assert top.evidence.dense_rank == 1 and top.evidence.dense_gap == 0
    assert alone.candidates  # the plain ranker is untouched by the reader


def test_an_item_is_read_once_and_kept_beyond_the_process(catalog, tmp_path):
    first = Reader(Counting(), tmp_path / "cache")
    ranker = Ranker(catalog, QueryEncoder(catalog.embedder), Scorer.load(MODEL_FILE), first)
    ranker.shortlist("weather forecast", "weather forecast")
    made = first.embedder.documents
    assert made > 0
    ranker.shortlist("weather forecast on a map", "weather forecast on a map")
    ranker.shortlist("weather forecast", "weather forecast")
    assert first.embedder.documents < 2 * made  # the second shortlist shares items with the first: not re-read
    again = Reader(Counting(), tmp_path / "cache")  # a new process, the same cache folder
    Ranker(catalog, QueryEncoder(catalog.embedder), Scorer.load(MODEL_FILE), again).shortlist(
        "weather forecast", "weather forecast"
    )
    assert again.embedder.documents == 0
    vectors = again.items(catalog, "api", [a.id for a in catalog.apis()[:3]])
    assert vectors.shape == (3, 64) and np.allclose(np.linalg.norm(vectors, axis=1), 1.0)


def test_a_plan_with_a_reader_serves_the_request(catalog, tmp_path):
    tender = Tender(catalog, reader=Reader(Counting(), tmp_path / "cache"))
    plan = tender.recommend(Request.create("weather forecast on a map")).plan
    assert any("Weather" in a.name for a in plan.apis)


def test_read_ahead_makes_every_item_s_vectors_so_that_no_plan_waits_for_them(catalog_path, tmp_path, monkeypatch):
    from click.testing import CliRunner

    from tender.catalog import Catalog
    from tender.cli import main

    monkeypatch.setenv("TENDER_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TENDER_CATALOG", str(catalog_path))
    monkeypatch.setenv("TENDER_EMBEDDING_MODEL", "hashing")
    refused = CliRunner().invoke(main, ["catalog", "read-ahead", "--quiet"])
    assert refused.exit_code == 2 and "TENDER_READER_MODEL" in refused.output
    monkeypatch.setenv("TENDER_READER_MODEL", "hashing-64")
    done = CliRunner().invoke(main, ["catalog", "read-ahead", "--quiet"])
    assert done.exit_code == 0, done.output
    catalog = Catalog(catalog_path, embedder=HashingEmbedder(256))
    later = Reader(Counting(), tmp_path / "home" / "cache")  # what a server opens afterwards
    Ranker(catalog, QueryEncoder(catalog.embedder), Scorer.load(MODEL_FILE), later).shortlist("maps", "maps")
    assert later.embedder.documents == 0


def test_a_small_catalogue_built_with_a_reader_set_is_read_at_build(sources, tmp_path, monkeypatch):
    from click.testing import CliRunner

    from tender.catalog import Catalog
    from tender.cli import main

    monkeypatch.setenv("TENDER_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TENDER_EMBEDDING_MODEL", "hashing")
    monkeypatch.setenv("TENDER_READER_MODEL", "hashing-64")
    apis, mashups = map(str, sources)
    db = tmp_path / "built.db"
    built = CliRunner().invoke(
        main, ["catalog", "build", "--apis", apis, "--mashups", mashups, "--db", str(db), "--quiet"]
    )
    assert built.exit_code == 0, built.output
    assert "Read " in built.output
    catalog = Catalog(db, embedder=HashingEmbedder(256))
    later = Reader(Counting(), tmp_path / "home" / "cache")
    Ranker(catalog, QueryEncoder(catalog.embedder), Scorer.load(MODEL_FILE), later).shortlist("maps", "maps")
    assert later.embedder.documents == 0
