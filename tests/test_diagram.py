"""The Mermaid sequence diagram of a transcript."""

import re

from tender.agents.diagram import sequence_diagram, summary_diagram
from tender.agents.messages import (
    AcceptProposal,
    Backtrack,
    CallForProposals,
    Failure,
    Inform,
    Propose,
    RejectProposal,
    Refuse,
    RoutedContractor,
    Routing,
    Transcript,
)


def cfp(task_id: str, round: int = 1, categories=("Mapping",)) -> CallForProposals:
    return CallForProposals(
        sender="manager",
        receiver="*",
        task_id=task_id,
        requirement="restaurants on a map",
        function_id="f1",
        function="show restaurants on a map",
        categories=list(categories),
        round=round,
    )


def routed(task_id: str, *contractors: str) -> Routing:
    return Routing(
        task_id=task_id,
        strategy="embedding",
        eligible=24,
        contacted=[RoutedContractor(contractor=c, similarity=0.5, reason="close profile") for c in contractors],
    )


def exchange() -> Transcript:
    return Transcript(
        messages=[
            cfp("t1"),
            Propose(
                sender="api:0",
                receiver="manager",
                task_id="t1",
                api_id=0,
                api_name="Google Maps",
                score=0.91,
                rationale="maps; markers #1",
            ),
            Refuse(sender="category:Food", receiver="manager", task_id="t1", reason="nothing to offer;\nsorry"),
            AcceptProposal(sender="manager", receiver="api:0", task_id="t1", api_id=0, reason="best score"),
            RejectProposal(sender="manager", receiver="api:2", task_id="t1", api_id=2, reason="lower score"),
            Inform(sender="api:0", receiver="manager", task_id="t1", api_id=0, result="contract taken"),
            cfp("t2", round=2, categories=("Reviews",)),
            Failure(sender="manager", receiver="*", task_id="t2", reason="no bids"),
        ],
        routing=[routed("t1", "api:0", "category:Food", "api:2"), routed("t2")],
        backtracking=[
            Backtrack(
                function_id="f1",
                round=2,
                reason="no admissible bid",
                from_categories=["Mapping"],
                to_categories=["Reviews"],
            )
        ],
        notes=["fell back to the embedded reasoner"],
    )


def test_starts_as_a_sequence_diagram_with_named_participants():
    text = sequence_diagram(exchange())
    lines = text.splitlines()
    assert lines[0] == "sequenceDiagram"
    assert "    participant manager as Manager" in lines
    assert any(re.fullmatch(r"    participant c\d+ as Google Maps \(api 0\)", line) for line in lines)
    assert any(re.fullmatch(r"    participant c\d+ as Food \(category\)", line) for line in lines)


def test_every_message_is_drawn():
    text = sequence_diagram(exchange())
    assert text.count("manager->>") == 3 + 1  # the CFP to the three routed contractors, then the accept
    assert "-->>manager: propose Google Maps (0.91)" in text
    assert re.search(r"c\d+--xmanager: refuse: nothing to offer sorry", text)
    assert re.search(r"manager->>c\d+: accept Google Maps: best score", text)  # named by its proposal
    assert re.search(r"manager-xc\d+: reject 2: lower score", text)  # never proposed here: its id
    assert re.search(r"c\d+-->>manager: inform: contract taken", text)
    assert "Note over manager: backtrack f1: no admissible bid" in text
    assert "Note over manager: CFP t2 f1 round 2 in Reviews reached no contractor" in text
    assert "Note over manager: failure: no bids" in text
    assert "Note over manager: fell back to the embedded reasoner" in text


def test_text_cannot_break_the_diagram():
    body = sequence_diagram(exchange()).splitlines()[1:]
    assert all(";" not in line and "#" not in line for line in body)
    assert all(line.startswith("    ") for line in body)


def test_long_exchanges_are_cut_with_a_note():
    contractors = [f"api:{i}" for i in range(40)]
    transcript = Transcript(messages=[cfp("t1")], routing=[routed("t1", *contractors)])
    text = sequence_diagram(transcript, max_arrows=10)
    assert text.count("->>") == 10
    assert "Note over manager: 30 more messages not drawn" in text


def test_an_empty_transcript_is_still_a_diagram():
    assert sequence_diagram(Transcript()) == "sequenceDiagram\n    participant manager as Manager\n"


def test_contractors_can_be_named_by_the_caller():
    text = sequence_diagram(exchange(), names={"api:2": "Bing Maps"})
    assert re.search(r"    participant c\d+ as Bing Maps \(api 2\)", text)
    assert "participant c2 as api 2" not in text


def crowded(winners: int, losers: int) -> Transcript:
    """One call per winner, each reaching every contractor; contractor i bids on API i."""
    contractors = [f"api:{i}" for i in range(winners + losers)]
    messages, routing = [], []
    for w in range(winners):
        task = f"t{w + 1}"
        messages.append(
            CallForProposals(
                sender="manager",
                receiver="*",
                task_id=task,
                requirement="r",
                function_id=f"f{w + 1}",
                function=f"function {w + 1}",
            )
        )
        routing.append(routed(task, *contractors))
        for i, c in enumerate(contractors):
            if i % 3 == 2:
                messages.append(Refuse(sender=c, receiver="manager", task_id=task, reason="not mine"))
            else:
                score = 0.9 if i == w else 0.1 + i / 100
                messages.append(
                    Propose(
                        sender=c,
                        receiver="manager",
                        task_id=task,
                        api_id=i,
                        api_name=f"API {i}",
                        score=score,
                        rationale="r",
                        function_id=f"f{w + 1}",
                    )
                )
        messages.append(AcceptProposal(sender="manager", receiver=f"api:{w}", task_id=task, api_id=w, reason="best"))
    return Transcript(messages=messages, routing=routing)


def test_the_summary_draws_the_winners_and_one_lane_for_everyone_else():
    text = summary_diagram(crowded(winners=3, losers=30))
    participants = [line for line in text.splitlines() if line.startswith("participant ")]
    assert len(participants) == 1 + 3 + 1
    assert participants[-1].endswith("as 30 other contractors")
    assert "participant w1 as API 0\n" in text and "participant w2 as API 1\n" in text
    # Per call: the call to its winner and to the others, the winner's bid, the others' bids in one line, the award.
    assert "manager->>w1: CFP f1: function 1" in text and "manager->>others: CFP f1 (to 32)" in text
    assert "w1-->>manager: API 0 0.90" in text
    assert "others-->>manager: 21 bids, best API 31 0.41, 11 refused" in text
    assert text.count(": accept") == 3
    assert len(text.splitlines()) < 30


def test_the_summary_keeps_at_most_six_winner_lanes():
    text = summary_diagram(crowded(winners=9, losers=5))
    assert text.count("participant ") == 1 + 6 + 1


def test_the_summary_of_an_empty_transcript_is_still_a_diagram():
    assert summary_diagram(Transcript()) == "sequenceDiagram\nparticipant manager as Manager\n"


def test_the_summary_notes_a_call_without_an_award():
    transcript = crowded(winners=1, losers=3)
    transcript.messages = [m for m in transcript.messages if m.kind != "accept"]
    assert "Note over manager: f1: no award" in summary_diagram(transcript)
