"""``sn.print_value(x, "msg")``: x, printing its value each time a compiled function computes
it (Theano's ``theano.printing.Print``). Not pure, so rewrites never merge or fold it away;
but a function that reads it only for its shape reads x's and does not print (Theano's
optimiser did the same)."""

from __future__ import annotations

import sys

import numpy as np

from symnb.core.op import Op
from symnb.core.variable import Variable, as_variable


class PrintValue(Op):
    """x unchanged; computing it writes ``message __str__ = value`` to standard output."""

    dtype_rule = "x's dtype"
    __props__ = ("message", "attrs")
    pure = False
    #: a value read only for its shape (a gradient's seed) is not printed: it reads x's
    #: (``shape_source``), as Theano's optimiser read Print's shape from its input
    keeps_shape = True

    def __init__(self, message: str = "", attrs=("__str__",)):
        self.message, self.attrs = str(message), tuple(attrs)

    def infer_types(self, x):
        return [x.type]

    def perform(self, x):
        for attr in self.attrs:
            value = getattr(x, attr)
            shown = value() if callable(value) else value
            print(f"{self.message} {attr} = {shown}", file=sys.stdout, flush=True)
        return np.array(x, copy=True)

    def grad(self, inputs, outputs, output_grads):
        return [output_grads[0]]


def print_value(x, message: str = "", attrs=("__str__",)) -> Variable:
    """x, printing ``message attr = x.attr`` for each of ``attrs`` whenever it is computed
    (``attrs=("shape", "__str__")`` prints the shape too)."""
    return PrintValue(message, attrs)(as_variable(x))
