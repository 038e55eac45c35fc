"""The form a need is served in (issue: plans an assistant can install). An ability for the assistant itself is served
by an MCP server it can install, a part of an app by a web API: given as `kind`, or read from the request per need;
where the catalogue holds both forms a need takes only its own, a tool's match is its server's, and a need only the
other form serves is unserved, naming it. A catalogue of one form is served as before."""

import pytest

from tender.agents.form import read_forms
from tender.agents.request import Request
from tender.agents.service import Tender
from tender.catalog import Catalog
from tender.catalog.build import build_from_sources
from tender.catalog.install import package
from tender.catalog.records import Api
from tender.catalog.servers import Server, Tool, items_of
from tender.catalog.sources.base import Loaded, SourceInfo


def web_api(name: str, description: str, category: str) -> Api:
    return Api(
        id=0,
        name=name,
        kind="api",
        provider=name,
        categories=[category],
        description=description,
        details={"refs": [f"public-apis:{name}"], "auth": "apiKey", "https": True, "cors": "no"},
    )


def server(key: str, title: str, description: str, tools: list[tuple[str, str]] = (), **extra) -> list[Api]:
    record = Server(
        ref=f"toolsdk:{key}",
        namespace=key,
        title=title,
        description=description,
        source="fixture",
        routes=[package("npm", key, "1.0.0")],
        tools=[Tool(name=n, description=d) for n, d in tools],
        status="active",
        **extra,
    )
    return items_of(record)


ITEMS = [
    web_api("Google Calendar", "Read and write events of Google Calendar calendars", "Calendar"),
    web_api("Todoist", "Create and complete tasks and projects in Todoist", "Productivity"),
    web_api("Spotify", "Play music, search songs and playlists on Spotify", "Music"),
    web_api("OpenWeatherMap", "Current weather and forecasts for any city", "Weather"),
    *server(
        "google-calendar-mcp",
        "Google Calendar MCP",
        "Google Calendar events for your assistant",
        [("list_events", "List the events of a Google Calendar"), ("create_event", "Create a calendar event")],
    ),
    *server("todo-helper", "Todo Helper", "Helps with things", [("create_task", "Create a task in Todoist")]),
    *server("weather-mcp", "Weather MCP", "Weather forecasts for a city, for assistants"),
    *server("awesome-mcp", "Awesome MCP", "A list of servers: calendar, tasks, weather, music and more"),
]


@pytest.fixture(scope="module")
def tender(tmp_path_factory, embedder):
    path = tmp_path_factory.mktemp("mixed") / "mixed.db"
    build_from_sources([Loaded(info=SourceInfo(kind="fixture", name="fixture"), apis=ITEMS)], path, embedder)
    return Tender(Catalog(path, embedder=embedder))


def kinds(tender: Tender, plan) -> set[str]:
    return {tender.catalog.get_api(a.api_id).kind for a in plan.apis}


def test_an_assistant_s_abilities_are_served_by_servers_it_can_install(tender):
    plan = tender.recommend(Request.create("let Claude read my Google Calendar and make Todoist tasks")).plan
    assert plan.apis and kinds(tender, plan) == {"server"}
    assert [s.form for s in plan.steps] == ["mcp_server"] * len(plan.steps)
    assert any("Read as an ability for the assistant" in n and "'Claude'" in n for n in plan.notes), plan.notes
    assert "Todo Helper (todo-helper)" in [a.name for a in plan.apis]  # found by its tool, awarded as its server


def test_a_server_is_named_by_its_service_s_name_and_only_for_the_need_that_names_it(tender):
    plan = tender.recommend(
        Request.create(
            "let Claude look at my Google Calendar and put tasks in Todoist",
            needs=["read my Google Calendar events", "create tasks in Todoist"],
        )
    ).plan
    calendar, tasks = plan.steps
    assert [a.api_name for a in calendar.awarded][0] == "Google Calendar MCP (google-calendar-mcp)"
    assert "the requirement names it" in calendar.awarded[0].rationale
    assert all("Google Calendar" not in a.api_name for a in tasks.awarded)


def test_a_shortlist_reads_each_tool_as_its_server_and_lists_each_server_once_as_deep_as_asked(tender):
    requirement = "let Claude add an event to my Google Calendar"
    every = tender.ranker.shortlist("create a calendar event", requirement, depth=10, form="mcp_server").candidates
    items = [c.item for c in every]
    assert len(items) == len(set(items))  # each server once
    assert all(tender.catalog.get_api(i).kind == "server" for i in items)  # its tools bid as the server
    scores = [c.score for c in every]
    assert scores == sorted(scores, reverse=True)
    calendar = next(c for c in every if "Google Calendar" in tender.catalog.get_api(c.item).name)
    assert calendar.evidence.via_tool in {"list_events", "create_event"}
    best = tender.ranker.shortlist("create a calendar event", requirement, depth=2, form="mcp_server").candidates
    assert [c.item for c in best] == items[:2]  # a shallower list is the deeper one's head


def test_a_part_of_an_app_is_served_by_web_apis(tender):
    plan = tender.recommend(Request.create("a website that shows my Google Calendar events")).plan
    assert plan.apis and kinds(tender, plan) == {"api"}
    assert any("a part of an app" in n for n in plan.notes)


def test_the_kind_given_overrides_what_the_words_say(tender):
    plan = tender.recommend(Request.create("let Claude read my Google Calendar", kind="web_api")).plan
    assert kinds(tender, plan) == {"api"} and any("kind=web_api" in n for n in plan.notes)
    anything = tender.recommend(Request.create("let Claude read my Google Calendar", kind="any")).plan
    assert anything.apis and all(s.form == "any" for s in anything.steps)


def test_a_need_only_a_web_api_serves_is_unserved_for_an_assistant_and_names_the_api(tender):
    plan = tender.recommend(Request.create("let Claude play songs on Spotify")).plan
    step = plan.steps[0]
    assert step.status.value == "unserved" and not plan.apis
    assert step.other_form is not None and step.other_form.api_name == "Spotify"
    assert step.reason.startswith("no MCP server for this in the catalogue; Spotify is its web API")


def test_a_web_api_the_request_does_not_name_is_not_called_its_web_api(tender):
    plan = tender.recommend(Request.create("let Claude play some songs", needs=["play songs"])).plan
    step = plan.steps[0]
    assert step.status.value == "unserved" and step.other_form is not None
    assert step.other_form.api_name == "Spotify"
    assert "Spotify, a web API," in step.reason and "its web API" not in step.reason


def test_lists_of_servers_take_no_need_unless_asked(tender):
    everywhere = tender.recommend(Request.create("give my assistant calendar, tasks, weather and music")).plan
    assert "Awesome MCP (awesome-mcp)" not in [a.name for a in everywhere.apis]
    for candidate in everywhere.stages.candidates:
        assert tender.catalog.get_api(candidate).name != "Awesome MCP (awesome-mcp)"


def test_in_a_catalogue_of_one_form_the_form_chooses_nothing(catalog_path, embedder):
    tender = Tender(Catalog(catalog_path, embedder=embedder))  # ProgrammableWeb's web APIs only
    plan = tender.recommend(Request.create("Claude: show nearby restaurants on a map with their reviews")).plan
    assert plan.apis and not any("MCP servers" in n for n in plan.notes)


@pytest.mark.parametrize(
    "requirement, needs, forms",
    [
        (
            "let Claude read my calendar and make tasks",
            ["let Claude read my calendar", "make tasks"],
            ["mcp_server", "mcp_server"],
        ),
        (
            "Build a site that shows the weather, and let my agent manage its GitHub repo",
            ["shows the weather", "manage its GitHub repo"],
            ["web_api", "mcp_server"],
        ),
        # who is asked is set apart from the need, and still says who will use it
        (
            "Have Claude drive a real browser through my news site",
            ["drive a real browser through my news site"],
            ["mcp_server"],
        ),
        ("a dashboard of stock prices", ["stock prices"], ["web_api"]),
        ("stock prices and news", ["stock prices", "news"], ["any", "any"]),
        # needs the caller phrased itself take the form of the clause they are about, or their own words
        (
            "Claude should go through my Sentry issues, and the clinic app we're building must show appointments",
            ["read Sentry issues", "appointments API for the app"],
            ["mcp_server", "web_api"],
        ),
        # what an ability for the assistant acts on ("my site", "a Notion page") is not who will use it
        (
            "Claude, read the spec in my Notion workspace; the recipe app it describes needs a recipe search API",
            ["read a Notion page", "recipe search API for the app"],
            ["mcp_server", "web_api"],
        ),
        (
            "Have Claude click through my news site before each release — the site itself shows headlines",
            ["control a browser to click through my site", "headlines for the site"],
            ["mcp_server", "web_api"],
        ),
        # an app named by a compound is an app still
        (
            "Have Claude sort the photos in my Dropbox; the check-in app needs to generate a QR code for every ticket",
            ["sort the photos in my Dropbox", "the check-in app needs to generate a QR code for every ticket"],
            ["mcp_server", "web_api"],
        ),
        # a word that begins like "app" is not an app
        (
            "Hey Claude, add 'pick up the dry cleaning' to my Apple Reminders",
            ["add 'pick up the dry cleaning' to my Apple Reminders"],
            ["mcp_server"],
        ),
        ("train times with a cursory summary of delays", ["train times", "a summary of delays"], ["any", "any"]),
        # a request titled by what is built is for that app
        (
            "family travel app: enter a flight number and show whether it's delayed",
            ["enter a flight number", "show whether it's delayed"],
            ["web_api", "web_api"],
        ),
    ],
)
def test_forms_are_read_per_need(requirement, needs, forms):
    assert read_forms(requirement, needs).forms == forms
