"""Running a ``%%symcompile`` cell: symnb's names in scope, the cell's lines kept for errors,
and the function's inputs, outputs and updates read from what the cell defines.

The rules (also in docs/notebook.md):
- inputs: the symbolic inputs (``tensor``, ``matrix``...) the outputs depend on, in the order
  the cell created them; ``--inputs x,y`` chooses and orders them explicitly;
- outputs: the value of the cell's last line when it is an expression (a variable, a tuple or
  list of them, or a dict name -> variable), else the names given by ``--outputs a,b``;
- updates: a dict (or list of pairs) named ``updates`` defined by the cell.
"""

from __future__ import annotations

import ast
import types

from symnb.core.graph import leaves
from symnb.core.hooks import hook
from symnb.core.variable import Constant, SharedVariable, Variable, as_variable
from symnb.errors import SymnbError

_HIDDEN = {"eval", "load_ipython_extension"}  # keep Python's eval; not for cells


class CellError(SymnbError, ValueError):
    """The cell does not say what to compile (no final expression, unknown names)."""


def symnb_names() -> dict:
    """What the cell sees besides the user's namespace: symnb's public names, ``sn``, ``np``."""
    import numpy as np

    symnb = hook("symnb")  # the package itself, which sits above the magics
    names = {k: getattr(symnb, k) for k in dir(symnb) if k not in _HIDDEN and k[0] != "_"}
    names = {k: v for k, v in names.items() if not isinstance(v, types.ModuleType)}
    names.update(sn=symnb, np=np)
    return names


def run_cell(shell, cell: str):
    """Execute ``cell`` over the user's namespace.

    Returns the value of its last expression (None if the last line is a statement), the
    namespace after the cell, and the names the cell bound (written back to the user's).
    """
    source = shell.transform_cell(cell) if shell is not None else cell
    tree = ast.parse(source)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    filename = _register(shell, "\n" + source)  # one leading line: the %%symcompile line
    ast.increment_lineno(tree, 1)
    namespace = symnb_names()
    namespace.update(shell.user_ns if shell is not None else {})
    before = {name: id(value) for name, value in namespace.items()}
    exec(compile(tree, filename, "exec"), namespace)  # noqa: S102 - running the user's cell
    value = None
    if last is not None:
        ast.increment_lineno(last, 1)
        code = compile(ast.Expression(last.value), filename, "eval")
        value = eval(code, namespace)  # noqa: S307 - the user's own expression
    bound = {n for n, v in namespace.items() if before.get(n) != id(v) and not n.startswith("__")}
    _name_outputs(last, value)
    if shell is not None:
        shell.user_ns.update({n: namespace[n] for n in bound})
    return value, namespace, bound


def _name_outputs(last, value) -> None:
    """Unnamed outputs written as bare names (``loss`` or ``loss, acc``) take those names."""
    if last is None:
        return
    expr = last.value
    names = [expr] if isinstance(expr, ast.Name) else getattr(expr, "elts", [])
    values = [value] if isinstance(expr, ast.Name) else value
    if not isinstance(values, (list, tuple)) or len(values) != len(names):
        return
    for node, var in zip(names, values):
        if isinstance(node, ast.Name) and isinstance(var, Variable) and var.name is None:
            var.name = node.id


def _register(shell, source: str) -> str:
    """A file name linecache knows, so errors can quote the cell's line."""
    if shell is not None and hasattr(shell, "compile"):
        return shell.compile.cache(source, shell.execution_count)
    return "<symcompile>"


def pick_outputs(value, namespace: dict, names: str | None):
    """The outputs: ``--outputs`` names, else the last expression's value."""
    if names:
        picked = [_lookup(namespace, n) for n in _split(names)]
        return picked[0] if len(picked) == 1 else picked
    if value is None:
        raise CellError(
            "%%symcompile: end the cell with the output expression (e.g. `loss` or "
            "`loss, acc`), or name the outputs with --outputs"
        )
    return value


def pick_inputs(outputs, updates, namespace: dict, names: str | None) -> list[Variable]:
    """``--inputs`` names in order, else the free inputs the outputs use, oldest first."""
    if names:
        return [_lookup(namespace, n) for n in _split(names)]
    targets = _variables(outputs) + [v for _, v in updates]
    free = [v for v in leaves(targets) if not isinstance(v, (Constant, SharedVariable))]
    return sorted(free, key=_creation_order)


def _creation_order(var) -> int:
    return var.uid


def _variables(outputs) -> list[Variable]:
    if isinstance(outputs, dict):
        outputs = list(outputs.values())
    if isinstance(outputs, (list, tuple)):
        return [as_variable(v) for v in outputs]
    return [as_variable(outputs)]


def pick_updates(namespace: dict, bound: set) -> list:
    """The cell's ``updates`` (a dict or pairs), only if this cell assigned it."""
    if "updates" not in bound:
        return []
    updates = namespace["updates"]
    return list(updates.items()) if isinstance(updates, dict) else list(updates)


def _lookup(namespace: dict, name: str):
    if name not in namespace:
        raise CellError(f"%%symcompile: the cell defines no variable named {name!r}")
    return namespace[name]


def _split(names: str) -> list[str]:
    return [n.strip() for n in names.split(",") if n.strip()]
