"""The README's rule, command by command (issue 37, item 6): exit 2 for input to fix (a requirement, a name, an
option, a file that is missing or not what it should be), 1 for everything else. Every command has a case here;
a test walks the click tree so that a new command cannot go without one."""

import click
import pytest
from click.testing import CliRunner

from tender.agents.request import MAX_REQUIREMENT_CHARS
from tender.cli import main

# (command, arguments after it) -> 2. MISSING and JUNK stand for a catalogue that is not there, and a file that is
# not a catalogue; RUN for a stored run's id.
INPUT_TO_FIX = {
    "catalog build": [
        ["--openapi", "MISSING", "--db", "OUT"],
        ["--apis", "MISSING", "--no-mashups", "--db", "OUT"],
        ["--public-apis", "MISSING", "--db", "OUT"],
        ["--mcp-registry", "MISSING", "--db", "OUT"],
        ["--toolsdk", "MISSING", "--db", "OUT"],
        ["--harvest", "MISSING", "--mcp-registry", "MISSING", "--db", "OUT"],
    ],
    "catalog list-tools": [[], ["--mcp", "ghost=/no/such/server"]],
    # a harvest runs other people's code: never without saying so; and never on a catalogue that is not there
    "catalog harvest": [["--out", "OUT"], ["--out", "OUT", "--db", "MISSING", "--run-third-party-code"]],
    "catalog info": [["--db", "MISSING"], ["--db", "JUNK"]],
    "catalog read-ahead": [[]],  # no TENDER_READER_MODEL set
    "catalog search": [["maps", "--db", "MISSING"], ["maps", "--db", "JUNK"], ["maps", "--category", "Mapin"]],
    "catalog categories": [["--db", "MISSING"], ["--db", "JUNK"]],
    "recommend": [
        [""],
        ["   "],
        ["x" * (MAX_REQUIREMENT_CHARS + 1)],
        ["maps", "--db", "MISSING"],
        ["maps", "--db", "JUNK"],
        ["maps", "--exclude-api", "Gogle Maps"],
    ],
    "runs list": [["--limit", "0"]],
    "runs delete": [["0123abc"]],
    "runs prune": [["--older-than", "soon"]],
    "explain": [["0123abc"], ["RUN", "--function", "f9"], ["RUN", "--db", "MISSING"]],
    "eval": [["--dataset", "nope"], ["--compare", "MISSING", "MISSING"]],
    "train encoder": [["--epochs", "0"]],
    "train ranker": [["--metatool", "many"]],
    "serve": [["--transport", "http", "--host", "0.0.0.0"], ["--port", "0"], ["--a2a"]],  # A2A is HTTP's
    "doctor": [["--db"]],
    "models list": [["--json", "extra"]],
    "models pull": [["embedingemma-300m"], ["embeddinggemma-300m"], ["all-mpnet-base-v2", "--endpoint", "ftp://x"]],
    "models verify": [["all-mpnet-base-v2"], ["nope"]],
    "models remove": [["../x"], ["all-mpnet-base-v2"]],
}


def leaf_commands(group: click.Group, prefix: str = "") -> list[str]:
    names = []
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            names += leaf_commands(command, f"{prefix}{name} ")
        else:
            names.append(f"{prefix}{name}")
    return names


def test_every_command_has_a_case():
    assert sorted(leaf_commands(main)) == sorted(INPUT_TO_FIX)


@pytest.fixture
def tender(catalog_path, tmp_path):
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not a SQLite file" * 100)
    env = {
        "TENDER_CATALOG": str(catalog_path),
        "TENDER_RUNS": str(tmp_path / "runs.db"),
        "TENDER_EMBEDDING_MODEL": "hashing",
        "TENDER_HOME": str(tmp_path / "home"),
        "TENDER_HTTP_TOKEN": None,
        "TENDER_DEBUG": None,
    }
    places = {"MISSING": str(tmp_path / "missing.db"), "JUNK": str(junk), "OUT": str(tmp_path / "out.db")}

    def run(*args):
        if "RUN" in args:
            made = CliRunner().invoke(main, ["recommend", "maps with reviews"], env=env)
            places["RUN"] = made.output.split("tender explain ")[-1].strip()
        return CliRunner().invoke(main, [places.get(a, a) for a in args], env=env)

    return run


@pytest.mark.parametrize(
    "command, args",
    [(command, args) for command, cases in INPUT_TO_FIX.items() for args in cases],
    ids=lambda value: value[:40] if isinstance(value, str) else " ".join(a[:20] for a in value),
)
def test_input_to_fix_exits_2(tender, command, args):
    result = tender(*command.split(), *args)

    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output


def test_a_catalogue_made_with_another_encoder_is_no_input_error_and_exits_1(tmp_path, catalog_path):
    result = CliRunner().invoke(
        main,
        ["catalog", "search", "maps", "--db", str(catalog_path)],
        env={"TENDER_EMBEDDING_MODEL": "hashing-64", "TENDER_HOME": str(tmp_path)},
    )

    assert result.exit_code == 1 and "Error:" in result.output
