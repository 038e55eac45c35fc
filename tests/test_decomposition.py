"""The embedded decomposition reads needs and context from the requirement's text: nothing dropped, unrelated
needs never merged, the framing never a need."""

import pytest

from tender.agents.decomposition import content_words, read


def test_a_listed_word_with_a_detail_of_its_own_is_a_need():
    reading = read("A run tracker: GPS routes, music while running, posting runs to Facebook, and an SMS reminder")
    assert reading.needs == ["GPS routes", "music while running", "posting runs to Facebook", "an SMS reminder"]


def test_a_piece_pointing_back_at_a_place_is_a_need_of_its_own():
    reading = read("A travel site with hotels on a map, the weather there, photos of the place, and sharing on Twitter")
    assert reading.needs == ["hotels on a map", "the weather there", "photos of the place", "sharing on Twitter"]


def test_a_comma_before_a_joining_word_leaves_no_stray_word_in_a_need():
    assert read("Find me popular songs of the week, and also any news about the artists").needs == [
        "Find me popular songs of the week",
        "any news about the artists",
    ]
    assert read("Plot my runs on a map, along with photos").needs == ["Plot my runs on a map, along with photos"]


def test_the_attributes_a_need_lists_stay_with_it():
    assert read("Compare four cars on price, power, weight and range").needs == [
        "Compare four cars on price, power, weight and range"
    ]


def test_a_detail_without_a_need_of_its_own_stays_with_its_need():
    assert read("Show nearby restaurants on a map with their reviews").needs == [
        "Show nearby restaurants on a map",
        "their reviews",
    ]
    assert read("Show product reviews and ratings").needs == ["Show product reviews and ratings"]


def test_verbs_that_share_one_object_are_one_need():
    assert read("An assistant that reads and writes files in my folder and keeps notes about me").needs == [
        "reads and writes files in my folder",
        "keeps notes about me",
    ]
    assert read("Search or download podcasts").needs == ["Search or download podcasts"]
    # An infinitive waiting for its object, wherever it stands; a person it is sent to is not a verb.
    assert read("It keeps failing, give it a way to create and update DNS records").needs == [
        "It keeps failing",
        "give it a way to create and update DNS records",
    ]
    assert read("send the report to me and post it on Slack").needs == ["send the report to me", "post it on Slack"]


def test_a_verb_whose_object_is_the_clause_after_it_is_one_need_with_it():
    reading = read("let Claude look up which image tags exist on Docker Hub")
    assert reading.needs == ["look up which image tags exist on Docker Hub"]
    assert reading.context == ["let Claude"]


def test_values_handed_over_are_details_not_needs():
    assert read("a pie chart of my budget: rent 1200, food 400").needs == [
        "a pie chart of my budget: rent 1200, food 400"
    ]


def test_the_framing_of_the_app_is_context_not_a_need():
    reading = read("I'm building a Discord bot for our gaming group. It should post the weather every morning.")
    assert all("bot" not in need for need in reading.needs)
    assert any("Discord bot" in part for part in reading.context)


def test_who_is_asked_is_context_and_what_it_is_asked_to_do_is_the_need():
    reading = read("I want my assistant to file Jira tickets from bug reports and post a summary to Slack")
    assert reading.needs == ["file Jira tickets from bug reports", "post a summary to Slack"]
    assert reading.context == ["I want my assistant to"]
    assert read("let Claude read my Google Calendar and make Todoist tasks").needs == [
        "read my Google Calendar",
        "make Todoist tasks",
    ]
    assert read("Is there an MCP server that lets Claude query my Postgres database?").needs == [
        "query my Postgres database"
    ]


@pytest.mark.parametrize(
    "requirement, need",
    [
        ("Is there any MCP server that lets Claude search arXiv papers?", "search arXiv papers"),
        ("Does an MCP server exist for searching arXiv papers by topic?", "searching arXiv papers by topic"),
        ("Looking for an MCP server to upload files to S3", "upload files to S3"),
        ("What's the best MCP server so Claude can search my Zotero library", "search my Zotero library"),
        ("Hey Claude — could you look up a customer in Stripe", "look up a customer in Stripe"),
        ("Do you know of a tool that lets my agent create Jira tickets", "create Jira tickets"),
    ],
)
def test_asking_for_an_ability_is_context_in_any_form_of_the_question(requirement, need):
    reading = read(requirement)
    assert reading.needs == [need]
    assert reading.context  # what was asked and of whom, kept where the plan shows it


def test_an_opening_that_names_no_assistant_or_form_is_left_to_the_need():
    assert read("find the best route to the airport").needs == ["find the best route to the airport"]
    assert read("Can Claude find hotels in Paris").needs == ["find hotels in Paris"]


def test_an_app_s_own_words_are_not_taken_for_the_assistant():
    assert read("I want my dashboard to show prices").needs == ["I want my dashboard to show prices"]
    assert read("Let me know the weather").needs == ["Let me know the weather"]


def test_a_list_of_details_or_words_in_brackets_stay_in_their_need():
    assert read("we show calories, protein, carbs and fat for each food").needs == [
        "we show calories, protein, carbs and fat for each food"
    ]
    assert read("a bot that needs Pokémon data (types, stats, sprites) for its command").needs == [
        "needs Pokémon data (types, stats, sprites) for its command"
    ]
    # Named services listed are a need each.
    assert read("Compare the prices on Amazon, eBay and Best Buy").needs == [
        "Compare the prices on Amazon, eBay",
        "Best Buy",
    ]


def test_also_between_a_subject_and_its_verb_leaves_one_need():
    reading = read("Let Claude leave comments; the signup form also needs to reject disposable email addresses")
    assert reading.needs == ["leave comments", "the signup form also needs to reject disposable email addresses"]


def test_when_the_user_does_something_is_context_unless_it_names_a_service():
    reading = read("While I debug, let my agent look at the keys in my local Redis")
    assert reading.needs == ["look at the keys in my local Redis"]
    assert "While I debug" in reading.context
    assert read("check the weather for me when I plan my runs").needs == ["check the weather for me"]
    assert read("when I publish on WordPress, share the post to LinkedIn").needs == [
        "when I publish on WordPress",
        "share the post to LinkedIn",
    ]


def test_what_else_the_user_is_building_is_framing():
    reading = read("check the weather for me, and I'm also building a little site for my club that shows the forecast")
    assert reading.needs == ["check the weather for me", "shows the forecast"]


@pytest.mark.parametrize(
    "requirement",
    [
        "Claude, read the product spec in my Notion workspace and search recipes for the app it describes",
        "Which MCP server lets my coding agent list, start and stop the Docker containers on my laptop?",
        "A travel site with hotels on a map, the weather there, photos of the place, and sharing on Twitter",
        "Every Friday, email my daily tasks and translate them to Spanish",
        "An app that texts me when my package ships, with a map of where it is",
    ],
)
def test_nothing_is_dropped_every_word_is_a_need_s_or_the_context_s(requirement):
    reading = read(requirement)
    kept = set(content_words(" ".join(reading.needs + reading.context)))
    assert set(content_words(requirement)) <= kept
