"""Which items a requirement names: the catalogue's name index finds exactly the items whose names the text
mentions, without checking every name (a scan of every name cost 268 ms a requirement at 100,000 items)."""

import pytest

from tender.ranking.names import NameIndex, mentions

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
