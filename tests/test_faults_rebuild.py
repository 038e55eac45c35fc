"""Issue 38, item 10: the assistant is told that a run id is the key to its run. (What a server does when its
catalogue is rebuilt under it is tests/test_catalogue_publication.py's: it switches between requests.)"""

from tender.server.instructions import instructions


def test_the_assistant_is_told_that_a_run_id_is_the_key_to_its_run(catalog_path):
    assert "whoever holds it can read the run" in instructions(catalog_path)
