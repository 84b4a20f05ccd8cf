"""symnb's imports point down its layers and form no cycle (docs/architecture.md, "Layers").

Every module under symnb/ is parsed, and every import counts: at module level or inside a
function (an import placed in a function does not make an upward one acceptable), relative or
absolute, and ``importlib.import_module("symnb...")`` with a constant name. ``from pkg import
name`` is an edge to the module ``pkg.name`` when there is one, else to ``pkg``; a package's
``__init__`` that re-exports its children has an edge to each of them.
"""

from __future__ import annotations

import ast
from collections import deque
from dataclasses import dataclass
from pathlib import Path

import symnb
from symnb.core.hooks import hook

#: layer of each part of symnb (the name after ``symnb.``): a module may import modules of its
#: own layer and of the layers below; the package itself and the tools sit on top
LAYERS = {
    "core": 0,
    "errors": 0,
    "config": 0,
    "flags": 0,
    "version": 0,
    "ops": 1,
    "grad": 2,
    "control": 3,  # scan, ifelse, jacobian: a scan's gradient is built by grad's reverse mode
    "opt": 4,  # the loop and branch rewrites read control's ops
    "compile": 5,
    "backends": 5,
    "viz": 6,
    "magics": 6,
    "compat": 6,
    "": 7,
    "cli": 7,
    "__main__": 7,  # symnb/__init__ and the CLI
    "shapes": 7,
    "catalogue": 7,  # tools: `symnb check`, `make docs` (docs/ops.md)
    "gpucheck": 7,  # `python -m symnb.gpucheck` (docs/gpu_backends.md)
}
LAYER_NAMES = "core ops grad control opt compile/backends viz/magics/compat top".split()


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    where: str  # path:line of the import

    def __str__(self):
        return f"{self.where}: {self.source} imports {self.target}"


def modules_of(root: Path, package: str) -> dict[str, tuple[Path, bool]]:
    """Module name -> (file, is a package's __init__) for every .py file of the package."""
    found = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


def import_edges(root: Path, package: str) -> list[Edge]:
    """Every import between the package's modules, wherever in the module it is written."""
    modules = modules_of(root, package)
    edges = []
    for name, (path, is_package) in modules.items():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            for target in _targets(node, name, is_package, modules):
                owner = _module_of(target, modules)
                if owner is not None and owner != name and owner.startswith(package):
                    where = f"{path.relative_to(root)}:{node.lineno}"
                    edges.append(Edge(name, owner, where))
    return edges


def _targets(node, name: str, is_package: bool, modules) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        base = _absolute(node, name, is_package)
        subs = [f"{base}.{alias.name}" for alias in node.names]
        return [sub if sub in modules else base for sub in subs]
    if _is_import_module_call(node):
        return [node.args[0].value]
    return []


def _absolute(node: ast.ImportFrom, name: str, is_package: bool) -> str:
    if not node.level:
        return node.module
    here = name.split(".") if is_package else name.split(".")[:-1]
    here = here[: len(here) - (node.level - 1)]
    return ".".join(here + ([node.module] if node.module else []))


def _is_import_module_call(node) -> bool:
    """``importlib.import_module("a.b")`` or ``import_module("a.b")`` with a constant name."""
    if not isinstance(node, ast.Call) or not node.args:
        return False
    func = node.func
    called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    first = node.args[0]
    return (
        called == "import_module"
        and isinstance(first, ast.Constant)
        and isinstance(first.value, str)
    )


def _module_of(target: str, modules) -> str | None:
    """The longest known module that ``target`` names (``a.b.c`` -> ``a.b`` if c is a name)."""
    while target and target not in modules:
        target = target.rpartition(".")[0]
    return target or None


def layer_of(module: str) -> int | None:
    part = module.split(".")[1] if "." in module else ""
    return LAYERS.get(part)


def cycles(edges: list[Edge]) -> list[list[Edge]]:
    """One shortest cycle, as its edges, per strongly connected group of modules."""
    graph: dict[str, dict[str, Edge]] = {}
    for edge in edges:
        graph.setdefault(edge.source, {}).setdefault(edge.target, edge)
    found = []
    for group in _strongly_connected(graph):
        if len(group) > 1:
            start = min(group)
            found.append(_shortest_cycle(graph, start, group))
    return found


def _strongly_connected(graph) -> list[set[str]]:
    """Tarjan's algorithm, iterative (no recursion limit on long import chains)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, {}))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, {})))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.add(member)
                    if member == node:
                        break
                groups.append(group)
    return groups


def _shortest_cycle(graph, start: str, group: set[str]) -> list[Edge]:
    """Breadth-first from ``start`` back to itself, inside the group."""
    came_from: dict[str, Edge] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for target, edge in sorted(graph.get(node, {}).items()):
            if target == start:
                path = [edge]
                while path[0].source != start:
                    path.insert(0, came_from[path[0].source])
                return path
            if target in group and target not in came_from:
                came_from[target] = edge
                queue.append(target)
    raise AssertionError(f"no cycle through {start}")


def describe(cycle: list[Edge]) -> str:
    modules = " -> ".join([cycle[0].source] + [edge.target for edge in cycle])
    return modules + "".join(f"\n    {edge}" for edge in cycle)


ROOT = Path(symnb.__file__).resolve().parent.parent
EDGES = import_edges(ROOT, "symnb")


# -- the checks on symnb --------------------------------------------------------------------
def test_every_module_has_a_layer():
    unplaced = [m for m in modules_of(ROOT, "symnb") if layer_of(m) is None]
    assert not unplaced, f"give these a layer in tests/test_layers.py LAYERS: {unplaced}"


def test_imports_point_down_the_layers():
    upward = [
        f"{edge}  ({LAYER_NAMES[layer_of(edge.source)]} is below "
        f"{LAYER_NAMES[layer_of(edge.target)]})"
        for edge in EDGES
        if layer_of(edge.target) > layer_of(edge.source)
    ]
    assert not upward, "imports that point up the layers:\n  " + "\n  ".join(upward)


def test_there_is_no_import_cycle():
    found = [describe(cycle) for cycle in cycles(EDGES)]
    assert not found, "import cycles:\n  " + "\n  ".join(found)


def test_nothing_outside_compat_imports_it():
    """Compatibility layers (symnb.compat) sit on top: viz and magics share their layer, but
    symnb's own code never depends on them."""
    inward = [
        str(e)
        for e in EDGES
        if e.target.startswith("symnb.compat") and not e.source.startswith("symnb.compat")
    ]
    assert not inward, "modules that import symnb.compat:\n  " + "\n  ".join(inward)


def test_every_hook_a_module_asks_for_is_registered():
    """Lower layers reach higher ones only through symnb.core.hooks; ``import symnb`` must
    have registered every hook that some module asks for by name."""
    asked = set()
    for path, _ in modules_of(ROOT, "symnb").values():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "hook":
                asked.update(a.value for a in node.args[:1] if isinstance(a, ast.Constant))
    assert asked >= {"ops", "function", "format_graph", "symnb"}
    for name in sorted(asked):
        assert hook(name) is not None, name


# -- the checker itself ---------------------------------------------------------------------
def _package(tmp_path, files: dict[str, str]) -> list[Edge]:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return import_edges(tmp_path, "pkg")


def test_imports_inside_functions_and_from_imports_of_submodules_count(tmp_path):
    edges = _package(
        tmp_path,
        {
            "pkg/__init__.py": "from pkg.low import f\n",
            "pkg/low.py": "def f():\n    from pkg import high\n    return high\n",
            "pkg/high.py": "from . import low\nimport importlib\nimportlib.import_module('pkg')\n",
        },
    )
    pairs = {(e.source, e.target) for e in edges}
    assert pairs == {
        ("pkg", "pkg.low"),
        ("pkg.low", "pkg.high"),
        ("pkg.high", "pkg.low"),
        ("pkg.high", "pkg"),
    }
    (cycle,) = cycles(edges)
    assert describe(cycle).startswith("pkg -> pkg.low -> pkg.high -> pkg")
    assert "pkg/low.py:2: pkg.low imports pkg.high" in describe(cycle)
