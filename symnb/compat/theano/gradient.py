"""``theano.gradient`` (and ``T.grad``): symnb's reverse mode under Theano's signature."""

from __future__ import annotations

import numpy as np

from symnb.control.jacobian import hessian as _hessian
from symnb.control.jacobian import jacobian as _jacobian
from symnb.core.graph import clone_graph
from symnb.core.op import _at_user_line
from symnb.core.variable import as_variable
from symnb.grad import Lop as _Lop
from symnb.grad import Rop as _Rop
from symnb.grad.check import GradientError, check_grad
from symnb.grad.errors import DISCONNECTED_HINT, DisconnectedInputError
from symnb.grad.reverse import grad as _grad
from symnb.ops.markers import disconnected_grad, grad_clip, zero_grad

__all__ = [
    "Lop",
    "Rop",
    "consider_constant",
    "disconnected_grad",
    "grad",
    "grad_clip",
    "grad_scale",
    "hessian",
    "jacobian",
    "verify_grad",
    "zero_grad",
]

#: Theano's ``return_disconnected`` spellings
RETURN_DISCONNECTED = {"zero": "zero", "None": "none", "none": "none", "Disconnected": "none"}
consider_constant = zero_grad  # Theano's older name for the marker


def _as_called(call: str, argument: str, compute, *args, **kwargs):
    """``compute(*args, **kwargs)`` with a disconnected input reported in the words of the
    Theano call made (``T.grad: ... pass disconnected_inputs='ignore'``), the error at the
    user's line: sn.grad's own hint (``disconnected=``) is a TypeError when followed here."""
    token = DISCONNECTED_HINT.set((call, argument))
    try:
        return compute(*args, **kwargs)
    except DisconnectedInputError as exc:
        raise _at_user_line(exc) from None
    finally:
        DISCONNECTED_HINT.reset(token)


def grad(
    cost,
    wrt,
    consider_constant=None,
    disconnected_inputs="raise",
    add_names=True,
    known_grads=None,
    return_disconnected="zero",
    null_gradients="raise",
):
    """``T.grad``: d cost / d wrt. ``consider_constant`` lists variables that gradients do
    not flow through; ``disconnected_inputs`` is "raise", "warn" or "ignore"."""
    if return_disconnected not in RETURN_DISCONNECTED:
        raise ValueError(
            f"grad: return_disconnected must be one of {sorted(RETURN_DISCONNECTED)}, "
            f"not {return_disconnected!r}"
        )
    if consider_constant:
        cost, wrt = _constant_through(cost, wrt, consider_constant)
    return _as_called(
        "T.grad",
        "disconnected_inputs",
        _grad,
        cost,
        wrt,
        known_grads=known_grads,
        disconnected=disconnected_inputs,
        return_disconnected=RETURN_DISCONNECTED[return_disconnected],
    )


def _constant_through(cost, wrt, constants):
    """The cost with each of ``constants`` behind a zero-gradient marker (and the wrt that
    the cost's copy computes from, for a wrt that is not a leaf)."""
    single = not isinstance(wrt, (list, tuple))
    targets = [wrt] if single else list(wrt)
    replace = {v: zero_grad(v) for v in constants}
    inner = [v for v in targets if v.owner is not None]
    new_cost, *new_inner = clone_graph([cost, *inner], replace)
    swap = {id(old): new for old, new in zip(inner, new_inner)}
    targets = [swap.get(id(v), v) for v in targets]
    return new_cost, targets[0] if single else targets


def jacobian(expression, wrt, consider_constant=None, disconnected_inputs="raise"):
    if consider_constant:
        expression, wrt = _constant_through(expression, wrt, consider_constant)
    return _as_called(
        "T.jacobian",
        "disconnected_inputs",
        _jacobian,
        expression,
        wrt,
        disconnected=disconnected_inputs,
    )


def hessian(cost, wrt, consider_constant=None, disconnected_inputs="raise"):
    if consider_constant:
        cost, wrt = _constant_through(cost, wrt, consider_constant)
    return _as_called(
        "T.hessian", "disconnected_inputs", _hessian, cost, wrt, disconnected=disconnected_inputs
    )


def Rop(f, wrt, eval_points, disconnected_outputs="raise", return_disconnected="zero"):  # noqa: N802
    """``T.Rop``: the Jacobian of f with respect to wrt times ``eval_points``."""
    return _as_called(
        "T.Rop",
        "disconnected_outputs",
        _Rop,
        f,
        wrt,
        eval_points,
        disconnected=disconnected_outputs,
        return_disconnected=RETURN_DISCONNECTED[return_disconnected],
    )


def Lop(f, wrt, eval_points, consider_constant=None, disconnected_inputs="raise"):  # noqa: N802
    """``T.Lop``: ``eval_points`` times the Jacobian of f with respect to wrt."""
    if consider_constant:
        f, wrt = _constant_through(f, wrt, consider_constant)
    return _as_called(
        "T.Lop", "disconnected_inputs", _Lop, f, wrt, eval_points, disconnected=disconnected_inputs
    )


def verify_grad(
    fun,
    pt,
    n_tests=2,
    rng=None,
    eps=None,
    out_type=None,
    abs_tol=None,
    rel_tol=None,
    mode=None,
    cast_to_output_type=False,
    no_debug_ref=True,
):
    """``theano.gradient.verify_grad`` (``T.verify_grad``): the gradient of ``fun`` (a
    function of one symbolic variable per array of ``pt``) against finite differences along
    ``n_tests`` random projections, drawn from ``rng`` (a NumPy ``RandomState`` or
    ``Generator``, or a seed); raises ``verify_grad.E_grad`` (``sn.GradientError``) on a
    mismatch. It is ``sn.check_grad`` run ``n_tests`` times; ``out_type``, ``mode``,
    ``cast_to_output_type`` and ``no_debug_ref`` are accepted and not read."""
    if not isinstance(pt, (list, tuple)):
        raise _at_user_line(TypeError("verify_grad: pt must be a list or tuple of arrays"))
    if rng is None:
        rng = np.random.default_rng()
    for _ in range(int(n_tests)):
        if isinstance(rng, np.random.RandomState):
            seed = int(rng.randint(2**31))
        elif isinstance(rng, np.random.Generator):
            seed = int(rng.integers(2**31))
        else:
            seed = rng
        check_grad(fun, list(pt), eps=eps, rtol=rel_tol, atol=abs_tol, rng=seed)


verify_grad.E_grad = GradientError


def grad_scale(x, multiplier):
    """``theano.gradient.grad_scale``: ``x`` forward, its gradient times ``multiplier``."""
    x = as_variable(x)
    return zero_grad(x) + multiplier * (x - zero_grad(x))
