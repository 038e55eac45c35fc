"""Categories are shown only where the catalogue has real ones (issue 37, item 10): an OpenAPI document's tags
("Timeline Weather API (15-day forecast request)") are no categories, and printed on a step about SMS they read
as nonsense. A directory's categories (ProgrammableWeb's) are still shown."""

import json

import pytest
from click.testing import CliRunner

from tender.cli import main

WEATHER = {
    "openapi": "3.0.3",
    "info": {"title": "Weather", "version": "1"},
    "paths": {
        "/forecast/{city}": {
            "get": {
                "operationId": "forecast",
                "summary": "The weather forecast for a city, day by day",
                "tags": ["Timeline Weather API (15-day forecast request)"],
            }
        },
        "/history/{city}": {
            "get": {
                "operationId": "history",
                "summary": "Past weather observations of a city",
                "tags": ["Timeline Weather API (date range request)"],
            }
        },
    },
}
SMS = {
    "openapi": "3.0.3",
    "info": {"title": "Texts", "version": "1"},
    "paths": {
        "/sms": {"post": {"operationId": "sendSms", "summary": "Send an SMS text message", "tags": ["Messages API"]}}
    },
}
TAGS = ("Timeline Weather API", "Messages API")
REQUIREMENT = "Look up the weather forecast for a city and send an SMS alert"


@pytest.fixture
def tender(tmp_path, catalog_path):
    env = {
        "TENDER_HOME": str(tmp_path / "home"),
        "TENDER_RUNS": str(tmp_path / "runs.db"),
        "TENDER_EMBEDDING_MODEL": "hashing",
        "TENDER_CATALOG": str(catalog_path),
    }
    return lambda *args: CliRunner().invoke(main, list(args), env=env)


@pytest.fixture
def openapi_db(tender, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "weather.json").write_text(json.dumps(WEATHER))
    (docs / "sms.json").write_text(json.dumps(SMS))
    db = tmp_path / "openapi.db"
    assert tender("catalog", "build", "--quiet", "--openapi", str(docs), "--db", str(db)).exit_code == 0
    return db


def test_an_openapi_plan_shows_no_document_tags_as_categories(tender, openapi_db):
    as_json = json.loads(tender("recommend", REQUIREMENT, "--db", str(openapi_db), "--json").stdout)
    assert any(step["categories"] for step in as_json["plan"]["steps"])  # the manager did map steps to tags

    made = tender("recommend", REQUIREMENT, "--db", str(openapi_db))
    assert made.exit_code == 0, made.output
    assert "forecast (Weather)" in made.output
    assert "categories:" not in made.output
    assert not any(tag in made.output for tag in TAGS)

    run_id = made.output.split("tender explain ")[-1].strip()
    told = tender("explain", run_id)
    assert told.exit_code == 0 and not any(tag in told.output for tag in TAGS)
    assert all(not f.get("categories") for f in json.loads(tender("explain", run_id, "--json").stdout)["functions"])


def test_a_directorys_categories_are_still_shown(tender):
    made = tender("recommend", "Show nearby restaurants on a map with their reviews")

    assert "categories: Mapping" in made.output or "[Mapping" in made.output
