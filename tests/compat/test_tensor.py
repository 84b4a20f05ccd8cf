"""``theano.tensor`` functions against NumPy: values and dtypes, with Theano's rules where
they differ from NumPy's (floatX, integer division, dot, softmax of a vector, conv2d's
flipped filters, pool_2d's partial windows)."""

import re
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.linalg

import symnb as sn
import symnb.compat.theano as theano
import symnb.compat.theano.tensor as T
from symnb.compat.theano.tensor.nnet import conv
from symnb.compat.theano.tensor.signal import downsample, pool
from tests.helpers import run_python


@pytest.fixture(autouse=True)
def _on_the_reference_backend():
    """These check the layer's mapping, which is the same on every backend: they compile on
    the NumPy reference ("py", Theano's FAST_COMPILE); the training programs run on "c"."""
    theano.config.mode = "FAST_COMPILE"


def run(inputs, output, *values):
    return theano.function(inputs, output, mode="FAST_COMPILE")(*values)


@pytest.mark.parametrize(
    "make, dtype, shape",
    [
        (T.scalar, "float64", ()),
        (T.lscalar, "int64", ()),
        (T.iscalar, "int32", ()),
        (T.dscalar, "float64", ()),
        (T.fscalar, "float32", ()),
        (T.vector, "float64", (None,)),
        (T.ivector, "int32", (None,)),
        (T.lvector, "int64", (None,)),
        (T.dvector, "float64", (None,)),
        (T.fvector, "float32", (None,)),
        (T.matrix, "float64", (None, None)),
        (T.imatrix, "int32", (None, None)),
        (T.dmatrix, "float64", (None, None)),
        (T.fmatrix, "float32", (None, None)),
        (T.tensor3, "float64", (None,) * 3),
        (T.tensor4, "float64", (None,) * 4),
        (T.row, "float64", (1, None)),
        (T.col, "float64", (None, 1)),
    ],
)
def test_constructors_give_theano_dtypes_and_broadcastable_dims(make, dtype, shape):
    var = make("v")
    assert (var.name, var.dtype.name, var.type.shape) == ("v", dtype, shape)


@pytest.mark.parametrize("bad", [False, "", 0])
def test_a_dtype_that_is_no_dtype_is_refused_not_taken_for_floatx(bad):
    """``dtype or floatX`` read False, "" and 0 as no dtype (float64 variables)."""
    for build, named in [
        (lambda: T.matrix("m", dtype=bad), "T.matrix"),
        (lambda: T.zeros((2,), dtype=bad), "zeros"),
        (lambda: T.TensorType(bad, (False,)), "TensorType"),
        (lambda: T.extra_ops.to_one_hot(T.lvector("y"), 3, dtype=bad), "one_hot"),
    ]:
        with pytest.raises(sn.DTypeError, match=f"^{named}.* is not a dtype"):
            build()


def test_a_name_is_a_string_as_in_theano():
    """Theano's ``Variable.__init__``: "name must be a string". ``T.vector(7)`` could not
    be printed (``__str__ returned non-string``) and backend "c" failed compiling it."""
    for build in (
        lambda: T.vector(7),
        lambda: T.TensorType("float64", (False,))(1.5),
        lambda: theano.shared(np.zeros(2), name=("W",)),
        lambda: T.vector("v").copy(name=3),
    ):
        with pytest.raises(TypeError, match=r"name must be a string \(or None\), not "):
            build()
    assert str(T.vector("v")) == "v" and T.vector("v").copy(name="w").name == "w"


def test_plural_constructors_take_a_count_as_any_integer():
    for count in (3, np.int64(3)):
        made = T.fmatrices(count)
        assert [(v.name, v.dtype.name, v.type.ndim) for v in made] == [(None, "float32", 2)] * 3
    a, b = T.dvectors("a", "b")
    assert (a.name, b.name, a.dtype.name) == ("a", "b", "float64")


def test_plural_constructors_split_one_string_into_one_letter_names_as_theanos_multi():
    """Theano's ``_multi``: one string alone is a sequence of names, ``x, y = T.vectors('xy')``
    (its docstrings and tests spell it so); one list alone too; one letter is one variable."""
    x, y = T.vectors("xy")
    assert [(v.name, v.type.ndim, v.dtype.name) for v in (x, y)] == [
        ("x", 1, "float64"),
        ("y", 1, "float64"),
    ]
    assert [v.name for v in T.iscalars("ijk")] == ["i", "j", "k"]
    assert [v.dtype.name for v in T.iscalars("ijk")] == ["int32"] * 3
    assert [v.name for v in T.dmatrices(["W", "b"])] == ["W", "b"]
    assert [v.name for v in T.ftensor3s(("u", "v"))] == ["u", "v"]
    assert [v.name for v in T.matrices("ab", "c")] == ["ab", "c"]
    single = T.scalars("s")
    assert isinstance(single, sn.Variable) and single.name == "s"
    assert T.vectors() == []


def test_floatx_is_settable_and_shared_with_symnb():
    theano.config.floatX = "float32"
    assert sn.config.floatX == "float32"
    assert T.matrix().dtype == "float32" and T.vector(dtype="float64").dtype == "float64"
    assert T.cast(T.ivector(), "floatX").dtype == "float32"
    assert T.TensorType("floatX", (False, True))("t").type.shape == (None, 1)
    with pytest.raises(ValueError, match="floatX"):
        theano.config.floatX = "int32"
    with pytest.raises(AttributeError, match="flaotX"):
        theano.config.flaotX = "float32"


@pytest.mark.parametrize("floatx", ["float64", "float32"])
def test_integer_true_division_gives_floatx(floatx):
    theano.config.floatX = floatx
    a, b = T.ivector("a"), T.ivector("b")
    q = T.true_div(a, b)
    assert q.dtype == floatx
    got = run([a, b], q, np.array([7, -7, 1], "int32"), np.array([2, 2, 3], "int32"))
    np.testing.assert_allclose(got, [3.5, -3.5, 1 / 3], rtol=1e-6)
    assert got.dtype == floatx
    floor = run([a, b], T.int_div(a, b), np.array([7, -7], "int32"), np.array([2, 2], "int32"))
    np.testing.assert_array_equal(floor, [3, -4])  # Theano's int_div floors, as Python's //
    assert floor.dtype == "int32"


def test_reductions_dtype_argument_and_mean_of_comparisons(rng):
    a = rng.integers(-5, 5, (4, 3)).astype("int8")
    x = T.bmatrix("x")
    total = run([x], T.sum(x, axis=0, dtype="int64"), a)
    np.testing.assert_array_equal(total, a.sum(axis=0, dtype="int64"))
    assert total.dtype == "int64"
    assert run([x], T.mean(x, dtype="float32"), a).dtype == "float32"
    errors = run([x], T.mean(T.neq(x, 0)), a)
    np.testing.assert_allclose(errors, np.mean(a != 0))
    assert errors.dtype == "float64"
    both = run([x], T.max_and_argmax(x, axis=1), a)
    np.testing.assert_array_equal(both[0], a.max(axis=1))
    np.testing.assert_array_equal(both[1], a.argmax(axis=1))


def test_reduction_axes_given_as_numpy_arrays_or_constant_tensors():
    """Theano read an axis from a NumPy array of ints or a constant tensor too."""
    a = np.arange(24.0).reshape(2, 3, 4)
    x = T.tensor3("x")
    outputs = [
        T.sum(x, axis=np.array([0, 2])),
        T.max(x, axis=T.constant(1)),
        T.mean(x, axis=T.constant([0, 1])),
        T.argmax(x, axis=np.array([2])),
        x.sum(axis=np.int64(1)),
        T.var(x, axis=np.array(0)),
    ]
    wants = [a.sum((0, 2)), a.max(1), a.mean((0, 1)), a.argmax(2), a.sum(1), a.var(0)]
    for got, want in zip(run([x], outputs, a), wants):
        np.testing.assert_allclose(got, want)
    with pytest.raises(sn.ShapeError, match="axis is an int, a tuple of ints or None, not a:"):
        T.sum(x, axis=T.lscalar("a"))  # not a constant


DOT_SHAPES = [
    ((3,), (3,)),
    ((2, 3), (3,)),
    ((3,), (3, 4)),
    ((2, 3), (3, 4)),
    ((2, 5, 3), (3, 4)),
    ((2, 3), (4, 3, 2)),
    ((), (2, 3, 4)),
    ((2, 3, 4), ()),
]


@pytest.mark.parametrize("shapes", DOT_SHAPES)
def test_dot_is_numpys_dot_for_every_rank(shapes, rng):
    """``T.dot``, Theano's method ``x.dot(y)`` and ``T.nlinalg.matrix_dot`` (which folds
    with ``T.dot``) are np.dot for every rank, a 0-d operand included, as in Theano 1.0."""
    a, b = (rng.normal(size=s) for s in shapes)
    x, y = (
        T.TensorType("float64", (False,) * a.ndim)(),
        T.TensorType("float64", (False,) * b.ndim)(),
    )
    for built in (T.dot(x, y), x.dot(y), T.nlinalg.matrix_dot(x, y)):
        np.testing.assert_allclose(run([x, y], built, a, b), np.dot(a, b), rtol=1e-12)


def test_matrix_dot_folds_with_theanos_dot(rng):
    a, m, v = rng.normal(size=(2, 3, 4)), rng.normal(size=(4, 5)), rng.normal(size=5)
    x, w, u = T.tensor3("x"), T.matrix("w"), T.vector("u")
    got = run([x, w, u], T.nlinalg.matrix_dot(x, w, u), a, m, v)
    np.testing.assert_allclose(got, np.dot(np.dot(a, m), v), rtol=1e-12)


def test_elementwise_and_layout_functions_against_numpy(rng):
    a = rng.normal(size=(3, 4))
    x = T.matrix("x")
    cases = {
        T.tanh(x): np.tanh(a),
        T.exp(x): np.exp(a),
        T.sqr(x): a**2,
        T.sqrt(T.abs_(x)): np.sqrt(np.abs(a)),
        T.log(T.abs_(x)): np.log(np.abs(a)),
        T.maximum(x, 0.1): np.maximum(a, 0.1),
        T.switch(x > 0, x, -x): np.abs(a),
        T.flatten(x): a.ravel(),
        x.flatten(2): a,
        T.zeros_like(x): np.zeros_like(a),
        x.dimshuffle(1, "x", 0): a.T[:, None, :],
        T.concatenate([x, x], axis=1): np.hstack([a, a]),
        x.reshape((x.shape[0] * 2, -1)): a.reshape(6, 2),
        T.arange(x.shape[1]): np.arange(4),
        T.alloc(0.5, x.shape[0], 2): np.full((3, 2), 0.5),
        T.argmax(x, axis=0): a.argmax(0),
        T.set_subtensor(x[0], 9.0): np.vstack([np.full(4, 9.0), a[1:]]),
        T.inc_subtensor(x[:, 1], 1.0): a + np.eye(4)[1],
        T.eq(x, x) * 1 + T.neq(x, x): np.ones((3, 4)),
    }
    results = run([x], list(cases), a)
    for got, want in zip(results, cases.values()):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    assert results[-6].dtype == "int64" and T.alloc(0.5, 2).dtype == "float64"


def test_softmax_of_a_vector_is_a_row_as_in_theano(rng):
    v, m = T.vector("v"), T.matrix("m")
    a = rng.normal(size=5)
    row = run([v], T.nnet.softmax(v), a)
    assert row.shape == (1, 5)
    np.testing.assert_allclose(row[0], np.exp(a) / np.exp(a).sum())
    b = rng.normal(size=(2, 5))
    np.testing.assert_allclose(run([m], T.nnet.softmax(m), b).sum(axis=1), [1, 1])


@pytest.mark.parametrize("call", ["softmax", "logsoftmax"])
def test_softmax_of_more_than_two_dims_is_refused_as_in_theano(call):
    """Theano 1.0's Softmax took "1-d or 2-d tensor of floats" only (a ValueError); a
    tensor3 was accepted silently, softmax over its last axis. symnb's sn.softmax keeps
    its axis argument (the hint), and T.nnet.softmax of a vector and a matrix are as
    before."""
    t = T.tensor3("t")
    with pytest.raises(sn.ShapeError) as info:
        getattr(T.nnet, call)(t)
    assert isinstance(info.value, ValueError)
    message = str(info.value)
    assert message.startswith(
        f"T.nnet.{call}: x must be a 1-d or 2-d tensor of floats, as in Theano, not 't' "
        "(float64(?, ?, ?))"
    ), message
    assert "axis=-1" in message and "test_tensor.py" in message, message
    with pytest.raises(sn.ShapeError, match="1-d or 2-d"):
        getattr(T.nnet, call)(T.dscalar("s"))
    assert getattr(T.nnet, call)(T.vector("v")).type.ndim == 2


@pytest.mark.parametrize("floatx, value", [("float32", 30.0), ("float64", 100.0)])
def test_binary_crossentropy_of_a_reshaped_sigmoid_as_theanos_test(floatx, value):
    """Theano's test_nnet.py test_binary_crossentropy_reshape (issue #4086): the gradient
    is 0 whether the reshape is before or after the sigmoid; after it, the loss and its
    gradient were NaN once the sigmoid rounds to 1 (the stabilize rules did not see it)."""
    theano.config.floatX = floatx
    a = T.tensor4("a")
    for c in (
        T.nnet.binary_crossentropy(T.nnet.sigmoid(a.reshape((-1, 1))), 1).sum(),
        T.nnet.binary_crossentropy(T.nnet.sigmoid(a).reshape((-1, 1)), 1).sum(),
    ):
        cost, g = theano.function([a], [c, theano.grad(c, a)])(np.full((1, 1, 1, 1), value, floatx))
        assert np.isfinite(cost) and cost == pytest.approx(0.0, abs=1e-12)
        np.testing.assert_allclose(g, np.zeros((1, 1, 1, 1)), atol=1e-12)


@pytest.mark.parametrize("mode", ["FAST_RUN", "FAST_COMPILE"])
def test_a_negative_class_index_is_refused_as_in_theano(mode, rng):
    """Theano's test_nnet.py test_neg_idx: crossentropy_softmax_1hot(_with_bias) and its
    gradient raise ValueError ("y_i value out of bounds") for a label -1; it was read as
    the last class (a plausible, wrong loss)."""
    x, b, y = T.matrix("x"), T.vector("b"), T.lvector("y")
    xv, bv = rng.random((3, 5)), rng.random(5)
    nll = T.nnet.crossentropy_softmax_1hot(x, y)[0]
    nll_b = T.nnet.crossentropy_softmax_1hot_with_bias(x, b, y)[0]
    picked = T.nnet.categorical_crossentropy(T.nnet.softmax(x), y)
    for out in (nll, nll_b, T.grad(nll.sum(), x), picked):
        f = theano.function([x, b, y], out, mode=mode, on_unused_input="ignore")
        f(xv, bv, np.array([0, 4, 2]))
        for bad in (-1, 5) if mode == "FAST_RUN" else (-1,):  # (5: the fused op's check)
            with pytest.raises(ValueError, match=f"label {bad} is out of range for axis 1"):
                f(xv, bv, np.array([0, bad, 2]))


def test_losses_and_activations_against_numpy(rng):
    p = rng.dirichlet(np.ones(4), size=3)
    labels = np.array([0, 3, 1], "int32")
    m, y, t = T.matrix("p"), T.ivector("y"), T.matrix("t")
    xent = run([m, y], T.nnet.categorical_crossentropy(m, y), p, labels)
    np.testing.assert_allclose(xent, -np.log(p[np.arange(3), labels]))
    one_hot, oh = np.eye(4, dtype="int32")[labels], T.imatrix("oh")  # by ndim, as Theano
    xent = run([m, oh], T.nnet.categorical_crossentropy(m, oh), p, one_hot)
    np.testing.assert_allclose(xent, -np.sum(one_hot * np.log(p), axis=1))
    q, target = rng.uniform(0.1, 0.9, (3, 4)), rng.integers(0, 2, (3, 4)).astype(float)
    bce = run([m, t], T.nnet.binary_crossentropy(m, t), q, target)
    np.testing.assert_allclose(bce, -(target * np.log(q) + (1 - target) * np.log(1 - q)))
    z = rng.normal(size=(3, 4)) * 3
    got = run([m], [T.nnet.sigmoid(m), T.nnet.relu(m, 0.1), T.nnet.hard_sigmoid(m)], z)
    np.testing.assert_allclose(got[0], 1 / (1 + np.exp(-z)))
    np.testing.assert_allclose(got[1], np.where(z > 0, z, 0.1 * z))
    np.testing.assert_allclose(got[2], np.clip(0.2 * z + 0.5, 0, 1))


def test_relu_with_an_array_or_symbolic_alpha_is_prelu(rng):
    """Lasagne's PReLU: ``relu(x, alpha.dimshuffle('x', 0))``; values and gradients."""
    z = rng.normal(size=(3, 4)) * 3
    a = rng.uniform(0.05, 0.5, 4)
    m, al = T.matrix("m"), T.vector("al")
    want = np.where(z > 0, z, a * z)
    out = T.nnet.relu(m, al.dimshuffle("x", 0))
    gm, ga = T.grad(out.sum(), [m, al])
    got, got_gm, got_ga = run([m, al], [out, gm, ga], z, a)
    np.testing.assert_allclose(got, want)
    np.testing.assert_allclose(got_gm, np.where(z > 0, 1.0, a + 0 * z))
    np.testing.assert_allclose(got_ga, np.where(z > 0, 0.0, z).sum(axis=0))
    np.testing.assert_allclose(run([m], T.nnet.relu(m, a), z), want)
    np.testing.assert_allclose(run([m], T.nnet.relu(m, np.float64(0)), z), np.maximum(z, 0))


def _theano_relu(z, alpha):
    """Theano 1.0's definition, in NumPy: its values and its gradient (abs' is sign)."""
    if alpha == 0:
        return 0.5 * (z + np.abs(z)), 0.5 * (1 + np.sign(z))
    f1, f2 = 0.5 * (1 + alpha), 0.5 * (1 - alpha)
    return f1 * z + f2 * np.abs(z), f1 + f2 * np.sign(z)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("alpha", [0, 0.1, -0.3, 2])
def test_relu_is_theanos_formula_gradient_half_at_zero(dtype, alpha):
    """Theano's relu is ``0.5 * (x + abs(x))``: its gradient at 0 is 0.5 (``f1`` with alpha),
    where ``sn.relu``'s is 0; values and gradients are Theano's."""
    z = np.array([-2.5, -1e-3, 0.0, 1e-3, 0.7, 3.0], dtype)
    x = T.vector("x", dtype=dtype)
    y = T.nnet.relu(x, alpha)
    got, grad = run([x], [y, T.grad(T.sum(y), x)], z)
    want, want_grad = (np.asarray(w, dtype) for w in _theano_relu(z.astype("float64"), alpha))
    assert got.dtype == grad.dtype == dtype
    rtol = 1e-6 if dtype == "float32" else 1e-15  # Theano rounds f1 * x... in float32 too
    np.testing.assert_allclose(got, want, rtol=rtol)
    np.testing.assert_allclose(grad, want_grad, rtol=rtol)
    assert grad[2] == 0.5 * (1 + alpha)  # at 0
    sn.check_grad(lambda v: T.sum(T.nnet.relu(v, alpha) ** 2), [z.astype("float64") + 0.01])
    np.testing.assert_array_equal(sn.grad(sn.sum(sn.relu(x)), x).eval({x: z})[2], 0)  # core's


#: Theano 1.0's dtype of relu of an integer (or bool) tensor, floatX float64 and float32,
#: under its default cast_policy 'custom': its 0.5 (and an alpha of 0.25) are float32
#: constants, 0.1 a float64 one under float64, upcast with x's dtype by NumPy's promotion
RELU_DTYPES = {
    "int8": ("float32", "float32"),
    "uint8": ("float32", "float32"),
    "int16": ("float32", "float32"),
    "int32": ("float64", "float64"),
    "uint32": ("float64", "float64"),
    "int64": ("float64", "float64"),
    "bool": ("float32", "float32"),
}


@pytest.mark.parametrize("given", sorted(RELU_DTYPES))
@pytest.mark.parametrize("alpha", [0, 0.25, 0.1])
@pytest.mark.parametrize("policy", ["custom", "numpy+floatX"])
def test_relu_of_integers_has_theanos_dtype(given, alpha, policy):
    """Theano's upcast of the int dtype with its float constants, not NumPy's float64; under
    'numpy+floatX' the constants are floatX and the result floatX."""
    z = np.array([5, 0, 2, 1, 0]).astype(given)
    x = T.tensor(given, (False,), name="x")
    for floatX, want in zip(("float64", "float32"), RELU_DTYPES[given]):
        with theano.change_flags(floatX=floatX, cast_policy=policy):
            if policy == "numpy+floatX":
                want = floatX
            elif alpha == 0.1 and floatX == "float64":
                want = "float64"  # 0.1 is not a float32: Theano's constant is float64
            y = T.nnet.relu(x, alpha)
            got = run([x], y, z)
        assert y.type.dtype == got.dtype == want, (floatX, alpha)
        value = _theano_relu(z.astype("float64"), alpha)[0]
        if alpha == 0:  # x + abs(x) in x's dtype, as Theano: True + True is True, 0.5 * it
            value = 0.5 * (z + np.abs(z)).astype("float64")
        np.testing.assert_allclose(got, value.astype(want), rtol=1e-7)


@pytest.mark.parametrize("dtype, big", [("float32", 100.0), ("float64", 800.0)])
@pytest.mark.parametrize("backend", ["py", "c"])
def test_elu_selu_gradients_finite_where_exp_would_overflow(dtype, big, backend):
    """Past exp's range (x > 88 in float32, 709 in float64) the untaken exp branch made the
    gradient ``inf * 0 = NaN``; elu's is 1 there, selu's its scale (as torch's)."""
    z = np.array([-5.0, -1.0, 0.0, 1.0, big], dtype)
    x = T.vector("x", dtype=dtype)
    alpha, scale = 1.6732632423543772, 1.0507009873554805
    for fn, a, s in ((T.nnet.elu, 1.0, 1.0), (T.nnet.selu, alpha, scale)):
        y = fn(x)
        got, grad = sn.function([x], [y, T.grad(T.sum(y), x)], backend=backend)(z)
        zd = z.astype("float64")
        want = s * np.where(zd > 0, zd, a * np.expm1(np.minimum(zd, 0)))
        want_grad = s * np.where(zd > 0, 1.0, a * np.exp(np.minimum(zd, 0)))
        assert got.dtype == grad.dtype == dtype
        np.testing.assert_allclose(got, want, rtol=1e-6)
        np.testing.assert_allclose(grad, want_grad, rtol=1e-6)


def _true_convolution(x, w, pad):
    """The reference: a true convolution (flipped kernel), x (n, c, h, w), w (o, c, kh, kw)."""
    x = np.pad(x, ((0, 0), (0, 0), (pad[0], pad[0]), (pad[1], pad[1])))
    wf = w[:, :, ::-1, ::-1]
    kh, kw = w.shape[2:]
    out = np.zeros((x.shape[0], w.shape[0], x.shape[2] - kh + 1, x.shape[3] - kw + 1))
    for i in range(out.shape[2]):
        for j in range(out.shape[3]):
            out[:, :, i, j] = np.tensordot(
                x[:, :, i : i + kh, j : j + kw], wf, ([1, 2, 3], [1, 2, 3])
            )
    return out


BORDERS = [("valid", (0, 0)), ("full", (2, 1)), ("half", (1, 1)), ((1, 0), (1, 0))]


@pytest.mark.parametrize("border_mode, pad", BORDERS)
def test_conv2d_flips_the_filters_as_theano(border_mode, pad, rng):
    a, f = rng.normal(size=(2, 2, 6, 5)), rng.normal(size=(3, 2, 3, 2))
    x, w = T.tensor4("x"), theano.shared(f, name="w")
    got = run([x], T.nnet.conv2d(x, w, border_mode=border_mode), a)
    want = _true_convolution(a, f, pad)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    if border_mode in ("valid", "full"):
        old = run([x], conv.conv2d(x, w, border_mode=border_mode, filter_shape=f.shape), a)
        np.testing.assert_allclose(old, want, rtol=1e-10, atol=1e-12)
    unflipped = run([x], T.nnet.conv2d(x, w, filter_flip=False), a)
    np.testing.assert_allclose(unflipped, _true_convolution(a, f[:, :, ::-1, ::-1], (0, 0)))


@pytest.mark.parametrize("dilation", [(2, 2), (3, 2), (2, 1)])
def test_conv2d_half_pads_half_the_dilated_kernel_as_theano(dilation, rng):
    """Theano's "half" pads ``((k - 1)*d + 1) // 2`` (its ``dil_kernshp // 2``): for an even
    kernel dilated, one less than ``d*(k//2)`` (a 2x2 kernel at dilation 2 keeps 5x5 5x5)."""
    a, f = rng.normal(size=(1, 2, 5, 6)), rng.normal(size=(3, 2, 2, 4))
    dilated = np.zeros(f.shape[:2] + tuple((k - 1) * d + 1 for k, d in zip(f.shape[2:], dilation)))
    dilated[:, :, :: dilation[0], :: dilation[1]] = f
    pad = tuple(k // 2 for k in dilated.shape[2:])
    x, w = T.tensor4("x"), theano.shared(f, name="w")
    got = run([x], T.nnet.conv2d(x, w, border_mode="half", filter_dilation=dilation), a)
    want = _true_convolution(a, dilated, pad)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("border_mode, pad", [("valid", (0, 0)), ("full", (2, 1))])
def test_conv2d_shape_hints_may_be_numpy_integers_arrays_or_partly_none(border_mode, pad, rng):
    """Theano took hints computed with NumPy (np.int64 sizes, an array); a None in
    filter_shape is read from the shared filters' value, a symbolic size is not known."""
    a, f = rng.normal(size=(2, 2, 6, 5)), rng.normal(size=(3, 2, 3, 2))
    want = _true_convolution(a, f, pad)
    n = np.array([3, 2, 3, 2])
    x = T.tensor4("x")
    for filter_shape, image_shape in [
        ((n[0], n[1], n[2], n[3]), (np.int64(2), np.int32(2), 6, 5)),
        (n, np.array([2, 2, 6, 5])),
        ((None, None, 3, 2), (None, T.constant(2), 6, None)),
        ((None, 2, None, None), (x.shape[0], 2, 6, 5)),
    ]:
        for w in (theano.shared(f, name="w"), sn.shared(f, name="w")):  # dims unknown, fixed
            y = T.nnet.conv2d(x, w, image_shape, filter_shape, border_mode)
            np.testing.assert_allclose(run([x], y, a), want, rtol=1e-10, atol=1e-12)
        old = conv.conv2d(x, theano.shared(f), image_shape, filter_shape, border_mode)
        np.testing.assert_allclose(run([x], old, a), want, rtol=1e-10, atol=1e-12)
    w4 = T.tensor4("w4")
    y = T.nnet.conv2d(x, w4, filter_shape=(np.int64(3), None, np.int64(3), 2))
    assert y.type.shape[1] == 3  # the filters' out dim, from the hint
    np.testing.assert_allclose(run([x, w4], y, a, f), _true_convolution(a, f, (0, 0)))
    with pytest.raises(ValueError, match=r"filter_shape=\(3, 2, 4, 2\) does not match 'w'"):
        T.nnet.conv2d(x, sn.shared(f, name="w"), filter_shape=n + [0, 0, 1, 0])
    with pytest.raises(ValueError, match=r"input_shape must be a tuple of ints .* \(2.5, 2"):
        T.nnet.conv2d(x, theano.shared(f), input_shape=(2.5, 2, 6, 5))
    with pytest.raises(sn.ShapeError, match=r"kernel size of the filters 'w4'"):
        T.nnet.conv2d(x, w4, filter_shape=(3, 2, None, 2))
    for hint in [(3, 2, 5, 2), (2, 3, 3, 2)]:  # another size; as many elements, scrambled
        with pytest.raises(sn.ShapeError) as e:  # the shared filters' current value: when built
            T.nnet.conv2d(x, theano.shared(f, name="w"), filter_shape=hint)
        assert f"filter_shape={hint} does not match the shape (3, 2, 3, 2)" in str(e.value)
        assert "'w' (float64(?, ?, ?, ?))" in str(e.value) and "test_tensor.py" in str(e.value)


@pytest.mark.parametrize("mode", ["FAST_COMPILE", "FAST_RUN"])  # backends "py" and "c"
def test_conv2d_checks_the_filters_against_the_kernel_size_it_was_built_with(mode, rng):
    """filter_shape (or a shared filter's value when built) fixes the kernel size; filters of
    another shape when the function runs, even of as many elements, are a ShapeError naming
    both shapes and the conv2d's line, never reshaped (scrambled) to the hint; the dims left
    None are the actual filters'."""
    a, f = rng.normal(size=(1, 3, 6, 6)), rng.normal(size=(2, 3, 3, 2))
    x, w = T.tensor4("x"), T.tensor4("w")
    y = T.nnet.conv2d(x, w, filter_shape=(2, 3, 3, 2))
    hinted = theano.function([x, w], y, mode=mode)
    np.testing.assert_allclose(hinted(a, f), _true_convolution(a, f, (0, 0)), rtol=1e-10)
    partly = T.nnet.conv2d(x, w, filter_shape=(None, None, 3, 2))
    partly = theano.function([x, w], partly, mode=mode)
    more = rng.normal(size=(4, 3, 3, 2))  # other out/in dims: not fixed by the hint
    np.testing.assert_allclose(partly(a, more), _true_convolution(a, more, (0, 0)), rtol=1e-10)
    shared = theano.shared(f, name="W")
    g = theano.function([x], T.nnet.conv2d(x, shared), mode=mode)
    np.testing.assert_allclose(g(a), _true_convolution(a, f, (0, 0)), rtol=1e-10)
    other = rng.normal(size=(2, 3, 2, 3))  # the same 36 elements, kernels 2x3
    with pytest.raises(sn.ShapeError) as e:
        hinted(a, other)
    message = str(e.value)
    assert "filters 'w' (float64(?, ?, ?, ?)) are not of filter_shape=(2, 3, 3, 2)" in message
    assert "((2, 3, 2, 3), not (2, 3, 3, 2), when the function ran)" in message
    assert "y = T.nnet.conv2d(x, w, filter_shape=(2, 3, 3, 2))" in message
    shared.set_value(other)
    with pytest.raises(sn.ShapeError) as e:
        g(a)
    assert "filters 'W' (float64(?, ?, ?, ?)) are not of the shape their value had" in str(e.value)
    assert "((2, 3, 2, 3), not (2, 3, 3, 2), when the function ran)" in str(e.value)


def _theano_pool(a, ws, st, mode, ignore_border):
    """The reference: Theano's pool over the last two dims, partial windows kept unless
    ``ignore_border``."""

    def count(n, w, s):
        return (
            (n - w) // s + 1
            if ignore_border
            else max(0, (n - 1 - w + s) // s) + 1
            if s < w
            else (n - 1) // s + 1
        )

    h, w = a.shape[-2:]
    out = np.zeros(a.shape[:-2] + (count(h, ws[0], st[0]), count(w, ws[1], st[1])))
    for i in range(out.shape[-2]):
        for j in range(out.shape[-1]):
            win = a[..., i * st[0] : i * st[0] + ws[0], j * st[1] : j * st[1] + ws[1]]
            if mode == "max":
                out[..., i, j] = win.max(axis=(-2, -1))
            elif mode == "sum":
                out[..., i, j] = win.sum(axis=(-2, -1))
            else:  # average over the real elements of the window
                out[..., i, j] = win.mean(axis=(-2, -1))
    return out


@pytest.mark.parametrize("mode", ["max", "sum", "average_exc_pad", "average_inc_pad"])
@pytest.mark.parametrize("ws, st", [((2, 2), (2, 2)), ((3, 2), (2, 1)), ((2, 2), (3, 3))])
@pytest.mark.parametrize("ignore_border", [False, True])
def test_pool_2d_against_theanos_rule(mode, ws, st, ignore_border, rng):
    a = rng.normal(size=(2, 3, 7, 5))
    x = T.tensor4("x")
    got = run([x], pool.pool_2d(x, ws=ws, stride=st, mode=mode, ignore_border=ignore_border), a)
    np.testing.assert_allclose(got, _theano_pool(a, ws, st, mode, ignore_border), rtol=1e-12)


def test_pool_defaults_keep_partial_windows_and_accept_3d_input(rng):
    a = rng.normal(size=(3, 5, 5))
    x = T.tensor3("x")
    got = run([x], downsample.max_pool_2d(x, (2, 2)), a)
    assert got.shape == (3, 3, 3)
    np.testing.assert_allclose(got, _theano_pool(a, (2, 2), (2, 2), "max", False))


def test_random_streams_draw_theano_style(rng):
    from symnb.compat.theano.sandbox.rng_mrg import MRG_RandomStreams
    from symnb.compat.theano.tensor.shared_randomstreams import RandomStreams

    for streams in (RandomStreams(seed=7), MRG_RandomStreams(seed=7)):
        x = T.matrix("x")
        u = streams.uniform(size=x.shape, low=-1.0, high=1.0)
        n = streams.normal(size=(2000,), avg=3.0, std=0.5)
        mask = streams.binomial(size=x.shape, n=1, p=0.25, dtype=theano.config.floatX)
        f = theano.function([x], [u, n, mask])
        a, b, c = f(np.zeros((100, 20)))
        assert a.dtype == "float64" and -1 <= a.min() and a.max() < 1 and abs(a.mean()) < 0.05
        assert abs(b.mean() - 3.0) < 0.05 and abs(b.std() - 0.5) < 0.05
        assert set(np.unique(c)) == {0.0, 1.0} and abs(c.mean() - 0.25) < 0.03
        assert not np.array_equal(f(np.zeros((100, 20)))[0], a)  # each call draws anew
    ints = RandomStreams(1).random_integers(size=(500,), low=2, high=4)
    values = theano.function([], ints)()
    assert set(np.unique(values)) == {2, 3, 4}  # both ends included, as in Theano


def test_grad_consider_constant_and_grad_clip(rng):
    x = T.vector("x")
    a = rng.normal(size=4) * 3
    y = x**2
    g = T.grad(T.sum(y * x), x, consider_constant=[y])  # d/dx (c * x) with c = x**2
    np.testing.assert_allclose(run([x], g, a), a**2)
    clipped = theano.gradient.grad_clip(x, -1.0, 2.0)
    g = T.grad(T.sum(clipped * x * 3), x)  # 3x back through the clip, 3*clip(x) directly
    np.testing.assert_allclose(run([x], g, a), np.clip(3 * a, -1, 2) + 3 * a)
    np.testing.assert_allclose(run([x], clipped, a), a)
    with pytest.raises(ValueError, match="lower"):
        theano.gradient.grad_clip(x, 1.0, -1.0)
    with pytest.raises(sn.DisconnectedInputError):
        T.grad(T.sum(theano.gradient.disconnected_grad(x) ** 2), x)


def test_symnb_keeps_its_own_rules_beside_the_layer(rng):
    """The layer adds functions; it changes nothing of sn.* (no monkey-patching)."""
    v = sn.vector("v")
    assert sn.softmax(v).type.ndim == 1 and T.nnet.softmax(v).type.ndim == 2
    with pytest.raises(sn.ShapeError, match="tensordot"):
        sn.dot(sn.tensor3("a"), sn.matrix("b"))
    with pytest.raises(sn.ShapeError, match="tensordot"):
        sn.tensor3("a").dot(sn.matrix("b"))  # Theano's x.dot is for Theano's variables
    i = sn.scalar("i", dtype="int32")
    theano.config.floatX = "float32"
    assert (i / i).dtype == "float64" and T.true_div(i, i).dtype == "float32"


def test_conv2d_and_pool_misuse_say_what_is_wrong():
    x = T.TensorType("float64", (False,) * 4, shape=(2, 1, 8, 8))("x")
    w = T.tensor4("w")
    with pytest.raises(ValueError, match=r"input_shape=\(2, 1, 9, 9\) does not match 'x'"):
        T.nnet.conv2d(x, w, input_shape=(2, 1, 9, 9))
    for border_mode in ("valid", "full"):  # the kernel size: unknown, and no hint
        with pytest.raises(sn.ShapeError, match=r"filters 'w' .* filter_shape=\(out, in, kh, kw"):
            T.nnet.conv2d(x, w, border_mode=border_mode)
    for flip in (True, False):  # checked before flipping: no error of a flip never called
        with pytest.raises(sn.ShapeError, match=r"conv2d: filters 'w3' .* must be 4-d") as e:
            T.nnet.conv2d(x, T.tensor3("w3"), border_mode="full", filter_flip=flip)
        assert "out of range" not in str(e.value) and "test_tensor.py" in str(e.value)
    with pytest.raises(sn.ShapeError, match=r"conv2d: input 'x3' .* must be 4-d"):
        T.nnet.conv2d(T.tensor3("x3"), w)
    for name, value, error in [
        ("subsample", 1.5, TypeError),
        ("subsample", (1, 2, 1), TypeError),
        ("subsample", 0, ValueError),
        ("filter_dilation", (1, 0.5), TypeError),
    ]:
        with pytest.raises(
            error, match=f"conv2d of 'x' .*: {name} (is|must be) a positive int"
        ) as e:
            T.nnet.conv2d(x, w, filter_shape=(2, 1, 3, 3), **{name: value})
        assert isinstance(e.value, sn.ShapeError) and "test_tensor.py" in str(e.value)
    shared = theano.shared(np.ones((4, 2, 3, 3)), name="W")
    for mode in ("FAST_COMPILE", "FAST_RUN"):
        images = T.tensor4("images")
        f = theano.function([images], T.nnet.conv2d(images, shared), mode=mode)
        with pytest.raises(sn.SymnbError) as error:  # the channels, known at run time
            f(np.ones((1, 3, 8, 8)))
        message = str(error.value)
        assert "'W[:, :, ::-1, ::-1]' (float64(4, 2, 3, 3))" in message, message
        assert "has 3 channels (axis 1) but the filters of shape (4, 2, 3, 3) take 2" in message
        assert "test_tensor.py" in message
    with pytest.raises(ValueError, match="padding works only with ignore_border=True"):
        pool.pool_2d(x, ws=(2, 2), pad=(1, 1))
    with pytest.raises(ValueError, match="mode must be one of"):
        pool.pool_2d(x, ws=(2, 2), mode="median", ignore_border=True)
    with pytest.raises(sn.ShapeError, match=r"pool_2d: pad \(2, 1\) must be smaller than ws"):
        pool.pool_2d(x, ws=(2, 2), pad=(2, 1), ignore_border=True)


def test_pool_2d_takes_any_pad_below_the_window_as_theano(rng):
    """Theano's rule is pad < ws (the core refuses only padding that makes windows of
    padding only): pad 2 around 3-wide windows runs, every window holding real elements."""
    a = rng.standard_normal((1, 1, 4, 4))
    x = T.tensor4("x")
    got = run([x], pool.pool_2d(x, ws=(3, 3), pad=(2, 2), ignore_border=True), a)
    padded = np.pad(a, ((0, 0), (0, 0), (2, 2), (2, 2)), constant_values=-np.inf)
    want = [[padded[0, 0, i : i + 3, j : j + 3].max() for j in (0, 3)] for i in (0, 3)]
    np.testing.assert_allclose(got[0, 0], want)


def _values(*shapes, seed=3):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s) for s in shapes]


A, B = _values((3, 4), (3, 4))
S = _values((3, 3))[0] + 4 * np.eye(3)  # well conditioned, not symmetric
MORE_FUNCTIONS = [
    ("add of three", lambda x, y: T.add(x, y, x), (A, B), A + B + A),
    ("mul of three", lambda x, y: T.mul(x, y, y), (A, B), A * B * B),
    ("largest", lambda x, y: T.largest(x, y, -x), (A, B), np.maximum(np.maximum(A, B), -A)),
    ("smallest", lambda x, y: T.smallest(x, y), (A, B), np.minimum(A, B)),
    ("exp2", lambda x: T.exp2(x), (A,), np.exp2(A)),
    ("any", lambda x: T.any(x > 1, axis=1), (A,), np.any(A > 1, axis=1)),
    ("all", lambda x: T.all(x > -3), (A,), np.all(A > -3)),
    ("repeat", lambda x: T.repeat(x, 2, axis=0), (A,), np.repeat(A, 2, axis=0)),
    ("roll", lambda x: T.roll(x, 1, axis=1), (A,), np.roll(A, 1, axis=1)),
    ("horizontal_stack", lambda x, y: T.horizontal_stack(x, y), (A, B), np.hstack([A, B])),
    ("vertical_stack", lambda x, y: T.vertical_stack(x, y), (A, B), np.vstack([A, B])),
    ("batched_dot of rows", lambda x, y: T.batched_dot(x, y), (A, B), np.sum(A * B, axis=1)),
    ("nlinalg.matrix_inverse", lambda s: T.nlinalg.matrix_inverse(s), (S,), np.linalg.inv(S)),
    ("nlinalg.det", lambda s: T.nlinalg.det(s), (S,), np.linalg.det(S)),
    ("nlinalg.matrix_dot", lambda s: T.nlinalg.matrix_dot(s, s, s), (S,), S @ S @ S),
    ("slinalg.solve", lambda s: T.slinalg.solve(s, s[:, 0]), (S,), np.linalg.solve(S, S[:, 0])),
    (
        "slinalg.cholesky upper",
        lambda s: T.slinalg.cholesky(T.dot(s, s.T), lower=False),
        (S,),
        np.linalg.cholesky(S @ S.T).T,
    ),
    ("extra_ops.cumsum", lambda x: T.extra_ops.cumsum(x, axis=1), (A,), np.cumsum(A, axis=1)),
    ("nnet.softsign", lambda x: T.nnet.softsign(x), (A,), A / (1 + np.abs(A))),
    (
        "nnet.softmax_with_bias",
        lambda x: T.nnet.softmax_with_bias(x, x[0]),
        (A,),
        np.exp(A + A[0]) / np.exp(A + A[0]).sum(axis=1, keepdims=True),
    ),
    (
        "nnet.bn.batch_normalization",
        lambda x: T.nnet.bn.batch_normalization(x, x[0], x[1], x.mean(axis=0), x.std(axis=0)),
        (A,),
        (A - A.mean(0)) * (A[0] / A.std(0)) + A[1],
    ),
]


@pytest.mark.parametrize(
    "name, build, values, want", MORE_FUNCTIONS, ids=[r[0] for r in MORE_FUNCTIONS]
)
def test_more_theano_functions_against_numpy(name, build, values, want):
    inputs = [T.TensorType("float64", (False,) * np.ndim(v))(f"v{i}") for i, v in enumerate(values)]
    got = run(inputs, build(*inputs), *values)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_nlinalg_alloc_diag_takes_a_vector_and_extract_diag_a_matrix_as_in_theano():
    """Theano's ``AllocDiag`` refuses anything but a vector and ``ExtractDiag`` anything but
    a matrix; only ``nlinalg.diag`` takes either. All three were ``sn.diag``: alloc_diag of
    a matrix returned its diagonal and extract_diag of a vector built a matrix."""
    v, m = T.dvector("v"), T.dmatrix("m")
    a, b = np.array([1.0, 2.0, 3.0]), np.arange(9.0).reshape(3, 3)
    np.testing.assert_array_equal(run([v], T.nlinalg.alloc_diag(v), a), np.diag(a))
    np.testing.assert_array_equal(run([m], T.nlinalg.extract_diag(m), b), np.diag(b))
    np.testing.assert_array_equal(run([v], T.nlinalg.diag(v), a), np.diag(a))
    np.testing.assert_array_equal(run([m], T.nlinalg.diag(m), b), np.diag(b))
    wrong = [
        (
            T.nlinalg.alloc_diag,
            m,
            "alloc_diag: x must be a vector, as in Theano, not 'm' "
            r"\(float64\(\?, \?\)\)\n  hint: T.nlinalg.extract_diag\(x\) takes a matrix",
        ),
        (
            T.nlinalg.extract_diag,
            v,
            "extract_diag: x must be a matrix, as in Theano, not 'v' "
            r"\(float64\(\?,\)\)\n  hint: T.nlinalg.alloc_diag\(x\) takes a vector",
        ),
        (T.nlinalg.alloc_diag, T.dscalar("s"), r"alloc_diag: x must be a vector, .* not 's'"),
        (T.nlinalg.extract_diag, T.tensor3("t"), r"extract_diag: x must be a matrix, .* not 't'"),
    ]
    for fn, x, message in wrong:
        with pytest.raises(sn.ShapeError, match=f"^T.nlinalg.{message}") as error:
            fn(x)
        assert error.value.location.filename == __file__


@pytest.mark.parametrize("mode", ["FAST_COMPILE", "FAST_RUN"])
def test_slinalg_cholesky_reads_only_the_triangle_theano_reads(mode):
    """Theano's ``Cholesky(lower)`` is ``scipy.linalg.cholesky(x, lower)``: the factor of the
    symmetric matrix whose lower (``lower=False``: UPPER) triangle x holds, the other never
    read, and its gradient lives on that triangle. ``lower=False`` factored x's lower
    triangle and transposed the factor (a diagonal for an x that holds only its upper one)."""
    upper = np.array([[4.0, 2.0, 0.4], [0.0, 3.0, 0.5], [0.0, 0.0, 2.0]])
    spd = upper + np.triu(upper, 1).T
    for lower, held in [(False, upper + 9 * np.tril(np.ones(3), -1)), (True, upper.T)]:
        x = T.dmatrix("x")
        factor = T.slinalg.cholesky(x, lower=lower)
        f = theano.function([x], [factor, T.grad(factor.sum(), x)], mode=mode)
        got, grad = f(held)  # (the triangle not read holds garbage, 9s or zeros)
        want = scipy.linalg.cholesky(held, lower=lower)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(got @ got.T if lower else got.T @ got, spd, rtol=1e-12)
        step, numeric = 1e-6, np.zeros((3, 3))  # d sum(factor) / d x[i, j], SciPy's
        for i, j in np.ndindex(3, 3):
            bump = np.zeros((3, 3))
            bump[i, j] = step
            plus = scipy.linalg.cholesky(held + bump, lower=lower).sum()
            minus = scipy.linalg.cholesky(held - bump, lower=lower).sum()
            numeric[i, j] = (plus - minus) / (2 * step)
        np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-8)
        unread = np.tril(grad, -1) if not lower else np.triu(grad, 1)
        assert not unread.any()  # zero on the triangle not read


@pytest.mark.parametrize("mode", ["FAST_COMPILE", "FAST_RUN"])
def test_eye_takes_symbolic_sizes_and_diagonal_as_theanos_test_eye(mode):
    """Theano's ``Eye`` takes n, m and k as tensors (its test_basic.py ``test_eye`` compiles
    ``eye(N, M, k)`` of three iscalars); a k known now is ``sn.eye``'s, dtype "floatX" too."""
    N, M, K = T.iscalar("N"), T.iscalar("M"), T.iscalar("k")
    for dtype in ("float64", "int8"):
        f = theano.function([N, M, K], T.eye(N, M, K, dtype=dtype), mode=mode)
        for n, m, k in [(3, 3, 1), (3, 5, -1), (5, 3, 1), (4, 4, 0), (3, 4, 7), (2, 3, -5)]:
            got = f(n, m, k)
            assert got.dtype == dtype
            np.testing.assert_array_equal(got, np.eye(n, m, k))
    square = theano.function([N, K], T.eye(N, k=K), mode=mode)
    np.testing.assert_array_equal(square(3, -2), np.eye(3, k=-2))
    fixed = T.eye(3, 4, K)
    assert fixed.type.shape == (3, 4) and fixed.dtype == theano.config.floatX
    np.testing.assert_array_equal(theano.function([K], fixed, mode=mode)(2), np.eye(3, 4, 2))
    assert np.array_equal(T.eye(3, 4, T.constant(1)).eval(), np.eye(3, 4, 1))
    assert T.eye(2, dtype="floatX").dtype == theano.config.floatX
    with pytest.raises(sn.DTypeError, match=r"eye: k \(the diagonal\) must be an .*'kf' \(float32"):
        T.eye(3, 3, T.fscalar("kf"))
    with pytest.raises(sn.DTypeError, match="eye: n .* integer scalar, not 'nf'"):
        T.eye(T.fscalar("nf"), 3, K)
    with pytest.raises(sn.ShapeError, match="eye: m=-1 is negative"):
        T.eye(3, -1, K)
    with pytest.raises(Exception, match="eye: n must be >= 0; got -2"):
        square(-2, 0)


@pytest.mark.parametrize("mode", ["FAST_COMPILE", "FAST_RUN"])
@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "uint8", "bool", "float32"])
def test_cumsum_and_cumprod_keep_the_input_dtype_as_theanos_cumop(dtype, mode):
    """Theano's ``CumOp`` gave its output x's type (``T.cumsum`` of an ivector is int32, of a
    bvector int8, wrapping as int8 does), where NumPy widens small ints to int64; so do the
    methods ``x.cumsum()``/``x.cumprod()`` of a Theano graph."""
    v = T.vector("v", dtype=dtype)
    values = np.array([100, 100, 3, 0, 1] if dtype != "bool" else [0, 1, 0, 1, 1]).astype(dtype)
    builds = {
        "T.cumsum": (T.cumsum(v), np.cumsum),
        "T.cumprod axis 0": (T.cumprod(v, axis=0), np.cumprod),
        "extra_ops.cumsum": (T.extra_ops.cumsum(v), np.cumsum),
        "extra_ops.cumprod": (T.extra_ops.cumprod(v, 0), np.cumprod),
        "v.cumsum()": (v.cumsum(), np.cumsum),
        "v.cumprod(0)": (v.cumprod(0), np.cumprod),
    }
    got = theano.function([v], [out for out, _ in builds.values()], mode=mode)(values)
    for (name, (out, numpy_fn)), value in zip(builds.items(), got):
        want = numpy_fn(values, dtype=dtype)  # computed in x's dtype, wrapping as it does
        assert (name, str(out.dtype), value.dtype) == (name, dtype, want.dtype)
        np.testing.assert_array_equal(value, want)
    m = T.imatrix("m")
    assert T.cumsum(m, axis=1).dtype == "int32" and T.cumsum(m, dtype="int64").dtype == "int64"
    assert sn.cumsum(sn.tensor("s", shape=(3,), dtype="int32")).dtype == "int64"  # NumPy's


@pytest.mark.parametrize("mode", ["FAST_COMPILE", "FAST_RUN"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_round_half_away_is_exact_next_to_halves_and_for_large_odd_values(mode, dtype):
    """floor(|a| + 0.5) rounded the sum: 0.49999997 gave 1 and 2**23 + 1 gave 2**23 + 2."""
    big = 2.0 ** np.finfo(dtype).nmant + 1
    below_half = np.nextafter(np.array(0.5, dtype), 0)
    values = np.array([big, -big, below_half, -below_half, 2.5, -2.5, 1.5, -0.0, np.nan, np.inf])
    values = values.astype(dtype)
    whole = np.trunc(values)
    with np.errstate(invalid="ignore"):  # inf - inf, in this reference only
        want = np.where(np.abs(values - whole) >= 0.5, whole + np.sign(values), whole)
    x = T.TensorType(dtype, (False,))("x")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning for inf either
        got = theano.function([x], T.round(x), mode=mode)(values)
    np.testing.assert_array_equal(got, want)
    assert got[0] == big and got[2] == 0 and got[4] == 3 and np.signbit(got[7])
    as_int = theano.function([x], T.iround(x), mode=mode)(values[:6])
    np.testing.assert_array_equal(as_int, [int(big), -int(big), 0, 0, 3, -3])


@pytest.mark.parametrize(
    ("build", "error", "message"),
    [
        (lambda m: T.addbroadcast(m, 5), sn.ShapeIndexError, "addbroadcast: axis 5 is out of"),
        (lambda m: T.addbroadcast(m, 0, -3), sn.ShapeIndexError, "addbroadcast: axis -3 is out"),
        (
            lambda m: T.addbroadcast(m, "a"),
            sn.ShapeTypeError,
            "addbroadcast: axis is one int, not 'a'",
        ),
        (
            lambda m: T.addbroadcast(m, True),
            sn.ShapeTypeError,
            "addbroadcast: axis is one int, not True",
        ),
        (
            lambda m: T.patternbroadcast(m, ("a", False)),
            sn.ShapeTypeError,
            "one bool per dim .* not 'a'",
        ),
        (lambda m: T.patternbroadcast(m, (1, 0)), sn.ShapeTypeError, "one bool per dim .* not 1"),
        (lambda m: T.Rebroadcast((2, True))(m), sn.ShapeIndexError, "addbroadcast: axis 2 is out"),
        (
            lambda m: T.Rebroadcast((-3, False))(m),
            sn.ShapeIndexError,
            "unbroadcast: axis -3 is out",
        ),
        (
            lambda m: T.Rebroadcast((0, 1)),
            sn.ShapeTypeError,
            r"pairs \(axis, flag\) .* not \(0, 1\)",
        ),
    ],
)
def test_rebroadcasting_an_axis_x_does_not_have_is_refused(build, error, message):
    """``T.addbroadcast(m, 5)`` (and ``-3``, ``"a"``) silently did nothing; Theano raised
    "Trying to rebroadcast non-existent dimension", as ``T.unbroadcast`` raises here."""
    m = T.matrix("m")
    with pytest.raises(error, match=message) as info:
        build(m)
    assert "test_tensor.py" in str(info.value)
    assert "'m' (float64(?, ?))" in str(info.value) or "Rebroadcast takes" in str(info.value)


def test_rebroadcast_adds_and_removes_broadcastable_dims_as_theano_s():
    m, col = T.matrix("m"), T.col("c")
    assert T.addbroadcast(m, -1, 0).broadcastable == (True, True)
    assert T.Rebroadcast((0, True), (1, False))(col).broadcastable == (True, False)
    got = theano.function([col], T.Rebroadcast((0, True))(col) * 2)(np.ones((1, 1)))
    np.testing.assert_array_equal(got, [[2.0]])


def test_patternbroadcast_applies_the_whole_pattern_so_an_update_fits_its_shared_variable():
    """Theano's ``Rebroadcast`` sets every axis the pattern names: a False entry unmarks a
    broadcastable dim, as ``T.unbroadcast`` does. Only the True entries were applied, so
    ``patternbroadcast(new_W, W.broadcastable)`` kept a (True, False) update for a (False,
    False) shared W and the update was refused."""
    W = theano.shared(np.ones((1, 3)), name="W")
    new = T.patternbroadcast(W.mean(axis=0, keepdims=True) * 2, W.broadcastable)
    assert new.broadcastable == (False, False)
    theano.function([], [], updates=[(W, new)])()
    np.testing.assert_array_equal(W.get_value(), np.full((1, 3), 2.0))


def test_theanos_rounding_and_broadcast_patterns():
    x = T.dvector("x")
    halves = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.2])
    np.testing.assert_array_equal(run([x], T.round(x), halves), [-3, -2, -1, 1, 2, 3, 0])
    np.testing.assert_array_equal(run([x], T.round(x, "half_to_even"), halves), np.round(halves))
    assert run([x], T.iround(x), halves).dtype == np.int64
    with pytest.raises(ValueError, match="half_away_from_zero"):
        T.round(x, "up")
    m = T.matrix("m")
    col = T.addbroadcast(m, 1)
    assert col.broadcastable == (False, True)
    assert T.patternbroadcast(m, (True, False)).broadcastable == (True, False)
    np.testing.assert_array_equal(run([m], col + m, np.ones((3, 1))), np.full((3, 1), 2.0))
    with pytest.raises(Exception, match="reshape"):  # a dim marked 1 that is not: refused
        run([m], col, np.ones((3, 2)))
    loose = T.unbroadcast(col, 1)
    assert loose.broadcastable == (False, False)  # Theano's rule: the axis may be any length
    np.testing.assert_array_equal(run([m], T.squeeze(loose), np.ones((3, 1))), np.ones((3, 1)))
    assert T.unbroadcast(m, 0, 1) is m  # nothing broadcastable to loosen
    assert T.patternbroadcast(T.row("r"), (False, False)).broadcastable == (False, False)
    assert T.patternbroadcast(col, (True, False)).broadcastable == (True, False)
    with pytest.raises(sn.ShapeError, match=r"patternbroadcast: the pattern .* 3 entries, but 'm'"):
        T.patternbroadcast(m, (True, False, False))
    labels = T.ivector("y")
    np.testing.assert_array_equal(
        run([labels], T.extra_ops.to_one_hot(labels, 3), np.array([2, 0], "int32")),
        [[0, 0, 1], [1, 0, 0]],
    )
    z = T.matrix("z")
    loss = T.nnet.crossentropy_categorical_1hot(T.nnet.softmax(z), labels)
    got = run([z, labels], loss, A[:2], np.array([3, 1], "int32"))
    p = np.exp(A[:2]) / np.exp(A[:2]).sum(1, keepdims=True)
    np.testing.assert_allclose(got, -np.log(p[[0, 1], [3, 1]]), rtol=1e-12)


def test_unbroadcast_loosens_the_type_and_keeps_values_and_gradients():
    """``T.unbroadcast(row, 0)`` is ``(False, False)`` in Theano 1.0, so ``T.squeeze`` keeps
    that axis; the value is the row's and the gradient has the row's type again."""
    r, m = T.row("r"), T.matrix("m")
    u = T.unbroadcast(r, -2)
    assert u.broadcastable == (False, False) and r.broadcastable == (True, False)
    rv, mv = np.array([[1.0, 2.0, 3.0]]), np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(run([r], T.squeeze(u), rv), rv)
    g = T.grad(T.sum((u * m) ** 2), r)
    assert g.broadcastable == (True, False)
    np.testing.assert_allclose(run([r, m], g, rv, mv), (2 * rv * mv**2).sum(0, keepdims=True))
    with pytest.raises(sn.ShapeError, match="unbroadcast: axis 2 is out of range for 'r'"):
        T.unbroadcast(r, 2)


def test_printing_print_prints_the_value_when_computed(capsys):
    x = T.dvector("x")
    f = theano.function([x], theano.printing.Print("this is x")(x) * 2)
    np.testing.assert_array_equal(f(np.array([1.0, 2.0])), [2.0, 4.0])
    assert capsys.readouterr().out == "this is x __str__ = [1. 2.]\n"


def test_t_var_is_the_variance_and_tensor_var_stays_importable(rng):
    """``theano/tensor/var.py`` and ``T.var`` share a name in Theano too: the submodule must
    not shadow the function, whichever of the two a program imports first."""
    m = T.dmatrix("m")
    a = rng.normal(size=(4, 3))
    np.testing.assert_allclose(run([m], T.var(m), a), np.var(a))
    np.testing.assert_allclose(run([m], T.var(m, axis=0, ddof=1), a), np.var(a, 0, ddof=1))
    got = run([m], T.var(m, axis=1, keepdims=True, corrected=True), a)
    np.testing.assert_allclose(got, np.var(a, 1, keepdims=True))  # corrected: not ddof=1
    from symnb.compat.theano.tensor.var import TensorType, TensorVariable

    assert isinstance(m, TensorVariable) and TensorType is T.TensorType
    program = (
        "{first}\n"
        "import symnb.compat.theano.tensor as T\n"
        "from symnb.compat.theano.tensor.var import TensorVariable\n"
        "x = T.dvector('x')\n"
        "print(callable(T.var), T.var(x).type.ndim, isinstance(x, TensorVariable))\n"
    )
    for first in ("import symnb.compat.theano", "import symnb.compat.theano.tensor.var"):
        assert run_python(program.format(first=first)).split() == ["True", "0", "True"]


@pytest.mark.parametrize("mode", ["FAST_COMPILE", "FAST_RUN"])
@pytest.mark.parametrize("ddof", [0, 1])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_var_and_std_corrected_keep_ddof_as_theanos_corrected_two_pass(mode, ddof, axis):
    """Theano 1.0's ``corrected=True`` is its "corrected two-pass" algorithm: the same ddof
    variance less a rounding correction, ``mean(c)**2`` of the centred c, not ddof=1."""
    m = T.dmatrix("m")
    a = np.array([[1.0, 2.0, 4.0, 7.0], [0.5, -1.0, 3.0, 2.0], [5.0, 5.0, 6.0, 9.0]])
    f = theano.function(
        [m], [T.var(m, axis, ddof, corrected=True), T.std(m, axis, ddof, False, True)], mode=mode
    )
    variance, deviation = f(a)
    np.testing.assert_allclose(variance, np.var(a, axis, ddof=ddof))
    np.testing.assert_allclose(deviation, np.std(a, axis, ddof=ddof))
    if axis is not None:  # one axis: Theano's own formula, transcribed, gives the same
        c = a - a.mean(axis, keepdims=True)
        n = a.shape[axis] - ddof
        theano_var = (c**2).sum(axis) / n - c.sum(axis) ** 2 / (n * a.shape[axis])
        np.testing.assert_allclose(variance, theano_var)


@pytest.mark.parametrize("mode", ["FAST_COMPILE", "FAST_RUN"])
def test_var_and_std_of_a_complex_tensor_are_theanos_complex_ones(mode):
    """Theano 1.0's T.var is mean((x - mean(x)) ** 2) with the plain complex square: complex,
    of x's dtype; T.std its complex sqrt. It was NumPy's real mean(|x - mean|**2) (3.25)."""
    c, zm = T.cvector("c"), T.zmatrix("zm")
    v = np.array([1 + 2j, 3 - 1j], dtype=np.complex64)
    m = np.array([[1 + 2j, 3 - 1j, -2j], [0.5, 4 + 4j, 1 - 1j]])
    f = theano.function(
        [c, zm],
        [T.var(c), T.std(c), c.var(), T.var(zm, axis=1, ddof=1), T.var(zm, 0, keepdims=True)],
        mode=mode,
    )
    var, std, method, rows, columns = f(v, m)
    assert var.dtype == std.dtype == method.dtype == np.complex64
    np.testing.assert_allclose(var, -1.25 - 3j, rtol=1e-6)  # ((-1+1.5j)**2 + (1-1.5j)**2) / 2
    np.testing.assert_allclose(std, np.sqrt(np.complex64(-1.25 - 3j)), rtol=1e-6)
    np.testing.assert_allclose(method, var)
    centred = m - m.mean(axis=1, keepdims=True)
    assert rows.dtype == columns.dtype == np.complex128
    np.testing.assert_allclose(rows, (centred**2).sum(axis=1) / 2)
    np.testing.assert_allclose(columns, ((m - m.mean(0)) ** 2).mean(0, keepdims=True))


def test_sgn_round_and_iround_refuse_complex_naming_the_function_called():
    """Theano 1.0 refused complex input to sgn (``same_out_nocomplex``) and round
    (``same_out_float_only``) when the graph was built. T.sgn took it (NumPy 2's z/|z|), and
    T.round/T.iround were refused naming trunc, a step of the layer's formula."""
    z = T.zvector("z")
    for name, make in [
        ("sgn", lambda: T.sgn(z)),
        ("round", lambda: T.round(z)),
        ("round", lambda: T.round(z, "half_to_even")),
        ("round", lambda: z.round()),
        ("iround", lambda: T.iround(z)),
    ]:
        with pytest.raises(sn.DTypeError) as info:
            make()
        message = str(info.value)
        assert isinstance(info.value, TypeError)  # as Theano's
        assert message.startswith(
            f"T.{name}: 'z' (complex128(?,)) is complex, which Theano's {name} refuses ("
        ), message
        assert "trunc" not in message and info.value.location.filename == __file__
    assert "hint: z / abs(z) is NumPy 2's sign" in str(pytest.raises(TypeError, T.sgn, z).value)
    x = T.dvector("x")
    np.testing.assert_array_equal(run([x], T.sgn(x), np.array([-2.0, 0, 3])), [-1, 0, 1])


def test_conj_real_and_imag_of_complex_tensors():
    """T.conj(z) and z.conj() raised NotImplementedError("symnb has no complex math"),
    though docs/theano.md lists x.conj(); T.real/T.imag and z.real/z.imag are Theano's too."""
    z, c = T.zvector("z"), T.cvector("c")
    v = np.array([1 + 2j, 3 - 4j])
    got = run([z], [T.conj(z), z.conj(), z.conjugate(), T.real(z), T.imag(z), z.real, z.imag], v)
    for g, want in zip(got, [np.conj(v)] * 3 + [v.real, v.imag] * 2):
        assert g.dtype == want.dtype
        np.testing.assert_array_equal(g, want)
    parts = run([c], [T.conj(c), T.real(c)], v.astype(np.complex64))
    assert [p.dtype for p in parts] == [np.complex64, np.float32]
    x = T.dvector("x")  # a real tensor's conjugate is a copy of it
    np.testing.assert_array_equal(run([x], T.conj(x), np.array([1.0, -2.0])), [1.0, -2.0])


@pytest.mark.parametrize("mode", ["FAST_COMPILE", "FAST_RUN"])
def test_var_with_ddof_over_several_axes_is_numpys_as_docs_theano_md_says(mode):
    """docs/theano.md: with ddof over several axes T.var/T.std divide by N - ddof, as NumPy;
    Theano 1.0 divided by each reduced axis's shape[i] - ddof, a quirk not copied."""
    m, t = T.dmatrix("m"), T.dtensor3("t")
    a = np.array([[1.0, 2.0, 4.0, 7.0], [0.5, -1.0, 3.0, 2.0], [5.0, 5.0, 6.0, 9.0]])
    b = np.arange(24.0).reshape(2, 3, 4) ** 1.5
    f = theano.function(
        [m, t],
        [T.var(m, ddof=1), T.std(m, ddof=1), m.var(None, 1), T.var(t, [0, 2], 1, True)],
        mode=mode,
    )
    whole, deviation, method, two_axes = f(a, b)
    squares = ((a - a.mean()) ** 2).sum()
    np.testing.assert_allclose(whole, squares / 11)  # Theano 1.0: squares / (2 * 3)
    np.testing.assert_allclose(deviation, np.sqrt(squares / 11))
    np.testing.assert_allclose(method, np.var(a, ddof=1))
    np.testing.assert_allclose(two_axes, np.var(b, (0, 2), ddof=1, keepdims=True))
    docs = (Path(__file__).parents[2] / "docs" / "theano.md").read_text()
    difference = docs.split("## Where the layer differs from Theano")[1]
    assert "**`T.var`/`T.std` with `ddof` over several axes**" in difference
    assert "`sum / (2 * 3)`" in difference


@pytest.mark.parametrize("mode", ["FAST_COMPILE", "FAST_RUN"])
def test_gradients_at_tied_maxima_are_symnbs_as_docs_theano_md_says(mode):
    """docs/theano.md: T.max/T.min share the gradient 1/k among k tied elements (Theano gave
    each all of it, ``g * eq(x, max)``), and max pooling gives a window's gradient to its
    first maximum in row-major order (Theano's to every element equal to the maximum)."""
    v, m, t = T.dvector("v"), T.dmatrix("m"), T.dtensor4("t")
    a = np.array([1.0, 3.0, 3.0, 2.0, 3.0])
    got = theano.function([v], T.grad(T.max(v), v), mode=mode)(a)
    np.testing.assert_allclose(got, (a == 3.0) / 3)  # Theano: (a == 3.0) * 1.0
    got = theano.function([v], T.grad(T.min(v), v), mode=mode)(a)
    np.testing.assert_allclose(got, a == 1.0)  # no tie: the same as Theano
    b = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]])
    cost = T.sum(T.max(m, axis=1) * np.array([1.0, 2.0]))
    got = theano.function([m], T.grad(cost, m), mode=mode)(b)
    np.testing.assert_allclose(got, [[0.0, 0.5, 0.5], [1.0, 1.0, 0.0]])  # Theano: 0 1 1, 2 2 0
    image = np.array([[1, 4, 4, 0], [4, 2, 1, 1], [0, 0, 5, 5], [5, 5, 5, 0]], float)[None, None]
    pooled = pool.pool_2d(t, (2, 2), ignore_border=True)
    weights = np.array([[1.0, 10.0], [100.0, 1000.0]])
    got = theano.function([t], T.grad(T.sum(pooled * weights), t), mode=mode)(image)
    first = np.zeros((4, 4))  # each 2x2 window's first maximum, row by row
    first[0, 1], first[0, 2], first[3, 0], first[2, 2] = 1.0, 10.0, 100.0, 1000.0
    np.testing.assert_array_equal(got[0, 0], first)
    maxima = np.kron([[4.0, 4.0], [5.0, 5.0]], np.ones((2, 2)))  # each element's window's
    theanos = np.kron(weights, np.ones((2, 2))) * (image[0, 0] == maxima)
    assert not np.array_equal(got[0, 0], theanos)  # every tie: 1, 1 | 10 | 100, 100 | 1000 x3


def test_batch_normalization_train_and_test_follow_theano(rng):
    x = rng.normal(size=(6, 3, 2, 2)) * 2 + 1
    g, b = rng.uniform(0.5, 2, (1, 3, 1, 1)), rng.normal(size=(1, 3, 1, 1))
    rm, rv = np.zeros((1, 3, 1, 1)), np.ones((1, 3, 1, 1))
    t4 = T.tensor4("x")
    gv, bv, rmv, rvv = (T.TensorType("float64", (True, False, True, True))(n) for n in "gbmv")
    outs = T.nnet.bn.batch_normalization_train(
        t4, gv, bv, "spatial", 1e-3, 0.2, running_mean=rmv, running_var=rvv
    )
    out, mean, invstd, new_m, new_v = run([t4, gv, bv, rmv, rvv], list(outs), x, g, b, rm, rv)
    m, v = x.mean(axis=(0, 2, 3), keepdims=True), x.var(axis=(0, 2, 3), keepdims=True)
    np.testing.assert_allclose(mean, m)
    np.testing.assert_allclose(invstd, 1 / np.sqrt(v + 1e-3))
    np.testing.assert_allclose(out, (x - m) * g / np.sqrt(v + 1e-3) + b)
    np.testing.assert_allclose(new_m, 0.8 * rm + 0.2 * m)
    np.testing.assert_allclose(new_v, 0.8 * rv + 0.2 * v * 24 / 23)
    three = T.nnet.bn.batch_normalization_train(t4, gv, bv, "spatial")
    assert len(three) == 3
    test_out = T.nnet.bn.batch_normalization_test(t4, gv, bv, rmv, rvv, "spatial", 1e-3)
    np.testing.assert_allclose(
        run([t4, gv, bv, rmv, rvv], test_out, x, g, b, m, v), (x - m) * g / np.sqrt(v + 1e-3) + b
    )
    assert T.nnet.batch_normalization is T.nnet.bn.batch_normalization


@pytest.mark.parametrize(
    "axes, normalised", [("spatial", (0, 2, 3)), ("per-activation", (0,)), ((0, 3), (0, 3))]
)
def test_batch_normalization_params_of_fewer_dims_sit_on_the_axes_not_normalised(
    rng, axes, normalised
):
    """Theano 1.0's other layout: one dim per axis not normalised, ``(C,)`` for "spatial". It
    broadcast against the last axis (C == W here hid it) and gave (1, C, 1, C) statistics."""
    x = rng.normal(size=(4, 3, 2, 3)) * 2 + 1
    kept = tuple(a for a in range(4) if a not in normalised)
    shape = tuple(x.shape[a] for a in kept)
    g, b = rng.uniform(0.5, 2, shape), rng.normal(size=shape)
    rm, rv = rng.normal(size=shape), rng.uniform(0.5, 2, shape)
    t4 = T.tensor4("x")
    gv, bv, rmv, rvv = (T.TensorType("float64", (False,) * len(kept))(n) for n in "gbmv")
    outs = T.nnet.bn.batch_normalization_train(
        t4, gv, bv, axes, 1e-3, 0.2, running_mean=rmv, running_var=rvv
    )
    got = run([t4, gv, bv, rmv, rvv], list(outs), x, g, b, rm, rv)
    m, v = x.mean(axis=normalised), x.var(axis=normalised)
    wide = [slice(None) if a in kept else None for a in range(4)]
    ref = (x - m[tuple(wide)]) * (g / np.sqrt(v + 1e-3))[tuple(wide)] + b[tuple(wide)]
    count = x.size // m.size
    want = [
        ref,
        m,
        1 / np.sqrt(v + 1e-3),
        0.8 * rm + 0.2 * m,
        0.8 * rv + 0.2 * v * count / (count - 1),
    ]
    for have, expected in zip(got, want, strict=True):
        assert have.shape == expected.shape
        np.testing.assert_allclose(have, expected, rtol=1e-12)
    test_out = T.nnet.bn.batch_normalization_test(t4, gv, bv, rmv, rvv, axes, 1e-3)
    np.testing.assert_allclose(run([t4, gv, bv, rmv, rvv], test_out, x, g, b, m, v), ref)
    with pytest.raises(sn.ShapeError, match=r"batch_normalization_train: beta 'b'.*4 dims"):
        T.nnet.bn.batch_normalization_train(t4, gv, T.tensor4("b"), axes)


def test_selu_crossentropy_softmax_1hot_grad_scale_same_size_pool(rng):
    z = rng.normal(size=(3, 4)) * 2
    m, y = T.matrix("m"), T.ivector("y")
    scale, alpha = 1.0507009873554805, 1.6732632423543772
    np.testing.assert_allclose(
        run([m], T.nnet.selu(m), z), scale * np.where(z > 0, z, alpha * np.expm1(z))
    )
    labels = np.array([0, 3, 1], "int32")
    nll, sm = run([m, y], list(T.nnet.crossentropy_softmax_1hot(m, y)), z, labels)
    want_sm = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(sm, want_sm)
    np.testing.assert_allclose(nll, -np.log(want_sm[np.arange(3), labels]))
    scaled = theano.gradient.grad_scale(m, 3.0)
    value, g = run([m], [scaled, T.grad((scaled**2).sum(), m)], z)
    np.testing.assert_allclose(value, z)
    np.testing.assert_allclose(g, 3.0 * 2 * z)
    img = rng.permutation(25).astype(float).reshape(1, 1, 5, 5)
    i4 = T.tensor4("i")
    same = run([i4], pool.max_pool_2d_same_size(i4, (2, 2)), img)
    want = np.zeros_like(img)
    for i in range(2):
        for j in range(2):
            win = img[0, 0, 2 * i : 2 * i + 2, 2 * j : 2 * j + 2]
            r, c = np.unravel_index(win.argmax(), (2, 2))
            want[0, 0, 2 * i + r, 2 * j + c] = win.max()
    np.testing.assert_allclose(same, want)


def test_topk_and_argtopk_give_the_k_largest_or_smallest_in_descending_order():
    """Theano 1.0's ``T.topk``/``argtopk``/``topk_and_argtopk`` (theano/tensor/sort.py) were
    bare AttributeErrors. ``kth`` > 0: the largest; < 0: the smallest |kth|; both in
    descending order (what Theano's ``sorted=True`` promised); a constant or symbolic kth,
    axis=None flattening x; the gradient goes to the elements picked."""
    x, k = T.dmatrix("x"), T.iscalar("k")
    X = np.random.RandomState(0).randn(4, 6)
    descending = -np.sort(-X, axis=1)
    f = theano.function(
        [x, k],
        [
            T.topk(x, 2),
            T.argtopk(x, -2),
            T.topk(x, -2, sorted=False),
            T.topk(x, 2, axis=0),
            T.topk(x, k),
            T.argtopk(x, k, idx_dtype="int32"),
            T.topk(x, 3, axis=None),
            *T.topk_and_argtopk(x, 1),
        ],
    )
    got = f(X, -3)
    np.testing.assert_array_equal(got[0], descending[:, :2])
    np.testing.assert_array_equal(got[1], np.argsort(X, axis=1)[:, 1::-1])
    assert got[1].dtype == np.int64
    np.testing.assert_array_equal(got[2], descending[:, -2:])
    np.testing.assert_array_equal(got[3], -np.sort(-X, axis=0)[:2])
    np.testing.assert_array_equal(got[4], descending[:, -3:])
    np.testing.assert_array_equal(got[5], np.argsort(X, axis=1)[:, 2::-1])
    assert got[5].dtype == np.int32
    np.testing.assert_array_equal(got[6], -np.sort(-X.ravel())[:3])
    np.testing.assert_array_equal(got[7], X.max(axis=1, keepdims=True))
    np.testing.assert_array_equal(got[8], X.argmax(axis=1)[:, None])
    np.testing.assert_array_equal(f(X, 3)[4], descending[:, :3])
    for bad, says in [(0, "must not be 0 (1 > 0)"), (7, "length of axis 1 (7 > 6)")]:
        with pytest.raises(sn.ShapeError, match=re.escape(says)):
            f(X, bad)
    with pytest.raises(sn.ShapeError, match="T.topk: kth=7 of 'y' .* more than the 6 along"):
        T.topk(sn.tensor("y", shape=(4, 6), dtype="float64"), 7)
    gx = T.grad(T.sum(T.topk(x, 2) * np.array([1.0, 2.0])), x)
    want = np.zeros_like(X)
    np.put_along_axis(want, np.argsort(-X, axis=1)[:, :2], [1.0, 2.0], axis=1)
    np.testing.assert_array_equal(run([x], gx, X), want)


def test_specify_shape_checks_the_shape_when_the_function_runs():
    """Theano 1.0's ``T.specify_shape(x, shape)`` was a bare AttributeError. x comes back
    once its shape is checked when the function runs: ints (known in the type from then
    on), integer scalars of the graph, or an integer vector; a ShapeError names x and both
    shapes. The gradient is x's."""
    x, n, s = T.dmatrix("x"), T.iscalar("n"), T.ivector("s")
    X = np.arange(20.0).reshape(4, 5)
    fixed = T.specify_shape(x, (4, 5))
    assert fixed.type.shape == (4, 5)
    assert T.specify_shape(x, (1, 5)).broadcastable == (False, False)  # Theano kept x's
    f = theano.function([x, n, s], [fixed * 2, T.specify_shape(x, (n, 5)), T.specify_shape(x, s)])
    got = f(X, 4, np.array([4, 5], "int32"))
    np.testing.assert_array_equal(got[0], 2 * X)
    np.testing.assert_array_equal(got[1], X)
    np.testing.assert_array_equal(got[2], X)
    for args, says in [
        ((np.ones((3, 5)), 3, [3, 5]), "((3, 5), not (4, 5), when the function ran)"),
        ((X, 2, [4, 5]), "((4, 5), not (n, 5) = (2, 5), when the function ran)"),
        ((X, 4, [4, 6]), "= (4, 6), when the function ran)"),
        ((X, 4, [4, 5, 1]), "more lengths than its axes (3 > 2)"),
    ]:
        with pytest.raises(sn.ShapeError) as info:
            f(args[0], args[1], np.array(args[2], "int32"))
        message = str(info.value)
        assert message.startswith("T.specify_shape: 'x' (float64(?, ?))"), message
        assert says in message, message
    with pytest.raises(sn.ShapeError, match=r"1 lengths \(4,\) for 2 axes"):
        T.specify_shape(x, (4,))
    with pytest.raises(sn.ShapeError, match="axis 1 has 5, not 6"):
        T.specify_shape(fixed, (4, 6))
    gx = T.grad(T.sum(T.specify_shape(x, (n, 5)) ** 2), x)
    np.testing.assert_array_equal(theano.function([x, n], gx)(X, 4), 2 * X)


@pytest.mark.parametrize(
    ("call", "error", "builtin", "message"),
    [
        (lambda m: T.join(0.5, m, m), sn.ShapeTypeError, TypeError, "T.join: axis must be an int"),
        (lambda m: T.stack([m], bogus=1), sn.ArgumentError, TypeError, "T.stack: unexpected"),
        (lambda m: T.stack([]), sn.ArgumentError, ValueError, "T.stack: tensors is empty"),
        (lambda m: T.round(m, mode="up"), sn.ArgumentError, ValueError, "round: mode must be"),
        (
            lambda m: pool.pool_2d(m, (2, 2), mode="median", ignore_border=True),
            sn.ArgumentError,
            ValueError,
            "pool_2d: mode must be one of",
        ),
        (
            lambda m: pool.pool_2d(T.vector(), (2, 2), ignore_border=True),
            sn.ShapeError,
            ValueError,
            "pool_2d: .*input.* must have 2 to 4 dims",
        ),
        (
            lambda m: theano.shared(np.ones(3), broadcastable=(False, False)),
            sn.ShapeError,
            ValueError,
            r"shared: broadcastable \(False, False\) does not fit a 1-d value",
        ),
        (lambda m: theano.In(3), sn.ArgumentError, TypeError, "In: 3 is not a symbolic variable"),
        (lambda m: T.extra_ops.diff(m, n=-1), sn.ArgumentError, ValueError, "diff: n is the order"),
        (lambda m: theano.function([m], m, mode="fast"), sn.ArgumentError, ValueError, "unknown"),
    ],
)
def test_a_bad_argument_to_the_layer_is_a_symnb_error_at_the_users_line(
    call, error, builtin, message
):
    """Each was a plain TypeError or ValueError (with the line), which `symnb check` filed as
    a failure of its own, not as the program's error; each keeps its builtin."""
    with pytest.raises(error, match=message) as caught:
        call(T.matrix("m"))
    assert isinstance(caught.value, sn.SymnbError) and isinstance(caught.value, builtin)
    assert f"test_tensor.py, line {call.__code__.co_firstlineno}" in str(caught.value)
