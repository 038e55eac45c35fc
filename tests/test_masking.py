"""Masking API names out of a requirement (the evaluation's `masked` variants): every name goes, the same way in
every process."""

import subprocess
import sys

from tender.agents.text import mask_names

NAMES = ["Google Maps", "Google Maps Places", "Twitter"]
TEXT = "Uses the Google Maps APi and Twitter to show offers"


def test_a_full_name_goes_with_its_trailing_api_however_written():
    assert mask_names(TEXT, NAMES) == "Uses the and to show offers"


def test_the_masked_text_is_the_same_whatever_the_hash_seed():
    code = f"from tender.agents.text import mask_names; print(mask_names({TEXT!r}, {NAMES!r}))"
    runs = {
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env={"PYTHONHASHSEED": str(seed)}, check=True
        ).stdout
        for seed in range(12)
    }
    assert runs == {"Uses the and to show offers\n"}
