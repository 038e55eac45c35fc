import json
import os
from pathlib import Path

import pytest

from tender.catalog import Catalog, HashingEmbedder, build_catalog
from tests.fixture_data import api_rows, mashup_rows

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = ROOT.parent / "shared" / "data" / "programmableweb"


def write_jsonl(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def embedder():
    return HashingEmbedder(256)


@pytest.fixture(scope="session")
def sources(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sources")
    return write_jsonl(folder / "apis.jsonl", api_rows()), write_jsonl(folder / "mashups.jsonl", mashup_rows())


@pytest.fixture(scope="session")
def catalog_path(sources, embedder, tmp_path_factory):
    path = tmp_path_factory.mktemp("catalog") / "catalog.db"
    build_catalog(*sources, path, embedder)
    return path


@pytest.fixture
def catalog(catalog_path, embedder):
    cat = Catalog(catalog_path, embedder=embedder)
    yield cat
    cat.close()
