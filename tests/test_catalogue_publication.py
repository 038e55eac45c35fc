"""A catalogue published under a running server (`tender catalog build` renames a new file into place): the server
opens it in the background and switches to it between requests, without a restart; until then it answers from the
one it has and says so; a request in flight finishes on the catalogue it started with; runs made on the old one
are still explained; a new file it cannot serve leaves it on the one it has."""

import logging
import os
import shutil
import threading
import time
from pathlib import Path

from mcp import Client

from tender.answers.runs import keep
from tender.agents.request import Request
from tender.catalog import HashingEmbedder, build_catalog
from tender.server.app import build_server
from tender.server.context import AppContext
from tender.settings import Settings
from tests.conftest import write_jsonl
from tests.fixture_data import api_rows, mashup_rows
from tests.server_support import REQUIREMENT, error_text, ok


def publish(tmp_path, db, rows) -> None:
    """Build a catalogue of these API rows and install it at `db`, as `tender catalog build` does."""
    build_catalog(write_jsonl(tmp_path / f"apis-{len(rows)}.jsonl", rows), None, db, HashingEmbedder(256))


def served(tmp_path) -> Settings:
    db = tmp_path / "catalog.db"
    apis, mashups = write_jsonl(tmp_path / "apis.jsonl", api_rows()), write_jsonl(tmp_path / "m.jsonl", mashup_rows())
    build_catalog(apis, mashups, db, HashingEmbedder(256))
    return Settings(catalog_path=db, runs_path=tmp_path / "runs.db", embedding_model="hashing")


async def knows(client, api: int) -> bool:
    try:
        await client.read_resource(f"catalog://apis/{api}")
    except Exception:  # not found
        return False
    return True


async def until_served(client, api_gone: int, timeout: float = 30) -> None:
    """Ask until the server answers from the new catalogue (which lacks `api_gone`)."""
    deadline = time.monotonic() + timeout
    while await knows(client, api_gone):
        assert time.monotonic() < deadline, "the server never switched to the published catalogue"
        time.sleep(0.05)


async def test_a_published_catalogue_is_served_without_a_restart(tmp_path, caplog):
    settings = served(tmp_path)
    async with Client(build_server(settings)) as client:
        before = ok(await client.call_tool("recommend_apis", {"requirement": REQUIREMENT}))
        publish(tmp_path, settings.catalog_path, api_rows()[12:])  # API 0 is gone from the new build
        with caplog.at_level(logging.INFO, logger="tender.server"):
            await until_served(client, api_gone=0)
        after = ok(await client.call_tool("recommend_apis", {"requirement": REQUIREMENT}))
        told = ok(await client.call_tool("explain_bids", {"run_id": before["run_id"]}))  # made on the old one

    assert not any("rebuilt" in note for note in before.get("notes", []) + after.get("notes", []))
    gone = {row["name"] for row in api_rows()[:12]}
    assert after["apis"] and not gone.intersection(after["apis"])
    assert told["run_id"] == before["run_id"] and told["functions"]
    assert any("Serving the catalogue published at" in r.message for r in caplog.records)


async def test_until_the_new_catalogue_is_open_answers_say_where_they_come_from(tmp_path):
    settings = served(tmp_path)
    app = AppContext.open(settings)
    try:
        old = app.tender()
        publish(tmp_path, settings.catalog_path, api_rows()[12:])
        assert app.tender() is old  # the request that notices is answered at once, from the one it has
        note = app.rebuilt(old.catalog)
        assert f"The catalogue {settings.catalog_path} was rebuilt; this server is opening the new one" in note
        app._publication.wait(30)
        assert app.tender() is not old and app.rebuilt(app.catalog) is None
    finally:
        app.close()


def test_a_request_in_flight_finishes_on_the_catalogue_it_started_with(tmp_path):
    settings = served(tmp_path)
    app = AppContext.open(settings)
    try:
        tender = app.tender()  # what a request takes when it starts
        publish(tmp_path, settings.catalog_path, api_rows()[12:])
        app.require_catalog()
        app._publication.wait(30)
        assert app.tender() is not tender  # requests that start now take the new catalogue

        run = tender.recommend(Request.create(REQUIREMENT))  # the request in flight goes on
        keep(app.runs, run, tender.catalog)
        if note := app.rebuilt(tender.catalog):
            run.plan.notes.append(note)

        assert run.plan.apis and "republished while this request ran" in run.plan.notes[-1]
        entry = app.runs.entry(run.plan.run_id)
        assert entry.catalog.fingerprint == tender.catalog.fingerprint != app.catalog.fingerprint
        assert app.catalogue_of(entry) is tender.catalog  # its run is told with the catalogue it was made on
    finally:
        app.close()


async def test_a_published_file_that_cannot_be_served_leaves_the_server_on_the_one_it_has(tmp_path, caplog):
    settings = served(tmp_path)
    async with Client(build_server(settings)) as client:
        broken = tmp_path / "broken.db"
        broken.write_text("not a catalogue")
        os.replace(broken, settings.catalog_path)
        with caplog.at_level(logging.WARNING, logger="tender.server"):
            first = await knows(client, 0)
            deadline = time.monotonic() + 20  # once settled, the failed open is tried once, in the background
            while True:
                plan = ok(await client.call_tool("recommend_apis", {"requirement": REQUIREMENT}))
                if any("cannot serve" in n for n in plan.get("notes", [])) or time.monotonic() > deadline:
                    break
                time.sleep(0.1)
            again = ok(await client.call_tool("recommend_apis", {"requirement": REQUIREMENT}))

    assert first and plan["apis"]
    (note,) = [n for n in plan["notes"] if "cannot serve" in n]
    assert "is not a Tender catalogue" in note and note in again["notes"]
    assert sum("cannot be served" in r.message for r in caplog.records) == 1


async def test_without_a_catalogue_the_error_still_says_how_to_build_one(tmp_path):
    settings = Settings(catalog_path=tmp_path / "none.db", runs_path=tmp_path / "runs.db", embedding_model="hashing")
    async with Client(build_server(settings)) as client:
        result = await client.call_tool("recommend_apis", {"requirement": REQUIREMENT})
        assert "tender catalog build" in error_text(result)


def copy_slowly(source, target, chunks: int = 8, pause: float = 0.3, into=None) -> None:
    """Write `source` at `target` a piece at a time, as `mv` from another file system (a new file, `into=None`) or
    `cp` over it (`into=target`, the same file rewritten) does, with pauses a server may poll in."""
    data = source.read_bytes()
    size = -(-len(data) // chunks)
    with open(into or target, "r+b" if into else "wb") as out:
        if into:
            out.truncate(0)
        for start in range(0, len(data), size):
            out.write(data[start : start + size])
            out.flush()
            time.sleep(pause)


async def test_a_catalogue_copied_in_from_another_file_system_is_served_once_whole(tmp_path):
    settings = served(tmp_path)
    shm = Path("/dev/shm") if Path("/dev/shm").is_dir() else tmp_path  # tmpfs, where the machine has it
    elsewhere = shm / f"tender-publish-{os.getpid()}"
    elsewhere.mkdir(exist_ok=True)
    try:
        publish(elsewhere, elsewhere / "new.db", api_rows()[12:])
        async with Client(build_server(settings)) as client:
            settings.catalog_path.unlink()  # mv: the old name goes, a new file is written in its place
            copying = threading.Thread(target=copy_slowly, args=(elsewhere / "new.db", settings.catalog_path))
            copying.start()
            notes = []
            while copying.is_alive():
                # a plan without notes has no "notes" field (results leave empty fields out)
                notes += ok(await client.call_tool("recommend_apis", {"requirement": REQUIREMENT})).get("notes", [])
            copying.join()
            await until_served(client, api_gone=0)
        assert not any("cannot serve" in n for n in notes)  # a half-written file was never opened
    finally:
        shutil.rmtree(elsewhere, ignore_errors=True)


async def test_a_catalogue_rewritten_in_place_is_said_in_one_line_and_served_once_whole(tmp_path, caplog):
    settings = served(tmp_path)
    publish(tmp_path, tmp_path / "new.db", api_rows()[12:])
    async with Client(build_server(settings)) as client:
        with caplog.at_level(logging.WARNING, logger="tender.server"):
            copying = threading.Thread(
                target=copy_slowly,
                args=(tmp_path / "new.db", settings.catalog_path),
                kwargs={"into": settings.catalog_path},
            )
            copying.start()
            while copying.is_alive():
                await client.call_tool("list_categories", {})
            copying.join()
            await until_served(client, api_gone=0)
    said = [r.message for r in caplog.records if "rewritten in place" in r.message]
    assert said and all("renaming a new file into place" in m for m in said)
