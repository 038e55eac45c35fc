"""`tender doctor` (issue 37, item 12): the catalogue, encoder, runs database, ranking model and LLM endpoint a server
started the same way would use, whether each works, and the client configurations that start that server."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from click.testing import CliRunner

from tender.catalog.sources.mcp import Server, list_servers
from tender.cli import main


@pytest.fixture
def doctor(catalog_path, tmp_path):
    base = {
        "TENDER_HOME": str(tmp_path / "home"),
        "TENDER_CATALOG": str(catalog_path),
        "TENDER_RUNS": str(tmp_path / "runs.db"),
        "TENDER_EMBEDDING_MODEL": "hashing",
        "TENDER_LLM_BASE_URL": None,
        "TENDER_LLM_MODEL": None,
        "TENDER_LLM_API_KEY": None,
    }

    def run(*args, **env):
        return CliRunner().invoke(main, ["doctor", *args], env=base | env)

    return run


def checks(result) -> dict[str, dict]:
    return {c["name"]: c for c in json.loads(result.stdout)["checks"]}


def test_a_working_setup_is_all_ok_and_says_what_it_uses(doctor, catalog_path, tmp_path):
    result = doctor("--json")

    assert result.exit_code == 0, result.output
    found = checks(result)
    assert all(c["ok"] for c in found.values()) and set(found) == {
        "catalogue",
        "encoder",
        "runs",
        "ranking model",
        "LLM endpoint",
        "request reader",
    }
    assert found["request reader"]["found"].startswith("rules")  # no model named: the rules read requests
    assert str(catalog_path) in found["catalogue"]["found"] and "24 Web APIs" in found["catalogue"]["found"]
    assert "hashing" in found["encoder"]["found"]
    assert "none yet" in found["runs"]["found"] and not (tmp_path / "runs.db").exists()  # it creates nothing
    assert "none configured" in found["LLM endpoint"]["found"]


def test_a_missing_catalogue_fails_with_how_to_build_one(doctor, tmp_path):
    result = doctor("--db", str(tmp_path / "none.db"))

    assert result.exit_code == 1
    assert "FAIL catalogue" in result.output and "tender catalog build" in result.output


def test_the_client_configurations_start_the_server_the_doctor_checked(doctor, catalog_path):
    data = json.loads(doctor("--json").stdout)
    desktop = next(v for k, v in data["clients"].items() if k.startswith("Claude Desktop"))
    server = json.loads(desktop)["mcpServers"]["tender"]

    assert server["command"].endswith("tender") and server["command"].startswith("/")
    assert server["env"]["TENDER_CATALOG"] == str(catalog_path.resolve())
    assert server["env"]["TENDER_EMBEDDING_MODEL"] == "hashing"
    assert json.loads(next(v for k, v in data["clients"].items() if k.startswith("VS Code")))["servers"]["tender"]
    assert any(v.startswith("claude mcp add tender --env TENDER_HOME=") for v in data["clients"].values())

    # Started as a client would, with that configuration's environment and nothing of this shell's:
    listings, _ = list_servers(
        [Server(name="tender", command=server["command"], args=server["args"], env=server["env"])], timeout=60
    )
    assert {"recommend_apis", "explain_bids"} <= {t["name"] for t in listings[0].tools}


class Models(BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (http.server's name)
        body = json.dumps({"object": "list", "data": [{"id": "smollm2"}]}).encode()
        self.send_response(200 if self.path == "/v1/models" else 404)
        self.send_header("content-type", "application/json")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def endpoint():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Models)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()


def test_an_llm_endpoint_is_asked_whether_it_serves_the_model(doctor, endpoint):
    served = checks(doctor("--json", TENDER_LLM_BASE_URL=endpoint, TENDER_LLM_MODEL="smollm2"))["LLM endpoint"]
    assert served["ok"] and "reachable" in served["found"]

    other = doctor("--json", TENDER_LLM_BASE_URL=endpoint, TENDER_LLM_MODEL="gpt-5")
    assert other.exit_code == 1 and "it serves smollm2" in checks(other)["LLM endpoint"]["found"]


def test_an_unreachable_llm_endpoint_fails_and_a_key_is_never_printed(doctor):
    result = doctor(TENDER_LLM_BASE_URL="http://127.0.0.1:9/v1", TENDER_LLM_MODEL="m", TENDER_LLM_API_KEY="sk-secret")

    assert result.exit_code == 1
    assert "FAIL LLM endpoint" in result.output and "not reachable" in result.output
    assert "sk-secret" not in result.output and "TENDER_LLM_API_KEY=<your key>" in result.output


def test_a_runs_url_with_a_password_is_never_printed_and_the_configurations_say_where_it_goes(doctor, tmp_path):
    """Pasted, a masked URL would log in with '***' as its password: the configurations carry a placeholder
    instead, and the doctor says what to write there (the fault probe of 2026-11-27)."""
    url = f"postgresql://tender:Qs%40cr%2FtQ@/postgres?host={tmp_path}&port=5432"  # no server there
    result = doctor(TENDER_RUNS=url)
    data = json.loads(doctor("--json", TENDER_RUNS=url).stdout)

    assert "s%40cr" not in result.output and "cr%2Ft" not in result.output and "Qs%40" not in json.dumps(data)
    assert "TENDER_RUNS=<your TENDER_RUNS>" in result.output
    assert "<your TENDER_RUNS>" in data["placeholders"] and "in place of <your TENDER_RUNS>" in result.output
    assert data["settings"]["TENDER_RUNS"] == "<your TENDER_RUNS>"
    assert not any("***" in snippet for snippet in data["clients"].values())
    assert (
        "FAIL runs" in result.output and "postgresql://***@/postgres" in result.output
    )  # shown masked, not for pasting


def test_doctor_says_a_runs_path_under_a_file_cannot_be_made(tmp_path):
    from tender.server.doctor import _runs

    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    check = _runs(blocker / "runs.db")
    assert not check.ok and "is a file, not a folder" in check.fix


def test_doctor_checks_the_reader_and_says_how_to_fix_a_folder_without_a_ranking_model(tmp_path, monkeypatch):
    from tender.server.doctor import _reader
    from tender.settings import Settings

    settings = Settings.from_env({"TENDER_HOME": str(tmp_path), "TENDER_READER_MODEL": str(tmp_path / "nowhere")})
    check = _reader(settings)
    assert not check.ok and check.name == "reader" and check.fix
    fine = _reader(Settings.from_env({"TENDER_HOME": str(tmp_path), "TENDER_READER_MODEL": "hashing"}))
    assert fine.ok and "shortlist" in fine.found
