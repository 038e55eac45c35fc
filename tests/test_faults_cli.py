"""Every CLI error is one line on stderr with exit code 1 (the machine, the setup) or 2 (input to fix)."""

import json
import sqlite3
import subprocess

import pytest
from click.testing import CliRunner

from tender.cli import main
from tests.server_support import TENDER, server_env  # noqa: F401 (fixture)


@pytest.fixture
def run(catalog_path, tmp_path):
    def invoke(*args, env=None):
        environment = {
            "TENDER_CATALOG": str(catalog_path),
            "TENDER_RUNS": str(tmp_path / "runs.db"),
            "TENDER_EMBEDDING_MODEL": "hashing",
            "TENDER_HOME": str(tmp_path),
            "TENDER_DEBUG": "",
            **(env or {}),
        }
        return CliRunner().invoke(main, list(args), env=environment)

    return invoke


def one_line_error(result) -> str:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    assert "Traceback" not in result.output
    return lines[0]


def test_a_value_out_of_range_is_one_line_exit_2(run):
    result = run("recommend", "restaurants on a map", "--max-apis", "1000")

    assert result.exit_code == 2
    assert "--max-apis" in one_line_error(result) and "50" in one_line_error(result)


def test_a_bad_environment_variable_is_one_line_exit_2(run):
    result = run("recommend", "restaurants on a map", env={"TENDER_LLM_TIMEOUT": "soon"})

    assert result.exit_code == 2  # a setting the user set: input to fix
    assert "TENDER_LLM_TIMEOUT='soon'" in one_line_error(result)


def test_an_unexpected_error_is_one_line_exit_1(run, tmp_path):
    not_a_catalogue = tmp_path / "junk.db"
    not_a_catalogue.write_bytes(b"this is not a SQLite file" * 100)

    result = run("catalog", "info", "--db", str(not_a_catalogue))

    assert result.exit_code in (1, 2)
    one_line_error(result)


def test_a_deadline_is_accepted_and_the_plan_printed(run):
    result = run("recommend", "restaurants on a map with reviews", "--deadline", "30")

    assert result.exit_code == 0, result.output
    assert result.stdout.strip()


# -- a runs database that cannot be used: the plan is printed all the same (issue 38) ----------------------
@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_a_plan_is_printed_with_a_note_when_the_runs_folder_is_a_file(run, tmp_path, as_json):
    (tmp_path / "a-file").write_text("not a folder")
    runs = tmp_path / "a-file" / "runs.db"

    result = run(
        "recommend",
        "restaurants on a map with their reviews",
        *(["--json"] if as_json else []),
        env={"TENDER_RUNS": str(runs)},
    )

    assert result.exit_code == 0, result.output
    (warning,) = result.stderr.strip().splitlines()
    assert warning.startswith(f"Warning: This plan could not be stored in {runs}")
    plan = json.loads(result.stdout)["plan"] if as_json else None
    if as_json:
        assert plan["apis"] and any("could not be stored" in note for note in plan["notes"])
    else:
        assert "APIs, best first:" in result.stdout and "Note: This plan could not be stored" in result.stdout
        assert "How it was decided" not in result.stdout  # nothing to explain: the run was not kept


def test_a_plan_is_printed_with_a_note_when_the_runs_database_is_full(run, tmp_path, monkeypatch):
    from tender.answers import runs as store

    def full(self, run, catalog=None):  # what SQLite answers on a full disk, raised where a save would write
        raise store.RunNotStored(self.path, sqlite3.OperationalError("database or disk is full"))

    monkeypatch.setattr(store.RunStore, "save", full)

    result = run("recommend", "restaurants on a map with their reviews")

    assert result.exit_code == 0, result.output
    assert "(database or disk is full)" in result.stderr and "APIs, best first:" in result.stdout


# -- a reader that stops early (`tender ... | head -1`) -------------------------------------------
def piped_into_a_closed_reader(env: dict, *args: str, read_first_line: bool) -> subprocess.CompletedProcess:
    """Run `tender ARGS` with its stdout a pipe whose reader has gone, at once or after one line."""
    process = subprocess.Popen([TENDER, *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if read_first_line:
        process.stdout.readline()
    process.stdout.close()
    stderr = process.stderr.read().decode()
    process.wait(timeout=120)
    return subprocess.CompletedProcess(process.args, process.returncode, "", stderr)


@pytest.mark.parametrize(
    "args",
    [
        ("recommend", "restaurants on a map with their reviews"),
        ("recommend", "restaurants on a map with their reviews", "--json"),
        ("catalog", "categories"),
        ("catalog", "info"),
        ("runs", "list"),
    ],
    ids=" ".join,
)
def test_output_into_a_reader_that_closes_early_ends_quietly(server_env, args):
    done = piped_into_a_closed_reader(server_env, *args, read_first_line=False)

    assert done.stderr == "" and done.returncode == 1  # as click (and `llm`) do: no traceback, no message


def test_output_into_head_ends_quietly(server_env):
    args = ("recommend", "restaurants on a map with their reviews", "--json")
    done = piped_into_a_closed_reader(server_env, *args, read_first_line=True)

    assert done.stderr == "" and done.returncode in (0, 1)


# -- a bare machine: no ProgrammableWeb data, no catalogue (issue 19) -------------------------------
@pytest.fixture
def bare(run, tmp_path):
    """`tender` with TENDER_DATA an empty folder and TENDER_HOME an empty one (no catalogue, no runs)."""
    data, home = tmp_path / "data", tmp_path / "home"
    data.mkdir(), home.mkdir()

    def invoke(*args):
        return run(
            *args, env={"TENDER_DATA": str(data), "TENDER_HOME": str(home), "TENDER_CATALOG": None, "TENDER_RUNS": None}
        )

    invoke.data, invoke.home = data, home
    return invoke


def test_building_without_the_data_says_to_set_tender_data_or_name_sources(bare):
    result = bare("catalog", "build")

    assert result.exit_code == 2
    error = one_line_error(result)
    assert f"TENDER_DATA={bare.data} has no apis.jsonl" in error and "Set TENDER_DATA" in error
    assert "--apis FILE" in error and "--openapi FOLDER" in error and "--mcp-config FILE" in error
    assert list(bare.home.iterdir()) == []


def test_building_own_apis_without_the_data_asks_for_mashups_or_none(bare, sources):
    apis, _ = sources
    result = bare("catalog", "build", "--apis", str(apis))

    assert result.exit_code == 2
    error = one_line_error(result)
    assert "has no mashups.jsonl" in error and "TENDER_DATA" in error and "--no-mashups" in error


def test_recommending_with_no_catalogue_says_how_to_get_one(bare):
    result = bare("recommend", "restaurants on a map")

    assert result.exit_code == 2  # a catalogue to name or build: input to fix
    error = one_line_error(result)
    assert f"No API catalogue at {bare.home / 'catalog.db'}" in error
    assert "TENDER_DATA" in error and "--db" in error and "--openapi" in error


def test_an_installed_tender_without_tender_data_names_the_setting_and_the_other_sources(run, tmp_path, monkeypatch):
    """An installed tender has no clone beside it: the folder it looked in by default (inside the virtual
    environment) means nothing to its user, so the message names the setting, what it holds and the options."""
    nowhere = tmp_path / "venv" / "lib" / "shared" / "data" / "programmableweb"
    monkeypatch.setattr("tender.settings._CLONE_DATA", nowhere)

    result = run("catalog", "build", env={"TENDER_DATA": None, "TENDER_CATALOG": str(tmp_path / "new.db")})

    assert result.exit_code == 2
    error = one_line_error(result)
    assert "TENDER_DATA is not set" in error and "apis.jsonl and mashups.jsonl" in error
    assert "--apis FILE" in error and "--openapi FOLDER" in error and "--mcp-config FILE" in error
    assert str(nowhere) not in error and "venv" not in error


def test_training_without_the_data_says_to_set_tender_data(bare):
    result = bare("train", "encoder")

    assert result.exit_code == 2 and "Set TENDER_DATA" in one_line_error(result)


HOSTILE = "maps \x1b[2J\x1b[1;1Hforged line\r\u202eesrever\x1b]0;owned\x07 and \x9b31m reviews"


@pytest.mark.parametrize("command", [["runs", "list"], ["runs", "list", "--json"], ["explain"], ["explain", "--json"]])
def test_client_text_reaches_the_terminal_written_out_never_acting(run, command):
    made = run("recommend", HOSTILE, "--need", "show places \x1b[31mon a map\u202e", "--json")
    assert made.exit_code == 0, made.output
    assert "\x1b" not in made.output and "\u202e" not in made.output
    run_id = json.loads(made.output)["plan"]["run_id"]
    told = run(*command, *([run_id] if command[0] == "explain" else []))
    assert told.exit_code == 0, told.output
    for acting in ("\x1b", "\x07", "\x9b", "\u202e", "\r"):
        assert acting not in told.output, (acting, told.output)
    assert "\\u001b" in told.output or "\\\\u001b" in told.output  # written out, for the operator to see
