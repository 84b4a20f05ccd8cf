"""Which elementwise ops backend "c" writes as generated C, and which it hands to NumPy.

tests/ops/test_special_values.py checks every op's values on "c" against NumPy; it passes
just as well when an op silently stops being generated and runs its NumPy reference as a
library step instead, so a C helper that no test reaches (a wrong ``sign`` or ``bit_xor``)
would go unseen. Here the ops that run as library steps are pinned, per dtype: only those C
cannot spell (no C form of digamma, erfinv, erfcinv, trigamma and polygamma, integer ``pow``,
float16 results).
Every other op of the catalogue is generated C, and the special-values test checks its values.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special

import symnb as sn
from tests.helpers import needs_c
from tests.ops.test_special_values import DTYPES, compiled

pytestmark = needs_c

#: ops with no C form at all: they run their NumPy (SciPy) reference on every dtype
NO_C_FORM = {"digamma", "erfinv", "erfcinv", "trigamma", "polygamma"}


def expected_library(found, dtype) -> set[str]:
    """The ops C cannot spell for ``dtype``: those above, ``pow`` of integers (NumPy's
    overflow and negative-exponent rules), and any op whose result is float16."""
    names = set()
    for op, _, out, _, _ in found:
        name = str(op)
        if name in NO_C_FORM or out.type.dtype == "float16":
            names.add(name)
        elif name == "pow" and np.dtype(dtype).kind in "iub":
            names.add(name)
    return names


@pytest.mark.parametrize("dtype", DTYPES)
def test_only_ops_c_cannot_spell_run_as_library_steps(dtype):
    found, f = compiled(dtype, "c")  # the special-values test's own function
    library = {k.ops for k in f.kernels if k.kind == "library"}
    assert library == expected_library(found, dtype), [
        (k.ops, k.reason) for k in f.kernels if k.kind == "library"
    ]
    reasons = {k.reason for k in f.kernels if k.kind == "library"}
    assert all("version in C" in r or "float16" in r for r in reasons), reasons


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int32", "uint64"])
def test_bitwise_xor_is_generated_c_with_numpys_values(dtype):
    info = np.iinfo(dtype) if dtype != "bool" else None
    top = 1 if info is None else int(info.max)
    low = 0 if info is None else int(info.min)
    a = np.array([0, 1, top, low, top, 5 % (top + 1)], dtype)
    b = np.array([1, 1, low, top, 0, 3 % (top + 1)], dtype)
    x, y = sn.tensor("x", shape=(6,), dtype=dtype), sn.tensor("y", shape=(6,), dtype=dtype)
    f = sn.function([x, y], sn.bitwise_xor(x, y), backend="c")
    (kernel,) = f.kernels
    assert kernel.kind == "kernel" and "bitwise_xor" in kernel.ops
    assert "^" in kernel.source
    got = f(a, b)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, np.bitwise_xor(a, b))


def test_trigamma_has_no_c_form_and_gives_scipys_values():
    """trigamma is a library step on "c" (C has no trigamma): the step still gives SciPy's
    values, special values included."""
    x = sn.tensor("x", shape=(7,), dtype="float64")
    f = sn.function([x], sn.trigamma(x), backend="c")
    (step,) = f.kernels
    assert step.kind == "library" and "trigamma" in step.reason
    v = np.array([0.5, 1.0, 7.25, 1e3, -1.5, np.inf, np.nan])
    np.testing.assert_array_equal(f(v), special.polygamma(1, v))
