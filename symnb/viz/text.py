"""The text form of a graph: typed binders, one equation per line.

    inputs: x:f32[batch,3]
    shared: W:f32[3,2]
      v0:f32[batch,2] = matmul x W
      v1:f32[] = sum[axis=(0, 1), keepdims=False] v0
    outputs: v1

Weak Python scalars print inline (``2.0``); other constants are listed with their values
(:func:`value_text`: each element as it round-trips in its dtype, ``0.1`` for float32 0.1, so
two different constants never print alike), those of more than 8 elements as ``<...>``.
"""

from __future__ import annotations

import numpy as np

from symnb.core.graph import leaves
from symnb.core.variable import Constant, SharedVariable
from symnb.core.words import printable
from symnb.viz.subject import as_graph

#: a display's plain text (what a terminal or a saved notebook's text/plain holds) keeps at
#: most this many lines, each of at most MAX_LINE_CHARS characters; methods give all of it
MAX_TEXT_LINES = 40
MAX_LINE_CHARS = 300


class _Namer:
    """Unique, readable names: the user's where given (a character that would not print as
    itself written as its escape, ``a\\nb``), ``v0, v1, ...`` otherwise."""

    def __init__(self):
        self.names: dict[int, str] = {}
        self.used: set[str] = set()
        self.counter = 0

    def __call__(self, var) -> str:
        if id(var) in self.names:
            return self.names[id(var)]
        if isinstance(var, Constant) and var.weak:
            return repr(var.data)
        # (a name's newline or tab, written as its escape: one equation stays one line)
        name = printable(var.name, visible=True) if var.name else None
        name = name or self._fresh("c" if isinstance(var, Constant) else "v")
        base, k = name, 1
        while name in self.used:
            name, k = f"{base}_{k}", k + 1
        self.used.add(name)
        self.names[id(var)] = name
        return name

    def _fresh(self, prefix):
        while f"{prefix}{self.counter}" in self.used:
            self.counter += 1
        self.counter += 1
        return f"{prefix}{self.counter - 1}"


def _binder(name, var) -> str:
    return f"{name}:{var.type}"


def value_text(value: np.ndarray, separator: str = ", ") -> str:
    """An array's value, nested lists of its elements (``[[1.0, 2.0], [3.0, 0.1]]``), each
    written as NumPy writes a scalar of its dtype: the shortest text that reads back as that
    value (``0.1`` for float32 0.1, ``1.0000000001``), as Python's ``repr`` does for floats.
    (``np.array2string`` rounds to 8 digits, so ``1.0`` and ``1.0000000001`` looked alike.)"""
    if value.ndim == 0:
        return str(value[()])
    return "[" + separator.join(value_text(row, separator) for row in value) + "]"


def _value(var: Constant) -> str:
    if var.value.size > 8:
        return "<...>"
    return value_text(var.value)


def format_graph(obj) -> str:
    """The whole graph as text (stable for a given graph: tests may compare it). ``obj`` is
    a Graph or what stands for one: a compiled function, an Apply node, some variables. A
    compiled function's result that the user named and a rewrite replaced by another value is
    written ``name=value`` on the ``outputs:`` line (``prob=v3``, ``q=a``)."""
    graph = as_graph(obj)
    name = _Namer()
    lines = ["inputs: " + " ".join(_binder(name(v), v) for v in graph.inputs)]
    roots = leaves(graph.outputs)
    shared = [v for v in roots if isinstance(v, SharedVariable)]
    consts = [v for v in roots if isinstance(v, Constant) and not v.weak]
    if shared:
        lines.append("shared: " + " ".join(_binder(name(v), v) for v in shared))
    if consts:
        lines.append("constants: " + " ".join(f"{_binder(name(v), v)}={_value(v)}" for v in consts))
    for node in graph.toposort():
        outs = " ".join(_binder(name(v), v) for v in node.outputs)
        args = " ".join(name(v) for v in node.inputs)
        lines.append(f"  {outs} = {node.op} {args}")
    outs = [name(v) for v in graph.outputs]
    for i, given in enumerate(getattr(obj, "result_names", None) or ()):
        if given and given != outs[i]:  # a result the user named, replaced by a rewrite
            outs[i] = f"{given}={outs[i]}"
    lines.append("outputs: " + " ".join(outs))
    return "\n".join(lines)


def format_expr(*outputs) -> str:
    """The text form of the graph behind some variables (inputs are their free leaves), or
    behind one list of them, a compiled function or an Apply node."""
    return format_graph(outputs[0] if len(outputs) == 1 else list(outputs))


def cap_line(line: str, max_chars: int = MAX_LINE_CHARS) -> str:
    """``line``, or its first ``max_chars`` characters and how many more there are."""
    if len(line) <= max_chars:
        return line
    return f"{line[:max_chars]} ... (+{len(line) - max_chars:,} characters)"


def cap_lines(text: str, hint: str, max_lines: int = MAX_TEXT_LINES) -> str:
    """``text`` cut for a display: its first ``max_lines`` lines (each cut by
    :func:`cap_line`), then ``... N more lines; <hint>`` saying how to get all of it."""
    lines = text.splitlines()
    shown = [cap_line(line) for line in lines[:max_lines]]
    if len(lines) > max_lines:
        shown.append(f"... {len(lines) - max_lines:,} more lines; {hint}")
    elif shown != lines[:max_lines]:
        shown.append(f"... (long lines cut); {hint}")
    return "\n".join(shown)
