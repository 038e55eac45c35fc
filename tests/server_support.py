"""Shared by the server tests: settings on the fixture catalogue, and the structured result of a call."""

import os
import sys
from pathlib import Path

import pytest

from tender.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
TENDER = str(Path(sys.executable).with_name("tender"))
REQUIREMENT = "Show nearby restaurants on a map with their reviews"


@pytest.fixture
def settings(catalog_path, tmp_path) -> Settings:
    return Settings(catalog_path=catalog_path, runs_path=tmp_path / "runs.db", embedding_model="hashing")


@pytest.fixture
def server_env(catalog_path, tmp_path) -> dict[str, str]:
    """Environment for `tender serve` as a subprocess on the fixture catalogue."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TENDER_")}
    return env | {"TENDER_CATALOG": str(catalog_path), "TENDER_RUNS": str(tmp_path / "runs.db"),
                  "TENDER_EMBEDDING_MODEL": "hashing"}


def error_text(result) -> str:
    assert result.is_error, result.structured_content
    return result.content[0].text


def ok(result) -> dict:
    assert not result.is_error, result.content[0].text if result.content else result
    return result.structured_content
