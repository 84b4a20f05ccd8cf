"""Theano's names that map onto symnb's maths (``T.tril``, ``T.nonzero``, ``T.isclose``...)
and Theano's variable methods on every tensor of a Theano graph (``x.round()`` rounding half
away from zero, ``x.norm(L)``, ``x.size``...), against NumPy. symnb's own variables keep
NumPy's methods."""

import importlib

import numpy as np
import pytest

import symnb as sn
import symnb.compat.theano as theano
import symnb.compat.theano.tensor as T
from symnb.compat.theano.tensor.shared_randomstreams import RandomStreams

M = np.array([[0.0, 1.5, -2.5], [3.0, 0.0, 0.5]])
x, v = T.matrix("x"), T.vector("v")


def run(output, value=M, var=x):
    return theano.function([var], output, mode="FAST_COMPILE", on_unused_input="ignore")(value)


UNIT = np.array([-0.9, -0.5, 0.0, 0.3, 0.99])
BIG = np.array([1.0, 1.5, 4.0, 100.0])
CASES = [
    ("tril", lambda: T.tril(x, -1), M, np.tril(M, -1)),
    ("triu", lambda: T.triu(x, 1), M, np.triu(M, 1)),
    ("trace", lambda: T.trace(x), M, np.trace(M)),
    ("arccosh", lambda: T.arccosh(v), BIG, np.arccosh(BIG)),
    ("arcsinh", lambda: T.arcsinh(v), UNIT, np.arcsinh(UNIT)),
    ("arctanh", lambda: T.arctanh(v), UNIT, np.arctanh(UNIT)),
    ("deg2rad", lambda: T.deg2rad(v), BIG, np.deg2rad(BIG)),
    ("rad2deg", lambda: T.rad2deg(v), UNIT, np.rad2deg(UNIT)),
    ("power", lambda: T.power(x, 2), M, M**2),
    ("ptp", lambda: T.ptp(x, axis=1), M, np.ptp(M, axis=1)),
    ("second", lambda: T.second(x, 2.0), M, np.full_like(M, 2.0)),
    ("identity_like", lambda: T.identity_like(x), M, np.eye(2, 3)),
    ("zeros_like", lambda: T.zeros_like(x, dtype="int32"), M, np.zeros((2, 3), "int32")),
    ("nonzero", lambda: list(T.nonzero(x)), M, list(np.nonzero(M))),
    ("nonzero matrix", lambda: T.nonzero(x, return_matrix=True), M, np.array(np.nonzero(M))),
    ("flatnonzero", lambda: T.flatnonzero(x), M, np.flatnonzero(M)),
    ("nonzero_values", lambda: T.nonzero_values(x), M, M[M != 0]),
    ("diagonal", lambda: T.diagonal(x, 1), M, np.diagonal(M, 1)),
    ("sort kind", lambda: T.sort(x, 0, "quicksort"), M, np.sort(M, 0)),
    ("argsort None", lambda: T.argsort(x, axis=None), M, np.argsort(M, axis=None)),
    ("argmax list", lambda: T.argmax(x, axis=[0, 1]), M, np.argmax(M)),
    ("prod no_zeros", lambda: T.prod(x + 1, no_zeros_in_input=True), M, np.prod(M + 1)),
    ("bitwise", lambda: T.bitwise_not(T.bitwise_and(x > 0, x < 2)), M, ~((M > 0) & (M < 2))),
    ("isclose", lambda: T.isclose(x, x + 1e-9), M, np.isclose(M, M + 1e-9)),
    ("allclose", lambda: T.allclose(x, x * 1.1), M, np.allclose(M, M * 1.1)),
    ("stacklists", lambda: T.stacklists([[x, x], [x, x]]), M, np.array([[M, M], [M, M]])),
]


@pytest.mark.parametrize("name, build, value, want", CASES, ids=[c[0] for c in CASES])
def test_theano_names_against_numpy(name, build, value, want):
    got = run(build(), value, v if value.ndim == 1 else x)
    if isinstance(want, list):
        assert all(np.array_equal(g, w) for g, w in zip(got, want, strict=True))
    else:
        assert np.asarray(got).dtype == np.asarray(want).dtype or name in ("trace", "power")
        assert np.allclose(got, want, equal_nan=True)


def test_argmax_over_several_axes_numbers_them_in_row_major_order(rng):
    t = T.tensor3("t")
    X = rng.random((2, 3, 4))
    arg, big = run(T.argmax(t, axis=[0, 2]), X, t), run(T.max(t, axis=[0, 2]), X, t)
    moved = X.transpose(1, 0, 2).reshape(3, -1)
    assert np.array_equal(arg, moved.argmax(-1)) and np.allclose(big, moved.max(-1))
    both = run(T.max_and_argmax(t, axis=(-1, 1), keepdims=True), X, t)
    assert np.array_equal(both[1], X.reshape(2, -1).argmax(-1)[:, None, None])
    assert np.array_equal(run(T.diagonal(t, 1, 1, 2), X, t), np.diagonal(X, 1, 1, 2))
    with pytest.raises(TypeError, match=r"T.diagonal: offset \(the diagonal\) is an int, not 1.5"):
        T.diagonal(t, 1.5, 1, 2)  # NumPy refuses it; it was truncated to 1


def test_max_and_argmax_read_an_empty_axis_list_as_every_axis():
    """Theano's ``max_and_argmax`` (through which ``T.max``, ``T.min``, ``T.argmax`` and
    ``T.argmin`` all went) turned an empty axis list into every axis: a scalar, where
    NumPy's ``axis=()`` reduces none (x unchanged, an argmax of zeros)."""
    cases = [
        (T.max(x, axis=[]), np.max(M)),
        (T.min(x, axis=()), np.min(M)),
        (T.argmax(x, axis=[]), np.argmax(M)),
        (T.argmin(x, axis=()), np.argmin(M)),
        (T.max_and_argmax(x, axis=[])[0], np.max(M)),
        (T.max_and_argmax(x, axis=[])[1], np.argmax(M)),
        (x.argmax(axis=[]), np.argmax(M)),
        (x.min([]), np.min(M)),
    ]
    for out, want in cases:
        got = run(out)
        assert got.shape == () and got == want
    assert run(T.max(x, axis=[], keepdims=True)).shape == (1, 1)
    assert run(T.argmin(x, axis=[], keepdims=True)).tolist() == [[np.argmin(M)]]


def test_max_and_min_count_a_repeated_axis_once_as_argmax_does():
    """Theano's ``check_and_normalize_axes`` counted negative axes from the end, then kept
    each axis once, for ``T.max``/``T.min`` as for ``T.argmax``."""
    for out, want in [
        (T.max(x, axis=[0, 0]), np.max(M, axis=0)),
        (T.min(x, axis=[-2, 0]), np.min(M, axis=0)),
        (T.argmax(x, axis=(1, -1)), np.argmax(M, axis=1)),
        (T.max_and_argmax(x, axis=[-1, 1, 0])[1], np.argmax(M)),
    ]:
        assert np.array_equal(run(out), want)
    with pytest.raises(IndexError, match=r"T.max: axis 2 is out of range for 'x'"):
        T.max(x, axis=[0, 2])


def test_sort_refuses_an_unknown_kind_naming_the_kinds():
    """Theano's ``SortOp`` handed ``kind`` to ``np.sort``, which refuses an unknown one; it
    was dropped, so ``T.sort(x, kind="bogus")`` sorted."""
    kinds = "'quicksort', 'mergesort', 'heapsort', 'stable'"
    for build in (lambda: T.sort(v, kind="bogus"), lambda: v.argsort(0, "bogus")):
        with pytest.raises(sn.ArgumentError, match=f"sort of 'v' .*: kind='bogus'; .*{kinds}"):
            build()
    assert np.array_equal(run(T.argsort(v, kind="heapsort"), BIG, v), np.argsort(BIG))


def test_sort_and_cumsum_take_a_constant_tensor_axis():
    """Theano's ``SortOp`` and ``CumOp`` took a constant integer tensor as their axis, as
    ``T.argmax`` and ``T.topk`` do here; an axis computed when the function runs stays a
    ShapeTypeError naming the call and x."""
    for out, want in [
        (T.sort(x, axis=T.constant(0)), np.sort(M, 0)),
        (T.argsort(x, T.constant(-1)), np.argsort(M, -1)),
        (x.sort(T.constant(0)), np.sort(M, 0)),
        (x.argsort(axis=np.array(1)), np.argsort(M, 1)),
        (T.cumsum(x, T.constant(1)), np.cumsum(M, 1)),
        (x.cumprod(axis=T.constant(0)), np.cumprod(M, 0)),
    ]:
        assert np.array_equal(run(out), want)
    k = T.iscalar("k")
    for build, call in [(lambda: T.sort(x, k), "sort"), (lambda: T.cumsum(x, k), "cumsum")]:
        with pytest.raises(TypeError, match=rf"{call}: axis .*not k:i32\[\] \(for 'x'") as err:
            build()
        assert "an axis must be known when the graph is built" in str(err.value)


def test_get_scalar_constant_value_and_its_error():
    assert T.get_scalar_constant_value(T.constant(2) * 3 + 1) == 7
    assert T.get_scalar_constant_value(T.row().shape[0]) == 1  # a dim the type fixes
    assert T.get_scalar_constant_value(np.array([4.0])) == 4.0
    with pytest.raises(T.NotScalarConstantError, match="depends on what the function"):
        T.get_scalar_constant_value(T.scalar("s") + 1)


def test_get_scalar_constant_value_looks_through_fills_as_theanos():
    """Theano's ``get_scalar_constant_value`` "digs through dimshuffles, fills, allocs": a
    tensor filled with one known value has it whatever its shape (its test_basic.py
    ``test_arg_grad`` reads 0 from the gradient of an argmax)."""
    m, n, y = T.matrix("m"), T.iscalar("n"), T.ivector("y")
    cases = [
        (T.alloc(3.0, n, n), 3.0, "float64"),
        (T.zeros_like(m), 0.0, "float64"),
        (T.ones_like(y), 1, "int32"),
        (T.fill(m, 2.0), 2.0, "float64"),
        (T.second(m, -4), -4, "int64"),
        (T.alloc(1.5, n).dimshuffle("x", 0), 1.5, "float64"),
        (T.alloc(np.array([[2.5]]), n, 3), 2.5, "float64"),
        (T.grad(T.argmax(m, axis=0).sum(), m), 0.0, "float64"),
        (T.ones_like(m) * 2 + T.constant(1), 3.0, "float64"),
        (T.cast(T.alloc(7.9, n), "int32"), 7, "int32"),
        (T.zeros((n, 3)), 0.0, "float64"),
    ]
    for var, want, dtype in cases:
        got = T.get_scalar_constant_value(var)
        assert (got.shape, got.dtype.name, float(got)) == ((), dtype, want)
    for var in (
        m * 0,  # m is not constant
        T.sum(T.ones_like(m)),  # not a fill: its value depends on m's shape
        T.alloc(m[0, 0], n),
        T.alloc(np.array([1.0, 2.0]), n, 2),  # two values
        T.ones_like(m) + m,
    ):
        with pytest.raises(T.NotScalarConstantError, match="depends on what the function"):
            T.get_scalar_constant_value(var)
    with pytest.raises(T.NotScalarConstantError):
        T.get_scalar_constant_value(T.zeros_like(m), only_process_constants=True)


def test_round_method_rounds_half_away_from_zero_as_theanos():
    halves = np.array([0.5, 1.5, 2.5, -0.5, -2.5])
    y = v * 1  # a computed tensor of a Theano graph
    assert np.array_equal(run(y.round(), halves, v), [1, 2, 3, -1, -3])
    assert np.array_equal(run(v.round(), halves, v), [1, 2, 3, -1, -3])
    assert np.array_equal(run(y.round(mode="half_to_even"), halves, v), np.round(halves))
    assert np.array_equal(run(T.round(v), halves, v), [1, 2, 3, -1, -3])


def test_theanos_variable_methods_against_numpy():
    y = x * 1
    assert np.allclose(run(y.norm(2)), np.sqrt((M**2).sum()))  # entrywise, as Theano's
    assert np.allclose(run(y.norm(1, axis=1)), np.abs(M).sum(1))
    assert all(np.array_equal(g, w) for g, w in zip(run(list(y.nonzero())), np.nonzero(M)))
    assert np.array_equal(run(y.nonzero_values()), M[M != 0])
    assert np.allclose(run(y.trace()), np.trace(M))
    assert np.allclose(run(y.diagonal(1)), np.diagonal(M, 1))
    assert run(y.zeros_like(dtype="int32")).dtype == np.int32
    assert np.allclose(run(y.ones_like()), np.ones_like(M))
    assert int(run(y.size)) == 6 and int(run(v.size, M[0], v)) == 3
    assert np.allclose(run(y.exp()), np.exp(M)) and np.allclose(run(y.tanh()), np.tanh(M))
    assert np.allclose(run(y.conj()), M) and np.allclose(run(y.ptp(axis=0)), np.ptp(M, 0))
    assert np.allclose(run(y.sort(axis=1, kind="mergesort")), np.sort(M, 1))
    assert np.allclose(run(y.take([1, 0], axis=1)), M[:, [1, 0]])
    assert np.allclose(run(y.fill(3.0)), np.full_like(M, 3.0))
    copied = y.copy(name="c")
    assert copied.name == "c" and y.name is None and np.allclose(run(copied), M)
    assert (v * 0 + 2).get_scalar_constant_value is not None


REDUCING_METHODS = [
    ("max(1, True)", lambda y: y.max(1, True), M.max(1, keepdims=True)),
    ("min(0, True)", lambda y: y.min(0, True), M.min(0, keepdims=True)),
    ("max([0, 1])", lambda y: y.max([0, 1]), M.max()),
    ("argmax(1, True)", lambda y: y.argmax(1, True), M.argmax(1, keepdims=True)),
    ("argmin(0, True)", lambda y: y.argmin(0, True), M.argmin(0, keepdims=True)),
    ("any(1, True)", lambda y: (y > 1).any(1, True), (M > 1).any(1, keepdims=True)),
    ("all(0, True)", lambda y: (y < 2).all(0, True), (M < 2).all(0, keepdims=True)),
    ("var(0, 1)", lambda y: y.var(0, 1), M.var(0, ddof=1)),
    ("std(1, 1, True)", lambda y: y.std(1, 1, True), M.std(1, ddof=1, keepdims=True)),
    ("var(corrected=True)", lambda y: y.var(corrected=True), M.var()),
    ("std(None, 0, False, True)", lambda y: y.std(None, 0, False, True), M.std()),
]


@pytest.mark.parametrize(
    "text, method, want", REDUCING_METHODS, ids=[c[0] for c in REDUCING_METHODS]
)
def test_reducing_methods_take_theanos_argument_order(text, method, want):
    """Theano 1.0's ``x.max(axis, keepdims)`` (``min``, ``argmax``, ``argmin``, ``any``,
    ``all``) and ``x.var(axis, ddof, keepdims, corrected)`` (``std``), theano/tensor/var.py:
    NumPy's put ``out`` (and var's ``dtype``) second."""
    for y in (x, x * 1):
        got = run(method(y))
        assert np.shape(got) == np.shape(want) and np.allclose(got, want), text


def test_t_any_and_t_all_take_theanos_argument_order():
    """``T.any(x, axis=None, keepdims=False)``: the third argument is keepdims, not out."""
    got = run([T.any(x > 1, 1, True), T.all(x < 2, [0, 1], True)])
    assert np.array_equal(got[0], (M > 1).any(1, keepdims=True))
    assert np.array_equal(got[1], (M < 2).all(keepdims=True))


@pytest.mark.parametrize("floatx", ["float32", "float64"])
def test_astype_method_reads_floatx_as_t_cast_does(floatx):
    theano.config.floatX = floatx
    iv = T.ivector("iv")
    for y in (iv, iv * 2):
        assert y.astype("floatX").dtype == floatx == T.cast(y, "floatX").dtype
    assert run(iv.astype("floatX"), np.array([1, 2], "int32"), iv).dtype == floatx
    assert iv.astype("int8").dtype == "int8"
    with pytest.raises(sn.DTypeError, match="'floatX' is not a dtype"):
        sn.tensor("s", shape=(2,), dtype="int32").astype("floatX")  # symnb's own: NumPy's


def test_symnb_variables_keep_numpys_methods_beside_the_layer():
    s = sn.tensor("s", shape=(5,))
    halves = np.array([0.5, 1.5, 2.5, -0.5, -2.5])
    assert np.array_equal(sn.function([s], s.round(), backend="py")(halves), np.round(halves))
    assert not hasattr(s, "norm") and not hasattr(s * 2, "size")
    with pytest.raises(TypeError):
        s.round(mode="half_away_from_zero")
    with pytest.raises(TypeError):
        s.var(corrected=True)  # NumPy's methods: no Theano argument
    with pytest.raises(sn.ArgumentError, match="out="):
        s.max(0, True)  # NumPy's order: out second
    assert s.var(0, "float32").type.dtype == "float32"  # NumPy's order: dtype second


def test_random_streams_multinomial_default_and_poisson_and_crossentropy_with_bias(rng):
    R = RandomStreams(2)
    counts = theano.function([], R.multinomial(size=(4,), n=3))()
    assert counts.shape == (4, 2) and (counts.sum(1) == 3).all()
    k = R.poisson(size=T.lvector("s"), lam=3.0, ndim=2)
    assert k.type.ndim == 2 and k.dtype == "int64"
    draws = theano.function([], R.poisson(size=(2, 10**4), lam=3.0, dtype="int32"))()
    assert draws.shape == (2, 10**4) and draws.dtype == "int32"
    assert abs(draws.mean() - 3.0) < 5 * np.sqrt(3.0 / draws.size)
    assert theano.function([], R.poisson(lam=np.array([0.0, 0.0])))().tolist() == [0, 0]
    b, y = T.vector("b"), T.ivector("y")
    X, B, Y = rng.random((2, 3)), rng.random(3), np.array([0, 2], "int32")
    nll, sm = theano.function([x, b, y], T.nnet.crossentropy_softmax_1hot_with_bias(x, b, y))(
        X, B, Y
    )
    e = np.exp(X + B)
    want = e / e.sum(1, keepdims=True)
    assert np.allclose(sm, want) and np.allclose(nll, -np.log(want[[0, 1], Y]))


@pytest.mark.parametrize("n, axis", [(1, -1), (2, 0), (3, 1), (0, 1)])
def test_extra_ops_diff_against_numpy(rng, n, axis):
    m = T.dmatrix("m")
    value = rng.normal(size=(4, 5))
    got = theano.function([m], T.extra_ops.diff(m, n, axis), mode="FAST_COMPILE")(value)
    np.testing.assert_allclose(got, np.diff(value, n, axis), rtol=1e-14)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: T.topk(x, 1, axis=(0, 1)), r"T\.topk: axis is one int, not \(0, 1\)"),
        (lambda: T.argtopk(x, 1, axis=[0, 1]), r"T\.argtopk: axis is one int, not \(0, 1\)"),
        (
            lambda: T.diagonal(x.reshape((1, 2, 3)), 0, [0, 1], 2),
            r"T\.diagonal: axis1 is one int, not \(0, 1\)",
        ),
        (lambda: T.diagonal(x, 0, 0, ()), r"T\.diagonal: axis2 is one int, not \(\)"),
        (lambda: T.extra_ops.diff(x, axis=(0, 1)), r"diff: axis is one int, not \(0, 1\)"),
        (lambda: T.split(x, [1, 1], 2, axis=(0, 1)), r"split: axis is one int, not \(0, 1\)"),
    ],
)
def test_one_axis_given_as_several_is_refused_at_the_users_line(call, message):
    """They were Python's bare "too many values to unpack (expected 1)" (or "not enough
    values" for ()), from unpacking the normalized axes: no op, no variable, no line."""
    with pytest.raises(sn.ShapeTypeError, match=message) as caught:
        call()
    assert "'x'" in str(caught.value) or "unnamed" in str(caught.value)
    assert "test_theano_names.py" in str(caught.value.location)


@pytest.mark.parametrize(
    "name, instead",
    [("bincount", "to_one_hot"), ("fill_diagonal", "T.eye"), ("unique", "np.unique")],
)
def test_extra_ops_without_an_op_say_what_to_write_instead(name, instead):
    """They were a bare AttributeError ("module has no attribute")."""
    with pytest.raises(AttributeError, match=rf"extra_ops\.{name} is not in .*{instead}"):
        getattr(T.extra_ops, name)
    assert not hasattr(T.extra_ops, "__wrapped__")


@pytest.mark.parametrize(
    "name, instead",
    [
        ("bincount", "to_one_hot"),
        ("fill_diagonal", "T.eye"),
        ("fill_diagonal_offset", r"T.eye\(n, k=offset\)"),
        ("unravel_index", "np.unravel_index"),
        ("ravel_multi_index", "np.ravel_multi_index"),
        ("bartlett", "np.bartlett"),
    ],
)
def test_extra_ops_names_theano_tensor_exported_say_what_to_write_instead(name, instead):
    """Theano 1.0's theano.tensor exported them from extra_ops: ``T.bincount`` was a bare
    AttributeError while ``T.extra_ops.bincount`` gave a hint; both give extra_ops's."""
    with pytest.raises(
        AttributeError, match=rf"theano\.tensor\.{name} \(theano\.tensor\.extra_ops.*{instead}"
    ):
        getattr(T, name)
    with pytest.raises(AttributeError, match=rf"extra_ops\.{name} is not in .*{instead}"):
        getattr(T.extra_ops, name)


def test_t_swapaxes_is_theanos():
    """``T.swapaxes(y, axis1, axis2)`` was missing although ``y.swapaxes`` worked."""
    y = T.tensor3("y")
    value = np.arange(24.0).reshape(2, 3, 4)
    got = theano.function([y], [T.swapaxes(y, 0, 2), T.swapaxes(y, -1, 1)])(value)
    np.testing.assert_array_equal(got[0], np.swapaxes(value, 0, 2))
    np.testing.assert_array_equal(got[1], np.swapaxes(value, -1, 1))


@pytest.mark.parametrize("sparse", [False, True])
def test_mgrid_and_ogrid_match_numpys_with_constant_and_symbolic_bounds(sparse):
    grid, np_grid = (T.ogrid, np.ogrid) if sparse else (T.mgrid, np.mgrid)
    n = T.lscalar("n")
    got = theano.function([n], grid[0:n, 1:6:2], mode="FAST_COMPILE")(3)
    want = np_grid[0:3, 1:6:2]
    assert len(got) == 2 and all(np.array_equal(g, w) for g, w in zip(got, want))
    fixed = grid[0:5, 0:3]
    assert [v.dtype for v in fixed] == ["int64", "int64"]
    assert all(np.array_equal(g, w) for g, w in zip(run(fixed), np_grid[0:5, 0:3]))
    assert np.allclose(run(grid[0:1:0.25]), np.arange(0, 1, 0.25))
    with pytest.raises(NotImplementedError, match="complex step"):
        grid[0:1:5j]


def test_split_takes_theanos_sizes_and_checks_their_sum():
    a = np.arange(12.0).reshape(6, 2)
    parts = run(T.split(x, [2, 4], 2), a)
    assert [p.tolist() for p in parts] == [a[:2].tolist(), a[2:].tolist()]
    assert np.array_equal(run(T.split(x, np.array([1, 1]), 2, axis=1)[1], a), a[:, 1:])
    assert T.split(x, [6], 1).type.ndim == 2  # one part: the variable, as Theano's
    sizes = T.lvector("sizes")
    f = theano.function([x, sizes], T.split(x, sizes, 3), mode="FAST_COMPILE")
    assert [p.shape for p in f(a, np.array([1, 2, 3]))] == [(1, 2), (2, 2), (3, 2)]
    with pytest.raises(sn.ShapeError, match=r"split of 'x'.*sum of splits_size > the length"):
        f(a, np.array([1, 2, 4]))
    with pytest.raises(sn.ShapeError, match=r"the length of axis 0 > the sum of splits_size"):
        run(T.split(x, [2, 3], 2), a)
    with pytest.raises(sn.ShapeError, match=r"\[2, 2\] add up to 4, not the 5 of axis 0"):
        T.split(T.constant(np.zeros((5, 2))), [2, 2], 2)
    with pytest.raises(sn.ShapeError, match=r"must be 3 \(n_splits\)"):
        T.split(x, [2, 4], 3)


@pytest.mark.parametrize("mode", ["FAST_COMPILE", "FAST_RUN"])
def test_diag_of_more_than_two_dims_is_the_diagonal_of_the_first_two_as_theanos(mode):
    """Theano 1.0's ``diag(v, k)`` is ``diagonal(v, offset=k)`` for ``v.ndim >= 2`` (axes 0
    and 1, the diagonal last); ``T.diag`` was ``sn.diag`` (NumPy's), a ShapeError "needs a
    vector or a matrix" for a tensor3."""
    t3, t4 = T.tensor3("t3"), T.tensor4("t4")
    a, b = np.arange(24.0).reshape(2, 3, 4), np.arange(120.0).reshape(2, 3, 4, 5)
    outs = [T.diag(t3), T.diag(t3, 1), T.diag(t3, -1), T.diag(t4, 2), T.diag(x, 1), T.diag(v)]
    got = theano.function([t3, t4, x, v], outs, mode=mode)(a, b, M, UNIT)
    want = [np.diagonal(a, 0, 0, 1), np.diagonal(a, 1, 0, 1), np.diagonal(a, -1, 0, 1)]
    want += [np.diagonal(b, 2, 0, 1), np.diag(M, 1), np.diag(UNIT)]
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)
    with pytest.raises(sn.ShapeError, match=r"T\.diag: 's' \(float64\(\)\) is 0-d") as e:
        T.diag(T.scalar("s"))
    assert "test_theano_names.py" in str(e.value.location)


@pytest.mark.parametrize("mode", ["FAST_COMPILE", "FAST_RUN"])
def test_tri_tril_and_triu_take_a_k_of_the_graph_as_theanos(mode):
    """Theano 1.0's ``tri(N, M, k)`` is its ``Tri`` op, N, M and k inputs as ``Eye``'s, and
    ``tril(m, k)``/``triu(m, k)`` are built on it: k an ``iscalar`` works. ``T.tril(x, k)``
    was a ShapeTypeError ("k (the diagonal) is an int"), ``T.tri`` an AttributeError."""
    N, k = T.iscalar("N"), T.iscalar("k")
    f = theano.function([x, N, k], [T.tril(x, k), T.triu(x, k), T.tri(N, N + 1, k)], mode=mode)
    for n, diagonal in [(3, -1), (2, 0), (4, 2), (1, -3)]:
        low, up, ones = f(M, n, diagonal)
        np.testing.assert_array_equal(low, np.tril(M, diagonal))
        np.testing.assert_array_equal(up, np.triu(M, diagonal))
        np.testing.assert_array_equal(ones, np.tri(n, n + 1, diagonal))
        assert ones.dtype == theano.config.floatX
    assert T.tri(3).type.shape == (3, 3) and T.tri(3, dtype="floatX").dtype == theano.config.floatX
    np.testing.assert_array_equal(T.tri(3, 4, 1, dtype="int8").eval(), np.tri(3, 4, 1, "int8"))
    with pytest.raises(sn.DTypeError, match=r"tri: k \(the diagonal\) .* not 'kf'"):
        T.tri(3, 3, T.fscalar("kf"))


@pytest.mark.parametrize("mode", ["FAST_COMPILE", "FAST_RUN"])
def test_split_refuses_negative_sizes_computed_in_the_graph(mode):
    """Theano's ``Split.perform`` raised a ValueError for a negative size; with sizes of the
    graph only their sum was checked, and a negative one cut as a slice's negative bound
    (sizes [-2, 6] of an axis of 4 gave parts of 2 and 2 rows, [5, -1] of 4 and 0)."""
    a = np.arange(8.0).reshape(4, 2)
    sizes = T.lvector("sizes")
    f = theano.function([x, sizes], T.split(x, sizes, 2), mode=mode)
    for bad, first in [([-2, 6], -2), ([5, -1], -1), ([-1, 5], -1)]:
        message = rf"split of 'x'.*splits_size must be >= 0; got {first}"
        with pytest.raises(ValueError, match=message):
            f(a, np.array(bad))
    try:
        f(a, np.array([-2, 6]))
    except ValueError as e:
        assert "test_theano_names.py" in str(e)  # the line that built the split
    assert [p.shape for p in f(a, np.array([0, 4]))] == [(0, 2), (4, 2)]


@pytest.mark.parametrize("mode", ["FAST_COMPILE", "FAST_RUN"])
def test_split_stacks_a_list_of_symbolic_sizes_as_theano(mode):
    """Theano's ``Split.make_node`` read the sizes with ``as_tensor_variable``, so
    ``T.split(x, [k, n - k], 2, axis=1)`` cut at a computed point; it was an InputError (NumPy
    asked for an array of the symbolic scalars)."""
    a = np.arange(12.0).reshape(3, 4)
    k = T.lscalar("k")
    f = theano.function([x, k], T.split(x, [k, x.shape[1] - k], 2, axis=1), mode=mode)
    for cut in (0, 1, 4):
        left, right = f(a, cut)
        np.testing.assert_array_equal(left, a[:, :cut])
        np.testing.assert_array_equal(right, a[:, cut:])
    with pytest.raises(ValueError, match=r"splits_size must be >= 0; got -1"):
        f(a, -1)
    mixed = theano.function([x, k], T.split(x, (1, k, 1), 3), mode=mode)
    assert [p.shape for p in mixed(np.zeros((5, 2)), 3)] == [(1, 2), (3, 2), (1, 2)]
    with pytest.raises(sn.DTypeError, match="split of 'x'.*splits_size is an int vector"):
        T.split(x, [k, T.dscalar("f")], 2)


def test_typed_constructors_up_to_seven_dims_and_matrix_power_and_inverse_permutation():
    assert T.ftensor5("a").type == sn.TensorType("float32", (None,) * 5)
    assert T.itensor6("b").dtype == "int32" and T.tensor7().type.ndim == 7
    assert [v.type.ndim for v in T.ltensor5s("c", "d")] == [5, 5]
    assert [v.dtype for v in (T.btensor5(), T.dtensor5(), T.ltensor5())] == [
        "int8",
        "float64",
        "int64",
    ]
    m = np.array([[1.0, 2.0], [3.0, 4.0]])
    xm = T.matrix("xm")
    assert np.allclose(run(T.nlinalg.matrix_power(xm, 3), m, xm), np.linalg.matrix_power(m, 3))
    perm = np.array([2, 0, 3, 1])
    p = T.lvector("p")
    got = run(T.inverse_permutation(p), perm, p)
    assert np.array_equal(got[perm], np.arange(4))


def test_tri_gamma_and_erfcinv_are_theanos_with_their_gradients():
    """Theano 1.0's ``T.tri_gamma`` (psi', the derivative of ``T.psi``) and ``T.erfcinv``
    (erfc's inverse, exact in its tails where erfinv(1 - x) is inf) were bare
    AttributeErrors; both take Theano's upgrade_to_float (tri_gamma of a float32 is float32,
    where SciPy's polygamma gives float64)."""
    import scipy.special

    values = np.array([0.5, 2.0, 7.5])
    tails = np.array([1e-17, 1e-12, 0.3, 1.0, 1.7])
    got = run([T.tri_gamma(v), T.grad(T.sum(T.tri_gamma(v)), v)], values, v)
    np.testing.assert_allclose(got[0], scipy.special.polygamma(1, values), rtol=1e-12)
    np.testing.assert_allclose(got[1], scipy.special.polygamma(2, values), rtol=1e-12)
    got = run([T.erfcinv(v), T.grad(T.sum(T.erfcinv(v)), v)], tails, v)
    want = scipy.special.erfcinv(tails)
    np.testing.assert_allclose(got[0], want, rtol=1e-14)
    np.testing.assert_allclose(got[1], -np.sqrt(np.pi) / 2 * np.exp(want**2), rtol=1e-12)
    for make, dtype in [(T.fvector, "float32"), (T.bvector, "float32"), (T.ivector, "float64")]:
        assert T.tri_gamma(make()).dtype == dtype and T.erfcinv(make()).dtype == dtype
    i8 = T.bvector("i8")
    got = theano.function([i8], T.tri_gamma(i8))(np.array([1, 3], "int8"))
    assert got.dtype == "float32"
    np.testing.assert_allclose(got, scipy.special.polygamma(1, [1.0, 3.0]), rtol=1e-6)


def test_inverse_permutation_keeps_perms_dtype():
    """Theano's ``inverse_permutation`` was ``permute_row_elements(arange(n,
    dtype=perm.dtype), perm, inverse=True)``: of an ivector, int32 (its test_dim1 checks it),
    not argsort's int64."""
    perm = np.array([[2, 0, 3, 1], [1, 3, 0, 2]])
    for make, dtype in [(T.ivector, "int32"), (T.bmatrix, "int8"), (T.lvector, "int64")]:
        p = make("p")
        inv = T.inverse_permutation(p)
        value = perm[0] if p.type.ndim == 1 else perm
        got = run(inv, value.astype(dtype), p)
        assert inv.dtype == dtype and got.dtype == dtype
        assert np.array_equal(np.take_along_axis(got, value, -1), np.indices(value.shape)[-1])


@pytest.mark.parametrize(
    "module, name, instead",
    [
        ("", "choose", "T.switch"),
        ("", "permute_row_elements", r"y\[\.\.\., x\] .*take_along_axis"),
        ("", "chi2sf", r"scipy\.stats\.chi2\.sf\(x, k\) .*as_op"),
        ("", "j0", r"scipy\.special\.j0\(x\) .*no Bessel function.*as_op"),
        ("", "jv", r"scipy\.special\.jv\(v, x\) .*T\.dscalar, T\.dvector"),
        ("", "i1", r"scipy\.special\.i1\(x\) .*as_op"),
        ("nlinalg.", "eigh", "np.linalg.eigh"),
        ("nlinalg.", "pinv", "matrix_inverse"),
        ("slinalg.", "solve_triangular", "solve"),
        ("nnet.abstract_conv.", "conv2d_grad_wrt_inputs", "T.grad"),
        ("nnet.abstract_conv.", "bilinear_upsampling", "T.repeat"),
        ("nnet.neighbours.", "images2neibs", "slices of the image"),
        ("nnet.abstract_conv.", "conv3d", r"T\.nnet\.conv2d of each depth slice"),
        ("nnet.", "conv3d", r"T\.nnet\.conv2d of each depth slice"),
        ("nnet.", "conv3d2d", r"T\.nnet\.conv2d of each depth slice"),
        ("nnet.", "ConvTransp3D", r"T\.nnet\.conv2d of each depth slice"),
        ("nnet.", "conv2d_transpose", "T.grad of a conv2d with respect to its input"),
        ("nnet.", "Softmax", "symnb's ops"),
        ("signal.pool.", "pool_3d", "pool_2d over the last two dims"),
        ("signal.pool.", "MaxPoolGrad", "T.grad of it"),
    ],
)
def test_theano_names_without_an_op_say_what_to_write_instead(module, name, instead):
    owner = T
    for part in module.split(".")[:-1]:
        owner = getattr(owner, part)
    said = rf"theano\.tensor\.{module}{name} is not in .*{instead}"
    with pytest.raises(AttributeError, match=said):
        getattr(owner, name)
    with pytest.raises(AttributeError, match=said):
        exec(f"T.{module}{name}", {"T": T})  # the attribute, as written in code
    assert not hasattr(owner, "__wrapped__") and not hasattr(owner, name)
    assert getattr(owner, name, "default") == "default"
    # ``from theano.tensor.nlinalg import eigh``: an ImportError with the same hint (Python
    # replaced the module __getattr__'s AttributeError with a bare "cannot import name")
    with pytest.raises(ImportError, match=said) as caught:
        exec(f"from {owner.__name__} import {name}", {})
    assert isinstance(caught.value, sn.SymnbError) and caught.value.name == name


@pytest.mark.parametrize(
    "module, name, instead",
    [
        ("tensor", "bincount", "to_one_hot"),
        ("tensor.extra_ops", "bincount", "to_one_hot"),
        ("tensor.opt", "register_canonicalize", "symnb.opt"),
        ("tensor.opt", "local_useless_elemwise", "Mode"),
    ],
)
def test_missing_names_from_import_keep_their_hint(module, name, instead):
    """``from theano.tensor.opt import register_canonicalize`` (and the other names the
    layer lacks, in a function too) is an ImportError with the attribute's hint."""
    with pytest.raises(ImportError, match=rf"{name}.*{instead}"):
        exec(f"from symnb.compat.theano.{module} import {name}", {})

    def imports():
        from symnb.compat.theano.tensor.opt import register_canonicalize  # noqa: F401

    with pytest.raises(ImportError, match="register_canonicalize: Theano's graph rewrites"):
        imports()
    with pytest.raises(AttributeError, match=rf"{name}.*{instead}"):
        getattr(importlib.import_module(f"symnb.compat.theano.{module}"), name)


def test_take_and_the_take_method_wrap_and_clip_as_theanos(backend):
    """Theano's ``take(a, indices, axis=None, mode='raise')`` (and ``x.take``): "wrap" takes
    each index modulo the axis's length, "clip" limits it to [0, length - 1], as np.take;
    the gradient goes to the element each index read."""
    a = np.arange(12.0).reshape(3, 4)
    iv = np.array([0, 5, -7])
    m, i = T.dmatrix("m"), T.lvector("i")
    outs = [
        T.take(m, i, axis=1, mode="clip"),
        T.take(m, i, axis=0, mode="wrap"),
        m.take(i, axis=1, mode="wrap"),
        (m * 1).take(i, mode="clip"),
        T.grad(T.sum(T.take(m, i, axis=1, mode="wrap") * [[1.0, 2.0, 3.0]]), m),
    ]
    got = sn.function([m, i], outs, backend=backend)(a, iv)
    grad = np.zeros_like(a)
    np.add.at(grad, (slice(None), np.mod(iv, 4)), [1.0, 2.0, 3.0])
    wants = [
        np.take(a, iv, axis=1, mode="clip"),
        np.take(a, iv, axis=0, mode="wrap"),
        np.take(a, iv, axis=1, mode="wrap"),
        np.take(a, iv, mode="clip"),
        grad,
    ]
    for g, want in zip(got, wants):
        np.testing.assert_array_equal(g, want)
    with pytest.raises(sn.ArgumentError, match="mode='warp' is not a mode.*'wrap', 'clip'"):
        m.take(i, mode="warp")
