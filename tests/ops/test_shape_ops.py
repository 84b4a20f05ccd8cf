"""Layout ops against NumPy: flatten, flip, roll, pad, repeat, tile, tril/triu, diag,
dimshuffle and the method sugar; static shapes with named dims; gradients."""

import numpy as np
import pytest

import symnb as sn
from tests.helpers import check, random_array, reference_backend
from tests.helpers import run as run_on


def _sym_and_ref(name, **kwargs):
    """The symbolic op and NumPy's function, called with the same keyword arguments."""
    return (
        lambda x: getattr(sn, name)(x, **kwargs),
        lambda a: getattr(np, name)(a, **kwargs),
    )


# id -> (symbolic, reference, input shape)
ROWS = {
    "flatten": (sn.flatten, np.ravel, (2, 3, 4)),
    "flatten_0d": (sn.flatten, np.ravel, ()),
    "flatten_empty": (sn.flatten, np.ravel, (0, 3)),
    "flatten_ndim2": (lambda x: sn.flatten(x, 2), lambda a: a.reshape(2, -1), (2, 3, 4)),
    "flip_all": (*_sym_and_ref("flip"), (2, 3, 4)),
    "flip_neg": (*_sym_and_ref("flip", axis=-1), (2, 3, 4)),
    "flip_tuple": (*_sym_and_ref("flip", axis=(0, 2)), (2, 3, 4)),
    "roll_flat": (*_sym_and_ref("roll", shift=5), (3, 4)),
    "roll_axis": (*_sym_and_ref("roll", shift=-1, axis=1), (3, 4)),
    "roll_axes": (*_sym_and_ref("roll", shift=(1, 2), axis=(0, -1)), (2, 3, 4)),
    "roll_same_axis": (*_sym_and_ref("roll", shift=(1, 2), axis=(1, 1)), (2, 3)),
    "roll_empty": (*_sym_and_ref("roll", shift=2, axis=0), (0, 3)),
    "pad_int": (*_sym_and_ref("pad", pad_width=1), (3, 4)),
    "pad_pair": (*_sym_and_ref("pad", pad_width=(2, 0)), (3,)),
    "pad_axes": (*_sym_and_ref("pad", pad_width=((0, 1), (2, 3))), (2, 2)),
    "pad_value": (*_sym_and_ref("pad", pad_width=1, constant_values=7), (2, 0)),
    "repeat_flat": (*_sym_and_ref("repeat", repeats=2), (2, 3)),
    "repeat_axis": (*_sym_and_ref("repeat", repeats=3, axis=-1), (2, 3)),
    "repeat_zero": (*_sym_and_ref("repeat", repeats=0, axis=0), (2, 3)),
    "tile_short": (*_sym_and_ref("tile", reps=2), (2, 3)),
    "tile_long": (*_sym_and_ref("tile", reps=(2, 1, 3)), (2, 3)),
    "tile_0d": (*_sym_and_ref("tile", reps=(3,)), ()),
    "tril": (*_sym_and_ref("tril"), (4, 4)),
    "tril_k": (*_sym_and_ref("tril", k=-1), (2, 3, 5)),
    "triu_k": (*_sym_and_ref("triu", k=2), (3, 5)),
    "tril_vec": (*_sym_and_ref("tril", k=-1), (4,)),
    "triu_vec": (*_sym_and_ref("triu"), (3,)),
    "diag_vec": (*_sym_and_ref("diag"), (3,)),
    "diag_vec_k": (*_sym_and_ref("diag", k=-2), (3,)),
    "diag_mat": (*_sym_and_ref("diag", k=1), (3, 5)),
    "diag_mat_neg": (*_sym_and_ref("diag", k=-1), (4, 2)),
    "squeeze": (sn.squeeze, np.squeeze, (1, 3, 1)),
}


@pytest.mark.parametrize("name", sorted(ROWS))
@pytest.mark.parametrize("dtype", ["float64", "int8", "bool"])
def test_layout_ops_match_numpy(name, dtype, rng, backend):
    op, ref, shape = ROWS[name]
    a = random_array(rng, shape, dtype)
    check(run_on(op, a, backend=backend), ref(a))


def test_dimshuffle_theano_style(rng, backend):
    a = random_array(rng, (3, 1, 4), "float32")
    check(run_on(lambda x: sn.dimshuffle(x, 2, "x", 0), a, backend=backend), a[:, 0].T[:, None])
    check(run_on(lambda x: x.dimshuffle((0, "x", 1, 2)), a, backend=backend), a[:, None])
    m = sn.tensor("m", shape=("batch", 1, 4))
    assert sn.dimshuffle(m, 2, "x", 0).type.shape == (4, 1, "batch")
    with pytest.raises(sn.ShapeError, match="cannot drop axis 0"):
        sn.dimshuffle(m, 1, 2)
    with pytest.raises(sn.ShapeError, match="dimshuffle: 3 is neither 'x' nor an axis"):
        sn.dimshuffle(m, 3)
    with pytest.raises(
        sn.ShapeError, match=r"an axis of 's' \(float64\(\)\) \(it is 0-d: no axes\)"
    ):
        sn.dimshuffle(sn.scalar("s"), 0)  # it said "(0..-1)"


def test_static_shapes_follow_the_dims():
    x = sn.tensor("x", shape=("batch", 3, None))
    assert sn.flatten(x).type.shape == (None,)
    y = sn.tensor("y", shape=("n", 4))
    assert str(sn.flatten(y).type) == "f64[n*4]"
    assert str(sn.repeat(y, 2, axis=0).type) == "f64[n*2,4]"
    assert str(sn.tile(y, (1, 3)).type) == "f64[n,12]"
    assert str(sn.pad(y, ((1, 2), (0, 0))).type) == "f64[n+3,4]"
    assert sn.flip(x, 0).type == x.type and sn.roll(x, 1).type == x.type
    assert sn.diag(sn.tensor("v", shape=("k",))).type.shape == ("k", "k")
    assert sn.diag(sn.tensor("s", shape=("k", "k"))).type.shape == ("k",)
    assert sn.diag(sn.tensor("r", shape=(3, 5)), k=3).type.shape == (2,)
    assert sn.flatten(x, 2).type.shape == ("batch", None)


def test_a_set_or_a_dict_is_no_target_shape():
    """NumPy refuses both; ``x.reshape({6, 2})`` reshaped to the set's order, (2, 6)."""
    x = sn.tensor("x", shape=(3, 4))
    for call in (lambda: x.reshape({6, 2}), lambda: sn.reshape(x, {6: 1, 2: 1})):
        with pytest.raises(sn.ShapeTypeError) as caught:
            call()
        message = str(caught.value)
        assert "reshape of 'x' (float64(3, 4)): the target shape is a tuple of sizes" in message
        assert "(a set)" in message or "(a dict)" in message
        assert caught.value.location.filename == __file__


def test_a_float_size_or_axis_is_refused_naming_it():
    """``x.reshape(12.0)`` and ``sn.roll(x, 1, axis=1.0)`` were "'float' object is not
    iterable" from inside symnb; a float in a tuple already named the size."""
    x = sn.tensor("x", shape=(2, 3, 4))
    m = sn.tensor("m", shape=(3, 4))
    size = "reshape: a size is an int, a dim name or an int scalar, not"
    axis = "roll: axis is an int, a tuple of ints or None, not"
    calls = [
        (lambda: m.reshape(12.0), f"{size} 12.0"),
        (lambda: sn.reshape(m, 5.0), f"{size} 5.0"),
        (lambda: m.reshape((12.0,)), f"{size} 12.0"),
        (lambda: sn.roll(x, 1, axis=1.0), f"{axis} 1.0"),
        (lambda: sn.roll(x, 1, axis=1.5), f"{axis} 1.5"),
    ]
    for call, message in calls:
        with pytest.raises(sn.ShapeTypeError) as caught:
            call()
        assert str(caught.value).startswith(message), caught.value
        assert caught.value.location.filename == __file__
    assert "(for 'x' (float64(2, 3, 4)))" in str(caught.value)
    assert m.reshape(np.int64(12)).type.shape == (12,)
    assert sn.roll(x, 1, axis=np.int64(1)).type == x.type


def test_reshape_to_none_keeps_the_shape_as_numpy_2_does(backend):
    a = np.arange(6.0).reshape(2, 3)
    x = sn.tensor("x", shape=(None, 3))
    for out in (x.reshape(None), sn.reshape(x, None), np.reshape(x, None)):
        assert out.type.shape == (None, 3)
        np.testing.assert_array_equal(sn.function([x], out, backend=backend)(a), a.reshape(None))


def test_layout_errors_are_clear():
    m = sn.tensor("m", shape=(3, 4))
    with pytest.raises(
        sn.ShapeError, match=r"tril: needs at least 1 dim, 's' \(float64\(\)\) is 0-d"
    ):
        sn.tril(sn.scalar("s"))
    with pytest.raises(sn.ShapeError, match="diag: needs a vector or a matrix"):
        sn.diag(sn.tensor3("t"))
    with pytest.raises(sn.ShapeTypeError, match=r"diag: k \(the diagonal\) is an int, not 1.5"):
        sn.diag(sn.vector("v"), 1.5)  # NumPy refuses a float; it was truncated to 1
    with pytest.raises(sn.ShapeTypeError, match=r"not 1.9 \(for 'm' \(float64\(3, 4\)\)\)"):
        sn.diag(m, 1.9)
    assert sn.diag(m, np.int64(1)).type.shape == (3,)
    with pytest.raises(sn.ShapeError, match="pad: .* does not fit 'm'"):
        sn.pad(m, ((1, 1), (1, 1), (1, 1)))
    for pad in (lambda: sn.pad(m, 1, mode="reflect"), lambda: np.pad(m, 1, mode="edge")):
        # (a NotImplementedError still, but it was raised bare: no variable, no line)
        with pytest.raises(NotImplementedError, match="pad of 'm' .*: only mode='constant'") as e:
            pad()
        assert "test_shape_ops.py" in str(e.value.location) and "\n  at " in str(e.value)
    with pytest.raises(sn.ShapeError, match="flatten: cannot make 'm' .* 3-d"):
        sn.flatten(m, 3)
    with pytest.raises(sn.ShapeError, match="roll: 2 shifts for 1 axes"):
        sn.roll(m, (1, 2), axis=0)
    with pytest.raises(sn.ShapeError, match="roll: axis 2 is out of range for 'm'"):
        sn.roll(m, 1, axis=2)
    with pytest.raises(sn.ShapeError, match="repeat: axis 2 is out of range"):
        sn.repeat(m, 2, axis=2)
    with pytest.raises(sn.ShapeError, match="repeat: 2 counts for axis 0 of 'm'.* 3 elements"):
        sn.repeat(m, [1, 2], axis=0)
    with pytest.raises(TypeError, match="repeat: repeats must be an int"):
        sn.repeat(m, 1.5, axis=0)


@pytest.mark.parametrize("fn", [sn.tril, sn.triu])
@pytest.mark.parametrize("k", [1.5, np.float64(1.7), "1", True, None, [0]])
def test_tril_triu_take_an_int_k_as_diag_does(fn, k):
    # int(k) truncated 1.5 and parsed "1" to the diagonal 1 (NumPy's triu(M, 1.5) is zeros)
    m = sn.tensor("m", shape=(3, 4))
    name = fn.__name__
    refused = rf"{name}: k \(the diagonal\) is an int, not "
    with pytest.raises(sn.ShapeTypeError, match=refused) as e:
        fn(m, k=k)
    assert f"not {k!r} (for 'm' (float64(3, 4)))" in str(e.value)
    assert e.value.location.filename == __file__
    a = np.arange(12.0).reshape(3, 4)
    out = fn(m, np.int32(-1))
    np.testing.assert_array_equal(sn.function([m], out)(a), getattr(np, name)(a, -1))


def test_tril_triu_take_a_k_of_the_graph(backend):
    """Theano's ``tril``/``triu`` take k as an integer scalar of the graph (its ``Tri`` has k
    as an input, as ``Eye``); they were a ShapeTypeError "k (the diagonal) is an int"."""
    m, v, k = sn.tensor("m", shape=(3, 4)), sn.tensor("v", shape=(3,)), sn.scalar("k", "int32")
    weights = np.arange(1.0, 13.0).reshape(3, 4)
    (g,) = sn.grad(sn.sum(sn.tril(m, k) * weights), [m])
    outs = [sn.tril(m, k), sn.triu(m, k), sn.tril(v, k), sn.triu(v, k), g]
    assert [o.type.shape for o in outs] == [(3, 4), (3, 4), (3, 3), (3, 3), (3, 4)]
    f = sn.function([m, v, k], outs, backend=backend)
    a, b = np.arange(12.0).reshape(3, 4) - 5, np.array([1.0, -2.0, 3.0])
    for diagonal in (-3, -1, 0, 1, 2, 6):
        got = f(a, b, diagonal)
        want = [np.tril(a, diagonal), np.triu(a, diagonal), np.tril(b, diagonal)]
        want += [np.triu(b, diagonal), np.tril(weights, diagonal)]
        for g_, w in zip(got, want, strict=True):
            np.testing.assert_array_equal(g_, w)
    assert sn.tril(m, sn.constant(1)).owner.op.k == 1  # a constant k is the op's prop
    with pytest.raises(sn.DTypeError, match=r"triu of 'm' .*an integer scalar, not 'kf'") as e:
        sn.triu(m, sn.scalar("kf", "float32"))
    assert e.value.location.filename == __file__


PAD_VALUES = [
    3,
    np.float32(2.5),
    np.array(3.0),
    (1, 2),
    [1, 2],
    np.array([1.5, -2.0]),
    ((1, 2), (3, 4)),
    [[5, 6]],
    [[7], [8]],
    (4, 4),
]


@pytest.mark.parametrize("value", PAD_VALUES, ids=repr)
def test_pad_takes_every_form_of_constant_values(value, rng, backend):
    """np.pad's constant_values: a number, (before, after), one pair per axis, or what
    broadcasts to (ndim, 2); lists and arrays as well as tuples, and its gradient."""
    a = random_array(rng, (2, 3), "float64")
    widths = ((1, 2), (2, 1))
    check(
        run_on(lambda x: sn.pad(x, widths, constant_values=value), a, backend=backend),
        np.pad(a, widths, constant_values=value),
    )
    check(
        run_on(lambda x: np.pad(x, 1, constant_values=value), a, backend=backend),
        np.pad(a, 1, constant_values=value),
    )
    with reference_backend():
        sn.check_grad(lambda x: sn.pad(x, widths, constant_values=value) ** 2, [a])


def test_pad_values_are_one_prop_that_compares_by_value():
    x = sn.matrix("x")
    assert sn.pad(x, 1, constant_values=np.array(3.0)).owner.op.value == 3.0
    assert sn.pad(x, 1, constant_values=[4, 4]).owner.op.value == 4
    assert sn.pad(x, 1, constant_values=[1, 2]).owner.op.value == ((1, 2), (1, 2))
    assert hash(sn.pad(x, 1, constant_values=np.array([[1.0, 2.0]])).owner.op)
    with pytest.raises(sn.ShapeError, match=r"constant_values \[1, 2, 3\] does not fit 'x'"):
        sn.pad(x, 1, constant_values=[1, 2, 3])
    with pytest.raises(sn.InputError, match="known when the graph is built, not 's'"):
        sn.pad(x, 1, constant_values=sn.scalar("s"))
    with pytest.raises(sn.InputError, match="constant_values must be numbers"):
        sn.pad(x, 1, constant_values="a")


def test_method_sugar_for_layout(rng, backend):
    a = random_array(rng, (2, 1, 3), "float64")
    check(run_on(lambda x: x.flatten(), a, backend=backend), a.flatten())
    check(run_on(lambda x: x.ravel(), a, backend=backend), a.ravel())
    check(run_on(lambda x: x.squeeze(), a, backend=backend), a.squeeze())
    check(run_on(lambda x: x.squeeze(1), a, backend=backend), a.squeeze(1))
    check(run_on(lambda x: x.repeat(2, axis=0), a, backend=backend), a.repeat(2, axis=0))
    check(run_on(lambda x: x.swapaxes(0, -1), a, backend=backend), a.swapaxes(0, -1))
    check(run_on(lambda x: x.round(), a * 3, backend=backend), (a * 3).round())
    assert sn.tensor("t", shape=(2, 1, 3)).squeeze().type.shape == (2, 3)


# -- gradients ---------------------------------------------------------------------------
GRADS = {
    "flatten": (sn.flatten, (2, 3)),
    "flatten_ndim2": (lambda x: sn.flatten(x, 2), (2, 3, 2)),
    "flip": (lambda x: sn.flip(x, -1), (2, 3)),
    "roll": (lambda x: sn.roll(x, (1, -2), axis=(0, 1)), (2, 3)),
    "roll_flat": (lambda x: sn.roll(x, 4), (2, 3)),
    "pad": (lambda x: sn.pad(x, ((1, 0), (2, 1)), constant_values=3.0), (2, 3)),
    "repeat": (lambda x: sn.repeat(x, 2, axis=1), (2, 3)),
    "repeat_flat": (lambda x: sn.repeat(x, 3), (2, 2)),
    "tile": (lambda x: sn.tile(x, (2, 1, 2)), (2, 3)),
    "tril": (lambda x: sn.tril(x, -1), (3, 3)),
    "triu": (lambda x: sn.triu(x, 1), (2, 3, 4)),
    "tril_vec": (lambda x: sn.tril(x) * np.arange(9.0).reshape(3, 3), (3,)),
    "diag_vec": (lambda x: sn.diag(x, 1), (3,)),
    "diag_mat": (lambda x: sn.diag(x, -1), (4, 3)),
    "dimshuffle": (lambda x: sn.dimshuffle(x, 1, "x", 0), (2, 3)),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_layout_gradients(name, rng):
    fn, shape = GRADS[name]
    with reference_backend():
        sn.check_grad(fn, [rng.normal(size=shape)])


def test_tril_and_triu_of_a_vector_are_square_as_in_numpy(backend):
    """np.tril([1, 2, 3]) is 3 x 3: the vector is each row of the square, then its triangle
    (NumPy broadcasts it); symnb refused a vector ("needs at least 2 dims")."""
    v = sn.tensor("v", shape=("n",))
    assert sn.tril(v).type.shape == ("n", "n") and sn.triu(v, 1).type.shape == ("n", "n")
    a = np.array([1.0, 2.0, 3.0])
    got = sn.function([v], [sn.tril(v), sn.triu(v, 1), sn.tril(v, 5)], backend=backend)(a)
    for g, want in zip(got, [np.tril(a), np.triu(a, 1), np.tril(a, 5)]):
        np.testing.assert_array_equal(g, want)


def test_gradients_keep_named_dims():
    x = sn.tensor("x", shape=("n", 3))
    for out in (sn.pad(x, 1), sn.repeat(x, 2, axis=0), sn.tile(x, (2, 2)), sn.flatten(x)):
        (g,) = sn.grad(sn.sum(out), [x])
        assert g.type == x.type, (out, g.type)


@pytest.mark.parametrize("axis", [2, -3, (0, 3), (1, -1, 5)])
def test_expand_dims_refuses_an_axis_beyond_the_result(axis):
    x = sn.vector("x")
    with pytest.raises(sn.ShapeError, match="expand_dims: axis -?[0-9]+ is out of range"):
        sn.expand_dims(x, axis)
    assert sn.expand_dims(x, -2).type.shape == (1, None)
    assert sn.expand_dims(x, (0, 2)).type.shape == (1, None, 1)
    with pytest.raises(sn.ShapeError, match="repeated axis"):
        sn.expand_dims(x, (0, -3))


def test_pad_of_a_0d_variable_is_itself():
    """np.pad(np.array(3.0), 1) is array(3.0): a 0-d array has no axes to pad (symnb raised a
    DTypeError quoting NumPy's "`pad_width` must be of integral type")."""
    x = sn.tensor("x", shape=())
    for out in (sn.pad(x, 1), np.pad(x, (1, 2), constant_values=5)):
        got = sn.function([x], out, backend="py")(np.array(3.0))
        assert got.shape == () and got == 3.0


def test_result_shape_is_the_ops_shape_and_raises_where_the_op_would():
    """``ResultShape`` computes a result's shape from its inputs' shapes (no value): a
    matmul's with broadcast batch axes, a reduction's, a max over an empty axis refused as
    NumPy refuses it, a transpose's."""
    from symnb.ops.linalg import matmul
    from symnb.ops.reduce import Max, Sum
    from symnb.ops.shape import DimShuffle, ResultShape

    def shape_of(op, ndim, *shapes):
        return ResultShape(op, ndim).perform(*[np.array(s, dtype=np.int64) for s in shapes])

    np.testing.assert_array_equal(shape_of(matmul, 4, (2, 1, 3, 4), (5, 4, 6)), [2, 5, 3, 6])
    np.testing.assert_array_equal(shape_of(matmul, 1, (4,), (4, 6)), [6])
    with pytest.raises(ValueError, match=r"inner dims differ: \(3, 4\) @ \(5, 2\)"):
        shape_of(matmul, 2, (3, 4), (5, 2))
    np.testing.assert_array_equal(shape_of(Sum((1,), True), 2, (3, 0)), [3, 1])
    with pytest.raises(ValueError, match="zero-size array to reduction operation max"):
        shape_of(Max((1,)), 1, (3, 0))
    np.testing.assert_array_equal(shape_of(DimShuffle((1, "x", 0)), 3, (3, 4)), [4, 1, 3])


def test_rule_shape_applies_the_ops_shape_rule_when_the_function_runs():
    """``RuleShape`` gives a result's shape by the op's own shape rule applied to its
    inputs' shapes (an integer or boolean input's value where the rule reads it: a mask's
    count), -1 for an axis the rule leaves unknown, and all -1 where the rule refuses the
    inputs (the computation raises its own error)."""
    from symnb.ops.shape import RuleShape

    x = sn.tensor("x", shape=(None, None))
    i = sn.tensor("i", shape=(None,), dtype="int64")
    m = sn.tensor("m", shape=(None, None), dtype="bool")
    n = sn.tensor("n", shape=(), dtype="int64")

    def shape_of(out, *values):
        node = out.owner
        kinds = [(v.type.dtype.name, v.type.dtype.kind in "biu") for v in node.inputs]
        return RuleShape(node.op, out.index, out.type.ndim, kinds).perform(*values)

    X = np.array([3, 4], dtype=np.int64)  # x's shape: a float input is given by its shape
    np.testing.assert_array_equal(shape_of(x[1:, ::2], X), [2, 2])
    np.testing.assert_array_equal(shape_of(x[1:, ::2], np.array([0, 4])), [0, 2])
    np.testing.assert_array_equal(shape_of(x[i], X, np.array([0, 2, 2, 1, 0])), [5, 4])
    mask = np.array([[1, 0, 1, 1], [0, 0, 1, 0], [1, 1, 1, 1]], bool)
    np.testing.assert_array_equal(shape_of(x[m], X, mask), [8])
    np.testing.assert_array_equal(shape_of(sn.svd(x, compute_uv=False), X), [3])
    np.testing.assert_array_equal(shape_of(x[:n], X, np.int64(2)), [2, 4])  # (a bound's)
    np.testing.assert_array_equal(shape_of(x[:n], X, np.int64(5)), [3, 4])
    np.testing.assert_array_equal(shape_of(x[n::2], X, np.int64(-2)), [1, 4])
    np.testing.assert_array_equal(shape_of(sn.reshape(x, (n, -1)), X, np.int64(5)), [-1, -1])


def test_shape_from_reads_integer_scalars_and_leaves_an_unknown_length_unchecked():
    """``ShapeFrom`` reads a length off an integer scalar source (axis None: an entry of a
    ``RuleShape`` vector); a negative one (the rule could not tell the length) leaves the
    axes made of it unchecked, and the others are checked."""
    from symnb.core.dims import parse_dim
    from symnb.ops.checks import ShapeFrom

    names = (("n0", ((0, None),)), ("n1", ((1, None),)))
    check = ShapeFrom("the point", ("n0", parse_dim("n1 + 2")), names)
    x = np.ones((5, 3))
    np.testing.assert_array_equal(check.perform(x, np.int64(5), np.int64(1)), x)
    np.testing.assert_array_equal(check.perform(x, np.int64(-1), np.int64(1)), x)
    with pytest.raises(sn.ShapeError, match=r"the point \(\(5, 3\), not \(\?, 4\), when the"):
        check.perform(x, np.int64(-1), np.int64(2))
    with pytest.raises(sn.ShapeError, match=r"the point \(\(5, 3\), not \(4, 3\), when the"):
        check.perform(x, np.int64(4), np.int64(1))
