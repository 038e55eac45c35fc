"""TENDER_REQUEST_MODEL, the model that reads requests (issue 61): a pulled model's name, a .gguf file or "rules";
unset, the rules, as before (the model is opt-in: docs/local-reader.md says why). `tender models pull` fetches the
publisher's GGUF, sha256-checked, into TENDER_HOME/models/language, and `tender doctor` says what reads requests.
No network and no model: a fake endpoint serves a tiny stand-in file, entered in the table in place of the real one."""

import hashlib
from dataclasses import replace

import pytest
from click.testing import CliRunner

from tender.catalog import models
from tender.catalog.models import KNOWN, REQUEST_MODEL, KnownModel, language_dir
from tender.cli import main
from tender.server.doctor import _request_model
from tender.settings import BadSetting, Settings
from tests.test_models_pull import FakeHub
from tender.assembly import request_model_file, text_model_for

GGUF = b"GGUF" + bytes(range(200))
NAME = "tiny-reader"
FILE = "tiny-reader-q4.gguf"


def settings(tmp_path, value: str | None) -> Settings:
    return replace(Settings.from_env({"TENDER_HOME": str(tmp_path)}), request_model=value)


def test_the_known_model_is_the_publisher_s_file_under_its_licence():
    model = KNOWN[REQUEST_MODEL]
    assert model.kind == "language" and model.repo == "Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF"
    assert model.licence == "Apache-2.0"
    assert model.files == (
        (
            "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
            1117320768,
            "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        ),
    )


def test_rules_or_nothing_pulled_reads_by_rules(tmp_path):
    assert request_model_file(settings(tmp_path, "rules")) is None
    assert text_model_for(settings(tmp_path, "off")) is None
    assert request_model_file(settings(tmp_path, None)) is None  # nothing pulled: as before


def test_a_value_that_names_no_model_is_refused_saying_what_to_do(tmp_path):
    with pytest.raises(BadSetting, match="no such file.*tender models pull qwen2.5-coder-1.5b"):
        request_model_file(settings(tmp_path, str(tmp_path / "missing.gguf")))
    with pytest.raises(BadSetting, match=f"{REQUEST_MODEL} is not pulled: `tender models pull {REQUEST_MODEL}`"):
        request_model_file(settings(tmp_path, REQUEST_MODEL))
    two = tmp_path / "two"
    two.mkdir()
    (two / "a.gguf").write_bytes(GGUF)
    (two / "b.gguf").write_bytes(GGUF)
    with pytest.raises(BadSetting, match="holding 2 .gguf files; name the file"):
        request_model_file(settings(tmp_path, str(two)))


def test_a_file_or_a_folder_holding_one_is_the_model(tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "m.gguf").write_bytes(GGUF)
    assert request_model_file(settings(tmp_path, str(folder / "m.gguf"))) == folder / "m.gguf"
    assert request_model_file(settings(tmp_path, str(folder))) == folder / "m.gguf"


def test_the_pulled_model_reads_requests_only_when_named(tmp_path):
    pulled = language_dir(tmp_path) / REQUEST_MODEL / KNOWN[REQUEST_MODEL].files[0][0]
    pulled.parent.mkdir(parents=True)
    pulled.write_bytes(GGUF)
    assert request_model_file(settings(tmp_path, REQUEST_MODEL)) == pulled
    assert request_model_file(settings(tmp_path, None)) is None  # opt-in: unset, the rules read, as before


def test_a_file_that_is_no_model_is_refused_and_the_doctor_says_so(tmp_path):
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"not a model at all")
    with pytest.raises(BadSetting, match="cannot be used.*TENDER_REQUEST_MODEL"):
        text_model_for(settings(tmp_path, str(bad)))
    check = _request_model(settings(tmp_path, str(bad)))
    assert not check.ok and "cannot be used" in check.fix


def test_the_doctor_says_rules_read_requests_where_no_model_does(tmp_path):
    check = _request_model(settings(tmp_path, "rules"))
    assert check.ok and check.found.startswith("rules") and f"tender models pull {REQUEST_MODEL}" in check.found


@pytest.fixture
def hub(tmp_path, monkeypatch):
    server = FakeHub()
    server.body = {FILE: GGUF}
    entry = KnownModel(
        name=NAME,
        kind="language",
        repo=f"tests/{NAME}",
        revision="0123abc",
        licence="Apache-2.0",
        licence_url="https://example.invalid/licence",
        files=((FILE, len(GGUF), hashlib.sha256(GGUF).hexdigest()),),
    )
    monkeypatch.setattr(models, "KNOWN", {**models.KNOWN, NAME: entry})
    monkeypatch.setenv("NO_PROXY", "*")
    monkeypatch.setenv("TENDER_HOME", str(tmp_path))
    monkeypatch.setenv("TENDER_HF_ENDPOINT", server.url)
    yield server
    server.server.shutdown()
    server.server.server_close()


def test_a_language_model_is_pulled_checked_and_listed_with_the_setting_that_uses_it(tmp_path, hub):
    pulled = CliRunner().invoke(main, ["models", "pull", NAME, "--quiet"])
    assert pulled.exit_code == 0, pulled.output
    file = language_dir(tmp_path) / NAME / FILE
    assert file.read_bytes() == GGUF and not (tmp_path / "models" / "encoders" / NAME).exists()
    assert f"export TENDER_REQUEST_MODEL={NAME}" in pulled.stdout
    listed = CliRunner().invoke(main, ["models", "list"])
    assert f"TENDER_REQUEST_MODEL={NAME}" in listed.stdout
    assert CliRunner().invoke(main, ["models", "verify", NAME]).stdout.strip() == "ok"
    assert models.model_file(NAME, tmp_path) == file
    removed = CliRunner().invoke(main, ["models", "remove", NAME])
    assert removed.exit_code == 0 and not file.exists()


def test_a_language_model_whose_bytes_differ_is_refused(tmp_path, hub):
    hub.body[FILE] = GGUF[:-1] + b"x"
    result = CliRunner().invoke(main, ["models", "pull", NAME, "--quiet"])
    assert result.exit_code != 0 and "does not match" in result.output
    assert models.model_file(NAME, tmp_path) is None
