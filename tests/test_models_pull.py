"""`tender models`: fetching an encoder from a Hugging Face-compatible endpoint, file by file, each checked against
its recorded sha256, with the licence accepted first. No network: a fake endpoint on 127.0.0.1 serves a tiny model
this file makes, entered in the table in place of the real ones."""

import hashlib
import json
import re
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from click.testing import CliRunner

from tender.catalog import models
from tender.catalog.encoders import folder_encoder
from tender.catalog.models import KnownModel, pull, verify
from tender.cli import main
from tender.errors import TenderError

TOKEN = "hf_secret_token_123"
FILES = {
    "config.json": b'{"hidden_size": 8}',
    "modules.json": b"[]",
    "1_Pooling/config.json": b'{"pooling_mode_mean_tokens": true}',
    "model.safetensors": bytes(range(256)) * 40,
    "tokenizer.json": b'{"model": {}}',
}


def entry(name: str, *, note: str = "", gated: bool = False) -> KnownModel:
    return KnownModel(
        name=name,
        repo=f"tests/{name}",
        revision="0123abc",
        licence="Test Licence",
        licence_url="https://example.invalid/licence",
        licence_note=note,
        gated=gated,
        files=tuple((path, len(data), hashlib.sha256(data).hexdigest()) for path, data in FILES.items()),
    )


class FakeHub:
    """Serves /{repo}/resolve/{revision}/{path} of every repository from FILES, and records each request's path and
    Authorization header (and Range header, in `ranges`). `fail[path]`: statuses answered first; `close_after`: files
    served before each later connection is closed unanswered; `token`: required as a bearer; `redirect[request
    path]`: where to send it instead; `trickle[path]`: seconds between the bytes of that file's body; `before[path]`:
    called before that file's body is sent. A Range request `bytes=N-` is answered 206 with the rest."""

    def __init__(self):
        self.requests: list[tuple[str, str | None]] = []
        self.ranges: list[tuple[str, str | None]] = []
        self.trickle: dict[str, float] = {}
        self.before: dict[str, Callable[[], None]] = {}
        self.fail: dict[str, list[int]] = {}
        self.body: dict[str, bytes] = dict(FILES)
        self.close_after: int | None = None
        self.token: str | None = None
        self.redirect: dict[str, str] = {}
        self.served = 0
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                hub.requests.append((self.path, self.headers.get("Authorization")))
                _, _, path = self.path.partition("/resolve/")
                _, _, path = path.partition("/")
                if hub.token and self.headers.get("Authorization") != f"Bearer {hub.token}":
                    return self.answer(401)
                if hub.fail.get(path):
                    return self.answer(hub.fail[path].pop(0))
                if hub.close_after is not None and hub.served >= hub.close_after:
                    self.close_connection = True
                    return None
                if self.path in hub.redirect:
                    self.send_response(302)
                    self.send_header("Location", hub.redirect[self.path])
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return None
                if path not in hub.body:
                    return self.answer(404)
                hub.served += 1
                body, start = hub.body[path], 0
                asked = re.fullmatch(r"bytes=(\d+)-", self.headers.get("Range", ""))
                hub.ranges.append((path, self.headers.get("Range")))
                if asked and int(asked.group(1)) < len(body):
                    start = int(asked.group(1))
                    self.send_response(206)
                    self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
                else:
                    self.send_response(200)
                self.send_header("Content-Length", str(len(body) - start))
                self.end_headers()
                if path in hub.before:
                    hub.before[path]()
                try:
                    if path in hub.trickle:
                        for byte in body[start:]:
                            self.wfile.write(bytes([byte]))
                            self.wfile.flush()
                            time.sleep(hub.trickle[path])
                    else:
                        self.wfile.write(body[start:])
                except ConnectionError:  # the client stopped reading: a file longer than recorded
                    pass
                return None

            def answer(self, status: int):
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def fetched(self) -> list[str]:
        return [path.split("/resolve/")[1].partition("/")[2] for path, _ in self.requests]


@pytest.fixture
def hub():
    server = FakeHub()
    yield server
    server.server.shutdown()
    server.server.server_close()


@pytest.fixture
def home(tmp_path, hub, monkeypatch):
    """A TENDER_HOME whose table knows three tiny models (one with a licence to accept, one gated), fetched from
    the fake endpoint."""
    monkeypatch.setattr(
        models,
        "KNOWN",
        {
            "tiny-encoder": entry("tiny-encoder"),
            "tiny-licensed": entry("tiny-licensed", note="Read the Test Licence."),
            "tiny-gated": entry("tiny-gated", note="Read the Test Licence.", gated=True),
        },
    )
    monkeypatch.setattr(models, "BACKOFF_S", 0.0)
    monkeypatch.setattr(models, "TIMEOUT_S", 5)
    for name in ("HF_TOKEN", "TENDER_HF_TOKEN", "HF_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "*")
    monkeypatch.setenv("TENDER_HOME", str(tmp_path))
    monkeypatch.setenv("TENDER_HF_ENDPOINT", hub.url)
    return tmp_path


def tender(*args):
    return CliRunner().invoke(main, ["models", *args])


def encoders(home: Path) -> Path:
    return home / "models" / "encoders"


def test_a_pull_fetches_every_file_checks_it_and_makes_the_folder_usable(home, hub):
    result = tender("pull", "tiny-encoder", "--quiet")
    assert result.exit_code == 0, result.output
    folder = encoders(home) / "tiny-encoder"
    assert {p: (folder / p).read_bytes() for p in FILES} == FILES
    assert sorted(hub.fetched()) == sorted(FILES)
    assert hub.requests[0][0] == "/tests/tiny-encoder/resolve/0123abc/config.json"
    assert not (encoders(home) / "tiny-encoder.partial").exists()
    assert not list(folder.rglob("*.download"))
    assert verify("tiny-encoder", home) == []
    assert folder_encoder(folder).name == "tiny-encoder"  # what TENDER_EMBEDDING_MODEL=folder loads
    assert f"export TENDER_EMBEDDING_MODEL={folder}" in result.stdout
    assert "tender catalog build" in result.stdout


def test_a_file_whose_bytes_differ_from_its_recorded_sha256_is_refused_named_and_leaves_no_usable_folder(home, hub):
    tampered = bytearray(FILES["model.safetensors"])
    tampered[100] ^= 1
    hub.body["model.safetensors"] = bytes(tampered)
    with pytest.raises(TenderError) as refused:
        pull("tiny-encoder", home, hub.url)
    message = str(refused.value)
    assert "model.safetensors" in message
    assert hashlib.sha256(tampered).hexdigest() in message
    assert hashlib.sha256(FILES["model.safetensors"]).hexdigest() in message
    assert not (encoders(home) / "tiny-encoder").exists()
    partial = encoders(home) / "tiny-encoder.partial"
    assert not (partial / "model.safetensors").exists() and not list(partial.rglob("*.download"))


def test_a_file_longer_than_recorded_is_not_read_to_its_end(home, hub):
    hub.body["config.json"] = FILES["config.json"] + b" " * 10_000_000
    with pytest.raises(TenderError, match="config.json"):
        pull("tiny-encoder", home, hub.url)
    assert not (encoders(home) / "tiny-encoder").exists()


def test_a_server_error_is_retried_until_the_file_comes(home, hub):
    hub.fail["config.json"] = [500, 500]
    hub.fail["modules.json"] = [429]
    pull("tiny-encoder", home, hub.url)
    assert hub.fetched().count("config.json") == 3 and hub.fetched().count("modules.json") == 2
    assert verify("tiny-encoder", home) == []


def test_a_server_that_keeps_failing_is_given_up_after_four_tries(home, hub):
    hub.fail["config.json"] = [503] * 10
    with pytest.raises(TenderError, match="after 4 tries.*HTTP 503.*Run the pull again"):
        pull("tiny-encoder", home, hub.url)
    assert hub.fetched().count("config.json") == 4


def test_a_401_on_a_gated_model_says_to_accept_the_licence_and_set_hf_token(home, hub):
    hub.token = TOKEN
    result = tender("pull", "tiny-gated", "--accept-licence", "--quiet")
    assert result.exit_code == 1
    assert "gated" in result.output and "HF_TOKEN" in result.output
    assert "https://huggingface.co/tests/tiny-gated" in result.output
    assert len(hub.requests) == 1  # refused, not retried
    assert not (encoders(home) / "tiny-gated").exists()


def test_an_interrupted_pull_resumes_without_fetching_verified_files_again(home, hub):
    hub.close_after = 2
    with pytest.raises(TenderError, match="Run the pull again"):
        pull("tiny-encoder", home, hub.url)
    assert not (encoders(home) / "tiny-encoder").exists()
    listed = {row["name"]: row for row in json.loads(tender("list", "--json").stdout)}
    assert listed["tiny-encoder"]["status"] == "interrupted" and not listed["tiny-encoder"]["pulled"]

    hub.close_after, hub.requests = None, []
    pull("tiny-encoder", home, hub.url)
    assert hub.fetched() == list(FILES)[2:]
    assert verify("tiny-encoder", home) == []

    hub.requests = []
    pull("tiny-encoder", home, hub.url)  # pulled already: checked, nothing fetched
    assert hub.requests == []


def test_without_a_terminal_or_accept_licence_the_cli_refuses_in_one_line_and_downloads_nothing(home, hub):
    result = tender("pull", "tiny-licensed")
    assert result.exit_code == 2
    assert result.output.count("\n") == 1
    assert "--accept-licence" in result.output and "https://example.invalid/licence" in result.output
    assert hub.requests == [] and not encoders(home).exists()


def test_with_a_terminal_the_licence_is_shown_and_must_be_accepted(home, hub, monkeypatch):
    monkeypatch.setattr("tender.cli.can_ask", lambda: True)
    declined = CliRunner().invoke(main, ["models", "pull", "tiny-licensed"], input="n\n")
    assert declined.exit_code == 1 and "Read the Test Licence." in declined.output
    assert hub.requests == []

    accepted = CliRunner().invoke(main, ["models", "pull", "tiny-licensed", "--quiet"], input="y\n")
    assert accepted.exit_code == 0, accepted.output
    record = (encoders(home) / "tiny-licensed" / "ACCEPTED_LICENCE").read_text()
    assert "Test Licence" in record and "https://example.invalid/licence" in record
    assert verify("tiny-licensed", home) == []  # the record is no file of the model's


def test_the_token_is_sent_as_a_bearer_header_and_appears_in_no_output(home, hub, monkeypatch):
    hub.token = TOKEN
    monkeypatch.setenv("HF_TOKEN", "hf_wrong_token_456")
    refused = tender("pull", "tiny-gated", "--accept-licence")
    assert refused.exit_code == 1 and "hf_wrong_token_456" not in refused.output

    monkeypatch.setenv("HF_TOKEN", TOKEN)
    result = tender("pull", "tiny-gated", "--accept-licence")
    assert result.exit_code == 0, result.output
    assert {auth for _, auth in hub.requests[1:]} == {f"Bearer {TOKEN}"}
    assert TOKEN not in result.output
    assert not [f for f in home.rglob("*") if f.is_file() and TOKEN.encode() in f.read_bytes()]

    monkeypatch.setenv("HF_TOKEN", "hf_broken\ttoken")  # no header can carry it: refused, and not quoted
    broken = tender("remove", "tiny-gated"), tender("pull", "tiny-gated", "--accept-licence")
    assert broken[1].exit_code == 1 and "hf_broken" not in broken[1].output


def test_the_token_follows_a_redirect_on_the_same_host_only(home, hub, monkeypatch):
    cdn = FakeHub()
    try:
        resolve = "/tests/tiny-gated/resolve/0123abc"
        hub.redirect[f"{resolve}/model.safetensors"] = f"{cdn.url}/cdn/resolve/x/model.safetensors"
        hub.redirect[f"{resolve}/config.json"] = "/tests/tiny-gated/resolve/other/config.json"
        hub.token = TOKEN
        monkeypatch.setenv("HF_TOKEN", TOKEN)
        assert tender("pull", "tiny-gated", "--accept-licence", "--quiet").exit_code == 0
        assert cdn.requests == [("/cdn/resolve/x/model.safetensors", None)]
        assert ("/tests/tiny-gated/resolve/other/config.json", f"Bearer {TOKEN}") in hub.requests
    finally:
        cdn.server.shutdown()
        cdn.server.server_close()


def test_verify_finds_a_missing_or_tampered_file(home, hub):
    pull("tiny-encoder", home, hub.url)
    assert tender("verify", "tiny-encoder").stdout == "ok\n"
    folder = encoders(home) / "tiny-encoder"
    (folder / "tokenizer.json").write_bytes(b'{"model": []}')  # the same size, other bytes
    (folder / "modules.json").unlink()
    result = tender("verify", "tiny-encoder")
    assert result.exit_code == 1
    assert "tokenizer.json: sha256" in result.stdout and "modules.json: missing" in result.stdout

    pull("tiny-encoder", home, hub.url)  # a pull mends it
    assert tender("verify", "tiny-encoder").exit_code == 0


def test_remove_deletes_the_folder_and_its_half_pull(home, hub):
    pull("tiny-encoder", home, hub.url)
    (encoders(home) / "tiny-encoder.partial").mkdir()
    result = tender("remove", "tiny-encoder")
    assert result.exit_code == 0, result.output
    assert not list(encoders(home).iterdir())
    assert tender("remove", "tiny-encoder").exit_code == 2  # nothing left to remove


@pytest.mark.parametrize("name", ["..", "../models", "a/b", "/tmp", "..\\x", "."])
def test_remove_refuses_a_name_that_is_a_path(home, name):
    keep = home / "models" / "keep.txt"
    keep.parent.mkdir(parents=True)
    keep.write_text("kept")
    result = tender("remove", name)
    assert result.exit_code == 2 and result.output.count("\n") == 1
    assert keep.read_text() == "kept"


def test_list_json_shows_what_is_pulled_and_the_folder_to_use(home, hub):
    before = {row["name"]: row for row in json.loads(tender("list", "--json").stdout)}
    assert before["tiny-encoder"]["pulled"] is False and before["tiny-encoder"]["folder"] is None
    pull("tiny-encoder", home, hub.url)
    (encoders(home) / "my-own").mkdir()
    (encoders(home) / "my-own" / "config.json").write_text("{}")
    after = {row["name"]: row for row in json.loads(tender("list", "--json").stdout)}
    assert after["tiny-encoder"]["pulled"] is True and after["tiny-encoder"]["status"] == "pulled"
    assert after["tiny-encoder"]["folder"] == str(encoders(home) / "tiny-encoder")
    assert after["tiny-encoder"]["size"] == sum(map(len, FILES.values()))
    assert after["tiny-licensed"]["pulled"] is False
    assert after["my-own"]["status"] == "local (not verified)"
    assert "TENDER_EMBEDDING_MODEL=" in tender("list").stdout


def test_an_unknown_name_is_refused_with_the_closest_names(home, hub):
    result = tender("pull", "tiny-encodr")
    assert result.exit_code == 2 and "Did you mean 'tiny-encoder'" in result.output
    assert hub.requests == []


def test_the_endpoint_option_wins_over_the_environment(home, hub, monkeypatch):
    monkeypatch.setenv("TENDER_HF_ENDPOINT", "http://127.0.0.1:9")  # nothing listens there
    result = tender("pull", "tiny-encoder", "--endpoint", hub.url + "/", "--quiet")
    assert result.exit_code == 0, result.output
    assert tender("pull", "tiny-licensed", "--endpoint", "ftp://x", "--accept-licence").exit_code == 2


def onnx_export_files() -> dict[str, bytes]:
    """A published ONNX export in miniature: a graph whose `sentence_embedding` output is the mean of a word table's
    rows (its own pooling, as onnx-community's exports carry theirs), and a word-level tokenizer."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper
    from tokenizers import Tokenizer, models as tokenizer_models, pre_tokenizers

    words = ["[UNK]", "task:", "query:", "title:", "text:", "weather", "forecast", "email", "send", "|", "none"]
    table = np.random.default_rng(0).normal(size=(len(words), 4)).astype(np.float32)
    graph = helper.make_graph(
        [
            helper.make_node("Gather", ["table", "input_ids"], ["last_hidden_state"]),
            helper.make_node("ReduceMean", ["last_hidden_state"], ["sentence_embedding"], axes=[1], keepdims=0),
        ],
        "tiny",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "tokens"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "tokens"]),
        ],
        [
            helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "tokens", 4]),
            helper.make_tensor_value_info("sentence_embedding", TensorProto.FLOAT, ["batch", 4]),
        ],
        [numpy_helper.from_array(table, "table")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    tokenizer = Tokenizer(tokenizer_models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    return {
        "config.json": b'{"hidden_size": 4, "vocab_size": 11}',
        "onnx/model.onnx": model.SerializeToString(),
        "tokenizer.json": tokenizer.to_str().encode(),
    }


def test_a_published_onnx_export_is_pulled_with_its_prompts_and_embeds_without_torch(home, hub, monkeypatch):
    import subprocess
    import sys

    files = onnx_export_files()
    hub.body = files
    prompts = '{"prompts": {"query": "task: query: ", "document": "title: none | text: "}}'
    monkeypatch.setitem(
        models.KNOWN,
        "tiny-onnx",
        KnownModel(
            name="tiny-onnx",
            repo="tests/tiny-onnx",
            revision="0123abc",
            licence="Test Licence",
            licence_url="https://example.invalid/licence",
            files=tuple((path, len(data), hashlib.sha256(data).hexdigest()) for path, data in files.items()),
            made=(("config_sentence_transformers.json", prompts),),
        ),
    )
    result = tender("pull", "tiny-onnx", "--quiet")
    assert result.exit_code == 0, result.output
    folder = encoders(home) / "tiny-onnx"
    assert (folder / "config_sentence_transformers.json").read_text() == prompts
    assert verify("tiny-onnx", home) == []
    # A fresh process where torch cannot be imported (a pipx install has none) embeds with the pulled graph, each
    # role with its own prompt.
    script = (
        "import sys; sys.modules['torch'] = None\n"
        "from tender.catalog import get_embedder\n"
        f"e = get_embedder({str(folder)!r})\n"
        "q, d = e.embed(['weather'], role='query')[0], e.embed(['weather'], role='document')[0]\n"
        "print(e.encoder.name, round(float(q @ q), 3), bool(abs(float(q @ d)) < 0.9999))\n"
    )
    ran = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env={**__import__("os").environ}
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.split() == ["tiny-onnx", "1.0", "True"]


def test_a_model_named_but_not_pulled_says_how_to_pull_it(home):
    from tender.assembly import embedder_for
    from tender.settings import BadSetting, Settings

    with pytest.raises(BadSetting, match="not pulled: `tender models pull tiny-encoder`"):
        embedder_for(Settings.from_env({"TENDER_HOME": str(home), "TENDER_EMBEDDING_MODEL": "tiny-encoder"}))
