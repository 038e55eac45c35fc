"""The selection objective: expected coverage of the functions, less a cost per item and for redundancy."""

from tender.ranking.selection import Option, choose


def test_each_function_gets_its_likely_item():
    options = [Option(1, "map", 0.9), Option(2, "weather", 0.8), Option(3, "map", 0.2)]
    choice = choose(options, ["map", "weather"], cost=0.3)
    assert choice.items == [1, 2]
    assert choice.awards == {1: "map", 2: "weather"}


def test_a_second_item_for_a_function_already_well_served_adds_too_little():
    options = [Option(1, "map", 0.9), Option(2, "map", 0.85)]
    assert choose(options, ["map"], cost=0.3).items == [1]


def test_nothing_likely_enough_leaves_the_function_unserved():
    options = [Option(1, "map", 0.9), Option(5, "translate", 0.12), Option(6, "translate", 0.1)]
    choice = choose(options, ["map", "translate"], cost=0.3)
    assert choice.items == [1]
    assert choice.unserved(["map", "translate"]) == ["translate"]
    assert choose([Option(5, "f1", 0.05)], ["f1"], cost=0.3).items == []


def test_an_item_serving_two_functions_counts_for_both():
    # Alone each bid is under the cost; together they are worth one item.
    options = [Option(7, "geocode", 0.2), Option(7, "map", 0.2)]
    assert choose(options, ["geocode", "map"], cost=0.3).items == [7]


def test_an_active_alternative_beats_a_deprecated_item_of_similar_score():
    options = [Option(1, "sms", 0.80), Option(2, "sms", 0.78)]
    deprecated = {1}
    choice = choose(options, ["sms"], cost=0.3, deprecated=lambda item: item in deprecated)
    assert choice.items == [2]


def test_a_deprecated_item_is_kept_where_nothing_active_comes_near():
    options = [Option(1, "sms", 0.80), Option(2, "sms", 0.40)]
    choice = choose(options, ["sms"], cost=0.3, deprecated=lambda item: item == 1)
    assert choice.items == [1]


def test_a_server_the_user_can_install_beats_one_they_cannot_that_scores_a_little_higher():
    # the Google Calendar server with no install line (0.76) against one with an npx line (0.63)
    options = [Option(1, "calendar", 0.76), Option(2, "calendar", 0.63)]
    choice = choose(options, ["calendar"], cost=0.2, uninstallable=lambda item: item == 1)
    assert choice.items[0] == 2  # first, and the need's award; the other may follow as its alternative
    far = [Option(1, "calendar", 0.9), Option(2, "calendar", 0.4)]  # nothing installable comes near: it is kept
    assert choose(far, ["calendar"], cost=0.2, uninstallable=lambda item: item == 1).items[0] == 1


def test_a_second_tool_of_the_same_server_for_the_same_function_pays_for_redundancy():
    options = [Option(1, "read", 0.9), Option(2, "read", 0.7), Option(3, "read", 0.7)]
    server = {1: "fs", 2: "fs", 3: "git"}.__getitem__
    # Without a redundancy cost the two runners-up tie; with it, the other server's tool is preferred.
    choice = choose(options, ["read"], cost=0.0, redundancy=0.05, provider=server, max_items=2)
    assert choice.items == [1, 3]


def test_the_limit_on_items_is_kept():
    options = [Option(i, f"f{i}", 0.9) for i in range(5)]
    assert len(choose(options, [f"f{i}" for i in range(5)], cost=0.1, max_items=3).items) == 3
