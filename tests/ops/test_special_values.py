"""Every elementwise op of the catalogue x every dtype it takes x special values (NaN, +-inf,
+-0, negatives, tiny and huge floats, the integer extremes), on every backend, against the
op's NumPy reference: same dtype, same values (NaN where NaN, inf where inf).

A kernel helper that maps NaN to 0, an integer path that wraps where NumPy does not, or a
libm function whose edge case differs from the reference's shows here. Binary and ternary
ops take every pair (triple) of the values. One function per dtype and backend computes
every op at once, so the kernels compile in one batch.
"""

from __future__ import annotations

import functools
import itertools
import warnings

import numpy as np
import pytest

import symnb as sn
from symnb import catalogue
from symnb.ops.elemwise import Elemwise
from tests.helpers import KERNEL_DTYPES, tolerance

DTYPES = KERNEL_DTYPES


def special(dtype) -> list:
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return [False, True]
    if dt.kind == "f":
        return [np.nan, np.inf, -np.inf, 0.0, -0.0, -1.5, 2.5, 1e-30, -3.0, 0.5, 1e30, -7.25]
    info = np.iinfo(dt)
    values = {0, 1, 2, 3, 7, int(info.max), int(info.max) - 1}
    if dt.kind == "i":
        values |= {-1, -2, -7, int(info.min), int(info.min) + 1}
    return sorted(values)


def elementwise_ops() -> list:
    """One instance of every parameterless elementwise op with a NumPy reference."""
    ops = []
    for cls in catalogue.op_classes():
        if issubclass(cls, Elemwise) and getattr(cls, "impl", None) is not None:
            try:
                ops.append(cls())
            except TypeError:  # an op with parameters (cast, composite): tested elsewhere
                continue
    return ops


OPS = elementwise_ops()


def arguments(op, dtype) -> list[np.ndarray]:
    values = special(dtype)
    if op.nin == 1:
        return [np.array(values, dtype)]
    rows = itertools.product(values, repeat=op.nin)
    if str(op) == "pow" and np.dtype(dtype).kind in "iu":  # NumPy refuses negative exponents
        rows = [row for row in rows if row[1] >= 0]
    return [np.array(c, dtype) for c in zip(*rows)]


def cases(dtype):
    """(op, inputs, output variable, arguments, the reference's result) for each op that takes
    ``dtype`` (an op that refuses it when the graph is built is left out)."""
    found = []
    for op in OPS:
        args = arguments(op, dtype)
        xs = [sn.tensor(f"x{i}", shape=(len(a),), dtype=a.dtype) for i, a in enumerate(args)]
        try:
            out = op(*xs)
        except (sn.ShapeError, sn.DTypeError, TypeError):
            continue
        with np.errstate(all="ignore"):
            want = np.asarray(op.impl(*args)).astype(out.type.dtype, copy=False)
        found.append((op, xs, out, args, want))
    return found


@functools.cache
def compiled(dtype, backend):
    """(cases, the function computing every case at once) for ``dtype`` on ``backend``; built
    once a session (tests/backends/c/test_c_forms.py reads the same function's steps)."""
    found = cases(dtype)
    inputs = [x for _, xs, _, _, _ in found for x in xs]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f = sn.function(inputs, [out for _, _, out, _, _ in found], backend=backend)
    return found, f


def test_the_catalogue_has_the_elementwise_ops():
    names = {str(op) for op in OPS}
    assert {"sign", "bitwise_xor", "trigamma", "where", "clip", "floor_div", "mod"} <= names
    assert len(OPS) >= 50


def mismatches(op, args, got, want) -> str | None:
    got = np.asarray(got)
    if got.dtype != want.dtype or got.shape != want.shape:
        return f"{op}: {got.dtype}{got.shape}, the reference {want.dtype}{want.shape}"
    if want.dtype.kind == "f":
        tol = tolerance(want.dtype, 10)
        ok = np.isclose(got, want, rtol=tol, atol=tol, equal_nan=True)
    else:
        ok = got == want
    if ok.all():
        return None
    where = np.flatnonzero(~ok)[:4]
    inputs = [tuple(a[i].item() for a in args) for i in where]
    return f"{op} at {inputs}: got {got[where].tolist()}, the reference {want[where].tolist()}"


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_elementwise_op_on_special_values(dtype, backend):
    found, f = compiled(dtype, backend)
    values = [a for _, _, _, args, _ in found for a in args]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            results = f(*values)
    wrong = [mismatches(op, args, got, want) for (op, _, _, args, want), got in zip(found, results)]
    wrong = [w for w in wrong if w]
    assert not wrong, f"{len(wrong)} ops differ from NumPy in {dtype}:\n" + "\n".join(wrong)
