"""The package's dependencies run one way: server → answers → agents → ranking → catalog. Training and evaluation
sit beside them: the product never imports them (nor the command line)."""

import ast
from pathlib import Path

from tests.conftest import ROOT

ORDER = ["catalog", "ranking", "agents", "answers", "server"]
BESIDE = ("training", "evaluation", "cli")
PACKAGE = ROOT / "tender"


def imports(path: Path) -> list[tuple[int, str]]:
    """The tender modules a file imports, relative imports resolved, with their lines."""
    package = ["tender", *path.relative_to(PACKAGE).parts[:-1]]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            found.append((node.lineno, ".".join([*base, *([node.module] if node.module else [])])))
    return [(line, name) for line, name in found if name.startswith("tender.")]


def test_each_layer_imports_only_its_own_and_the_layers_below():
    wrong = []
    for path in PACKAGE.rglob("*.py"):
        layer = path.relative_to(PACKAGE).parts[0]
        if layer not in ORDER:
            continue
        for line, name in imports(path):
            target = name.split(".")[1]
            if (target in ORDER and ORDER.index(target) > ORDER.index(layer)) or target in BESIDE:
                wrong.append(f"{path.relative_to(ROOT)}:{line} imports {name}")
    assert not wrong, "\n".join(wrong)


def test_the_check_resolves_relative_imports(tmp_path, monkeypatch):
    upward = tmp_path / "tender" / "ranking" / "x.py"
    upward.parent.mkdir(parents=True)
    upward.write_text("from ..agents.plan import Plan\nfrom . import names\nimport tender.catalog\n")
    monkeypatch.setattr("tests.test_layers.PACKAGE", tmp_path / "tender")
    assert imports(upward) == [(1, "tender.agents.plan"), (2, "tender.ranking"), (3, "tender.catalog")]
