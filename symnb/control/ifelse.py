"""Lazy control flow: ``sn.ifelse(cond, then, else_)`` computes only the branch it takes.

``sn.where``/``sn.switch`` choose element by element and so compute both sides; ``ifelse``
chooses once, on a scalar condition. The op itself is an ordinary node (its reference picks
one of its inputs); laziness is the planner's job: the nodes only one branch needs are
planned inside that branch of a ``Branch`` step (symnb/backends/branches.py), so the
compiled function never runs them when the other branch is taken.
"""

from __future__ import annotations

import numpy as np

from symnb.core.dims import DimMismatch, format_shape, unify
from symnb.core.lazy import LazyChoice
from symnb.core.op import Op, _at_user_line
from symnb.core.types import TensorType
from symnb.core.variable import Constant, Variable, as_variable, check_name
from symnb.errors import DTypeError, ShapeError
from symnb.ops._dtypes import probe_dtype, refuse_wrapped_ints
from symnb.ops.broadcast import zeros_like
from symnb.ops.elemwise import cast


class IfElse(Op, LazyChoice):
    """``then`` when the scalar ``cond`` is true (nonzero), else ``else_``; only the branch
    taken is computed. Inputs: ``cond``, the ``n`` then-values, the ``n`` else-values."""

    name = "ifelse"
    functions = ("ifelse",)
    family = "control flow"
    dtype_rule = (
        "the branches' dtype (both branches must have the same; a Python number branch takes "
        "sn.where's dtype for the pair, NumPy 2's weak-scalar promotion)"
    )
    __props__ = ("n",)

    def __init__(self, n: int):
        self.n = n
        self.nout = n

    def infer_types(self, cond, *branches):
        _check_cond(cond)
        if len(branches) != 2 * self.n:
            raise ShapeError(f"ifelse takes {self.n} then- and {self.n} else-values")
        pairs = zip(branches[: self.n], branches[self.n :])
        return [_branch_type(a, b, i, self.n) for i, (a, b) in enumerate(pairs)]

    def perform(self, cond, *values):
        chosen = values[: self.n] if cond else values[self.n :]
        return chosen[0] if self.n == 1 else tuple(chosen)

    def side_of(self, i: int) -> str | None:
        return None if i == 0 else "then" if i <= self.n else "else"

    def condition(self, node):
        return node.inputs[0]

    def output_of(self, i: int) -> int:
        return (i - 1) % self.n

    def kept_to_side(self, node, side, value, other):
        cond = self.condition(node)
        return ifelse(cond, value, other) if side == "then" else ifelse(cond, other, value)

    def grad(self, inputs, outputs, output_grads):
        """The gradient flows into the branch taken: ``ifelse(cond, g, 0)`` for a then-value,
        ``ifelse(cond, 0, g)`` for an else-value; none into ``cond``. (The backward of the
        nodes only a branch reads stays under the condition too: symnb/grad/reverse.py.)"""
        cond, values = inputs[0], inputs[1:]
        grads = [None] * len(inputs)
        for i, g in enumerate(output_grads):
            if g is None:
                continue
            then, other = values[i], values[self.n + i]
            grads[1 + i] = ifelse(cond, g, zeros_like(then))
            grads[1 + self.n + i] = ifelse(cond, zeros_like(other), g)
        return grads


def _check_cond(cond: Variable) -> None:
    if cond.type.ndim != 0:
        raise ShapeError(
            f"ifelse: the condition {cond.describe()} must be a scalar (one truth value for "
            "the whole branch); to choose element by element use sn.where(cond, a, b), or "
            "reduce it first: sn.any(cond) / sn.all(cond)"
        )
    if cond.type.dtype.kind not in "biu":
        raise DTypeError(
            f"ifelse: the condition {cond.describe()} must be boolean or an integer; write "
            "the comparison you mean, such as x > 0 or x != 0"
        )


def _branch_type(then: Variable, other: Variable, i: int, n: int) -> TensorType:
    """The output type of a then/else pair: one dtype, shapes whose dims unify; each dim
    only as known as both branches make it (``_merged_dim``)."""
    which = "" if n == 1 else f" {i}"
    names = f"the then-value{which} {then.describe()} and the else-value{which} {other.describe()}"
    if then.type.dtype != other.type.dtype:
        raise DTypeError(
            f"ifelse: {names} have different dtypes; both branches must give one dtype "
            f"(cast one, e.g. .astype('{then.type.dtype.name}'))"
        )
    if then.type.ndim != other.type.ndim:
        raise ShapeError(f"ifelse: {names} have different numbers of dims")
    try:
        shape = tuple(_merged_dim(a, b) for a, b in zip(then.type.shape, other.type.shape))
    except DimMismatch:
        raise ShapeError(
            f"ifelse: {names} have shapes {format_shape(then.type.shape)} and "
            f"{format_shape(other.type.shape)}, which cannot be the same"
        ) from None
    return TensorType(then.type.dtype, shape)


def _merged_dim(a, b):
    """The result's dim: ``a`` where both branches' dims are provably equal, else unknown.

    Either branch may be the one taken, so a dim that only one branch fixes (``?`` beside
    ``2``, ``batch`` beside ``5``) is not known until the function runs. Keeping it would need
    a run-time check of the branch taken; leaving it unknown is simpler and costs nothing at
    run time (the shape is read from the value). Dims that provably differ are refused."""
    unify(a, b)  # raises DimMismatch where they provably differ
    return a if a == b else None


def ifelse(cond, then, else_, name: str | None = None):
    """``then`` if the scalar ``cond`` is true, else ``else_``, computing only the branch
    taken (``sn.where`` computes both, element by element). ``then`` and ``else_`` are single
    values or lists of the same length; the result has the same form. Both branches must
    have the same dtype (a Python number and its partner take ``sn.where``'s dtype) and
    shapes whose dims unify; a dim only one branch fixes is unknown in the result.
    Theano's ``ifelse``."""
    single = not isinstance(then, (list, tuple))
    thens = [then] if single else list(then)
    elses = list(else_) if isinstance(else_, (list, tuple)) else [else_]
    if len(thens) != len(elses):
        raise _at_user_line(
            ShapeError(
                f"ifelse: the then-branch has {len(thens)} values and the else-branch "
                f"{len(elses)}; give both the same number"
            )
        )
    check_name(name)
    thens, elses = _pair_up(thens, elses)
    outputs = IfElse(len(thens))(as_variable(cond), *thens, *elses)
    outputs = [outputs] if len(thens) == 1 else outputs
    if name is not None:
        for k, out in enumerate(outputs):
            out.name = name if len(outputs) == 1 else f"{name}[{k}]"
    return outputs[0] if single else list(outputs)


def _pair_up(thens, elses):
    """Variables for each then/else pair (``_pair``)."""
    pairs = [_pair(as_variable(t), as_variable(e)) for t, e in zip(thens, elses)]
    return [t for t, _ in pairs], [e for _, e in pairs]


def _pair(then: Variable, other: Variable):
    """A pair with a Python number in it takes ``sn.where``'s dtype (NumPy 2's weak-scalar
    promotion: ``ifelse(c, 1, 2.5)`` is float64, ``ifelse(c, x8, 2.5)`` too), so the number
    keeps its value; one that the dtype cannot hold is refused, as ``x8 + 300`` is. Two
    variables must already share a dtype (``_branch_type``)."""
    if not any(_is_weak(v) for v in (then, other)):
        return then, other
    try:
        dtype = probe_dtype(IfElse(1), _where_true, [then, other])
        refuse_wrapped_ints("ifelse", [then, other], dtype)
    except DTypeError as exc:
        raise _at_user_line(exc) from None
    return _in_dtype(then, dtype), _in_dtype(other, dtype)


def _is_weak(var: Variable) -> bool:
    return isinstance(var, Constant) and var.weak


def _where_true(then, other):
    return np.where(True, then, other)


def _in_dtype(var: Variable, dtype) -> Variable:
    if _is_weak(var):
        return Constant(var.value, dtype=dtype, casting="unsafe")  # (as cast would)
    return var if var.type.dtype == dtype else cast(var, dtype)
