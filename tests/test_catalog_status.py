"""An API's status is read conservatively from what its description says about the API itself."""

import json

import pytest

from tender.catalog.status import status_from_description
from tests.conftest import SHARED_DATA


@pytest.mark.parametrize(
    "description",
    [
        "[This API is no longer available. Its functions have been split among the following APIs...]",
        "[Editor's Note: This API is no longer available. For details, click here.]From their site...",
        "(2018 update: API DEFUNCT) The service provides maps of ...",
        "This API is DEFUNCT. Please refer to the Melbourne ...",
        "[This API has been deprecated and replaced by the Current Weather Data, 5 Day ...]",
        "(Deprecated in November, 2016) Using Panoramio API users can ...",
        "[Editor's Note: Per provider, this API will be deprecated in January 2019. Developers are encouraged ...]",
        "Per provider, this API is now closed and API keys are no longer being distributed.",
        "[Editor's Note: The Google Desktop API is no longer available. This profile ...]",
        "The IBM Watson AlchemyLanguage API has been retired as of April 7, 2017.",
        "As of June 2008 this service appears to be no longer in operation.",
        "Requests and responses are formatted in XML. ** No Longer Available **",
        "This API is no longer availble. In 2015, Body Media ...",
    ],
)
def test_statements_that_the_api_is_gone_mark_it_deprecated(description):
    status, source = status_from_description(description)
    assert status == "deprecated"
    assert source.startswith("description: '") and len(source) > len("description: ''")


@pytest.mark.parametrize(
    "description",
    [
        "This is a REST-based API. The SOAP interface was deprecated on 1 December 2015.",
        "A previous SOAP version has been deprecated in favor of REST with responses formatted as JSON.",
        "Similar to the now deprecated Safe2Pee, users can search for restrooms by proximity.",
        "First of all, the term 'UPC' has been deprecated the new term is UCC-12.",
        "Find the time zone or local time, the sunrise and sunset times, and the elevation.",
        "BookMooch lets you give away books you no longer need.",
        "The Yipit API is currently in closed beta.",
        "",
    ],
)
def test_other_uses_of_the_same_words_do_not(description):
    assert status_from_description(description) == ("unknown", "")


@pytest.mark.real_data
def test_the_apis_tender_recommends_most_are_read_as_dead_in_the_real_catalogue():
    path = SHARED_DATA / "apis.jsonl"
    if not path.is_file():
        pytest.skip(f"{path} is not here")
    rows = {row["name"]: row for row in map(json.loads, path.read_text().splitlines())}
    status = {name: status_from_description(row["description"] or "")[0] for name, row in rows.items()}
    for gone in ("Google Maps", "Twitter", "Facebook", "OpenWeatherMap", "World Weather Online", "Panoramio"):
        assert status[gone] == "deprecated", gone
    for alive in (
        "Amazon EC2",
        "Google AdSense",
        "REFUGE Restrooms",
        "UPC Database",
        "EarthTools",
        "Yahoo Weather",
        "Flickr",
    ):
        assert status[alive] == "unknown", alive
    assert 5 <= sum(s == "deprecated" for s in status.values()) <= 30  # conservative: a few dozen at most of 940
