"""The package's dependencies run one way: cli → server → assembly → answers → agents → ranking → catalog → the
ground floor (settings, errors, safety), each module importing only its own layer and those below. Training and
evaluation sit beside them, on the assembly: the product never imports them, and they never import the server or
the command line (which runs them)."""

import ast
from pathlib import Path

from tests.conftest import ROOT

ORDER = ["ground", "catalog", "ranking", "agents", "answers", "assembly", "server", "cli"]
GROUND = ("__init__", "errors", "safety", "settings")
BESIDE = ("training", "evaluation")
PACKAGE = ROOT / "tender"


def layer_of(module: str) -> str:
    """The layer of a tender module (`tender.x.y` or a file's parts): every module has one."""
    top = module.split(".")[1] if module.startswith("tender.") else module
    top = top.removesuffix(".py")
    if top in GROUND:
        return "ground"
    if top == "__main__":
        return "cli"
    return top


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


def test_every_module_has_a_layer():
    unknown = [
        str(path.relative_to(ROOT))
        for path in PACKAGE.rglob("*.py")
        if layer_of(path.relative_to(PACKAGE).parts[0]) not in (*ORDER, *BESIDE)
    ]
    assert not unknown


def test_each_layer_imports_only_its_own_and_the_layers_below():
    wrong = []
    for path in PACKAGE.rglob("*.py"):
        layer = layer_of(path.relative_to(PACKAGE).parts[0])
        for line, name in imports(path):
            target = layer_of(name)
            if layer in BESIDE:
                allowed = target in BESIDE or ORDER.index(target) <= ORDER.index("assembly")
            elif target in BESIDE:
                allowed = layer == "cli"  # its commands run them
            else:
                allowed = ORDER.index(target) <= ORDER.index(layer)
            if not allowed:
                wrong.append(f"{path.relative_to(ROOT)}:{line} ({layer}) imports {name} ({target})")
    assert not wrong, "\n".join(wrong)


def test_the_ground_floor_imports_nothing_above_it():
    assert layer_of("tender.settings") == layer_of("tender.errors") == "ground"
    assert layer_of("tender.assembly") == "assembly" and layer_of("tender.__main__") == "cli"


def test_the_check_resolves_relative_imports(tmp_path, monkeypatch):
    upward = tmp_path / "tender" / "ranking" / "x.py"
    upward.parent.mkdir(parents=True)
    upward.write_text("from ..agents.plan import Plan\nfrom . import names\nimport tender.catalog\n")
    monkeypatch.setattr("tests.test_layers.PACKAGE", tmp_path / "tender")
    assert imports(upward) == [(1, "tender.agents.plan"), (2, "tender.ranking"), (3, "tender.catalog")]


def module_of(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(package: Path) -> dict[str, set[str]]:
    """Each tender module's tender modules, imports inside functions counted: `from x import y` is an edge to x.y
    where y is a module, else to x."""
    modules = {module_of(p): p for p in package.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        here = ["tender", *path.relative_to(package).parts[:-1]]
        edges = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                edges.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = here[: len(here) - node.level + 1] if node.level else []
                source = ".".join([*base, *([node.module] if node.module else [])])
                edges.update(f"{source}.{a.name}" if f"{source}.{a.name}" in modules else source for a in node.names)
        graph[name] = {e for e in edges if e in modules and e != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The graph's strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                other = stack.pop()
                component.append(other)
                if other == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_module_imports_itself_through_others_not_even_inside_a_function():
    assert cycles(import_graph(PACKAGE)) == []


def test_the_cycle_check_sees_an_import_inside_a_function(tmp_path, monkeypatch):
    folder = tmp_path / "tender" / "agents"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text("")
    (folder / "a.py").write_text("from . import b\n")
    (folder / "b.py").write_text("def later():\n    from tender.agents.a import thing\n")
    monkeypatch.setattr("tests.test_layers.PACKAGE", tmp_path / "tender")
    monkeypatch.setattr("tests.test_layers.ROOT", tmp_path)
    assert cycles(import_graph(tmp_path / "tender")) == [["tender.agents.a", "tender.agents.b"]]
