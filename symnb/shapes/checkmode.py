"""Check mode: graphs are built and shape-checked, nothing is compiled.

Inside ``with check_mode():`` (what ``symnb check`` runs a program in), ``sn.function`` returns
a :class:`CheckedFunction`: calling it checks the values against the inputs (dtype, rank, fixed
and named dims, dims computed from names) and returns zeros shaped like the outputs, so a whole
training loop runs in seconds. The output shapes come from the ops' own shape rules applied to
the call's concrete shapes, so a clash that only shows with real sizes (an unknown dim that
turns out wrong) is still a ShapeError, raised at the call. Shared variables are not updated.
"""

from __future__ import annotations

import contextlib

import numpy as np

from symnb.compile.function import (
    Function,
    _check_givens,
    _check_inputs,
    _check_updates,
    _flatten_outputs,
)
from symnb.compile.inputs import InputSpec, check_derived_dims
from symnb.core.dims import evaluate, is_symbolic
from symnb.core.graph import Graph, clone_graph, leaves
from symnb.core.types import TensorType
from symnb.core.variable import Constant, SharedVariable, Variable
from symnb.errors import ShapeError
from symnb.shapes.warnings import quiet

_depth = 0


@contextlib.contextmanager
def check_mode():
    """Within it, ``sn.function`` builds and checks but does not compile."""
    global _depth
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1


def active() -> bool:
    """Is check mode on? (``sn.function`` asks.)"""
    return _depth > 0


class CheckedFunction(Function):
    """What ``sn.function`` returns in check mode: checks inputs, returns zero placeholders."""

    def __init__(self, inputs, outputs, updates, givens, name):  # compiles nothing: no super()
        self.name, self.backend, self.compile_time = name, "check", 0.0
        self.inputs = _check_inputs(inputs)
        self._structure, out_vars = _flatten_outputs(outputs)
        self.updates = _check_updates(updates)
        targets = clone_graph(out_vars + [v for _, v in self.updates], _check_givens(givens))
        self.graph_before = self.graph = Graph(self.inputs, targets)
        self._specs = [InputSpec(v, i) for i, v in enumerate(self.inputs)]
        self._by_name = {v.name: i for i, v in enumerate(self.inputs) if v.name}
        self._n_out = len(out_vars)
        self._shapes_seen: dict = {}

    def __call__(self, *args, **kwargs):
        values = self._bind(args, kwargs)
        sizes: dict = {}
        arrays = [spec.convert(v, sizes) for spec, v in zip(self._specs, values)]
        check_derived_dims(self._specs, arrays, sizes)
        key = tuple(a.shape for a in arrays) + tuple(_shared_shapes(self.graph))
        if key not in self._shapes_seen:
            self._shapes_seen[key] = self._output_shapes(arrays, sizes)
        out = zip(self.graph.outputs[: self._n_out], self._shapes_seen[key])
        return self._structure([np.zeros(shape, v.type.dtype) for v, shape in out])

    def _output_shapes(self, arrays, sizes) -> list[tuple]:
        """Run the shape rules on this call's shapes; named dims keep their names (reshape
        targets refer to them) and get their sizes at the end."""
        concrete = {id(v): _filled(v, a.shape) for v, a in zip(self.inputs, arrays)}
        with quiet():
            for node in self.graph.toposort():
                _propagate(node, concrete)
        names = {name: size for name, (size, _) in sizes.items()}
        names.update(_shared_names(self.graph))
        return [_placeholder_shape(_stub(v, concrete).type, names) for v in self.graph.outputs]


def _shared(graph) -> list[SharedVariable]:
    return [v for v in leaves(graph.outputs) if isinstance(v, SharedVariable)]


def _shared_shapes(graph) -> list:
    return [v.get_value(borrow=True).shape for v in _shared(graph)]


def _shared_names(graph) -> dict:
    """Sizes of the named dims of shared variables, from their values."""
    names = {}
    for var in _shared(graph):
        for d, n in zip(var.type.shape, var.get_value(borrow=True).shape):
            if isinstance(d, str):
                names[d] = n
    return names


def _filled(var, actual) -> TensorType:
    """var's type with its unknown and fixed dims taken from an actual shape (names stay)."""
    shape = tuple(d if is_symbolic(d) else n for d, n in zip(var.type.shape, actual))
    return TensorType(var.type.dtype, shape)


def _stub(var, concrete) -> Variable:
    """var itself when its type is already concrete (constants), else a stand-in."""
    if isinstance(var, Constant):
        return var
    if isinstance(var, SharedVariable):
        return Variable(_filled(var, var.get_value(borrow=True).shape), name=var.name)
    return Variable(concrete.get(id(var), var.type), name=var.name)


def _propagate(node, concrete) -> None:
    stubs = [_stub(v, concrete) for v in node.inputs]
    try:
        types = node.op.infer_types(*stubs)
    except ShapeError as exc:
        built = node.outputs[0].source
        raise ShapeError(
            f"with the shapes of this call: {exc.args[0] if exc.args else exc}"
            + (f"\n  (the node was built at {built})" if built else "")
        ) from None
    for var, t in zip(node.outputs, types):
        concrete[id(var)] = t


def _placeholder_shape(t: TensorType, names: dict) -> tuple:
    """A concrete shape: names evaluated with the call's sizes; what is still unknown is 1."""
    dims = (d if isinstance(d, int) else evaluate(d, names) for d in t.shape)
    return tuple(1 if d is None else d for d in dims)
