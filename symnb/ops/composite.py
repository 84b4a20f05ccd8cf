"""A fused elementwise op: a small program of scalar elementwise ops over shared inputs.

The fuse rewrite builds it from a maximal elementwise subgraph; kernel backends render its
program as one loop body, and its NumPy reference runs the steps one after another.

``program`` is a tuple of steps ``(op, args)``: ``op`` is an Elemwise instance and each arg
is ``("in", i)`` (the i-th input), ``("tmp", j)`` (the result of step j) or
``("const", value, dtype)`` (a scalar constant). The last step's result is the output.
"""

from __future__ import annotations

import numpy as np

from symnb.core.dims import DimMismatch
from symnb.core.shapes.broadcast import broadcast_shapes, broadcast_static
from symnb.core.types import TensorType
from symnb.ops.elemwise import Elemwise


class Composite(Elemwise):
    """Several elementwise ops computed as one; ``program`` is described in the module doc."""

    __props__ = ("program", "dtype")

    def __init__(self, program, dtype, nin):
        self.program, self.dtype, self.nin = tuple(program), np.dtype(dtype).name, nin

    def infer_types(self, *inputs):  # (``_build`` checks that there are ``nin``)
        try:
            shape = self._program_shape([v.type.shape for v in inputs])
        except DimMismatch:  # not from a graph that was built: broadcast's own ShapeError
            shape = broadcast_shapes(self, inputs)
        return [TensorType(self.dtype, shape)]

    def _program_shape(self, shapes: list) -> tuple:
        """The output's shape, broadcast step by step as the fused ops broadcast theirs when
        the graph was built. One broadcast of all the inputs at once can differ where named
        dims meet in another order: ``clip(x1, x2, ~x0)`` with dims ``d4``, ``4`` and ``d1``
        pins both names to 4, but ``d1`` against ``d4`` first is a clash (two names)."""
        results = []
        for _, args in self.program:
            operands = [
                shapes[a[1]] if a[0] == "in" else results[a[1]] if a[0] == "tmp" else ()
                for a in args
            ]
            results.append(broadcast_static(operands))
        return results[-1]

    def perform(self, *arrays):
        results = self._run(self.program, arrays)
        return np.asarray(results[-1]).astype(self.dtype, copy=False)

    def perform_into(self, arrays, out):
        """Like perform, the last step (a ufunc) writing into ``out`` (the in-place variant)."""
        results = self._run(self.program[:-1], arrays)
        op, args = self.program[-1]
        return op.impl(*[_arg(a, arrays, results) for a in args], out=out)

    @staticmethod
    def _run(program, arrays) -> list:
        results = []
        for op, args in program:
            values = [_arg(a, arrays, results) for a in args]
            results.append(op.perform(*values))
        return results

    def grad_elem(self, inputs, output, gz):
        raise NotImplementedError("differentiate before fusing: fusion runs after grad")

    def __str__(self):
        names = "+".join(op.op_name() for op, _ in self.program)
        return f"composite[{names}]"


def _arg(ref, arrays, results):
    kind = ref[0]
    if kind == "in":
        return arrays[ref[1]]
    if kind == "tmp":
        return results[ref[1]]
    return ref[1]  # a Python scalar constant keeps NumPy's weak-scalar promotion
