"""Which items a requirement names: the catalogue's name index finds exactly the items whose names the text
mentions, without checking every name (a scan of every name cost 268 ms a requirement at 100,000 items)."""

import pytest

from tender.ranking.names import NameIndex, common_words, mentions, service_name

NAMES = [
    "Twitter",
    "Google Maps API",
    "Google Maps Places",
    "Last.fm",
    ".NET Weather",
    "Box",
    "Internet Archive",
    "SMS",
    "Twilio SMS",
    "@mention Bot",
    "OpenWeatherMap",
]
TEXTS = [
    "post it to Twitter and show it on Google Maps",
    "scrobbles from last.fm (Last.fm), weather via .NET Weather",
    "put the files in a box, then in Box",
    "search the internet archive; also the Internet Archive",
    "send an SMS with Twilio SMS or @mention Bot",
    "OpenWeatherMap-like forecasts, not OpenWeatherMap2",
    "nothing named here",
]


@pytest.mark.parametrize("text", TEXTS)
def test_the_index_finds_exactly_the_items_the_text_names(text):
    index = NameIndex(list(enumerate(NAMES)))
    expected = {i: m for i, name in enumerate(NAMES) if (m := mentions(name, text)) > 0}
    assert index.named(text) == expected
    assert list(index.named(text)) == sorted(expected)  # in catalogue order


def test_a_name_is_found_only_where_it_starts_a_word():
    index = NameIndex(list(enumerate(NAMES)))
    assert index.named("use MyTwitter and xBox") == {}
    assert 0 in index.named("use (Twitter)")


def test_a_one_word_name_the_catalogue_uses_as_an_ordinary_word_is_named_only_as_a_name():
    descriptions = [f"Search and share images of {thing}" for thing in ("cats", "dogs", "cars", "art")] + [
        "Post tweets to Twitter"
    ]
    index = NameIndex([(0, "Images"), (1, "Twitter")], common_words(descriptions))
    assert index.named("generate images from a text prompt") == {}
    assert index.named("post the pictures to Images, the clip-art site") == {0: 1.0}
    assert index.named("post it to twitter") == {1: 1.0}  # a proper name, written in lower case, still names it


@pytest.mark.parametrize(
    "title, called",
    [
        ("Google Calendar MCP", "Google Calendar"),
        ("Slack MCP Server", "Slack"),
        ("Todoist MCP Server Ext", "Todoist"),
        ("MCP DevTools", "MCP DevTools"),  # nothing before "MCP": the title is its name
        ("Playwright", "Playwright"),
        ("MCP Server", ""),  # the protocol's words alone name no service: "Which MCP server ..." names none
        ("Model Context Protocol", ""),
    ],
)
def test_a_server_is_called_by_its_title_without_mcp(title, called):
    assert service_name(title) == called
