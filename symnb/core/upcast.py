"""Float64 that creeps into float32 work (Theano's ``warn_float64``).

A course sets its weights to float32 and forgets one: ``b = sn.shared(np.zeros(10))`` is
float64, and ``x @ W + b`` is then float64, and so is every layer after it and every
gradient: twice the memory, a slower kernel, and an update that no longer fits the float32
weights it should replace. The warning's class of case: a node that reads a float64 *shared*
variable together with a float32 (or float16) variable and gives a float64 result. Constants
and Python numbers never trigger it (they are weak or chosen by the code), nor do float64
inputs (``sn.tensor(..., dtype="float64")`` says what it wants). Each shared variable warns
once, at the line that first mixed it in.
"""

from __future__ import annotations

import numpy as np

from symnb.core.hooks import spelled
from symnb.core.source import warn_at_user
from symnb.core.variable import Constant, SharedVariable

FLOAT64 = np.dtype("float64")
NARROW = (np.dtype("float32"), np.dtype("float16"))


class Float64Warning(UserWarning):
    """A float64 shared variable makes float32 work float64."""


def check_upcast(op, inputs, types) -> None:
    """Warn when this node's float64 result comes from a float64 shared variable read with
    float32 ones (called for every node built: one pass, no list, for the rest)."""
    for t in types:
        if t.dtype == FLOAT64:
            break
    else:
        return
    shared = narrow = None
    for v in inputs:
        dtype = v.type.dtype
        if dtype == FLOAT64:
            if shared is None and isinstance(v, SharedVariable):
                shared = v
        elif narrow is None and dtype in NARROW and not isinstance(v, Constant):
            narrow = v
    if shared is None or narrow is None or shared.tag.get("float64_warned"):
        return
    shared.tag["float64_warned"] = True
    name = shared.message_name() or "v"
    _warn(
        f"{op.op_name()}: {shared.describe()} is a float64 shared variable; read with "
        f"{narrow.describe()} it makes the result float64 (and what is computed from it, "
        "gradients included)\n  hint: give it a float32 value (np.zeros(..., dtype='float32'), "
        f"or dtype=sn.config.floatX), or cast it where it is read: sn.cast({name}, 'float32')",
    )


def _warn(message: str) -> None:
    """At the user's line (the first frame outside symnb)."""
    warn_at_user(spelled(message), Float64Warning, stacklevel=4)
