"""``sn.check_grad``: symbolic gradients against central finite differences.

The expression is projected on a fixed random tensor of its own shape, which turns any
output into a scalar cost whose gradient mixes every output element; the symbolic gradient of
that cost is then compared, element by element, with ``(c(x + eps) - c(x - eps)) / 2 eps``.
"""

from __future__ import annotations

import functools
import math
import numbers

import numpy as np

from symnb.core.constructors import tensor
from symnb.core.dims import is_int
from symnb.core.hooks import hook
from symnb.core.source import at_user_line
from symnb.core.variable import Constant, SharedVariable, Variable, as_variable, describe_value
from symnb.errors import ArgumentError, DTypeError
from symnb.grad.reverse import grad
from symnb.ops.reduce import sum as sum_

#: (eps, rtol, atol) per input dtype: central differences lose about eps**2 to truncation and
#: (float resolution / eps) to rounding, so eps balances the two for each precision.
DEFAULTS = {
    np.dtype("float64"): (1e-6, 1e-5, 1e-7),
    np.dtype("float32"): (1e-3, 1e-2, 1e-3),
    np.dtype("float16"): (1e-1, 5e-2, 5e-2),
}


class GradientError(AssertionError):
    """A symbolic gradient disagrees with finite differences; the message shows the worst."""


def check_grad(
    fn, inputs, *, eps=None, rtol=None, atol=None, rng=None, backend="py", variables=None
):
    """Check ``sn.grad`` of ``fn`` at ``inputs`` (arrays) against finite differences.

    ``fn`` (a callable) takes one symbolic variable per array (same dtype and shape) and
    returns a variable of any shape. ``inputs`` is a list or tuple of arrays, one per
    argument of ``fn`` (a lone array is an ArgumentError: write ``[array]``). Float inputs
    are checked; integer and boolean ones are held fixed, and so are random draws in ``fn``
    (every call repeats their numbers); complex ones are a DTypeError, as ``sn.grad``
    refuses them (``_refuse_complex``).
    ``eps``: the step (a positive finite number), ``rtol``/``atol``: the tolerances
    (non-negative numbers); None takes each from the input's dtype (``DEFAULTS``).
    ``rng`` (a Generator or a seed) draws the projection; raises GradientError on mismatch.
    ``backend``: where the graphs run; the NumPy reference by default, as the check is about
    the symbolic rules (pass another to check a backend's gradients). ``variables``: the
    input variables ``fn`` is given, one per array, of its dtype and rank (dims unknown
    allowed: a layer's own types, Theano's ``verify_grad``); by default new tensors of each
    array's dtype and shape, named ``x0``, ``x1``...
    """
    _check_arguments(fn, inputs)
    _check_options(eps=eps, rtol=rtol, atol=atol)
    # the compiler sits above grad; every call sees the same random draws (finite
    # differences of fresh noise would be noise)
    function = functools.partial(hook("function"), no_default_updates=True)
    arrays = [np.array(a) for a in inputs]
    xs = _input_variables(arrays, variables)
    _refuse_complex(arrays, xs)
    out = one_output(fn(*xs))
    if not out.type.is_float:
        raise DTypeError(f"check_grad: fn returned {out.describe()}; a float output is needed")
    value = np.asarray(function(xs, out, backend=backend)(*arrays))
    cost = sum_(out * Constant(_projection(rng, value.shape), dtype=out.type.dtype))
    checked = [i for i, a in enumerate(arrays) if a.dtype.kind == "f"]
    if not checked:
        return None
    grads = grad(cost, [xs[i] for i in checked], disconnected="ignore")
    analytic = function(xs, grads, backend=backend)(*arrays)
    cost_fn = function(xs, cost, backend=backend)
    for i, g in zip(checked, analytic):
        e, r, a = _tolerances(arrays[i].dtype, eps, rtol, atol)
        _check_shape(i, xs[i], g, arrays[i])
        numeric = numeric_gradient(cost_fn, arrays, i, e)
        _compare(i, xs[i], np.asarray(g, dtype="float64"), numeric, r, a, e)
    return None


def _check_arguments(fn, inputs) -> None:
    """``fn`` a callable and ``inputs`` a list or tuple of arrays, else an ArgumentError
    naming the argument: a number for ``fn`` failed calling it, and a lone array for
    ``inputs`` was iterated as one input per row (a vector of 3, three 0-d inputs). A lone
    array is refused, not taken as the one input: a matrix's rows may be meant as inputs,
    and Theano's ``verify_grad`` refused it too."""
    if not callable(fn):
        raise at_user_line(
            ArgumentError(
                "check_grad: fn is the function to check (it takes one symbolic variable per "
                f"input array and returns a variable), not {describe_value(fn)}"
            )
        )
    if not isinstance(inputs, (list, tuple)):
        raise at_user_line(
            ArgumentError(
                "check_grad: inputs is a list (or tuple) of arrays, one per argument of fn, not "
                f"{describe_argument(inputs)}; for one input write [array]"
            )
        )


def describe_argument(value) -> str:
    """An argument given where arrays are meant, as a message names it: an array by its
    dtype and shape (its repr may be long), anything else as ``describe_value``."""
    if isinstance(value, np.ndarray):
        return f"an array {value.dtype.name}{value.shape}"
    return describe_value(value)


def one_output(returned) -> Variable:
    """What ``fn`` returned, as one variable; several (a list or tuple, as a step function
    returns) are an ArgumentError saying so: one projection checks one output (Theano's
    ``verify_grad`` refused them too), and NumPy cannot make one array of variables."""
    if isinstance(returned, (list, tuple)):
        what = ", ".join(describe_value(v) for v in returned)
        raise at_user_line(
            ArgumentError(
                f"check_grad: fn returned a {type(returned).__name__} of {len(returned)} "
                f"outputs ({what}); it must return one variable: check each output with a "
                "fn of its own, or join them into one (sn.concatenate of their sn.flatten)"
            )
        )
    return as_variable(returned)


def _input_variables(arrays: list, variables) -> list:
    """The variables ``fn`` is given: ``variables`` checked against the arrays, or new
    tensors of the arrays' dtypes and shapes."""
    if variables is None:
        return [tensor(f"x{i}", shape=a.shape, dtype=a.dtype) for i, a in enumerate(arrays)]
    variables = list(variables)
    if len(variables) != len(arrays):
        raise ArgumentError(
            f"check_grad: {len(variables)} variables for {len(arrays)} input arrays; give "
            "one variable per array"
        )
    for i, (var, array) in enumerate(zip(variables, arrays)):
        is_input = isinstance(var, Variable) and var.owner is None
        if not is_input or isinstance(var, (Constant, SharedVariable)):
            raise ArgumentError(
                f"check_grad: variables[{i}] must be an input variable (not an expression, "
                f"a constant or a shared variable), not {describe_value(var)}"
            )
        dims = var.type.shape
        fits = len(dims) == array.ndim and all(
            not is_int(d) or d == n for d, n in zip(dims, array.shape)
        )
        if var.type.dtype != array.dtype or not fits:
            raise DTypeError(
                f"check_grad: variables[{i}] {var.describe()} does not fit input array {i} "
                f"({array.dtype.name}{array.shape}): give a variable of the array's dtype "
                "and shape (dims may be unknown)"
            )
    return variables


def _refuse_complex(arrays: list, xs: list) -> None:
    """A complex input is a DTypeError naming it: ``sn.grad`` refuses gradients with respect
    to complex variables (docs/autodiff.md), and holding it fixed, as integer inputs are,
    would pass a check that checked nothing."""
    for i, (array, var) in enumerate(zip(arrays, xs)):
        if array.dtype.kind == "c":
            raise at_user_line(
                DTypeError(
                    f"check_grad: input {i} {var.describe()} is complex: symnb's gradients of "
                    "complex values are not verified (docs/autodiff.md), so it cannot be "
                    "checked; pass its real and imaginary parts as two float arrays to a fn "
                    "that computes in real arithmetic"
                )
            )


def _projection(rng, shape) -> np.ndarray:
    """The fixed random tensor the output is projected on (seed 0 unless one is given)."""
    generator = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng or 0)
    return generator.standard_normal(shape)


#: what each option of check_grad is, as its error says
_OPTIONS = {
    "eps": "a positive finite number (the finite-difference step)",
    "rtol": "a non-negative number",
    "atol": "a non-negative number",
}


def _check_options(**given) -> None:
    """The step and the tolerances the user gave (None: the dtype's), checked before any
    graph is compiled: an eps of 0 divided by zero, and a string or a list reached NumPy
    inside the comparison."""
    for name, value in given.items():
        if value is not None and not _fits(name, value):
            raise at_user_line(
                ArgumentError(f"check_grad: {name} is {_OPTIONS[name]}, not {value!r}")
            )


def _fits(name: str, value) -> bool:
    if not isinstance(value, numbers.Real) or isinstance(value, (bool, np.bool_)):
        return False
    return 0 < value < math.inf if name == "eps" else value >= 0  # (NaN fits neither)


def _tolerances(dtype, eps, rtol, atol) -> tuple[float, float, float]:
    e, r, a = DEFAULTS.get(np.dtype(dtype), DEFAULTS[np.dtype("float32")])
    return (
        e if eps is None else eps,
        r if rtol is None else rtol,
        a if atol is None else atol,
    )


def numeric_gradient(cost_fn, arrays, index: int, eps: float) -> np.ndarray:
    """Central differences of ``cost_fn`` in every element of ``arrays[index]``."""
    base = arrays[index]
    out = np.zeros(base.shape, dtype="float64")
    for element in np.ndindex(base.shape):
        out[element] = _difference(cost_fn, arrays, index, element, eps)
    return out


def _difference(cost_fn, arrays, index, element, eps) -> float:
    values = list(arrays)
    shifted = arrays[index].copy()
    shifted[element] = arrays[index][element] + eps
    values[index] = shifted
    up = float(cost_fn(*values))
    shifted = arrays[index].copy()
    shifted[element] = arrays[index][element] - eps
    values[index] = shifted
    down = float(cost_fn(*values))
    return (up - down) / (2 * eps)


def _check_shape(index, var, g, array):
    g = np.asarray(g)
    if g.shape != array.shape or g.dtype != array.dtype:
        raise GradientError(
            f"check_grad: the gradient of input {index} {var.describe()} is "
            f"{g.dtype.name}{g.shape}, expected {array.dtype.name}{array.shape}"
        )


def _compare(index, var, analytic, numeric, rtol, atol, eps):
    error = np.abs(analytic - numeric)
    allowed = atol + rtol * np.abs(numeric)
    bad = ~(error <= allowed)
    if not bad.any():
        return
    worst = worst_element(bad, error / allowed)
    raise GradientError(
        f"check_grad: gradient of input {index} {var.describe()} is wrong at element "
        f"{tuple(int(k) for k in worst)}: analytic {float(analytic[worst])!r}, numeric "
        f"{float(numeric[worst])!r} (abs error {error[worst]:.3g}, allowed {allowed[worst]:.3g}; "
        f"rtol={rtol}, atol={atol}, eps={eps}); {int(bad.sum())} of {bad.size} elements "
        "out of tolerance"
    )


def worst_element(bad, score) -> tuple:
    """The index of the element out of tolerance (``bad``) furthest out by ``score`` (how
    many tolerances its error is: NaN counts as the furthest), for a GradientError to show."""
    ranked = np.where(bad, np.nan_to_num(score, nan=np.inf), -1.0)
    return np.unravel_index(int(np.argmax(ranked)), ranked.shape) if ranked.ndim else ()


verify_grad = check_grad  # Theano's name for the same check
