"""The demo catalogue is one list of snapshots and the harvest Tender ships, read by `make demo`, `tender catalog
build --demo` and the evaluation alike."""

from pathlib import Path

import pytest
from click.testing import CliRunner

from tender.catalog.demo import SNAPSHOTS, demo_harvest, demo_sources
from tender.catalog.harvest import ASSETS
from tender.cli import main
from tender.errors import DataMissing


def _shared(tmp_path: Path, leave_out: str = "") -> Path:
    for source, (folder, name) in SNAPSHOTS.items():
        if source != leave_out:
            (tmp_path / folder).mkdir(parents=True, exist_ok=True)
            (tmp_path / folder / name).write_text("")
    return tmp_path


def test_every_snapshot_is_read_as_its_source(tmp_path):
    found = demo_sources(_shared(tmp_path))
    assert set(found) == {"mcp_registry", "toolsdk", "docker_mcp", "public_apis"}
    assert all(len(paths) == 1 and paths[0].is_file() for paths in found.values())


@pytest.mark.parametrize("source", sorted(SNAPSHOTS))
def test_a_missing_snapshot_is_named(tmp_path, source):
    with pytest.raises(DataMissing) as raised:
        demo_sources(_shared(tmp_path, leave_out=source))
    assert raised.value.name == SNAPSHOTS[source][1]
    assert Path(raised.value.folder).name == SNAPSHOTS[source][0]


def test_the_latest_shipped_harvest_is_applied():
    shipped = sorted(ASSETS.glob("harvest-*.jsonl"))
    assert demo_harvest() == shipped[-1:]


def test_build_demo_without_the_snapshots_says_where_they_should_be(tmp_path):
    data = tmp_path / "shared" / "programmableweb"
    data.mkdir(parents=True)
    result = CliRunner().invoke(
        main, ["catalog", "build", "--demo", "--db", str(tmp_path / "demo.db")], env={"TENDER_DATA": str(data)}
    )
    assert result.exit_code == 2
    assert "mcp-registry" in result.output and "TENDER_DATA" in result.output
    assert not (tmp_path / "demo.db").exists()
