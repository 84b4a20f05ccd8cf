"""Canonicalize: algebraic identities that make graphs smaller and put them in one form.

``x*1``, ``x/1``, ``x**1``, ``x+0``, ``x-0``, ``x-x``, ``exp(log(x))``, ``log(exp(x))``,
``-(-x)`` and ``a*x + b*x``. Each rule fires only where the result keeps the node's dtype and
shape (a constant that broadcasts ``x`` to a larger shape, or promotes its dtype, is kept).
``x-x -> 0`` and ``exp(log(x)) -> x`` assume values in the ops' domain (finite ``x``;
``x > 0``), as Theano's and PyTensor's rules do. Those, ``log(exp(x)) -> x`` (1000 where exp
overflows to inf), ``x+0 -> x`` (-0.0 stays -0.0) and the collecting rules (``1e308*x -
1e308*x`` is NaN at x=10) are ``ieee=False``: ``optimize="stable"`` leaves them out. The
others are exact for every value, so they keep to where they are: ``x - (-0.0)`` is
``x + 0.0`` (-0.0 becomes +0.0) and stays; a complex ``x * 1``, ``x / 1`` or ``x ** 1`` is a
complex product, quotient or power (``(-0-0j) * 1`` is ``0-0j``, ``(inf+0j) * 1`` is
``inf+nanj``) and stays. Nor does "fast" drop a complex ``x + 0`` or simplify a complex
``log(exp(x))``: for complex values they are wrong at ordinary finite ``x``, not only at a
signed zero or an overflow. ``x + 0`` turns an imaginary part of -0.0 into +0.0, the side of
the branch cut of sqrt and log (``sqrt((-4-0j) + 0)`` is ``2j``, ``sqrt(-4-0j)`` is ``-2j``);
``log(exp(x))`` wraps the imaginary part into (-pi, pi] (``log(exp(4j))`` is ``(4 -
2*pi)j``).
"""

from __future__ import annotations

import numpy as np

from symnb.core.dims import is_known
from symnb.core.variable import Constant
from symnb.ops.broadcast import BroadcastLike
from symnb.ops.elemwise import Add, Exp, Log, Mul, Neg, Pow, Sub, TrueDiv, add, mul, sub
from symnb.opt.pattern import Const, Pattern
from symnb.opt.registry import rule
from symnb.opt.rules._util import (
    does_not_stretch,
    fits,
    has_sign_bit,
    is_complex,
    is_filled_with,
    only_user,
)


def _identity(m, neutral):
    """``x`` if the constant is the neutral element and changes neither dtype nor shape."""
    if is_filled_with(m.c, neutral) and does_not_stretch(m.c, m.x) and fits(m.out, m.x):
        return m.x
    return None


@rule("canonicalize", Pattern(Mul, "x", Const("c"), commutative=True))
def mul_by_one(m):
    """x * 1 -> x (not for a complex x: see the module doc)"""
    return None if is_complex(m.out) else _identity(m, 1)


@rule("canonicalize", Pattern(TrueDiv, "x", Const("c")))
def div_by_one(m):
    """x / 1 -> x (not for a complex x: see the module doc)"""
    return None if is_complex(m.out) else _identity(m, 1)


@rule("canonicalize", Pattern(Pow, "x", Const("c")))
def pow_one(m):
    """x ** 1 -> x (not for a complex x: see the module doc)"""
    return None if is_complex(m.out) else _identity(m, 1)


@rule("canonicalize", Pattern(Add, "x", Const("c"), commutative=True), ieee=False)
def add_zero(m):
    """x + 0 -> x (not for a complex x: see the module doc)"""
    return None if is_complex(m.out) else _identity(m, 0)


@rule("canonicalize", Pattern(Sub, "x", Const("c")))
def sub_zero(m):
    """x - 0 -> x (not x - (-0.0), which is x + 0.0)"""
    return None if has_sign_bit(m.c) else _identity(m, 0)


@rule("canonicalize", Pattern(Sub, "x", "x"), ieee=False)
def sub_self(m):
    """x - x -> 0 (a constant when x's shape is known, else 0 broadcast to x's shape)."""
    dtype = m.out.type.dtype
    if all(is_known(d) for d in m.x.type.shape):
        return Constant(np.zeros(m.x.type.shape, dtype))
    return BroadcastLike()(Constant(np.zeros((), dtype)), m.x)


@rule("canonicalize", Pattern(Exp, Pattern(Log, "x")), ieee=False)
def exp_of_log(m):
    """exp(log(x)) -> x (for x > 0, log's domain)"""
    return m.x if fits(m.out, m.x) else None


@rule("canonicalize", Pattern(Log, Pattern(Exp, "x")), ieee=False)
def log_of_exp(m):
    """log(exp(x)) -> x (not for a complex x: see the module doc)"""
    return m.x if fits(m.out, m.x) and not is_complex(m.x) else None


@rule("canonicalize", Pattern(Neg, Pattern(Neg, "x")))
def neg_of_neg(m):
    """-(-x) -> x"""
    return m.x if fits(m.out, m.x) else None


@rule(
    "canonicalize", Pattern(Add, Pattern(Mul, name="left"), Pattern(Mul, name="right")), ieee=False
)
def collect_add(m):
    """a*x + b*x -> (a + b)*x, when neither product is used elsewhere."""
    return _collect(m, add)


@rule(
    "canonicalize", Pattern(Sub, Pattern(Mul, name="left"), Pattern(Mul, name="right")), ieee=False
)
def collect_sub(m):
    """a*x - b*x -> (a - b)*x, when neither product is used elsewhere."""
    return _collect(m, sub)


def _collect(m, combine):
    left, right = m.left.owner, m.right.owner
    if left is right or not (
        only_user(m.graph, m.left, m.node) and only_user(m.graph, m.right, m.node)
    ):
        return None
    split = _common_factor(left.inputs, right.inputs)
    if split is None:
        return None
    x, a, b = split
    factor = combine(a, b)
    if not _one_dtype(m.out, m.left, m.right, factor):
        return None
    new = mul(factor, x)
    return new if fits(m.out, new) and new.type.shape == m.out.type.shape else None


def _one_dtype(*variables) -> bool:
    """All in one dtype: only then is ``(a + b) * x`` computed as ``a*x + b*x`` was (int8
    products that wrap, summed as int16, are not one int16 product; nor a float16 ``a + b``
    that overflows)."""
    return len({v.type.dtype for v in variables}) == 1


def _common_factor(left, right):
    """(x, a, b) with left == (a, x) and right == (b, x) in some order, else None."""
    for i in (0, 1):
        for j in (0, 1):
            if left[i] is right[j]:
                return left[i], left[1 - i], right[1 - j]
    return None
