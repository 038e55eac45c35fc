"""The built wheel, installed into a fresh virtual environment, works from another directory: one package
(`tender`) with its prompts and bid model inside, `tender recommend` without torch, and the LLM path's
prompts read from the installed package.

Offline and about 30 s: the wheel is built without build isolation (setuptools from the dev environment) and
installed with --no-deps; its third-party dependencies come from the dev environment's site-packages through a
.pth file, which sees the dependencies but not the checkout (the editable install's finder is not loaded)."""

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from tests.conftest import ROOT, write_jsonl
from tests.fixture_data import api_rows, mashup_rows

pytestmark = pytest.mark.install
# As in an install without the train extra: torch and sentence-transformers cannot be imported.
NO_TORCH = "import sys\nfor name in ('torch', 'sentence_transformers', 'transformers'): sys.modules[name] = None\n"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    # Built from a copy: setuptools writes build/ and *.egg-info into the tree it builds.
    source = out / "source"
    shutil.copytree(
        ROOT,
        source,
        ignore=shutil.ignore_patterns(
            ".git",
            ".venv*",
            "build",
            "*.egg-info",
            "__pycache__",
            "node_modules",
            ".mcp-servers",
            "*.db",
            "out",
            "models",
        ),
    )
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "--no-build-isolation", "-q", "-w", str(out)],
        check=True,
        capture_output=True,
        timeout=180,
    )
    (built,) = out.glob("tender_mcp-*.whl")
    return built


def fresh_venv(folder: Path, wheel: Path, dependencies: Path) -> Path:
    """A new virtual environment with the wheel installed alone, seeing its dependencies in `dependencies` through
    a .pth file."""
    subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True, timeout=120)
    python = folder / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    Path(site, "dependencies.pth").write_text(f"{dependencies}\n")
    return folder


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory) -> Path:
    return fresh_venv(tmp_path_factory.mktemp("venv") / "fresh", wheel, Path(sysconfig.get_paths()["purelib"]))


@pytest.fixture
def elsewhere(tmp_path, monkeypatch):
    """Another directory to run from, a TENDER_HOME of its own and nothing else of Tender's environment."""
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("TENDER_") and k != "PYTHONPATH"}
    env.update(TENDER_HOME=str(tmp_path / "home"), HF_HUB_OFFLINE="1")
    apis, mashups = (
        write_jsonl(tmp_path / "apis.jsonl", api_rows()),
        write_jsonl(tmp_path / "mashups.jsonl", mashup_rows()),
    )
    return run_dir, env, apis, mashups


def test_the_wheel_holds_one_package_with_its_prompts_and_ranking_models(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names}
    assert {top for top in tops if not top.endswith(".dist-info")} == {"tender"}  # no `agents`, `server`, ...
    assert {
        "tender/prompts/contractor_bid.txt",
        "tender/prompts/manager_decompose.txt",
        "tender/prompts/manager_map.txt",
        "tender/prompts/manager_select.txt",
        "tender/prompts/repair.txt",
    } <= set(names)
    assert "tender/ranking/model.json" in names
    # The tuned encoder ships whole: its delta and the ranking model fitted on its vectors.
    assert {"tender/catalog/assets/tender-minilm-lora.npz", "tender/ranking/model.tender-minilm.json"} <= set(names)
    assert not any(name.startswith("tests/") or name.endswith(".db") for name in names)


def run(venv: Path, args: list[str], run_dir: Path, env: dict, code: str | None = None) -> subprocess.CompletedProcess:
    command = [str(venv / "bin" / "python"), "-c", code] if code else [str(venv / "bin" / "tender"), *args]
    return subprocess.run(
        command + (args if code else []), cwd=run_dir, env=env, capture_output=True, text=True, timeout=180
    )


def test_tender_recommend_runs_from_the_installed_package(venv, elsewhere):
    run_dir, env, apis, mashups = elsewhere
    env = env | {"TENDER_EMBEDDING_MODEL": "hashing"}
    built = run(venv, ["catalog", "build", "--apis", str(apis), "--mashups", str(mashups), "--quiet"], run_dir, env)
    assert built.returncode == 0, built.stderr
    answer = run(venv, ["recommend", "weather forecast on a map"], run_dir, env)
    assert answer.returncode == 0, answer.stderr
    assert "OpenWeatherMap" in answer.stdout
    home = Path(env["TENDER_HOME"])
    assert (home / "catalog.db").is_file() and list(run_dir.iterdir()) == []  # user files in the home, none in cwd


def test_the_stock_encoder_recommends_without_torch_from_the_installed_package(venv, elsewhere):
    run_dir, env, apis, mashups = elsewhere
    code = NO_TORCH + (
        "import tender\n"
        "assert '/fresh/' in tender.__file__, tender.__file__\n"
        "from tender.cli import main\n"
        "main(sys.argv[1:])\n"
    )
    built = run(
        venv, ["catalog", "build", "--apis", str(apis), "--mashups", str(mashups), "--quiet"], run_dir, env, code
    )
    assert built.returncode == 0, built.stderr
    answer = run(venv, ["recommend", "weather forecast on a map"], run_dir, env, code)
    assert answer.returncode == 0, answer.stderr
    assert "OpenWeatherMap" in answer.stdout


def test_the_llm_paths_prompts_load_from_the_installed_package(venv, elsewhere):
    run_dir, env, _, _ = elsewhere
    code = (
        "import tender\n"
        "from tender.agents.reasoners.prompts import render_messages\n"
        "from tender.agents.tasks import DecomposeTask\n"
        "system, user = render_messages(DecomposeTask(requirement='weather forecast on a map'))\n"
        "assert 'weather forecast on a map' in user['content'] and system['role'] == 'system'\n"
        "print(tender.__file__)\n"
    )
    done = run(venv, [], run_dir, env, code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().startswith(str(venv))


def test_the_tuned_encoder_recommends_without_torch_from_the_installed_package(venv, elsewhere):
    run_dir, env, apis, mashups = elsewhere
    env = env | {"TENDER_EMBEDDING_MODEL": "tender-minilm"}
    code = NO_TORCH + "from tender.cli import main\nmain(sys.argv[1:])\n"
    built = run(
        venv, ["catalog", "build", "--apis", str(apis), "--mashups", str(mashups), "--quiet"], run_dir, env, code
    )
    assert built.returncode == 0, built.stderr
    assert "with tender-minilm" in built.stdout
    answer = run(venv, ["recommend", "weather forecast on a map"], run_dir, env, code)
    assert answer.returncode == 0, answer.stderr
    assert "OpenWeatherMap" in answer.stdout
