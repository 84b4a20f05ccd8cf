"""Dim arithmetic: canonical forms, printing and parsing, unification, evaluation."""

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

import symnb as sn
from symnb.core import dims as D
from symnb.core.dims import DimExpr, DimMismatch
from symnb.core.types import TensorType


def test_equal_sizes_compare_and_hash_equal_whatever_their_spelling():
    a = D.add("n", "m")
    b = D.add("m", "n")
    assert a == b and hash(a) == hash(b)
    assert D.mul("batch", 784) == D.parse_dim("784*batch") == D.normalize_dim("batch*784")
    assert D.sub(D.add("n", 3), 3) == "n" and isinstance(D.sub(D.add("n", 3), 3), str)
    assert D.mul(D.add("n", 1), 2) == D.add(D.mul("n", 2), 2)
    assert D.floordiv(D.mul("n", 4), 2) == D.mul("n", 2)
    assert {D.add("n", "m"), D.add("m", "n"), "n"} == {D.add("n", "m"), "n"}


def test_printing_is_compact_and_parses_back():
    cases = {
        D.mul("batch", 784): "batch*784",
        D.add("n", "m"): "m+n",
        D.sub("n", D.mul("m", 2)): "n-m*2",
        D.conv_output("H", 3, stride=2, padding=1): "(H+1)//2",
        D.mul(D.floordiv(D.add("n", 1), 2), "m"): "m*((n+1)//2)",
        D.floordiv("n", 2): "n//2",
    }
    for value, text in cases.items():
        assert str(value) == text
        assert D.parse_dim(text) == value


def test_floor_division_pulls_out_the_divisible_part():
    h = sn.dim("H")
    assert (h + 2 * 1 - 3) // 1 + 1 == "H"
    assert str((h - 3) // 2 + 1) == "(H+1)//2-1"
    assert D.floordiv(D.add(D.mul("n", 4), 5), 2) == D.add(D.mul("n", 2), 2)
    assert D.floordiv(D.mul("n", "m"), "m") == "n"
    assert D.floordiv("n", "m") is None  # not exact for every n, m: unknown


def test_unknown_dims_make_arithmetic_unknown():
    assert D.add("n", None) is None
    assert D.mul(None, 3) is None
    assert D.product(["batch", None, 3]) is None


def test_product_is_an_expression_when_names_are_involved():
    assert D.product([4, 6]) == 24
    assert D.product(["batch", 28, 28]) == D.mul("batch", 784)
    assert D.exact_div(D.product(["batch", 28, 28]), 784) == "batch"
    assert D.exact_div(D.mul("batch", 784), 1000) is None


@pytest.mark.parametrize(
    "a, b, differ",
    [
        (D.mul("b", 784), D.mul("b", 780), True),  # names are at least 1
        (D.mul("n", 4), 6, True),  # 4n is never 6
        ("n", 3, False),
        (D.add("n", "m"), "n", True),
        (D.mul("n", "m"), D.mul("n", 3), False),
        (None, 3, False),
    ],
)
def test_provably_differ(a, b, differ):
    assert D.provably_differ(a, b) is differ


def test_unify():
    assert D.unify("n", 3) == 3  # the name is pinned to the size
    assert D.unify(None, D.add("n", "m")) == D.add("n", "m")
    assert D.unify(D.add("n", "m"), D.add("m", "n")) == D.add("n", "m")
    for a, b in [("batch", "seq"), (3, 4), (D.mul("n", 4), 6), ("n", D.add("n", 1))]:
        with pytest.raises(DimMismatch):
            D.unify(a, b)
    assert D.broadcast_dims(1, D.mul("n", 2)) == D.mul("n", 2)


@pytest.mark.parametrize(
    "a, b, expected",
    [
        (None, "n", None),  # n may be 1 where the unknown side is 3: no name is the result
        (None, "n+1", None),  # n+1 is 1 for n = 0
        (None, "n+m", None),
        (None, "n//2", None),
        (None, 1, None),
        (None, None, None),
        (None, 3, 3),  # the unknown side is 1 or 3
        (None, 0, 0),
        (None, "2*n", "2*n"),  # never 1: the unknown side is 1 or 2*n
        (None, "3*n+2", "3*n+2"),
        ("n", "n", "n"),
        ("n", 1, "n"),
        ("n", 3, 3),  # the name is 1 or 3
        ("n+1", 4, 4),
    ],
)
def test_broadcast_result_is_a_name_only_where_it_provably_is(a, b, expected):
    a, b = D.normalize_dim(a), D.normalize_dim(b)
    assert D.broadcast_dims(a, b) == D.normalize_dim(expected)
    assert D.broadcast_dims(b, a) == D.normalize_dim(expected)


def test_broadcast_refuses_two_sizes_that_differ():
    for a, b in [("n", "m"), (3, 4), ("n", "n+1"), ("2*n", 3)]:
        for x, y in [(a, b), (b, a)]:
            with pytest.raises(DimMismatch):
                D.broadcast_dims(D.normalize_dim(x), D.normalize_dim(y))


def test_evaluate_and_names():
    out = D.conv_output("H", 5, stride=2)
    assert D.names_in(out) == {"H"}
    for h in range(5, 40):
        assert D.evaluate(out, {"H": h}) == (h - 5) // 2 + 1
    assert D.evaluate(D.add("n", "m"), {"n": 2}) is None


@pytest.mark.parametrize(
    "text, k, never",
    [
        ("2*n+1", 2, True),
        ("3*n", 9, False),
        ("4*n+2", 4, True),
        ("6*n*m+3", 2, True),
        ("n", 7, False),
        ("(n+1)//2*4+1", 2, True),
        ("7", 2, True),
        ("8", 4, False),
    ],
)
def test_never_multiple_of_agrees_with_every_size(text, k, never):
    d = D.normalize_dim(text)
    assert D.never_multiple_of(d, k) is never
    sizes = [D.evaluate(d, {"n": n, "m": m}) for n in range(12) for m in range(1, 4)]
    assert (not any(s % k == 0 for s in sizes)) is never


def test_a_linear_dim_is_solved_for_its_one_unbound_name():
    assert D.linear_in_one_name(D.normalize_dim("2*n+3"), {}) == ("n", 2, 3)
    assert D.linear_in_one_name(D.normalize_dim("n*m+1"), {"m": 4}) == ("n", 4, 1)
    for text in ("n*m", "n*n", "(n+1)//2", "n+m"):
        assert D.linear_in_one_name(D.normalize_dim(text), {}) is None
    assert D.linear_in_one_name("n", {}) is None  # a bare name is bound by the plain check


def test_a_term_with_a_factor_of_size_0_is_0_whatever_its_other_names():
    """``n*m`` with n 0 is 0 for every m (it was left unsolved, compared across values only);
    ``n*m+2*k`` with n 0 is linear in k."""
    nm = D.normalize_dim("n*m")
    assert D.size_given(nm, {"n": 0}) == 0 and D.size_given(nm, {"n": 2}) is None
    assert D.size_given(D.normalize_dim("n*m*k+3"), {"m": 0}) == 3
    assert D.linear_in_one_name(nm, {"n": 0}) is None
    assert D.linear_in_one_name(D.normalize_dim("n*m+2*k"), {"n": 0}) == ("k", 2, 0)
    assert D.size_given("n", {"n": 4}) == 4 and D.size_given(7, {}) == 7


def test_user_spellings_in_shapes():
    t = TensorType("float32", ("batch*784", sn.dim("n") + sn.dim("m"), 3))
    assert str(t) == "f32[batch*784,m+n,3]"
    assert t == TensorType("f32", (D.mul(784, "batch"), "m+n", 3))
    assert hash(t) == hash(TensorType("f32", (D.mul(784, "batch"), "m+n", 3)))
    assert TensorType("f32", (sn.dim("n") + 0,)).shape == ("n",)
    with pytest.raises(ValueError, match="arithmetic of names"):
        TensorType("f32", ("n +",))
    with pytest.raises(ValueError, match="negative"):
        TensorType("f32", (-2,))


@pytest.mark.parametrize(
    "shape, kind", [({6, 5}, "set"), ({"b": 1, "a": 2}, "dict"), (frozenset({2, 3}), "frozenset")]
)
def test_a_set_or_a_dict_is_no_shape(shape, kind):
    """NumPy refuses both; a set became its iteration order ((5, 6) for {6, 5}), a dict its
    keys."""
    message = rf"a shape is a tuple of dims, not .* \(a {kind}\)"
    with pytest.raises(sn.ShapeTypeError, match=message):
        TensorType("f64", shape)
    with pytest.raises(TypeError, match=rf"tensor 't', shape .*\(a {kind}\)"):
        sn.tensor("t", shape=shape)
    assert TensorType("f64", [6, "n"]).shape == (6, "n")  # a list is a sequence


def test_dim_expressions_are_immutable_and_wrap_for_operators():
    e = sn.dim("n") * 3
    assert isinstance(e, DimExpr) and repr(e) == "DimExpr(n*3)"
    with pytest.raises(AttributeError):
        e.terms = ()
    assert 2 * sn.dim("n") - sn.dim("n") == "n"


_names = st.sampled_from(["a", "b", "c"])
_leaf = st.one_of(_names, st.integers(-5, 9))


def _expr(depth):
    if depth == 0:
        return _leaf
    sub = _expr(depth - 1)
    return st.one_of(
        _leaf,
        st.tuples(st.sampled_from("+-*"), sub, sub),
        st.tuples(st.just("//"), sub, st.integers(1, 5)),
    )


def _build(tree, ops):
    if not isinstance(tree, tuple):
        return tree
    op, left, right = tree
    return ops[op](_build(left, ops), _build(right, ops))


_SYMBOLIC = {"+": D.add, "-": D.sub, "*": D.mul, "//": D.floordiv}


@given(_expr(3))
def test_canonical_form_evaluates_like_python_integers(tree):
    """The simplified expression has the value of the expression as written, for all sizes."""
    dim = _build(tree, _SYMBOLIC)
    for values in itertools.product([1, 2, 7], repeat=3):
        sizes = dict(zip("abc", values))
        numeric = {k: _numeric_op(k) for k in _SYMBOLIC}
        want = _build(_substitute(tree, sizes), numeric)
        assert D.evaluate(dim, sizes) == want
        assert D.evaluate(D.parse_dim(str(dim)), sizes) == want


def _numeric_op(symbol):
    return {
        "+": int.__add__,
        "-": int.__sub__,
        "*": int.__mul__,
        "//": int.__floordiv__,
    }[symbol]


def _substitute(tree, sizes):
    if isinstance(tree, str):
        return sizes[tree]
    if not isinstance(tree, tuple):
        return tree
    op, left, right = tree
    return (op, _substitute(left, sizes), _substitute(right, sizes))


def test_nested_floor_divisions_have_one_spelling():
    """Two poolings by 2 give the same size as one pooling by 4."""
    assert D.floordiv(D.floordiv("H", 2), 2) == D.floordiv("H", 4)
    assert D.floordiv(D.add(D.floordiv("n", 2), 1), 3) == D.floordiv(D.add("n", 2), 6)
    x = sn.tensor("x", shape=("batch", 1, "H", "W"))
    twice = sn.max_pool2d(sn.max_pool2d(x, 2), 2)
    once = sn.max_pool2d(x, 4)
    assert sn.infer_shape(twice + once) == ("batch", 1, D.floordiv("H", 4), D.floordiv("W", 4))


@pytest.mark.parametrize(
    "a, b, expected",
    [
        ((3, "n"), (3, "n"), True),
        ((3, None), (None, "n"), True),  # unknown dims take either side
        ((3, "n"), (3, 4), True),  # a name may be pinned to a size
        (("n",), ("m",), False),  # two names are two sizes
        ((3,), (4,), False),
        ((3,), (3, 1), False),  # rank differs
        ((), (), True),
        (("n*2",), ("n",), False),  # provably different arithmetic of one name
    ],
)
def test_shapes_unify(a, b, expected):
    from symnb.core.dims import parse_dim, shapes_unify

    parse = lambda s: tuple(parse_dim(d) if isinstance(d, str) else d for d in s)  # noqa: E731
    assert shapes_unify(parse(a), parse(b)) is expected
    assert shapes_unify(parse(b), parse(a)) is expected
