"""Exact values of the dim functions at their edges: printing signs and separators, window
lengths for every padding, exact division, which differences are provably nonzero, what a
dim may be, and hashes that agree with equality (found by mutation testing: each assertion
here fails on a one-token change of symnb/core/dims.py that the broader tests let through)."""

import pytest

from symnb.core import dims as D
from symnb.core.dims import DimMismatch


@pytest.mark.parametrize(
    "value, text",
    [
        (D.neg("n"), "-n"),
        (D.sub("m", "n"), "m-n"),
        (D.mul("n", -2), "-n*2"),
        (D.add(D.mul("n", -1), 5), "-n+5"),
        (D.sub(D.mul("n", 2), "m"), "n*2-m"),
        (D.add("n", -1), "n-1"),
        (D.add(D.neg("n"), D.neg("m")), "-m-n"),
        (D.neg(D.floordiv("n", 2)), "-(n//2)"),
        (D.sub("m", D.floordiv("n", 2)), "m-n//2"),
        (D.add("m", D.mul(D.floordiv("n", 2), 3)), "m+(n//2)*3"),
    ],
)
def test_signs_print_once_and_only_where_negative(value, text):
    assert str(value) == text and D.parse_dim(text) == value


def test_shapes_print_with_separators_and_a_one_tuple_comma():
    assert D.format_shape(()) == "()"
    assert D.format_shape((3,)) == "(3,)"
    assert D.format_shape(("n", 3)) == "(n, 3)"
    assert D.format_shape((None, D.mul("n", 2), 1)) == "(?, n*2, 1)"


@pytest.mark.parametrize(
    "value, left, right",
    [
        (D.add("m", "n"), "(m+n)", "(m+n)"),
        (D.neg("n"), "(-n)", "(-n)"),
        (D.mul("n", 2), "n*2", "(n*2)"),
        (D.floordiv("n", 2), "n//2", "(n//2)"),
        ("n", "n", "n"),
        (6, "6", "6"),
    ],
)
def test_an_operand_of_a_division_is_parenthesised_where_its_operators_bind_looser(
    value, left, right
):
    assert D.format_operand(value) == left and D.format_operand(value, right=True) == right


def test_a_true_division_of_a_sum_says_the_floor_division_with_its_parentheses():
    with pytest.raises(TypeError) as info:
        (D.dim("m") + D.dim("n")) / 2
    assert "(m+n) / 2 is no size; write (m+n) // 2 (floor division)" in str(info.value)
    with pytest.raises(TypeError) as info:
        6 / (D.dim("n") * 2)
    assert "6 / (n*2) is no size; write 6 // (n*2)" in str(info.value)


@pytest.mark.parametrize(
    "size, kernel, stride, dilation, padding, want",
    [
        (10, 3, 1, 1, "valid", 8),
        (10, 3, 2, 1, "same", 5),
        (10, 3, 1, 1, "same", 10),
        (10, 3, 1, 2, (0, 2), 8),
        (10, 3, 1, 1, (2, 0), 10),
        (10, 3, 1, 1, (1, 2), 11),
        ("H", 3, 1, 1, (1, 1), "H"),
        ("H", 3, 1, 1, "valid", D.sub("H", 2)),
    ],
)
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
    [
        ("n", 0, True),
        (D.mul("n", 2), 1, True),
        (D.mul("n", 3), D.mul("n", 2), True),
        (D.add("n", 5), 3, True),
        (D.mul("n", 4), 6, True),
        (D.add("n", "m"), 0, True),
        ("n", 2, False),
        ("n", 5, False),
        (D.sub("n", "m"), 0, False),
        (D.add("n", 1), "m", False),
        (D.floordiv("n", 2), 0, False),
        (None, 3, False),
        (3, 3, False),
        (3, 4, True),
    ],
)
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
    with pytest.raises(DimMismatch) as info:
        D.unify(D.mul("n", 4), 6)  # a name pinned to a size it can never be
    assert (info.value.a, info.value.b) == (D.mul("n", 4), 6)
    assert D.unify(3, "n") == 3 and D.unify("n", 3) == 3 and D.unify(None, "n") == "n"


def test_hashes_agree_with_equality_and_tell_sizes_apart():
    assert hash(D.add(D.dim("n"), 0)) == hash("n")  # a DimExpr that is a plain name
    assert hash(D.sub(D.add("n", 5), "n")) == hash(5)
    exprs = [
        D.add("n", 1),
        D.add("n", 2),
        D.mul("n", 2),
        D.floordiv("n", 2),
        D.floordiv("n", 3),
        D.mul(D.floordiv("n", 2), "m"),
    ]
    assert len({hash(e) for e in exprs}) == len(exprs)
    assert hash(D.floordiv("n", 2)) == hash(D.parse_dim("n//2"))
    assert D.floordiv("n", 2) == D.parse_dim("n//2") != D.floordiv("n", 3)


@pytest.mark.parametrize(
    "text", ["2.5", "f(n)", "n.x", "not n", "~n", "n/2", "n%2", "n**2", "[n]", "n if m else 2"]
)
def test_what_is_not_dim_arithmetic_is_refused_with_the_dim_message(text):
    with pytest.raises(ValueError, match="arithmetic of names and ints"):
        D.parse_dim(text)


def test_unary_signs_parse_as_written():
    assert D.parse_dim("+n") == "n" and D.parse_dim("-(-n)") == "n"
    assert D.parse_dim("-n+5") == D.sub(5, "n") and D.normalize_dim("+3") == 3


def test_division_by_zero_or_a_negative_size_has_no_form():
    assert D.floordiv("n", 0) is None and D.floordiv(D.add("n", 1), 0) is None
    assert D.floordiv("n", -2) is None and D.floordiv(6, -2) is None


def test_a_constant_inside_a_nested_floor_division_is_kept():
    """((n+1)//2 + 1)//3 == (n+3)//6, and 2*(n//2) is not n//2 when divided again."""
    nested = D.floordiv(D.add(D.floordiv(D.add("n", 1), 2), 1), 3)
    assert nested == D.floordiv(D.add("n", 3), 6)
    scaled = D.floordiv(D.mul(D.floordiv("n", 2), 2), 3)
    for n in range(1, 30):
        assert D.evaluate(nested, {"n": n}) == ((n + 1) // 2 + 1) // 3
        assert D.evaluate(scaled, {"n": n}) == (2 * (n // 2)) // 3


def test_exact_division_keeps_integers_and_unknowns():
    assert D.exact_div(None, 3) is None and D.exact_div("n", None) is None
    assert type(D.exact_div(6, 3)) is int and str(D.exact_div(D.mul("n", 6), 3)) == "n*2"


def test_defaults_of_the_size_helpers():
    assert D.product([]) == 1  # a 0-d array has one element
    assert D.conv_output(10, 3) == 8 and D.conv_output("H", 3) == D.sub("H", 2)


def test_evaluating_a_floor_division_of_an_unbound_name_is_unknown():
    assert D.evaluate(D.floordiv("n", 2), {}) is None
    assert D.evaluate(D.mul(D.floordiv("n", 2), "m"), {"m": 3}) is None


def test_dim_expressions_compare_with_ints_only():
    two = D.dim("n") - D.dim("n") + 2
    assert isinstance(two, D.DimExpr) and two == 2 and hash(two) == hash(2)
    assert two != 2.5 and two != "2.5" and D.dim("n") - D.dim("n") + 1 != True  # noqa: E712
    assert D.dim("n") + None is None and D.dim("n") * None is None


def test_a_dim_expression_that_is_a_name_hashes_as_the_name():
    n = D.dim("n") + 0
    assert isinstance(n, D.DimExpr) and hash(n) == hash("n") and {n, "n"} == {"n"}


def test_a_canonical_shape_is_returned_as_it_is():
    """normalize_shape's fast path: every rule's output shape is already canonical."""
    shape = (0, "n", None, 3)
    assert D.normalize_shape(shape) is shape
    assert D.normalize_shape((D.dim("n") + 0, "2*3")) == ("n", 6)


def test_floor_divisions_in_any_order_are_one_form():
    n2, m3 = D.floordiv("n", 2), D.floordiv("m", 3)
    assert D.mul(n2, m3) == D.mul(m3, n2) and hash(D.mul(n2, m3)) == hash(D.mul(m3, n2))
    assert D.add(n2, m3) == D.add(m3, n2) and str(D.add(n2, m3)) == str(D.add(m3, n2))


def test_zero_divided_by_a_name_is_zero():
    assert D.exact_div(0, "n") == 0 and D.exact_div(0, D.mul("n", 2)) == 0


def test_an_expression_that_simplifies_to_an_int_is_checked_as_one():
    minus_two = D.dim("n") - D.dim("n") - 2
    assert D.normalize_dim(minus_two, signed=True) == -2
    with pytest.raises(ValueError, match="cannot be negative, got -2"):
        D.normalize_dim(minus_two)


def test_a_single_dim_is_a_one_axis_shape():
    assert D.normalize_shape("batch") == ("batch",) and D.normalize_shape(3) == (3,)
    assert D.normalize_shape(None) == (None,) and D.normalize_shape("n*2") == (D.mul("n", 2),)
