"""The fused softmax cross-entropy ops against SciPy/NumPy on every backend: values, dtypes,
axes, extreme logits, label errors, and numeric gradients (first and second order)."""

import numpy as np
import pytest
import scipy.special as sps

import symnb as sn
from symnb.ops.nnet import SoftmaxCrossEntropy, SoftmaxCrossEntropyGrad
from tests.helpers import check, tolerance
from tests.helpers import run as run_on

CASES = [((4, 7), -1), ((3, 5), 0), ((2, 3, 6), 1), ((2, 3, 6), -1), ((9,), 0), ((0, 4), -1)]


def _rows_of(shape, axis):
    axis %= len(shape)
    return shape[:axis] + shape[axis + 1 :]


def _reference(x, labels, axis):
    """(losses, softmax) in float64 through SciPy."""
    index = np.expand_dims(labels, axis)
    lsm = sps.log_softmax(x.astype("float64"), axis=axis) if x.size else np.zeros(x.shape)
    loss = -np.take_along_axis(lsm, index, axis).squeeze(axis)
    return loss, np.exp(lsm)


@pytest.mark.parametrize("shape,axis", CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_losses_and_softmax_match_scipy(shape, axis, dtype, rng, backend):
    x = rng.normal(scale=3, size=shape).astype(dtype)
    labels = rng.integers(0, shape[axis], size=_rows_of(shape, axis))
    loss, probs = run_on(
        lambda a, y: SoftmaxCrossEntropy(axis % len(shape))(a, y), x, labels, backend=backend
    )
    want_loss, want_probs = _reference(x, labels, axis)
    tol = tolerance(dtype)  # float64 results must be float64-exact, not float32-close
    check(loss, want_loss.astype(dtype), rtol=tol, atol=tol)
    check(probs, want_probs.astype(dtype), rtol=tol, atol=tol)
    public = run_on(
        lambda a, y: sn.softmax_cross_entropy(a, y, axis=axis), x, labels, backend=backend
    )
    check(public, loss)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,axis", [((5, 8), -1), ((4, 3, 5), 1)])
def test_gradient_op_matches_numpy(shape, axis, dtype, rng, backend):
    axis %= len(shape)  # ops take a normalised axis (the public functions normalise)
    probs = sps.softmax(rng.normal(size=shape), axis=axis).astype(dtype)
    rows = _rows_of(shape, axis)
    labels, dloss = rng.integers(0, shape[axis], size=rows), rng.normal(size=rows).astype(dtype)
    got = run_on(
        lambda d, p, y: SoftmaxCrossEntropyGrad(axis)(d, p, y),
        dloss,
        probs,
        labels,
        backend=backend,
    )
    one_hot = np.moveaxis(np.eye(shape[axis], dtype=dtype)[labels], -1, axis)
    want = (probs - one_hot) * np.expand_dims(dloss, axis)
    check(got, want, rtol=tolerance(dtype), atol=tolerance(dtype))


def test_mixed_dtypes_promote_like_numpy(rng, backend):
    probs = sps.softmax(rng.normal(size=(3, 4)), axis=1).astype("float32")
    labels, dloss = np.array([0, 3, 1], dtype="int32"), np.array([1.0, -2.0, 0.5])
    got = run_on(
        lambda d, p, y: SoftmaxCrossEntropyGrad(1)(d, p, y), dloss, probs, labels, backend=backend
    )
    want = (probs.astype("float64") - np.eye(4)[labels]) * dloss[:, None]
    check(got, want, rtol=1e-7)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_negative_label_is_refused_not_read_from_the_end(dtype, backend):
    """-1 is a padding or "ignore" label far more often than the last class: the loss, its
    gradient op and the kernels refuse it (ValueError naming the op, the label and n), as
    Theano's CrossentropySoftmaxArgmax1HotWithBias did; NumPy indexing read the last class."""
    x, labels = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]], dtype), np.array([0, -1])
    msg = r"{}: label -1 is out of range for axis 1 of size 3: class labels are 0 to 2"
    with pytest.raises(ValueError, match=msg.format("softmax_cross_entropy")) as info:
        run_on(sn.softmax_cross_entropy, x, labels, backend=backend)
    assert isinstance(info.value, sn.SymnbError) and "built at" in str(info.value)
    dloss, probs = np.ones(2, dtype), sps.softmax(x, axis=1).astype(dtype)
    with pytest.raises(ValueError, match=msg.format("softmax_cross_entropy_grad")):
        run_on(
            lambda d, p, y: SoftmaxCrossEntropyGrad(1)(d, p, y),
            dloss,
            probs,
            labels,
            backend=backend,
        )
    fine = run_on(sn.softmax_cross_entropy, x, np.array([0, 2]), backend=backend)
    check(fine, -sps.log_softmax(x, axis=1)[[0, 1], [0, 2]], rtol=tolerance(dtype))


def test_constant_labels_are_checked_when_the_graph_is_built():
    x = sn.tensor("x", shape=(2, 3))
    with pytest.raises(sn.ArgumentError, match=r"label -1 is out of range .* size 3") as info:
        sn.softmax_cross_entropy(x, np.array([0, -1]))
    assert "test_xent.py" in str(info.value)
    with pytest.raises(sn.ArgumentError, match="label 3 is out of range"):
        sn.crossentropy(sn.softmax(x), np.array([3, 0]))


def test_extreme_logits_stay_finite(backend):
    x = np.array([[1000.0, 0.0, -1000.0], [-1000.0, -1000.0, -1001.0]], dtype="float32")
    labels = np.array([2, 1])
    loss, probs = run_on(lambda a, y: SoftmaxCrossEntropy(1)(a, y), x, labels, backend=backend)
    assert np.isfinite(loss).all() and np.isfinite(probs).all()
    check(loss, _reference(x, labels, 1)[0].astype("float32"), rtol=1e-6)
    assert loss[0] == pytest.approx(2000.0)


def test_nan_and_inf_follow_the_reference(backend):
    x = np.array([[np.nan, 0.0, 1.0], [np.inf, 0.0, 1.0], [-np.inf, 0.0, 1.0]])
    labels = np.array([1, 1, 2])
    want = SoftmaxCrossEntropy(1).perform(x, labels)
    got = run_on(lambda a, y: SoftmaxCrossEntropy(1)(a, y), x, labels, backend=backend)
    for g, w in zip(got, want):
        check(g, w, rtol=1e-12)
    assert np.isnan(got[0][0]) and np.isfinite(got[0][2])


INF_ROWS = np.array(
    [[1.0, np.inf, 2.0], [1.0, np.inf, 2.0], [np.inf, np.inf, -np.inf], [-np.inf, -np.inf, 0.0]]
    + [[-np.inf] * 3, [1.0, np.nan, np.inf], [1.0, 2.0, 3.0]]
)
INF_LABELS = np.array([0, 1, 2, 1, 0, 0, 1])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_row_holding_inf_has_log_softmaxs_loss(dtype, backend):
    """The fused loss is -log_softmax(x)[label] also where the row's max is +inf (SciPy's
    log_softmax shifts it by 0: inf at a finite logit, NaN at an infinite one); it was NaN,
    so optimize="fast" changed crossentropy(softmax(x), y) from "stable"'s inf to NaN. The
    softmax output stays softmax's (NaN throughout such a row)."""
    x, labels = INF_ROWS.astype(dtype), INF_LABELS
    with np.errstate(all="ignore"):
        lsm = sps.log_softmax(x, axis=1)
        want_loss = -np.take_along_axis(lsm, labels[:, None], 1)[:, 0]
        want_probs = sps.softmax(x, axis=1)
    assert np.isinf(want_loss[[0, 2]]).all() and np.isnan(want_loss[1])
    f = sn.function(*_xent_graph(x), backend=backend)
    loss, probs = f(x, labels)
    check(loss, want_loss)
    check(probs, want_probs)
    if backend != "py":
        assert {k.kind for k in f.kernels} == {"kernel"}, [k.kind for k in f.kernels]


def _xent_graph(x):
    logits = sn.tensor("x", shape=x.shape, dtype=x.dtype)
    labels = sn.tensor("labels", shape=x.shape[:1], dtype="int64")
    return [logits, labels], list(SoftmaxCrossEntropy(1)(logits, labels))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fast_keeps_stables_crossentropy_on_rows_holding_inf(dtype, backend):
    """crossentropy(softmax(x), y) and its gradient: "fast" (fused) gives "stable"'s
    values (-log_softmax(x)[y]); the gradient of a row holding +inf holds NaN in both (the
    fused op's through softmax: all NaN; "stable"'s through log_softmax, SciPy's shift by 0:
    NaN at the infinite logit)."""
    x = sn.tensor("x", shape=INF_ROWS.shape, dtype=dtype)
    y = sn.tensor("y", shape=INF_LABELS.shape, dtype="int64")
    loss = sn.crossentropy(sn.softmax(x), y)
    outputs = [loss, sn.grad(sn.sum(loss), x)]
    with np.errstate(all="ignore"):
        fast = sn.function([x, y], outputs, backend=backend)
        stable = sn.function([x, y], outputs, backend=backend, optimize="stable")
        assert "softmax_crossentropy_fused" in fast.rewrites.counts()
        (loss_f, grad_f), (loss_s, grad_s) = (
            f(INF_ROWS.astype(dtype), INF_LABELS) for f in (fast, stable)
        )
    check(loss_f, loss_s, rtol=tolerance(dtype))
    plus_inf = (INF_ROWS == np.inf).any(axis=1)
    check(grad_f[~plus_inf], grad_s[~plus_inf], rtol=tolerance(dtype))
    assert np.isnan(grad_f[plus_inf]).any(axis=1).all()
    assert np.isnan(grad_s[plus_inf]).any(axis=1).all()


@pytest.mark.parametrize("bad", [3, -4, 100])
def test_labels_out_of_range_raise_a_clear_error(bad, backend):
    x, labels = np.zeros((2, 3), "float32"), np.array([0, bad])
    with pytest.raises(
        Exception,
        match=rf"softmax_cross_entropy.*label {bad} is out of range "
        r"for axis 1 of size 3",
    ):
        run_on(sn.softmax_cross_entropy, x, labels, backend=backend)


def test_type_errors_name_the_op_and_the_variables():
    x, labels = sn.matrix("x"), sn.tensor("y", shape=(None,), dtype="int64")
    with pytest.raises(sn.DTypeError, match=r"softmax_cross_entropy: labels 'y'.*integers"):
        sn.softmax_cross_entropy(x, sn.vector("y"))
    with pytest.raises(sn.DTypeError, match=r"logits 'i'.*floating point"):
        sn.softmax_cross_entropy(sn.tensor("i", shape=(2, 3), dtype="int64"), labels)
    with pytest.raises(sn.ShapeError, match=r"'y' \(int64\(4,\)\).*one value per row.*\(3,\)"):
        sn.softmax_cross_entropy(
            sn.tensor("x", shape=(3, 5)), sn.tensor("y", shape=(4,), dtype="int64")
        )
    assert sn.softmax_cross_entropy(x, labels).type.ndim == 1


def test_gradients_are_checked_numerically(rng):
    x, labels = rng.normal(size=(4, 5)), np.array([0, 4, 2, 3])
    dloss, probs = rng.normal(size=4), sps.softmax(rng.normal(size=(4, 5)), axis=1)
    sn.check_grad(lambda a: sn.softmax_cross_entropy(a, labels), [x])
    sn.check_grad(lambda a: SoftmaxCrossEntropy(1)(a, labels)[1], [x])
    sn.check_grad(lambda d, p: SoftmaxCrossEntropyGrad(1)(d, p, labels), [dloss, probs])
    second = SoftmaxCrossEntropy(1)
    sn.check_grad(
        lambda d, a: SoftmaxCrossEntropyGrad(1)(d, second(a, labels)[1], labels), [dloss, x]
    )


def test_gradient_of_the_loss_is_softmax_minus_one_hot(rng, backend):
    x, labels = rng.normal(size=(3, 4)), np.array([1, 0, 3])
    weights = np.array([1.0, -2.0, 0.5])
    a = sn.tensor("a", shape=(3, 4))
    y = sn.tensor("y", shape=(3,), dtype="int64")
    cost = sn.sum(sn.softmax_cross_entropy(a, y) * weights)
    got = sn.function([a, y], sn.grad(cost, a), backend=backend)(x, labels)
    want = (sps.softmax(x, axis=1) - np.eye(4)[labels]) * weights[:, None]
    check(got, want, rtol=1e-12, atol=1e-15)
