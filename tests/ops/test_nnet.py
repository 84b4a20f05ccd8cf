"""Neural-net ops against SciPy/NumPy: softmax, log-softmax, cross-entropies, stability, grads."""

import numpy as np
import pytest
import scipy.special as sps

import symnb as sn
from tests.helpers import check, random_array, tolerance
from tests.helpers import run as run_on

SHAPES_AXES = [((3, 4), -1), ((3, 4), 0), ((2, 3, 4), 1), ((5,), 0), ((0, 4), -1), ((3, 0), -1)]


@pytest.mark.parametrize("shape,axis", SHAPES_AXES)
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int8"])
@pytest.mark.parametrize(
    "fn,ref", [(sn.softmax, sps.softmax), (sn.log_softmax, sps.log_softmax)], ids=["sm", "lsm"]
)
def test_softmax_family_matches_scipy(fn, ref, shape, axis, dtype, rng, backend):
    a = random_array(rng, shape, dtype)
    out_dtype = np.exp(a).dtype
    want = ref(a.astype("float64"), axis=axis) if a.size else np.zeros(shape)  # scipy refuses 0
    want = want.astype(out_dtype)
    tol = tolerance(want.dtype, 10)
    check(run_on(lambda x: fn(x, axis=axis), a, backend=backend), want, rtol=tol, atol=tol)


def test_softmax_and_log_softmax_are_stable(backend):
    a = np.array([[1000.0, 0.0, -1000.0], [-1000.0, -1000.0, -1001.0]])
    got = run_on(sn.softmax, a, backend=backend)
    assert np.all(np.isfinite(got))
    check(got, sps.softmax(a, axis=-1))
    got = run_on(sn.log_softmax, a, backend=backend)
    assert np.all(np.isfinite(got))
    check(got, sps.log_softmax(a, axis=-1))


@pytest.mark.parametrize("shape,axis", [((4, 3), -1), ((2, 3, 5), 1), ((3,), 0), ((0, 3), -1)])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_crossentropy_with_integer_labels(shape, axis, dtype, rng, backend):
    p = sps.softmax(rng.normal(size=shape), axis=axis).astype(dtype)
    rows = shape[: axis % len(shape)] + shape[axis % len(shape) + 1 :]
    labels = rng.integers(0, shape[axis], size=rows)
    want = -np.log(np.take_along_axis(p, np.expand_dims(labels, axis), axis)).squeeze(axis)
    got = run_on(lambda q, y: sn.crossentropy(q, y, axis=axis), p, labels, backend=backend)
    check(got, want)


@pytest.mark.parametrize("n", [4, None])
def test_crossentropy_refuses_a_negative_label(n, rng, backend):
    """A label -1 read the last class (NumPy's indexing in the gather): the loss of a
    plausible, wrong class. It is a ValueError naming the op, the label and the number of
    classes (where the graph knows it), as the fused softmax cross-entropy's is."""
    p = sps.softmax(rng.normal(size=(3, 4)), axis=1)
    q = sn.tensor("q", shape=(3, n))
    y = sn.tensor("y", shape=(3,), dtype="int32")
    loss = sn.crossentropy(q, y)
    f = sn.function([q, y], [loss, sn.grad(sn.sum(loss), q)], backend=backend)
    check(f(p, np.array([0, 3, 1], "int32"))[0], -np.log(p[[0, 1, 2], [0, 3, 1]]))
    where = "for axis 1 of size 4: class labels are 0 to 3"  # (n read when it runs)
    with pytest.raises(ValueError, match=rf"categorical_crossentropy: label -1 .* {where}"):
        f(p, np.array([0, -1, 1], "int32"))
    with pytest.raises(ValueError, match=rf"categorical_crossentropy: label 4 .* {where}"):
        f(p, np.array([0, 4, 1], "int32"))  # (not the gather's IndexError)


@pytest.mark.parametrize("n", [4, None])
def test_crossentropy_checks_unsigned_labels_beyond_the_classes(n):
    """Unsigned labels cannot be negative, but can be beyond the classes: a ValueError, as
    for signed ones; constant labels are checked when the graph is built, at the user's
    line."""
    q, y = sn.tensor("q", shape=(2, n)), sn.tensor("y", shape=(None,), dtype="uint8")
    f = sn.function([q, y], sn.crossentropy(q, y), backend="py", optimize="none")
    p = np.full((2, 4), 0.25)
    check(f(p, np.array([3, 0], "uint8")), np.full(2, np.log(4.0)))
    with pytest.raises(ValueError, match="label 4 is out of range for axis 1 of size 4"):
        f(p, np.array([4, 0], "uint8"))
    with pytest.raises(sn.ArgumentError, match="label -2 is out of range for axis 1") as info:
        sn.crossentropy(q, np.array([1, -2]))
    assert "test_nnet.py" in str(info.value)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_crossentropy_with_one_hot_and_soft_targets(dtype, rng, backend):
    p = sps.softmax(rng.normal(size=(4, 3)), axis=-1).astype(dtype)
    soft = sps.softmax(rng.normal(size=(4, 3)), axis=-1).astype(dtype)
    one_hot = np.eye(3, dtype=dtype)[[0, 2, 1, 1]]
    for t in (soft, one_hot):
        got = run_on(sn.categorical_crossentropy, p, t, backend=backend)
        check(got, -np.sum(t * np.log(p), axis=-1))


@pytest.mark.parametrize("dtype", ["int32", "int8", "bool"])
def test_crossentropy_with_integer_one_hot_rows(dtype, rng, backend):
    """A target with p's dims is a distribution whatever its dtype (Theano's rule, by ndim):
    integer one-hot rows give -sum(t * log p), NumPy's dtype; labels have one dim less."""
    p = sps.softmax(rng.normal(size=(4, 3)), axis=-1).astype("float32")
    one_hot = np.eye(3, dtype=dtype)[[0, 2, 1, 1]]
    got = run_on(sn.categorical_crossentropy, p, one_hot, backend=backend)
    want = -np.sum(one_hot * np.log(p), axis=-1)
    assert got.dtype == want.dtype
    check(got, want, rtol=tolerance("float32"))
    labels = np.array([0, 2, 1, 1], "int32")
    got = run_on(sn.categorical_crossentropy, p, labels, backend=backend)  # float32
    np.testing.assert_allclose(got, want, rtol=tolerance("float32"))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_binary_crossentropies(dtype, rng, backend):
    logits = rng.normal(scale=3, size=(3, 4)).astype(dtype)
    t = rng.random((3, 4)).astype(dtype)
    p = sps.expit(logits)
    want = -(t * np.log(p) + (1 - t) * np.log(1 - p))
    tol = tolerance(dtype, 100)
    check(run_on(sn.binary_crossentropy, p, t, backend=backend), want, rtol=tol)
    check(run_on(sn.sigmoid_binary_crossentropy, logits, t, backend=backend), want, rtol=tol)


@pytest.mark.parametrize("target", [0.9, 1, 0.0, True])
def test_binary_crossentropy_of_a_python_number_target_keeps_ps_dtype(target, backend):
    """A Python number target is weak, as in ``x32 * 0.9`` (sigmoid_binary_crossentropy's
    was already): its ``1 - t`` was a float64 node, so a float32 p gave a float64 loss."""
    pv = np.array([0.3, 0.8, 1e-3], "float32")
    p = sn.tensor("p", shape=(3,), dtype="float32")
    loss = sn.binary_crossentropy(p, target)
    assert loss.dtype == np.float32
    got = sn.function([p], sn.mean(loss), backend=backend)(pv)
    t = float(target)
    want = np.mean(-(t * np.log(pv.astype("float64")) + (1 - t) * np.log1p(-pv.astype("float64"))))
    assert got.dtype == np.float32
    check(got, np.float32(want), rtol=1e-5)
    assert sn.binary_crossentropy(p, np.float64(0.9)).dtype == np.float64  # NumPy's: strong


def test_sigmoid_binary_crossentropy_is_finite_for_huge_logits(backend):
    x, t = np.array([-1000.0, -50.0, 0.0, 50.0, 1000.0]), np.array([1.0, 1.0, 0.5, 0.0, 0.0])
    got = run_on(sn.sigmoid_binary_crossentropy, x, t, backend=backend)
    check(got, np.array([1000.0, 50.0, np.log(2), 50.0, 1000.0]))
    labels = np.array([1, 0, 1], dtype="int64")  # integer targets broadcast as in NumPy
    got = run_on(sn.sigmoid_binary_crossentropy, x[:3], labels, backend=backend)
    check(got, np.logaddexp(0, x[:3]) - x[:3] * labels)


def test_sigmoid_binary_crossentropy_at_infinite_logits_is_as_documented(backend):
    """The docstring promised "finite for any logit"; at an infinite logit the stable form
    meets inf - inf or inf * 0 (NaN) except -inf against a target above 0 (inf), the same
    on every backend, and the gradient stays sigmoid(x) - t."""
    assert "finite for every finite logit" in sn.sigmoid_binary_crossentropy.__doc__
    assert "any logit" not in sn.sigmoid_binary_crossentropy.__doc__
    x = np.array([np.inf, np.inf, np.inf, -np.inf, -np.inf, -np.inf, 1e300, -1e300])
    t = np.array([1.0, 0.0, 0.5, 0.0, 1.0, 0.5, 1.0, 0.0])
    with np.errstate(invalid="ignore"):
        got = run_on(sn.sigmoid_binary_crossentropy, x, t, backend=backend)
        grad = run_on(
            lambda a, b: sn.grad(sn.sum(sn.sigmoid_binary_crossentropy(a, b)), a),
            x,
            t,
            backend=backend,
        )
    check(got, [np.nan] * 4 + [np.inf, np.inf, 0.0, 0.0])
    check(grad, sps.expit(x) - t)


ERRORS = [
    (
        lambda p: sn.crossentropy(p, sn.vector("y", "int64", (3,))),
        r"labels 'y'.*shape of 'p'.*\(4,\)",
    ),
    (lambda p: sn.crossentropy(p, sn.matrix("t", shape=(4, 2))), "target distribution 't'"),
    (
        lambda p: sn.crossentropy(p, sn.matrix("y", "int64", (4, 1))),
        r"target distribution 'y' .* \(or be integer labels of shape \(4,\), p without axis 1",
    ),
    (lambda p: sn.softmax(p, axis=2), "axis 2 is out of range"),
    (lambda p: sn.softmax(p > 0), "boolean"),
]


@pytest.mark.parametrize("build,message", ERRORS)
def test_nnet_errors(build, message):
    with pytest.raises((sn.ShapeError, sn.DTypeError), match=message):
        build(sn.matrix("p", shape=(4, 3)))


GRADS = {
    "softmax": (lambda x: sn.softmax(x, axis=0), [(3, 4)]),
    "log_softmax": (lambda x: sn.log_softmax(x, axis=-1), [(2, 3, 4)]),
    "crossentropy labels": (
        lambda x: sn.crossentropy(sn.softmax(x), np.array([2, 0, 0])),
        [(3, 4)],
    ),
    "crossentropy soft": (lambda x, t: sn.crossentropy(sn.softmax(x), sn.softmax(t)), [(3, 4)] * 2),
    "binary_crossentropy": (lambda x, t: sn.binary_crossentropy(sn.sigmoid(x), t), [(3, 4)] * 2),
    "sigmoid_bce": (sn.sigmoid_binary_crossentropy, [(3, 4), (4,)]),
}


@pytest.mark.parametrize("case", sorted(GRADS))
def test_nnet_gradients(case, rng):
    fn, shapes = GRADS[case]
    sn.check_grad(fn, [rng.uniform(0.05, 0.95, size=s) for s in shapes])
