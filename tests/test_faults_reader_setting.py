"""A TENDER_READER_MODEL that names no usable model (issue 56, row 11): the CLI says what is wrong in one line and
exits 2; the server starts without the reader, says why once in its log, and every plan notes it (it used to die at
start with an opaque ExceptionGroup). A folder that is not there is said to be missing, not to lack a tokenizer;
a known encoder's name is its pulled folder, or said to be not pulled."""

import logging
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner
from mcp import Client, StdioServerParameters

from tender.catalog import models
from tender.cli import main
from tender.server.app import build_server
from tender.settings import BadSetting, Settings
from tests.server_support import REQUIREMENT, TENDER, ok, server_env, settings  # noqa: F401 (fixtures)
from tests.test_models_pull import entry
from tender.assembly import model_spec


def garbage_model(folder: Path) -> Path:
    """A folder that looks like a model and is not one: a tokenizer and weights of random bytes."""
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    (folder / "tokenizer.json").write_text('{"model": 3')
    (folder / "model.safetensors").write_bytes(bytes(range(256)) * 20)
    return folder


def bad_settings(tmp_path: Path) -> dict[str, tuple[str, str]]:
    """Each fault of the probe: (the value, what the one line says)."""
    (tmp_path / "empty").mkdir()
    (tmp_path / "a-file").write_text("x")
    return {
        "a missing folder": (
            str(tmp_path / "gone"),
            f"TENDER_READER_MODEL='{tmp_path / 'gone'}': there is no such folder",
        ),
        "a known encoder not pulled": (
            "embeddinggemma-300m",
            "embeddinggemma-300m is not pulled: `tender models pull embeddinggemma-300m` fetches it",
        ),
        "a folder without a tokenizer": (str(tmp_path / "empty"), "has no tokenizer.json"),
        "a garbage model": (str(garbage_model(tmp_path / "garbage")), "its model cannot be loaded"),
        "a file": (str(tmp_path / "a-file"), "is a file; set it to a model's folder"),
    }


@pytest.mark.parametrize(
    "fault",
    ["a missing folder", "a known encoder not pulled", "a folder without a tokenizer", "a garbage model", "a file"],
)
def test_the_cli_says_what_is_wrong_with_the_reader_in_one_line(catalog_path, tmp_path, fault):
    value, said = bad_settings(tmp_path)[fault]
    env = {
        "TENDER_HOME": str(tmp_path / "home"),
        "TENDER_CATALOG": str(catalog_path),
        "TENDER_EMBEDDING_MODEL": "hashing",
        "TENDER_READER_MODEL": value,
    }
    result = CliRunner().invoke(main, ["recommend", REQUIREMENT], env=env)
    assert result.exit_code == 2 and result.output.count("\n") == 1, result.output
    assert result.output.startswith("Error: TENDER_READER_MODEL=") and said in result.output, result.output
    assert "Traceback" not in result.output
    if fault == "a missing folder":
        assert "tokenizer" not in result.output


def test_a_known_encoders_name_is_its_pulled_folder(tmp_path, monkeypatch):
    monkeypatch.setattr(models, "KNOWN", {"tiny-encoder": entry("tiny-encoder")})
    settings = Settings(home=tmp_path)
    with pytest.raises(BadSetting, match="tiny-encoder is not pulled: `tender models pull tiny-encoder`"):
        model_spec(settings, "tiny-encoder", "TENDER_READER_MODEL")
    (tmp_path / "models" / "encoders" / "tiny-encoder.partial").mkdir(parents=True)
    with pytest.raises(BadSetting, match="a pull that did not finish: `tender models pull tiny-encoder`"):
        model_spec(settings, str(tmp_path / "models" / "encoders" / "tiny-encoder.partial"), "TENDER_READER_MODEL")
    (tmp_path / "models" / "encoders" / "tiny-encoder").mkdir()
    assert model_spec(settings, "tiny-encoder", "TENDER_READER_MODEL") == str(
        tmp_path / "models" / "encoders" / "tiny-encoder"
    )


async def test_the_server_starts_without_the_reader_says_why_once_and_every_plan_notes_it(settings, tmp_path, caplog):
    bad = replace(settings, home=tmp_path, reader_model=str(tmp_path / "gone"))
    with caplog.at_level(logging.WARNING, logger="tender.server"):
        async with Client(build_server(bad)) as client:
            plans = [ok(await client.call_tool("recommend_apis", {"requirement": REQUIREMENT})) for _ in range(2)]
    assert all(plan["apis"] for plan in plans)
    for plan in plans:
        (note,) = [n for n in plan["notes"] if "reader is off" in n]
        assert "there is no such folder" in note and "the catalogue's encoder read this plan's shortlists" in note
    said = [r.getMessage() for r in caplog.records if "TENDER_READER_MODEL" in r.getMessage()]
    assert len(said) == 1 and "The server starts without the reader" in said[0]


async def test_the_stdio_server_starts_and_plans_with_a_reader_folder_that_is_not_there(server_env, tmp_path):
    env = server_env | {"TENDER_HOME": str(tmp_path), "TENDER_READER_MODEL": str(tmp_path / "gone")}
    async with Client(StdioServerParameters(command=TENDER, args=["serve"], env=env)) as client:
        plan = ok(await client.call_tool("recommend_apis", {"requirement": REQUIREMENT}))
    assert plan["apis"] and any("reader is off" in note for note in plan["notes"])
