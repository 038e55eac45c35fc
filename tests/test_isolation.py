"""The tests never read the caller's settings (issue 58): a user of Tender runs them with TENDER_CATALOG, TENDER_HOME
or an LLM endpoint set in the shell, and a test that read them would fail, or build into the user's catalogue.
tests/conftest.py clears them when it is imported, before any test module, so that the processes the tests start
inherit the cleared environment too."""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.conftest import ROOT

SHELL = {
    "TENDER_CATALOG": "/home/someone/tender/catalog.db",
    "TENDER_HOME": "/home/someone/.local/share/tender",
    "TENDER_LLM_BASE_URL": "http://127.0.0.1:9/v1",
    "TENDER_EMBEDDING_MODEL": "embeddinggemma-300m",
    "OPENAI_API_KEY": "sk-the-users-own",
    "TENDER_TEST_POSTGRES": "postgresql://tests@/postgres",  # the tests' own setting (.ci/run), kept
}
SEEN = "import json, os, tests.conftest; print(json.dumps({k: v for k, v in os.environ.items() if k.startswith(('TENDER_', 'OPENAI_'))}))"


def test_the_callers_settings_never_reach_a_test_and_the_home_is_a_throwaway_folder():
    env = {**os.environ, **SHELL, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", SEEN], env=env, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr

    seen = json.loads(done.stdout)
    callers = {
        k for k in seen if not k.startswith("TENDER_TEST_")
    }  # the tests' own settings pass, whatever .ci/run adds
    assert callers == {"TENDER_HOME"}, seen
    assert seen["TENDER_TEST_POSTGRES"] == SHELL["TENDER_TEST_POSTGRES"]
    home = Path(seen["TENDER_HOME"])
    assert home.is_relative_to(tempfile.gettempdir()) and home.name.startswith("tender-tests-home-")
    home.rmdir()  # empty: the child only made it


def test_this_session_runs_in_the_same_isolation():
    assert not [
        k
        for k in os.environ
        if k.startswith(("TENDER_", "OPENAI_")) and k not in ("TENDER_HOME",) and not k.startswith("TENDER_TEST_")
    ]
    assert Path(os.environ["TENDER_HOME"]).name.startswith("tender-tests-home-")
