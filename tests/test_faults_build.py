"""Catalogue builds under faults: two builds of one file at once, an incomplete file, bad input."""

import sqlite3
import threading

import pytest

from tender.catalog import Catalog, HashingEmbedder, build_catalog
from tender.catalog.build import BuildInProgress, IncompleteBuild, check_complete
from tests.fixture_data import APIS


class GatedEmbedder(HashingEmbedder):
    """Holds the build inside its first embedding until `release` is set."""

    def __init__(self):
        super().__init__(256)
        self.started, self.release = threading.Event(), threading.Event()

    def embed(self, texts, progress=False):
        self.started.set()
        assert self.release.wait(30), "the test never released the build"
        return super().embed(texts, progress)


def test_a_second_build_of_the_same_catalogue_is_refused_and_the_first_completes(sources, tmp_path):
    path = tmp_path / "catalog.db"
    gated = GatedEmbedder()
    outcome = {}
    first = threading.Thread(target=lambda: outcome.update(meta=build_catalog(*sources, path, gated)))
    first.start()
    try:
        assert gated.started.wait(30), "the first build never started embedding"
        with pytest.raises(BuildInProgress, match="Another build of .*catalog.db is running"):
            build_catalog(*sources, path, HashingEmbedder(256))
    finally:
        gated.release.set()
        first.join(60)

    assert outcome["meta"]["apis"] == str(len(APIS))
    assert len(Catalog(path).api_ids()) == len(APIS)
    assert not list(tmp_path.glob("catalog.db.tmp-*"))
    build_catalog(*sources, path, HashingEmbedder(256))  # the lock is released afterwards


def test_builds_of_different_catalogues_run_side_by_side(sources, tmp_path):
    gated = GatedEmbedder()
    first = threading.Thread(target=build_catalog, args=(*sources, tmp_path / "a.db", gated))
    first.start()
    try:
        assert gated.started.wait(30)
        build_catalog(*sources, tmp_path / "b.db", HashingEmbedder(256))
    finally:
        gated.release.set()
        first.join(60)
    assert len(Catalog(tmp_path / "a.db").api_ids()) == len(Catalog(tmp_path / "b.db").api_ids()) == len(APIS)


def test_a_file_holding_only_meta_is_never_installed(tmp_path):
    stub = tmp_path / "stub.db"
    db = sqlite3.connect(stub)
    db.execute("create table meta (key text primary key, value text)")
    db.execute("insert into meta values ('apis', '12')")
    db.commit()
    db.close()

    with pytest.raises(IncompleteBuild, match="incomplete"):
        check_complete(stub, {"apis": "12"})


def test_a_complete_file_passes_the_check(catalog_path):
    check_complete(catalog_path, {"apis": str(len(APIS))})
