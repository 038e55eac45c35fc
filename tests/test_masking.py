"""Masking API names out of a requirement (the evaluation's `masked` variants): every name goes, the same way in
every process."""

import subprocess
import sys

from tender.agents.text import mask_names
from tests.conftest import ROOT

NAMES = ["Google Maps", "Google Maps Places", "Twitter"]
TEXT = "Uses the Google Maps APi and Twitter to show offers"


def test_a_full_name_goes_with_its_trailing_api_however_written():
    assert mask_names(TEXT, NAMES) == "Uses the and to show offers"


# The masking alone, in a fresh interpreter: its two modules (text.py and ranking/names.py, which import only `re`)
# under package stubs, so that each of the 12 interpreters starts in milliseconds, not with all of Tender.
ALONE = """
import sys, types
for package in ("tender", "tender.agents", "tender.ranking"):
    module = sys.modules[package] = types.ModuleType(package)
    module.__path__ = [sys.argv[1] + "/" + package.replace(".", "/")]
from tender.agents.text import mask_names
print(mask_names(*eval(sys.argv[2])))
"""


def test_the_masked_text_is_the_same_whatever_the_hash_seed():
    arguments = [sys.executable, "-c", ALONE, str(ROOT), repr((TEXT, NAMES))]
    runs = {
        subprocess.run(arguments, capture_output=True, text=True, env={"PYTHONHASHSEED": str(seed)}, check=True).stdout
        for seed in range(12)
    }
    assert runs == {"Uses the and to show offers\n"}
