"""Theano's variable methods on every tensor of a Theano graph (core's "methods" hook).

Computed tensors are symnb's own variables, whose methods follow NumPy. For those computed
from the layer's variables (``T.matrix()``, ``theano.shared``: ``var.in_theano_graph``), core
asks this hook first, so ``x.round()`` rounds half away from zero as Theano's did (NumPy's
rounds half to even), ``x.sort(axis, kind)`` and ``x.sum(axis, dtype, keepdims, acc_dtype)``
(also ``mean``, ``prod``), ``x.max(axis, keepdims)`` (``min``, ``argmax``, ``argmin``,
``any``, ``all``) and ``x.var(axis, ddof, keepdims, corrected)`` (``std``) take Theano's
arguments, ``x.astype("floatX")`` is ``T.cast``'s,
``x.cumsum()``/``x.cumprod()`` keep x's dtype, and the methods Theano's variables had that
NumPy arrays lack exist: ``x.norm(L)``, ``x.exp()``, ``x.nonzero()``, ``x.size``...
(``sugar.LAYER_ONLY`` lists the names). Graphs of symnb's own variables keep symnb's methods.
"""

from __future__ import annotations

import types

import numpy as np

from symnb import ops as sn
from symnb.compat.theano.tensor import basic as T
from symnb.compat.theano.tensor.var import in_theano_graph
from symnb.core.hooks import register
from symnb.core.op import _at_user_line
from symnb.core.variable import Variable, check_name


def _round(x, mode=None):
    """Theano's ``x.round(mode=None)``: half away from zero unless ``mode="half_to_even"``."""
    return T.round(x, mode)


def _sort(x, axis=-1, kind="quicksort", order=None):
    return T.sort(x, axis, kind, order)


def _argsort(x, axis=-1, kind="quicksort", order=None):
    return T.argsort(x, axis, kind, order)


def _norm(x, L, axis=None, keepdims=False):
    """Theano's ``x.norm(L, axis=None)``: ``sum(|x| ** L, axis) ** (1 / L)``, over every
    element when ``axis`` is None (a matrix's entrywise norm, not NumPy's matrix norm)."""
    if L == 0 or np.isinf(L):
        raise _at_user_line(
            NotImplementedError(
                f"x.norm: L={L} is not implemented, as in Theano; use T.max(abs(x))"
            )
        )
    return T.sum(sn.abs(x) ** L, axis=axis, keepdims=keepdims) ** (1.0 / L)


def _sum(x, axis=None, dtype=None, keepdims=False, acc_dtype=None):
    """Theano's ``x.sum``: ``T.sum``'s arguments, in its order (dtype before keepdims)."""
    return T.sum(x, axis, dtype, keepdims, acc_dtype)


def _mean(x, axis=None, dtype=None, keepdims=False, acc_dtype=None):
    return T.mean(x, axis, dtype, keepdims, acc_dtype)


def _prod(x, axis=None, dtype=None, keepdims=False, acc_dtype=None, no_zeros_in_input=False):
    return T.prod(x, axis, dtype, keepdims, acc_dtype, no_zeros_in_input)


def _copy(x, name=None):
    """``x.copy(name=None)``: a new variable with x's value, named ``name``."""
    copied = T.tensor_copy(x)
    copied.name = check_name(name)
    return copied


def _take(x, indices, axis=None, mode="raise"):
    """Theano's ``x.take(indices, axis=None, mode='raise')``: ``T.take``, so also "wrap" and
    "clip"."""
    return sn.take(x, indices, axis=axis, mode=mode)


def _size(x) -> Variable:
    """Theano's ``x.size``: the number of elements, symbolic (``x.shape[0]`` for a vector)."""
    return sn.shape(x)[0] if x.type.ndim == 1 else sn.prod(sn.shape(x))


def _elementwise(name):
    def method(x):
        return getattr(T, name)(x)

    method.__name__ = name
    return method


#: name -> the function whose first argument is the variable (a bound method is made)
METHODS = {
    "round": _round,
    "sort": _sort,
    "argsort": _argsort,
    "norm": _norm,
    "sum": _sum,
    "mean": _mean,
    "prod": _prod,
    "copy": _copy,
    "astype": T.cast,  # "floatX" is theano.config.floatX, as T.cast reads it
    "take": _take,
    "conj": T.conj,
    "cumsum": T.cumsum,  # in x's dtype, as Theano's CumOp (NumPy widens small ints)
    "cumprod": T.cumprod,
    "conjugate": T.conj,
    "diagonal": T.diagonal,
    "fill": T.fill,
    "get_scalar_constant_value": T.get_scalar_constant_value,
    "nonzero": T.nonzero,
    "nonzero_values": T.nonzero_values,
    "ones_like": T.ones_like,
    "zeros_like": T.zeros_like,
    "ptp": T.ptp,
    # Theano's orders: (axis, keepdims), var/std (axis, ddof, keepdims, corrected); NumPy's
    # put out= (and var's dtype=) before them
    "max": T.max,
    "min": T.min,
    "argmax": T.argmax,
    "argmin": T.argmin,
    "any": T.any,
    "all": T.all,
    "var": T.var,
    "std": T.std,
    "trace": T.trace,
    "dot": T.dot,  # np.dot for every rank, as Theano's x.dot(y) was T.dot(x, y)
    **{
        name: _elementwise(name)
        for name in (
            "arccos arccosh arcsin arcsinh arctan arctanh ceil cos cosh deg2rad exp exp2 expm1 "
            "floor log log10 log1p log2 rad2deg sin sinh sqrt tan tanh trunc"
        ).split()
    },
}
#: name -> the attribute's value (Theano's properties)
PROPERTIES = {"size": _size}


def theano_methods(var: Variable, name: str):
    """The Theano attribute ``name`` of ``var`` when var is of a Theano graph, else None."""
    method, prop = METHODS.get(name), PROPERTIES.get(name)
    if (method is None and prop is None) or not in_theano_graph(var):
        return None
    return prop(var) if prop is not None else types.MethodType(method, var)


register("methods", theano_methods)
