"""Identity ops that change only what differentiation sees.

- ``zero_grad(x)`` (also ``stop_gradient``): the value of x, with a zero gradient. Inputs
  reached only through it are still connected to the cost; their gradient is zero.
- ``disconnected_grad(x)``: the value of x, and inputs reached only through it count as
  disconnected from the cost (``sn.grad``'s ``disconnected`` option decides what happens).

They are elementwise copies, so kernel backends fuse them like any other elementwise op.
"""

from __future__ import annotations

import numpy as np

from symnb.core.variable import Variable, as_variable
from symnb.ops.elemwise import Elemwise


class _Identity(Elemwise):
    """An elementwise copy: kernels compute it as its operand."""

    nin = 1
    impl = staticmethod(np.copy)

    def scalar(self, k, x):
        return k.to(x)


class ZeroGrad(_Identity):
    """x, with no gradient flowing back through it."""

    def grad_elem(self, inputs, output, gz):
        return [None]


class DisconnectedGrad(_Identity):
    """x, with its input treated as disconnected from whatever uses it."""

    disconnects_gradient = True

    def grad_elem(self, inputs, output, gz):
        return [None]


def zero_grad(x) -> Variable:
    """x in the forward pass; a zero gradient in the backward pass (JAX's ``stop_gradient``)."""
    return ZeroGrad()(as_variable(x))


def disconnected_grad(x) -> Variable:
    """x in the forward pass; what it depends on counts as disconnected for ``sn.grad``."""
    return DisconnectedGrad()(as_variable(x))


stop_gradient = zero_grad
