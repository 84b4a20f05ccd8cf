"""``theano.gradient.verify_grad`` by Theano 1.0's rules (theano/gradient.py): float inputs
only, the output projected on ``rng.rand(*shape) + 0.5``, one-sided finite differences with
a step per dtype (``numeric_grad.type_eps``), and an element wrong only where both its
absolute error and its relative error ``|a - n| / (|a| + |n|)`` exceed their tolerances
(``numeric_grad.max_err``), each 1e-4 for float64 by default (``_type_tol``).

``sn.check_grad`` checks more tightly (central differences, ``atol + rtol * |numeric|``); a
test written for Theano's check passes or fails here as it did in Theano.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from symnb.compat.theano.gradient_rules import theano_rules
from symnb.compat.theano.tensor.var import TensorType
from symnb.compile.function import function
from symnb.core.constructors import tensor
from symnb.core.source import at_user_line
from symnb.core.variable import Variable, as_variable, describe_value
from symnb.errors import ArgumentError, DTypeError
from symnb.grad import grad
from symnb.grad.check import GradientError, describe_argument, worst_element
from symnb.ops.elemwise import cast
from symnb.ops.reduce import sum as sum_

#: Theano's finite-difference step per input dtype (``numeric_grad.type_eps``)
THEANO_EPS = {"float64": 1e-7, "float32": 3e-4, "float16": 1e-1}
#: Theano's default ``abs_tol`` and ``rel_tol`` per input dtype (``_type_tol``)
THEANO_TOL = {"float64": 1e-4, "float32": 1e-2, "float16": 5e-2}


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
    ``n_tests`` random projections ``rng.rand(*shape) + 0.5``, drawn from ``rng`` (as in
    Theano anything with ``rand``, a NumPy ``RandomState`` or ``numpy.random``; a
    ``Generator``, or a seed); raises ``verify_grad.E_grad``
    (``sn.GradientError``) on a mismatch, by Theano's rule (the module's doc). ``fun`` is
    given Theano's variables, ``TensorType(dtype, broadcastable)()`` (dims of 1 fixed, the
    others unknown), so it may use their Theano methods (``x.exp()``, ``x.norm(2)``,
    ``x.round()`` half away from zero...). ``pt`` holds float arrays only (Theano's
    TypeError). An integer or boolean output is projected as a float64 one, as Theano's
    float random projection made it: its gradient is zero. ``cast_to_output_type`` makes
    the projection of a float32 output float32; ``out_type``, ``mode`` and ``no_debug_ref`` are
    accepted and not read. The graphs run on the NumPy reference, as ``sn.check_grad``'s."""
    if not callable(fun):
        raise at_user_line(
            ArgumentError(
                "verify_grad: fun is the function to check (it takes one symbolic variable per "
                f"array of pt and returns a variable), not {describe_value(fun)}"
            )
        )
    arrays = _float_arrays(pt)
    _check_number("eps", eps, positive=True)
    _check_number("abs_tol", abs_tol, positive=False)
    _check_number("rel_tol", rel_tol, positive=False)
    tol = max(THEANO_TOL[a.dtype.name] for a in arrays)
    abs_tol = tol if abs_tol is None else abs_tol
    rel_tol = tol if rel_tol is None else rel_tol
    eps = max(THEANO_EPS[a.dtype.name] for a in arrays) if eps is None else eps
    draw = _projections(rng)
    xs = [TensorType(a.dtype, [n == 1 for n in a.shape])(f"x{i}") for i, a in enumerate(arrays)]
    out = _output(fun(*xs))
    compile_ = {"backend": "py", "no_default_updates": True}
    shape = np.shape(function(xs, out, **compile_)(*arrays))
    single = cast_to_output_type and out.type.dtype.name == "float32"
    dtype = "float32" if single else "float64"  # (Theano cast its projection so)
    projection = tensor("random_projection", shape=shape, dtype=dtype)
    cost = sum_(projection * out)
    with theano_rules():  # (Theano's T.grad, as Theano's verify_grad)
        grads = grad(cost, xs, disconnected="ignore")
    grad_fn = function([*xs, projection], grads, **compile_)
    cost_fn = function([*xs, projection], cost, **compile_)
    for _ in range(int(n_tests)):
        r = draw(shape).astype(dtype)
        analytic = grad_fn(*arrays, r)
        for i, g in enumerate(analytic):
            _check_shape(i, xs[i], np.asarray(g), arrays[i])
            numeric = _one_sided(lambda *v, r=r: float(cost_fn(*v, r)), arrays, i, eps)
            _compare(i, xs[i], np.asarray(g, dtype="float64"), numeric, abs_tol, rel_tol, eps)


verify_grad.E_grad = GradientError


def _float_arrays(pt) -> list:
    """``pt`` as arrays, each of a float dtype (Theano's TypeError, a DTypeError here)."""
    if not isinstance(pt, (list, tuple)):
        raise at_user_line(
            ArgumentError(
                "verify_grad: pt must be a list or tuple of arrays, one per argument of fun, not "
                f"{describe_argument(pt)}; for one input write [array]"
            )
        )
    if not pt:
        raise at_user_line(ArgumentError("verify_grad: pt is empty; give one array per input"))
    arrays = [np.array(p) for p in pt]
    for i, a in enumerate(arrays):
        if a.dtype.name not in THEANO_EPS:
            raise at_user_line(
                DTypeError(
                    f"verify_grad can work only with floating point inputs, but input {i} has "
                    f'dtype "{a.dtype.name}" (pt[{i}], shape {a.shape}), as in Theano; hold it '
                    "fixed in fun (a closure over the array), or give it as floats"
                )
            )
    return arrays


def _check_number(name: str, value, positive: bool) -> None:
    """A step (positive, finite) or a tolerance (non-negative) the user gave; None is the
    dtype's."""
    if value is None:
        return
    real = isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))
    if not real or not (0 < value < math.inf if positive else value >= 0):
        what = "a positive finite number" if positive else "a non-negative number"
        raise at_user_line(ArgumentError(f"verify_grad: {name} is {what}, not {value!r}"))


def _projections(rng):
    """A function of a shape giving Theano's random projection, ``rand(*shape) + 0.5``,
    from ``rng``: anything with Theano's ``rand(*shape)`` (a ``RandomState``, the
    ``numpy.random`` module of Theano's own docstring example), a ``Generator``, a seed, or
    None (fresh)."""
    if rng is None:
        rng = np.random.default_rng()
    elif isinstance(rng, numbers.Integral) and not isinstance(rng, (bool, np.bool_)):
        rng = np.random.RandomState(int(rng))
    if isinstance(rng, np.random.Generator):
        return lambda shape: np.asarray(rng.random(shape) + 0.5)
    if callable(getattr(rng, "rand", None)):  # (all Theano called)
        return lambda shape: np.asarray(rng.rand(*shape) + 0.5, dtype="float64")
    raise at_user_line(
        ArgumentError(
            "verify_grad: rng is a numpy RandomState (or anything with rand(*shape), such as "
            f"the numpy.random module), a Generator or a seed, not {describe_value(rng)}"
        )
    )


def _output(out) -> Variable:
    """``fun``'s output as one variable, an integer or boolean one cast to float64: Theano's
    ``verify_grad`` projected it on a float64 random array (``sum(t_r * output)``), a float
    cost. Several outputs are Theano's NotImplementedError."""
    if isinstance(out, (list, tuple)):
        raise at_user_line(
            NotImplementedError(
                f"verify_grad: fun returned a {type(out).__name__} of {len(out)} outputs; "
                "it can check one output (Theano's 'cant (yet) autotest gradient of fun with "
                "multiple outputs'): call verify_grad once per output"
            )
        )
    out = as_variable(out)
    return cast(out, "float64") if out.type.dtype.kind in "biu" else out


def _one_sided(cost_fn, arrays: list, index: int, eps: float) -> np.ndarray:
    """Theano's ``numeric_grad``: ``(c(x + eps) - c(x)) / eps`` in every element of
    ``arrays[index]``, the step taken in the array's dtype."""
    base = cost_fn(*arrays)
    out = np.zeros(arrays[index].shape, dtype="float64")
    for element in np.ndindex(arrays[index].shape):
        shifted = arrays[index].copy()
        shifted[element] += eps
        values = list(arrays)
        values[index] = shifted
        out[element] = (cost_fn(*values) - base) / eps
    return out


def _check_shape(index: int, var: Variable, g: np.ndarray, array: np.ndarray) -> None:
    if g.shape != array.shape or g.dtype != array.dtype:
        raise GradientError(
            f"verify_grad: the gradient of input {index} {var.describe()} is "
            f"{g.dtype.name}{g.shape}, expected {array.dtype.name}{array.shape}"
        )


def _compare(index, var, analytic, numeric, abs_tol, rel_tol, eps) -> None:
    """Theano's ``max_err`` rule: an element is wrong where its absolute error exceeds
    ``abs_tol`` and its relative error exceeds ``rel_tol``; a gradient that is not finite
    is wrong (Theano: "abs_err not finite")."""
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        abs_err = np.abs(analytic - numeric)
        rel_err = abs_err / np.maximum(np.abs(analytic) + np.abs(numeric), 1e-8)
        bad = ~((abs_err <= abs_tol) | (rel_err <= rel_tol))
        scaled = np.minimum(abs_err / abs_tol, rel_err / rel_tol)
    if not bad.any():
        return
    worst = worst_element(bad, scaled)
    raise GradientError(
        f"verify_grad: gradient of input {index} {var.describe()} is wrong at element "
        f"{tuple(int(k) for k in worst)}: analytic {float(analytic[worst])!r}, numeric "
        f"{float(numeric[worst])!r} (abs error {abs_err[worst]:.3g} > abs_tol={abs_tol}, rel "
        f"error {rel_err[worst]:.3g} > rel_tol={rel_tol}; one-sided differences, eps={eps}); "
        f"{int(bad.sum())} of {bad.size} elements out of tolerance (Theano's rule: an element "
        "is wrong where both errors exceed their tolerances)"
    )
