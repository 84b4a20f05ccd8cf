"""mode="debug" and mode="nanguard" (issue #17): the first node that disagrees with its NumPy
reference, or that produces NaN/Inf, is named with its inputs and the user's line."""

from pathlib import Path

import numpy as np
import pytest

import symnb as sn
from symnb.backends.kernels import lowering
from symnb.compile.debugmode import DebugModeError, NanGuardError
from symnb.core.op import Op
from symnb.ops.elemwise import Exp
from tests.helpers import needs_c


def _line_of(marker: str) -> int:
    """The first line of this file holding ``marker``: the line a message must name."""
    lines = Path(__file__).read_text().splitlines()
    return next(number for number, text in enumerate(lines, 1) if marker in text)


def test_nanguard_names_the_first_node_and_the_users_line(backend):
    x = sn.vector("x")
    y = sn.sqrt(x) * 2  # the line the error names
    z = sn.exp(y) + 1
    f = sn.function([x], z, mode="nanguard", backend=backend, optimize="none")
    np.testing.assert_allclose(f(np.array([1.0, 4.0])), np.exp(np.sqrt([1.0, 4.0]) * 2) + 1)
    with pytest.raises(NanGuardError) as caught:
        f(np.array([1.0, -4.0]))
    message = str(caught.value)
    assert "1 NaN and 0 Inf at node sqrt('x' (float64(?,)))" in message
    assert "inputs were all finite" in message and "[ 1. -4.]" in message
    line = _line_of("y = sn.sqrt(x) * 2  # the line")
    assert f"test_debugmode.py, line {line}: y = sn.sqrt(x) * 2" in message


def test_nanguard_inside_a_fused_node_names_the_step(backend):
    x = sn.vector("x")
    f = sn.function([x], sn.exp(sn.log(x) * 2) + 1, mode="nanguard", backend=backend)
    with pytest.raises(NanGuardError, match="inside it, log is the first step"):
        f(np.array([1.0, -1.0]))


def test_nanguard_says_when_an_input_was_already_nan():
    x = sn.vector("x")
    f = sn.function([x], x * 2, mode="nanguard", backend="py")
    with pytest.raises(NanGuardError, match="inputs already held NaN/Inf: 'x'"):
        f(np.array([np.nan]))


@needs_c
@pytest.mark.parametrize("optimize", ["none", "fast"])
def test_debug_mode_reports_the_node_whose_kernel_is_wrong(monkeypatch, optimize):
    x = sn.vector("x")
    y = sn.exp(x) + 1  # the line the error names
    good = sn.function([x], y, mode="debug", backend="c", optimize=optimize)
    xv = np.array([0.5, 1.0, 2.0])
    np.testing.assert_allclose(good(xv), np.exp(xv) + 1)
    monkeypatch.setattr(Exp, "scalar_op", "expm1")  # a fault injected into exp's kernel
    # the faulty kernels stay out of the suite's record, which the PoCL test checks
    monkeypatch.setattr(lowering, "_OBSERVERS", [])
    bad = sn.function([x], y * 3, mode="debug", backend="c", optimize=optimize)
    with pytest.raises(DebugModeError) as caught:
        bad(xv)
    message = str(caught.value)
    node = "node exp('x'" if optimize == "none" else "node composite[exp+add+mul]('x'"
    assert "backend 'c' disagrees with the NumPy reference at " + node in message
    assert "input 'x' (float64(?,)): float64[3] [0.5 1.  2. ]" in message
    line = _line_of("y = sn.exp(x) + 1  # the line")
    assert f"test_debugmode.py, line {line}: y = sn.exp(x) + 1" in message or optimize == "fast"


def test_unknown_mode_is_refused():
    x = sn.vector("x")
    with pytest.raises(ValueError, match="unknown mode 'fast'; choose one of"):
        sn.function([x], x, mode="fast")


@pytest.mark.parametrize(
    "dtype, build, value",
    [
        ("float32", lambda x: x * 2, np.random.default_rng(0).random((2, 3))),
        ("float32", lambda x: x * 2.5 + 1, np.random.default_rng(1).random((2, 3))),
        ("float16", lambda x: x * 2.5 - 3, np.random.default_rng(2).random((2, 3))),
        ("int8", lambda x: x + 3, np.arange(6).reshape(2, 3)),
    ],
)
def test_debug_mode_keeps_python_scalars_weak_in_the_reference(backend, dtype, build, value):
    """The reference computes ``x32 * 2`` in float32, as NumPy 2 and every backend do (it once
    made the 2 an int64 array, computed float64 and reported a disagreement)."""
    x = sn.tensor("x", shape=("batch", 3), dtype=dtype)
    f = sn.function([x], build(x), mode="debug", backend=backend)
    a = value.astype(dtype)
    got = f(a)
    assert got.dtype == dtype
    np.testing.assert_allclose(got, build(a), rtol=1e-3)


class _AddsOneInPlace(Op):
    """An op whose perform writes into its input without declaring it (no ``destroy_map``),
    as a hand-written Theano op's ``x += 1`` did."""

    def infer_types(self, x):
        return [x.type]

    def perform(self, x):
        x += 1
        return x


class _DeclaresItsWrite(_AddsOneInPlace):
    """The same write, declared: debug mode lets it be."""

    destroy_map = {0: [0]}


def test_debug_mode_catches_a_perform_that_writes_into_its_input(backend):
    """A plain call of such an op changes a shared variable's value (its input) behind the
    user's back; debug mode names the op, the input and its values before and after."""
    w = sn.shared(np.array([1.0, 2.0]), name="w")
    out = _AddsOneInPlace()(w) * 2  # the node the error names
    f = sn.function([], out, mode="debug", backend=backend)
    with pytest.raises(DebugModeError) as caught:
        f()
    message = str(caught.value)
    assert "reference of node adds_one_in_place('w'" in message
    assert "wrote into its input 0 'w'" in message and "destroy_map" in message
    assert "before: float64[2] [1. 2.]" in message and "after: float64[2] [2. 3.]" in message
    line = _line_of("out = _AddsOneInPlace()(w) * 2  # the node")
    assert f"test_debugmode.py, line {line}" in message
    np.testing.assert_array_equal(w.get_value(), [1.0, 2.0])  # debug mode ran on copies
    declared = sn.function([], _DeclaresItsWrite()(w) * 2, mode="debug", backend=backend)
    np.testing.assert_array_equal(declared(), [4.0, 6.0])


def test_nanguard_computes_only_the_side_an_ifelse_takes(backend, capsys):
    """As a plain call (and Theano's NanGuardMode on its lazy VM), nanguard runs only the side
    of an ifelse its condition picks: ``log(x)`` at -1, not taken, is no NaN to report, and
    a ``print_value`` there prints nothing; the side taken is still checked, nested ifelses
    and several values per side included."""
    x = sn.scalar("x")
    c = sn.scalar("c", dtype="bool")
    y = sn.ifelse(x > 0, sn.print_value(sn.log(x), "L"), sn.constant(0.0))
    f = sn.function([x], y, mode="nanguard", backend=backend)
    assert f(-1.0) == 0.0 and capsys.readouterr().out == ""
    assert np.isclose(f(np.e), 1.0) and capsys.readouterr().out.startswith("L __str__ = 1.0")
    z = sn.ifelse(c, [sn.ifelse(x > 0, sn.log(x), x * 2), x + 1], [x * 3, sn.sqrt(x)])
    g = sn.function([c, x], z, mode="nanguard", backend=backend)
    np.testing.assert_allclose(g(np.array(True), -1.0), [-2.0, 0.0])
    np.testing.assert_allclose(g(np.array(False), 4.0), [12.0, 2.0])
    with pytest.raises(NanGuardError, match=r"1 NaN and 0 Inf at node sqrt\('x'"):
        g(np.array(False), -4.0)


def test_nanguard_names_the_side_an_ifelse_did_not_compute():
    """An ifelse handing on a NaN argument is reported with its inputs, the side not taken
    shown as never computed."""
    x = sn.scalar("x")
    c = sn.scalar("c", dtype="bool")
    f = sn.function([c, x], sn.ifelse(c, x, sn.log(-x)), mode="nanguard", backend="py")
    with pytest.raises(NanGuardError) as caught:
        f(np.array(True), np.nan)
    message = str(caught.value)
    assert "1 NaN and 0 Inf at node ifelse[n=1]" in message
    assert "its inputs already held NaN/Inf: 'x' (float64())" in message
    assert "input 'x' (float64()): float64[] nan" in message
    assert ": not computed (its side not taken)" in message


def test_debug_mode_prints_a_print_value_once_per_call(backend, capsys):
    """An impure node runs once, on the backend, with no reference run beside it (that run
    printed the message a second time on every call)."""
    x = sn.vector("x")
    f = sn.function([x], sn.print_value(x * 2, "P") + 1, mode="debug", backend=backend)
    np.testing.assert_allclose(f(np.arange(3.0)), [1.0, 3.0, 5.0])
    assert capsys.readouterr().out == "P __str__ = [0. 2. 4.]\n"
