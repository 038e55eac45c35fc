"""A core install (no extra) has every module of the product's install and runs `tender doctor` with an LLM
endpoint set: what the product imports is declared for the install that runs it.

Offline: the fresh environment sees only the distributions that pyproject.toml's core dependencies name and what
those require in turn (their files linked from the dev environment into one folder), never the extras' nor the
dev tools' — an undeclared import fails here as it would on a user's machine."""

import os
import subprocess
import sysconfig
import tomllib
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.conftest import ROOT
from tests.test_install import fresh_venv, wheel  # noqa: F401 (wheel: a fixture)

pytestmark = pytest.mark.install
# Left out: what needs the `train` extra (fine-tuning: torch, sentence-transformers, scikit-learn) and the `a2a` extra
# (the A2A SDK; `tender serve --a2a` says to install it).
EXTRAS_ONLY = ("tender.training", "tender.__main__", "tender.server.a2a_")  # __main__ runs the CLI when imported


def core_closure() -> set[str]:
    """The distributions a core install holds: the core dependencies and, recursively, what they require
    (markers evaluated here, with the extras asked of each)."""
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]

    def applies(requirement: Requirement, extras: set[str]) -> bool:
        return not requirement.marker or any(requirement.marker.evaluate({"extra": e}) for e in {"", *extras})

    todo = [(canonicalize_name(r.name), frozenset(r.extras)) for r in map(Requirement, declared) if applies(r, set())]
    found: set[str] = set()
    seen: set[tuple[str, frozenset[str]]] = set()
    while todo:
        name, extras = todo.pop()
        if (name, extras) in seen:
            continue
        seen.add((name, extras))
        try:
            dist = distribution(name)
        except PackageNotFoundError:
            continue  # an optional platform dependency not installed here
        found.add(name)
        for needed in map(Requirement, dist.requires or []):
            if applies(needed, set(extras)):
                todo.append((canonicalize_name(needed.name), frozenset(needed.extras)))
    return found


def core_site(folder: Path) -> Path:
    """A folder with the core closure's files linked in (each top-level entry of each distribution)."""
    site = Path(sysconfig.get_paths()["purelib"])
    folder.mkdir(parents=True, exist_ok=True)
    for name in sorted(core_closure()):
        for file in distribution(name).files or []:
            top = Path(file).parts[0]
            source = site / top
            if top not in ("..", "__pycache__") and source.exists() and not (folder / top).exists():
                (folder / top).symlink_to(source)
    return folder


@pytest.fixture(scope="module")
def core_venv(wheel, tmp_path_factory) -> Path:  # noqa: F811
    folder = tmp_path_factory.mktemp("core")
    return fresh_venv(folder / "fresh", wheel, core_site(folder / "site"))


def test_the_core_closure_leaves_the_extras_out():
    closure = core_closure()
    assert {"mcp", "onnxruntime", "httpx", "uvicorn"} <= closure
    assert not {"torch", "sentence-transformers", "psycopg", "pytest", "scikit-learn", "a2a-sdk"} & closure


def test_every_product_module_imports_in_a_core_install(core_venv, tmp_path):
    code = (
        "import importlib, pkgutil, tender\n"
        "names = [m.name for m in pkgutil.walk_packages(tender.__path__, 'tender.')]\n"
        f"skipped = {EXTRAS_ONLY!r}\n"
        "failed = []\n"
        "for name in names:\n"
        "    if name.startswith(skipped):\n"
        "        continue\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "    except ImportError as error:\n"
        "        failed.append(f'{name}: {error}')\n"
        "print(len(names)); print('\\n'.join(failed))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("TENDER_") and k != "PYTHONPATH"}
    done = subprocess.run(
        [str(core_venv / "bin" / "python"), "-c", code],
        cwd=tmp_path,
        env=env | {"TENDER_HOME": str(tmp_path / "home")},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    count, *failed = done.stdout.strip().splitlines()
    assert int(count) > 100 and failed == []


def test_doctor_with_an_llm_endpoint_set_runs_in_a_core_install(core_venv, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TENDER_", "OPENAI_")) and k != "PYTHONPATH"}
    env |= {"TENDER_HOME": str(tmp_path / "home"), "TENDER_LLM_BASE_URL": "http://127.0.0.1:9/v1"}
    done = subprocess.run(
        [str(core_venv / "bin" / "tender"), "doctor"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    output = done.stdout + done.stderr
    assert "Traceback" not in output and "ModuleNotFoundError" not in output, output
    assert "127.0.0.1:9" in output  # the endpoint was checked (and found unreachable), not skipped
