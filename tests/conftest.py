import json
import os
import tempfile
from pathlib import Path

import pytest

from tender.catalog import Catalog, HashingEmbedder, build_catalog
from tests.fixture_data import api_rows, mashup_rows

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parent.parent
# The caller's settings never reach a test: a user of Tender runs the tests with their TENDER_CATALOG, TENDER_HOME or
# an LLM endpoint set, and a test that read them (or built into them) would fail, or replace their catalogue. Read
# at import, before any test module: subprocesses the tests start inherit this environment too.
_CALLERS = sorted(k for k in os.environ if k.startswith(("TENDER_", "OPENAI_")) and not k.startswith("TENDER_TEST_"))
for _name in _CALLERS:
    del os.environ[_name]
os.environ["TENDER_HOME"] = tempfile.mkdtemp(prefix="tender-tests-home-")
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


# -- lanes ---------------------------------------------------------------------------------------------------
# Every lane is a marker (registered in pyproject.toml); `make test-fast` runs the tests that carry none of them.
# A test that uses a PostgreSQL server (the postgres_server fixture, directly or through postgres_url) is marked
# `postgres` here, so that no test needs to say it twice.


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "postgres_server" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.postgres)


# -- the runs store on PostgreSQL ---------------------------------------------------------------------------
# The runs-store tests run against SQLite and PostgreSQL alike (`runs_location`). The server is
# TENDER_TEST_POSTGRES where set (.ci/run starts one), else a cluster this session starts (tests/postgres.py);
# where neither can be had, the PostgreSQL cases skip and say why.


@pytest.fixture(scope="session")
def postgres_server():
    """The URL of a PostgreSQL server the tests may create databases on."""
    try:
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError:
        pytest.skip("psycopg 3 is not installed: pip install 'tender-mcp[postgres]'")
    if os.environ.get("TENDER_TEST_POSTGRES"):
        yield os.environ["TENDER_TEST_POSTGRES"]
        return
    from tests.postgres import NoCluster, start, stop

    try:
        cluster = start()
    except NoCluster as error:
        pytest.skip(f"PostgreSQL could not start: {error}")
    yield cluster.url
    stop(cluster.folder)


@pytest.fixture
def postgres_url(postgres_server):
    """A new, empty database on that server for one test, dropped after it."""
    import uuid
    from urllib.parse import urlsplit

    import psycopg

    name = f"tender_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_server, autocommit=True) as admin:
        admin.execute(f'create database "{name}"')
    yield urlsplit(postgres_server)._replace(path=f"/{name}").geturl()
    with psycopg.connect(postgres_server, autocommit=True) as admin:
        admin.execute(f'drop database if exists "{name}" with (force)')


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def runs_location(request, tmp_path) -> Path | str:
    """Where a test's runs are kept: a runs.db file, or a PostgreSQL database of its own."""
    if request.param == "sqlite":
        return tmp_path / "runs.db"
    return request.getfixturevalue("postgres_url")
