"""What Tender writes is its user's alone: the catalogue, the runs database and the LLM cache are created 0600
(their -wal and -shm files too), in folders Tender creates 0700, whatever the umask lets other users read."""

import os
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from tender.agents.reasoners.cache import Completion, ResponseCache
from tender.cli import main
from tests.server_support import REQUIREMENT


@pytest.fixture(autouse=True)
def usual_umask():
    """The common default, under which a new file is 0644 unless its maker says otherwise."""
    previous = os.umask(0o022)
    yield
    os.umask(previous)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_catalogue_built_into_a_new_folder_is_0600_in_a_0700_folder(sources, tmp_path):
    home = tmp_path / "home"
    env = {"TENDER_HOME": str(home), "TENDER_EMBEDDING_MODEL": "hashing"}

    built = CliRunner().invoke(
        main, ["catalog", "build", "--quiet", "--apis", str(sources[0]), "--mashups", str(sources[1])], env=env
    )
    assert built.exit_code == 0, built.output
    again = CliRunner().invoke(
        main, ["catalog", "build", "--quiet", "--apis", str(sources[0]), "--mashups", str(sources[1])], env=env
    )
    assert again.exit_code == 0, again.output  # a rebuild installs a new file: it is private too

    assert mode(home) == 0o700
    assert {path.name: mode(path) for path in home.iterdir()} == {"catalog.db": 0o600, "catalog.db.lock": 0o600}


def test_the_runs_database_and_llm_cache_of_a_recommendation_are_0600(catalog_path, tmp_path):
    home = tmp_path / "home"
    env = {
        "TENDER_CATALOG": str(catalog_path),
        "TENDER_RUNS": str(home / "runs" / "runs.db"),
        "TENDER_EMBEDDING_MODEL": "hashing",
    }

    result = CliRunner().invoke(main, ["recommend", REQUIREMENT], env=env)
    assert result.exit_code == 0, result.output
    cache = ResponseCache(home / "llm-cache.db")
    cache.put({"model": "m", "messages": []}, Completion("{}", 1, 1))

    files = sorted(path for path in home.rglob("*") if path.is_file())
    assert {path.name for path in files} >= {"runs.db", "llm-cache.db", "llm-cache.db-wal"}
    assert {path.name: mode(path) for path in files} == {path.name: 0o600 for path in files}
    assert mode(home) == mode(home / "runs") == 0o700
    cache.close()


def test_an_existing_folder_keeps_its_mode(sources, tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    env = {"TENDER_HOME": str(tmp_path / "home"), "TENDER_EMBEDDING_MODEL": "hashing"}

    result = CliRunner().invoke(
        main,
        ["catalog", "build", "--quiet", "--apis", str(sources[0]), "--no-mashups", "--db", str(shared / "c.db")],
        env=env,
    )

    assert result.exit_code == 0, result.output
    assert mode(shared) == 0o755 and mode(shared / "c.db") == 0o600
