"""What the shipped ranking does with the real encoder, on the tools of four real MCP servers (filesystem, memory,
fetch, time, as listed in suites/mcp/listing.json): behaviours a user relies on, not scores, and not the model's
exact picks: each need has the set of tools that would serve it, and a refit model may pick any of them."""

import json

import pytest

from tender.agents.request import Request
from tender.agents.service import Tender
from tender.catalog import Catalog, get_embedder
from tender.catalog.build import build_from_sources
from tender.catalog.sources.mcp import load_listing
from tender.evaluation.catalogues import MCP_LISTING

pytestmark = pytest.mark.real_model
SERVERS = ("filesystem", "memory", "fetch", "time")


@pytest.fixture(scope="module")
def tender(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tools")
    listing = json.loads(MCP_LISTING.read_text())
    listing["servers"] = [s for s in listing["servers"] if s["name"] in SERVERS]
    (folder / "listing.json").write_text(json.dumps(listing))
    embedder = get_embedder()
    build_from_sources(load_listing(folder / "listing.json"), folder / "tools.db", embedder)
    return Tender(Catalog(folder / "tools.db", embedder=embedder))


def awarded(tender, requirement: str, needs: list[str] | None = None) -> list[list[str]]:
    plan = tender.recommend(Request.create(requirement, needs=needs)).plan
    return [[a.api_name.split(" (")[0] for a in step.awarded] for step in plan.steps]


# Known misses of this design, kept as specifications of what should happen. The name's words ("read text file") and
# the encoder's sense of the verb ("save" is as near "read" as "write") outweigh what the tool does; what would fix
# it is a matcher that reads the action (docs/tuning.md, "Where this design stops"). Not strict: a refit ranking
# model that gets one right is reported (XPASS), not a failure of the suite.
@pytest.mark.xfail(strict=False, reason="'save the text to a file' goes to read_text_file: the name's 'text file' wins")
def test_a_need_to_save_a_file_gets_a_tool_that_writes(tender):
    steps = awarded(tender, "Download a page and save it to a file", ["download a web page", "save the text to a file"])
    assert "fetch" in steps[0]
    assert set(steps[1]) & {"write_file", "edit_file"}


@pytest.mark.xfail(strict=False, reason="'store a fact in memory' goes to delete_observations: the verb is not read")
def test_a_need_to_remember_a_fact_gets_a_tool_that_stores_it(tender):
    [step] = awarded(tender, "Remember that my sister's birthday is on 3 May", ["store a fact in memory"])
    assert set(step) & {"create_entities", "add_observations"} and "read_graph" not in step


def test_a_need_nothing_serves_is_unserved_with_its_best_candidates(tender):
    plan = tender.recommend(
        Request.create(
            "What time is it in Tokyo, and book me a flight there", needs=["current time in Tokyo", "book a flight"]
        )
    ).plan
    time, flight = plan.steps
    told = {a.api_name.split(" (")[0] for a in time.awarded}
    assert "get_current_time" in told and told <= {"get_current_time", "convert_time"}  # the time server's tools
    assert not flight.awarded and flight.status == "unserved"
    assert "fell short" in flight.reason and "(0." in flight.reason  # the best candidates, with their scores


def test_an_active_tool_beats_a_deprecated_one_that_scores_alike(tender):
    # filesystem's read_file says "DEPRECATED: Use read_text_file instead."
    [step] = awarded(tender, "Read the notes.txt file", ["read a text file"])
    assert "read_file" not in step and set(step) & {"read_text_file", "read_multiple_files"}
