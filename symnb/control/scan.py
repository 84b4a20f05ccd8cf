"""The loop op behind ``sn.scan``: an inner graph run once per step (docs/loops.md).

``sn.scan`` (scan_build.py) traces the user's step function into a :class:`Loop`, an inner
graph in one canonical form that every part of symnb reads:

- inner inputs: one value per *sequence* (row ``t`` of an outer array; taps were turned into
  shifted outer slices), one per *state* (its value after step ``t - 1``; a tap such as
  ``-2`` became a chain of states), then the *non-sequences* (the same value every step);
- inner outputs: each state's next value, then the *plain* outputs (not fed back), then,
  with ``until``, the boolean that stops the loop after the step that computed it.

The op's outer inputs are ``n_steps`` (int64; -1: as many as the sequences have rows), the
sequences, the states' initial values and the non-sequences. Its outputs are, per state,
all its values (``history``) or only the last one, then each plain output's rows.

:func:`run_loop` is the one loop runtime: the NumPy reference runs it with the inner graph's
references, and a backend with the inner graph compiled to its own plan. Outputs are written
into storage allocated once, before the first step.
"""

from __future__ import annotations

import numpy as np

from symnb.control import scan_grad
from symnb.control.loop import Loop, reference_step, run_loop, steps_to_run
from symnb.core.dims import format_shape, shapes_unify
from symnb.core.op import Op
from symnb.core.types import TensorType
from symnb.core.variable import Constant, SharedVariable, Variable
from symnb.errors import DTypeError, ShapeError
from symnb.ops.index import getitem
from symnb.ops.join import concatenate
from symnb.ops.shape import expand_dims, public_dims, size_dim

INT = np.dtype("int64")


class Scan(Op):
    """A loop over the steps of an inner graph (Theano's scan; docs/loops.md)."""

    __props__ = ("loop",)
    family = "loops"
    dtype_rule = "each output keeps the dtype its step returns (fed-back outputs: the initial's)"

    def __init__(self, loop: Loop):
        self.loop = loop

    def __str__(self):
        loop = self.loop
        return f"scan[{loop.n_seqs} seq, {loop.n_states} state, {loop.n_plain} out]" + (
            " until" if loop.until else ""
        )

    __repr__ = __str__

    @property
    def nout(self) -> int:
        return self.loop.n_states + self.loop.n_plain

    def infer_types(self, n_steps, *outer) -> list[TensorType]:
        loop = self.loop
        if n_steps.type.dtype != INT or n_steps.type.ndim != 0:
            raise DTypeError(f"scan: n_steps must be an int64 scalar, got {n_steps.describe()}")
        inner = loop.graph.inputs
        if len(outer) != len(inner):
            raise ShapeError(f"scan: {len(outer)} outer inputs for {len(inner)} inner ones")
        for i, (var, ph) in enumerate(zip(outer, inner)):
            _check_fits(var, ph, seq=i < loop.n_seqs, name=loop.names[i])
        length = self._length(n_steps, outer[: loop.n_seqs])
        outs = loop.graph.outputs
        types = []
        for j in range(loop.n_states):
            step = inner[loop.n_seqs + j].type
            row = _state_shape(step.shape, outer[loop.n_seqs + j].type.shape)
            shape = ((length,) + row) if loop.history[j] else row
            types.append(TensorType(step.dtype, shape))
        for var in outs[loop.n_states : loop.n_states + loop.n_plain]:
            types.append(TensorType(var.type.dtype, (length,) + var.type.shape))
        return types

    def _length(self, n_steps, seqs):
        """The number of steps, where the types show it (else None: known when it runs)."""
        if self.loop.until:
            return None
        if isinstance(n_steps, Constant) and int(n_steps.value) >= 0:
            return int(n_steps.value)
        if not isinstance(n_steps, Constant):  # a size the graph knows (x.shape[0]: x's dim)
            return public_dims((size_dim(n_steps),))[0] if self.loop.counted else None
        if not seqs:
            return None
        dims = {repr(s.type.shape[0]): s.type.shape[0] for s in seqs}
        return next(iter(dims.values())) if len(dims) == 1 else None

    def perform(self, n_steps, *arrays):
        loop = self.loop
        results = run_loop(loop, reference_step(loop), int(n_steps), arrays)
        return results[0] if len(results) == 1 else tuple(results)

    def steps_taken(self, values, inputs=None) -> int | None:
        """The steps a call ran, read from the node's output ``values`` (profiles), or, where
        they keep no rows (``hs[-1]`` alone read), from its ``inputs`` (no ``until``)."""
        loop = self.loop
        kept = [v for v, keep in zip(values, loop.history) if keep] + list(values[loop.n_states :])
        if kept:
            return len(kept[0])
        if inputs is None or loop.until:
            return None
        n_steps, *arrays = inputs
        return steps_to_run(loop, int(n_steps), arrays[: loop.n_seqs])

    def default_updates(self, node) -> list:
        """A shared variable with a default update (a random stream's counter) that the step
        updates: its last value here is the default update of any graph reading the loop,
        so a function not passed scan's updates still moves the stream past every step's
        draws (docs/random.md), never by one step's worth only."""
        k, pairs = 1 + self.loop.n_seqs, []
        for j in self.loop.updated:
            var = node.inputs[k + j]
            if isinstance(var, SharedVariable) and "default_update" in var.tag:
                pairs.append((var, _last_value(var, node.outputs[j], self.loop.history[j])))
        return pairs

    def grad(self, inputs, outputs, output_grads):
        """Backpropagation through time: a second scan, backwards (scan_grad.py)."""
        return scan_grad.backward(self, inputs, outputs, output_grads)

    def grad_wrt(self, needed, inputs, outputs, output_grads):
        """The backward scan differentiates the step only with respect to the inputs at
        ``needed`` and the states whose values depend on them (scan_grad.py); the other
        inputs' gradients are None."""
        return scan_grad.backward(self, inputs, outputs, output_grads, needed)


def _last_value(initial, out, history: bool):
    """A state's value after the last step: ``out``, or the last of its rows where the loop
    keeps them all (the copy a gradient reads), the initial value where it ran no step."""
    if not history:
        return out
    return getitem(concatenate([expand_dims(initial, 0), out]), -1)


def _state_shape(step: tuple, initial: tuple) -> tuple:
    """A state's shape at every step: its placeholder's, each dim it leaves unknown the
    initial value's (a state keeps its shape from step to step, ``run_loop`` checks it), so
    the rule applied to inputs of other shapes than the traced ones says their rows' shape
    (``grad.points``: the length of ``hs`` for a tap ``-2``)."""
    return tuple(i if s is None else s for s, i in zip(step, initial))


def _check_fits(var: Variable, ph: Variable, seq: bool, name: str):
    """An outer input has its inner placeholder's type (with a leading time axis for a
    sequence)."""
    shape = var.type.shape[1:] if seq else var.type.shape
    bad = var.type.dtype != ph.type.dtype or not shapes_unify(shape, ph.type.shape)
    if bad or (seq and var.type.ndim == 0):
        what = "rows of the sequence" if seq else "value"
        raise ShapeError(
            f"scan: the {what} {name} ({var.type.dtype.name}{format_shape(shape)}) do not fit "
            f"the step's {ph.describe()}"
        )
