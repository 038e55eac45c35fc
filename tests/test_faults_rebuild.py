"""What the assistant is told of run ids: whoever holds one can read that run. (A catalogue rebuilt under a running
server: tests/test_catalogue_publication.py.)"""

from tender.server.app import INSTRUCTIONS


def test_the_assistant_is_told_that_a_run_id_is_the_key_to_its_run():
    assert "whoever holds it can read the run" in INSTRUCTIONS
