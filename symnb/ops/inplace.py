"""In-place variants of ops: the op computes into the buffer of one of its inputs
(``destroy_map = {0: [input]}``, which the py backend reads): elementwise ops and composites,
``inc_subtensor``/``set_subtensor`` and ``inc_along_axis``. The rewrite that chooses them,
and when it may, is ``symnb/opt/rules/inplace.py``. Shapes are checked when it runs: where
the input cannot hold the result (it is broadcast), the op computes into a new buffer as
usual.
"""

from __future__ import annotations

import numpy as np

from symnb.ops.composite import Composite
from symnb.ops.elemwise import Elemwise
from symnb.ops.index import IncSubtensor
from symnb.ops.take import IncAlongAxis


class ElemwiseInplace(Elemwise):
    """``base`` computed into the buffer of input ``destroyed`` (same values as ``base``)."""

    __props__ = ("base", "destroyed")

    def __init__(self, base, destroyed: int):
        self.base, self.destroyed = base, destroyed
        self.nin = base.nin
        self.destroy_map = {0: [destroyed]}

    def infer_types(self, *inputs):
        return self.base.infer_types(*inputs)

    def perform(self, *arrays):
        target = arrays[self.destroyed]
        if not _can_hold(target, arrays):
            return self.base.perform(*arrays)
        return self.base.impl(*arrays, out=target)

    def grad(self, inputs, outputs, output_grads):
        return self.base.grad(inputs, outputs, output_grads)

    def grad_wrt(self, needed, inputs, outputs, output_grads):
        return self.base.grad_wrt(needed, inputs, outputs, output_grads)

    def __str__(self):
        return f"{self.base}_inplace" + (f"[{self.destroyed}]" if self.destroyed else "")


class CompositeInplace(Composite):
    """A composite whose last step writes into input ``destroyed``. It stays a Composite, so
    kernel backends render its program as they render any composite."""

    __props__ = ("program", "dtype", "destroyed")

    def __init__(self, program, dtype, nin, destroyed: int):
        super().__init__(program, dtype, nin)
        self.destroyed = destroyed
        self.destroy_map = {0: [destroyed]}

    def perform(self, *arrays):
        target = arrays[self.destroyed]
        if not _can_hold(target, arrays):
            return super().perform(*arrays)
        return self.perform_into(arrays, target)

    def __str__(self):
        return f"{super().__str__()}_inplace" + (f"[{self.destroyed}]" if self.destroyed else "")


class _IntoFirstInput:
    """An indexed update (the base op's ``update(out, ...)``) writing into x's buffer, x
    being dead after it; into a copy where x cannot be written (read-only, not an array)."""

    destroy_map = {0: [0]}

    def perform(self, x, *rest):
        if not isinstance(x, np.ndarray) or not x.flags.writeable:
            return super().perform(x, *rest)
        return self.update(x, *rest)

    def __str__(self):
        return f"{super().__str__()}_inplace"

    __repr__ = __str__


class IncSubtensorInplace(_IntoFirstInput, IncSubtensor):
    """``inc_subtensor``/``set_subtensor`` writing into x's buffer: a chain of increments of
    one array (the gradient of many picks ``x[i]``) copies it once, not once per increment."""


class IncAlongAxisInplace(_IntoFirstInput, IncAlongAxis):
    """``inc_along_axis`` (the gradient of ``take_along_axis``) adding into x's buffer: one
    array of x's size, not two."""


def inplace_variant(op, destroyed: int):
    """The op computing into input ``destroyed``."""
    if isinstance(op, Composite):
        return CompositeInplace(op.program, op.dtype, op.nin, destroyed)
    return ElemwiseInplace(op, destroyed)


def _can_hold(target, arrays) -> bool:
    """A writable array already of the broadcast result's shape."""
    if not isinstance(target, np.ndarray) or not target.flags.writeable:
        return False
    try:
        return target.shape == np.broadcast_shapes(*(np.shape(a) for a in arrays))
    except ValueError:  # shapes that do not broadcast: the base op reports it
        return False
