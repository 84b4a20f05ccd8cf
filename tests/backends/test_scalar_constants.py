"""0-d float constants that the compiler gains nothing from knowing (a learning rate) are a
kernel's scalar operands, read at launch, not literals in its text: kernels that differ only in
such a value are one kernel (one source, one compiled library), on every backend with NumPy's
values. The values a compiler or a renderer uses stay literals (``build.spelled``)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import symnb as sn
from symnb.backends.c.dialect import CDialect
from symnb.backends.kernels.build import spelled
from symnb.backends.kernels.ir import Literal, Load
from symnb.backends.kernels.lowering import lower
from symnb.backends.planner import PlanBuilder
from symnb.core.variable import Constant


def fused_node(inputs, output):
    """The one kernel node of the optimised graph."""
    f = sn.function(inputs, output, backend="py")
    (node,) = f.graph.toposort()
    return node


def kernel_of(build, dtype="float32"):
    x = sn.vector("x", dtype=dtype)
    return lower(fused_node([x], build(x)), CDialect()).kernel


def literals(kernel) -> set:
    return {v.value for v in kernel.values if isinstance(v, Literal)}


@pytest.mark.parametrize(
    "value, dtype",
    [
        (0.0, "float64"),
        (-0.0, "float32"),
        (1.0, "float64"),
        (2.0, "float32"),
        (-1.0, "float64"),
        (1e300, "float64"),
        (0.5, "float32"),
        (0.25, "float64"),
        (-0.125, "float64"),
        (math.inf, "float64"),
        (-math.inf, "float32"),
        (math.nan, "float64"),
        (True, "bool"),
        (3, "int64"),
        (7, "uint8"),
    ],
)
def test_values_a_compiler_uses_stay_literals(value, dtype):
    assert spelled(value, dtype)


@pytest.mark.parametrize("value", [0.1, 0.05, -0.3, 1.5, 3.7, 1e-8, 0.1 + 2**-40])
def test_other_floats_are_operands(value):
    assert not spelled(value, "float64")
    assert not spelled(float(np.float32(value)), "float32")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("weak", [True, False])
def test_kernels_differing_only_in_a_float_constant_are_one_kernel(dtype, weak):
    def scaled(lr):
        c = lr if weak else sn.constant(np.asarray(lr, dtype))
        return lambda x: sn.exp(x) - c * x

    first, second = kernel_of(scaled(0.1), dtype), kernel_of(scaled(0.05), dtype)
    assert first == second
    assert not {0.1, 0.05, float(np.float32(0.1))} & literals(first)
    scalars = [op for op in first.inputs if op.scalar]
    assert [op.dtype for op in scalars] == ["float64" if weak else dtype]


def test_whole_numbers_halves_and_infinities_stay_in_the_text():
    kernel = kernel_of(lambda x: sn.where(x > -np.inf, x**0.5 * 2.0 + x * 0.25, 1.0))
    assert {0.5, 2.0, 0.25, -math.inf} <= literals(kernel)
    assert [op.scalar for op in kernel.inputs] == [False]
    assert "sqrtf(" in CDialect().render(kernel)  # pow(x, 0.5) is spelled as NumPy's sqrt


def test_one_constant_read_twice_is_one_operand():
    kernel = kernel_of(lambda x: x * 0.1 + sn.exp(x) * 0.1)
    assert len(kernel.inputs) == 2
    assert len({v for v in kernel.values if isinstance(v, Load)}) == 2


def test_a_weak_and_a_strong_constant_of_one_value_are_two_operands():
    """They promote differently (``x32 * 0.1`` is float32, ``x32 * float64(0.1)`` float64)."""
    kernel = kernel_of(lambda x: x * 0.1 + sn.constant(np.float64(0.1)))
    assert [op.dtype for op in kernel.inputs if op.scalar] == ["float64", "float64"]
    assert kernel.outputs[0].dtype == "float64"


def test_kernels_reading_one_value_share_its_slot_made_once():
    """The planner gives a constant the graph does not hold one slot per value (its array,
    made at compile time: a call only places it)."""
    x = sn.vector("x")
    builder = PlanBuilder(sn.function([x], x, backend="py").graph, [x])
    first, second = Constant(np.float64(0.1)), Constant(np.float64(0.1))
    other = Constant(np.float64(0.2))
    slots = [builder.operand_slot(c) for c in (first, second, other)]
    assert slots[0] == slots[1] != slots[2]
    plan = builder.plan_of([], 1)
    assert plan.nargs == 1
    assert [(slot, float(value)) for slot, value in plan.constants] == [
        (slots[0], 0.1),
        (slots[2], 0.2),
    ]
    assert plan.constants[0][1] is first.value


# -- values against NumPy, on every backend -------------------------------------------------------
CASES = {
    "scale": (lambda x, c, d: x * c, lambda x, c, d: x * c),
    "step": (lambda x, c, d: x - c * sn.tanh(x), lambda x, c, d: x - c * np.tanh(x)),
    "divide": (lambda x, c, d: x / c + d, lambda x, c, d: x / c + d),
    "compare": (lambda x, c, d: sn.where(x < c, x, d), lambda x, c, d: np.where(x < c, x, d)),
    "clip": (lambda x, c, d: sn.clip(x, -c, d), lambda x, c, d: np.clip(x, -c, d)),
    "power": (lambda x, c, d: abs(x) ** c, lambda x, c, d: abs(x) ** c),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("weak", [True, False])
def test_values_match_numpy(backend, case, dtype, weak):
    build, want = CASES[case]
    xv = np.linspace(-3, 3, 37).astype(dtype)
    for c, d in ((0.1, 0.7), (0.3, 1.3)):
        if weak:
            cs, ds = c, d  # Python floats: weak, as NumPy 2 promotes them
        else:
            cs, ds = np.float64(c), np.asarray(d, dtype)  # 0-d arrays of their dtype
        x = sn.vector("x", dtype=dtype)
        args = (cs, ds) if weak else (sn.constant(cs), sn.constant(ds))
        f = sn.function([x], build(x, *args), backend=backend)
        with np.errstate(all="ignore"):
            expected = want(xv, cs, ds)
        got = f(xv)
        assert got.dtype == expected.dtype
        tol = 0 if case in ("scale", "step", "divide", "compare", "clip") else 1e-6
        if case == "step":
            tol = 2e-7 if dtype == "float32" else 1e-15  # tanh's last ulp differs by library
        np.testing.assert_allclose(got, expected, rtol=tol, atol=tol)


def test_integers_scaled_by_a_float_constant_are_float64(backend):
    x = sn.vector("x", dtype="int32")
    xv = np.arange(-5, 6, dtype="int32")
    f = sn.function([x], x * 0.1 + 0.3, backend=backend)
    np.testing.assert_array_equal(f(xv), xv * 0.1 + 0.3)


def test_learning_rates_of_a_sweep_give_numpy_updates(backend):
    rng = np.random.default_rng(0)
    start = rng.standard_normal(16).astype("float32")
    xv = rng.standard_normal((4, 16)).astype("float32")
    for lr in (0.1, 0.05, 0.003):
        W = sn.shared(start.copy(), name="W")
        x = sn.matrix("x", dtype="float32")
        loss = sn.sum(sn.tanh(x * W))
        (g,) = sn.grad(loss, [W])
        f = sn.function([x], loss, updates={W: W - lr * g}, backend=backend)
        f(xv)
        grad = np.sum((1 - np.tanh(xv * start) ** 2) * xv, axis=0, dtype="float32")
        np.testing.assert_allclose(W.get_value(), start - np.float32(lr) * grad, rtol=2e-6)
        assert W.get_value().dtype == np.float32
