"""A catalogue rebuilt under a running server: the server goes on answering from the catalogue it opened (held in
memory), says so in its plans and, once, in its log, until it is restarted; and what the assistant is told of
run ids: whoever holds one can read that run."""

import logging

from mcp import Client

from tender.catalog import HashingEmbedder, build_catalog
from tender.server.app import build_server
from tender.server.instructions import instructions
from tender.settings import Settings
from tests.conftest import write_jsonl
from tests.fixture_data import api_rows, mashup_rows
from tests.server_support import REQUIREMENT, ok


async def test_a_server_keeps_its_catalogue_after_a_rebuild_and_says_so(tmp_path, caplog):
    apis, mashups = write_jsonl(tmp_path / "apis.jsonl", api_rows()), write_jsonl(tmp_path / "m.jsonl", mashup_rows())
    db = tmp_path / "catalog.db"
    build_catalog(apis, mashups, db, HashingEmbedder(256))
    settings = Settings(catalog_path=db, runs_path=tmp_path / "runs.db", embedding_model="hashing")

    async with Client(build_server(settings)) as client:
        before = ok(await client.call_tool("recommend_apis", {"requirement": REQUIREMENT}))
        fewer = write_jsonl(tmp_path / "fewer.jsonl", api_rows()[12:])
        build_catalog(fewer, None, db, HashingEmbedder(256))  # installed under the running server
        with caplog.at_level(logging.WARNING, logger="tender.server"):
            after = ok(await client.call_tool("recommend_apis", {"requirement": REQUIREMENT}))
            again = ok(await client.call_tool("recommend_apis", {"requirement": REQUIREMENT}))
        card = ok(await client.call_tool("get_api", {"api": 0}))  # only in the catalogue it opened

    assert not any("rebuilt" in note for note in before.get("notes", []))
    assert after["apis"] == before["apis"] and card["api_id"] == 0
    (note,) = [note for note in after["notes"] if "rebuilt" in note]
    assert f"The catalogue {db} was rebuilt after this server opened it" in note and "Restart the server" in note
    assert note in again["notes"]
    assert [r.message for r in caplog.records].count(note) == 1  # logged once


def test_the_assistant_is_told_that_a_run_id_is_the_key_to_its_run(catalog_path):
    assert "whoever holds it can read the run" in instructions(catalog_path)
