"""Exact values of the dim functions at their edges: printing signs and separators, window
lengths for every padding, exact division, which differences are provably nonzero, what a
dim may be, and hashes that agree with equality (found by mutation testing: each assertion
here fails on a one-token change of symnb/core/dims.py that the broader tests let through)."""

import pytest

from symnb.core import dims as D
from symnb.core.dims import DimMismatch


@pytest.mark.parametrize(
    "value, text",
    [(D.neg("n"), "-n"), (D.sub("m", "n"), "m-n"), (D.mul("n", -2), "-n*2"),
     (D.add(D.mul("n", -1), 5), "-n+5"), (D.sub(D.mul("n", 2), "m"), "n*2-m"),
     (D.add("n", -1), "n-1"), (D.add(D.neg("n"), D.neg("m")), "-m-n")],
)  # fmt: skip
def test_signs_print_once_and_only_where_negative(value, text):
    assert str(value) == text and D.parse_dim(text) == value


def test_shapes_print_with_separators_and_a_one_tuple_comma():
    assert D.format_shape(()) == "()"
    assert D.format_shape((3,)) == "(3,)"
    assert D.format_shape(("n", 3)) == "(n, 3)"
    assert D.format_shape((None, D.mul("n", 2), 1)) == "(?, n*2, 1)"


@pytest.mark.parametrize(
    "size, kernel, stride, dilation, padding, want",
    [(10, 3, 1, 1, "valid", 8), (10, 3, 2, 1, "same", 5), (10, 3, 1, 1, "same", 10),
     (10, 3, 1, 2, (0, 2), 8), (10, 3, 1, 1, (2, 0), 10), (10, 3, 1, 1, (1, 2), 11),
     ("H", 3, 1, 1, (1, 1), "H"), ("H", 3, 1, 1, "valid", D.sub("H", 2))],
)  # fmt: skip
def test_window_output_for_every_padding(size, kernel, stride, dilation, padding, want):
    assert D.window_output(size, kernel, stride, dilation, padding) == want


def test_exact_division():
    assert D.exact_div(D.add(D.mul("n", 4), 6), 2) == D.add(D.mul("n", 2), 3)
    assert D.exact_div(D.mul("n", 6), 3) == D.mul("n", 2)
    assert D.exact_div("n", 1) == "n"
    assert D.exact_div(6, 4) is None and D.exact_div("n", 0) is None and D.exact_div(5, 0) is None
    assert D.exact_div(D.add(D.mul("n", 4), 5), 2) is None


@pytest.mark.parametrize(
    "a, b, differ",
    [("n", 0, True), (D.mul("n", 2), 1, True),
     (D.mul("n", 3), D.mul("n", 2), True), (D.add("n", 5), 3, True), (D.mul("n", 4), 6, True),
     (D.add("n", "m"), 0, True),
     ("n", 2, False), ("n", 5, False), (D.sub("n", "m"), 0, False), (D.add("n", 1), "m", False),
     (D.floordiv("n", 2), 0, False), (None, 3, False), (3, 3, False), (3, 4, True)],
)  # fmt: skip
def test_provably_differ(a, b, differ):
    assert D.provably_differ(a, b) is differ
    assert D.provably_differ(b, a) is differ


def test_what_a_dim_may_be():
    assert D.normalize_dim(0) == 0 and D.normalize_dim("n") == "n" and D.normalize_dim(None) is None
    assert D.normalize_dim("2*3") == 6 and D.normalize_dim(D.add("n", 0)) == "n"
    assert D.normalize_dim(-3, signed=True) == -3
    assert D.normalize_dim("2-3", signed=True) == -1
    assert D.normalize_dim(D.sub(D.add("n", 2), "n"), signed=True) == 2
    with pytest.raises(ValueError, match="cannot be negative, got -1"):
        D.normalize_dim(-1)
    with pytest.raises(ValueError, match="cannot be negative"):
        D.normalize_dim("2-3")
    with pytest.raises(TypeError, match="a dim is an int, a name"):
        D.normalize_dim(2.5)
    with pytest.raises(TypeError):
        D.normalize_dim(True)


def test_unify_mismatch_names_both_dims():
    with pytest.raises(DimMismatch) as info:
        D.unify(3, 4)
    assert (info.value.a, info.value.b) == (3, 4)
    with pytest.raises(DimMismatch) as info:
        D.unify("n", "m")
    assert (info.value.a, info.value.b) == ("n", "m")
    assert D.unify(3, "n") == 3 and D.unify("n", 3) == 3 and D.unify(None, "n") == "n"


def test_hashes_agree_with_equality_and_tell_sizes_apart():
    assert hash(D.add(D.dim("n"), 0)) == hash("n")  # a DimExpr that is a plain name
    assert hash(D.sub(D.add("n", 5), "n")) == hash(5)
    exprs = [D.add("n", 1), D.add("n", 2), D.mul("n", 2), D.floordiv("n", 2), D.floordiv("n", 3),
             D.mul(D.floordiv("n", 2), "m")]  # fmt: skip
    assert len({hash(e) for e in exprs}) == len(exprs)
    assert hash(D.floordiv("n", 2)) == hash(D.parse_dim("n//2"))
    assert D.floordiv("n", 2) == D.parse_dim("n//2") != D.floordiv("n", 3)
