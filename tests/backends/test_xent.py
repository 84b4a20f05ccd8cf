"""The softmax cross-entropy of the W2 workload: the rewrite fuses it, the C row kernels run
it (threads, layouts, dtypes), and the result equals the unoptimised graph's."""

import numpy as np
import pytest
import scipy.special as sps

import symnb as sn
from symnb.backends.schedule.cpu import ROW_PARALLEL_MIN as PARALLEL_MIN
from tests.helpers import needs_c

pytestmark = needs_c
FUSED = {"softmax_crossentropy_fused": 1, "softmax_crossentropy_grad_fused": 1}
UNFUSED = {"exclude": list(FUSED)}


def _w2(shape, dtype="float32", label_dtype="int64", axis=-1):
    logits = sn.tensor("logits", shape=shape, dtype=dtype)
    rows = shape[:-1] if axis == -1 else shape[1:]
    labels = sn.tensor("labels", shape=rows, dtype=label_dtype)
    loss = sn.mean(sn.crossentropy(sn.softmax(logits, axis=axis), labels, axis=axis))
    return [logits, labels], [loss, sn.grad(loss, logits)]


def _values(rng, shape, dtype="float32", label_dtype="int64", axis=-1, scale=3.0):
    x = rng.normal(scale=scale, size=shape).astype(dtype)
    rows = shape[:axis] + shape[axis + 1 :] if axis != -1 else shape[:-1]
    return x, rng.integers(0, shape[axis], size=rows).astype(label_dtype)


def _ops(f) -> list[str]:
    return [type(node.op).op_name() for node in f.graph.toposort()]


def _want(x, labels):
    """Loss and gradient of the mean cross-entropy in float64 (last axis)."""
    lsm = sps.log_softmax(x.astype("float64"), axis=-1)
    picked = np.take_along_axis(lsm, labels[..., None].astype(np.intp), -1)[..., 0]
    n = picked.size
    one_hot = np.eye(x.shape[-1])[labels]
    return -picked.mean(), (np.exp(lsm) - one_hot) / n


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_w2_graph_becomes_two_row_kernels(dtype, rng):
    inputs, outputs = _w2((64, 50), dtype)
    f = sn.function(inputs, outputs, backend="c")
    counts = f.rewrites.counts()
    assert {k: counts.get(k) for k in FUSED} == FUSED
    ops = _ops(f)
    assert "softmax_cross_entropy" in ops and "softmax_cross_entropy_grad" in ops
    for gone in ("alloc", "inc_along_axis", "take_along_axis", "log_softmax", "softmax"):
        assert gone not in ops
    steps = {str(k.ops): k.kind for k in f.kernels}
    assert steps["softmax_cross_entropy[axis=1]"] == "kernel"
    assert steps["softmax_cross_entropy_grad[axis=1]"] == "kernel"
    sources = [k.source for k in f.kernels if "softmax_cross_entropy" in k.ops]
    assert len(sources) == 2 and all("omp parallel for" in s for s in sources)
    x, labels = _values(rng, (64, 50), dtype)
    loss, grad = f(x, labels)
    want_loss, want_grad = _want(x, labels)
    rtol = 1e-5 if dtype == "float32" else 1e-12
    assert loss.dtype == grad.dtype == np.dtype(dtype) and grad.shape == x.shape
    np.testing.assert_allclose(loss, want_loss, rtol=rtol)
    np.testing.assert_allclose(grad, want_grad, rtol=rtol, atol=1e-8)


@pytest.mark.parametrize("backend", ["py", "c"])
@pytest.mark.parametrize(
    "shape,dtype,label_dtype",
    [
        ((512, 1000), "float32", "int64"),
        ((7, 3), "float64", "int32"),
        ((2, 3, 5), "float64", "uint8"),
    ],
)
def test_optimised_equals_unoptimised(shape, dtype, label_dtype, backend, rng):
    inputs, outputs = _w2(shape, dtype, label_dtype)
    fused = sn.function(inputs, outputs, backend=backend)
    plain = sn.function(inputs, outputs, backend=backend, optimize="none")
    unfused = sn.function(inputs, outputs, backend=backend, optimize=UNFUSED)
    assert {k: fused.rewrites.counts().get(k) for k in FUSED} == FUSED
    values = _values(rng, shape, dtype, label_dtype)
    got = fused(*values)
    rtol = 2e-5 if dtype == "float32" else 1e-12
    for other in (plain(*values), unfused(*values)):
        for g, w in zip(got, other, strict=True):
            assert g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_allclose(g, w, rtol=rtol, atol=1e-9)


def test_logits_of_1000_give_a_finite_loss_and_gradient():
    inputs, outputs = _w2((2, 3), "float64")
    f = sn.function(inputs, outputs, backend="c")
    x = np.array([[1000.0, 0.0, -1000.0], [0.0, 1000.0, 0.0]])
    labels = np.array([1, 0])
    loss, grad = f(x, labels)
    assert np.isfinite(loss) and np.isfinite(grad).all()
    want_loss, want_grad = _want(x, labels)
    np.testing.assert_allclose(loss, want_loss, rtol=1e-12)
    assert loss == pytest.approx(1000.0)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-12, atol=1e-300)


def test_rows_split_between_threads_give_the_same_values(rng):
    rows = PARALLEL_MIN // 100 + 7
    inputs, outputs = _w2((rows, 100), "float64")
    f = sn.function(inputs, outputs, backend="c")
    x, labels = _values(rng, (rows, 100), "float64")
    loss, grad = f(x, labels)
    want_loss, want_grad = _want(x, labels)
    np.testing.assert_allclose(loss, want_loss, rtol=1e-12)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-11, atol=1e-18)


@pytest.mark.parametrize("rows", [3, PARALLEL_MIN // 10 + 1])
def test_a_label_out_of_range_is_a_clear_error(rows, rng):
    inputs, outputs = _w2((rows, 10), "float32")
    f = sn.function(inputs, outputs, backend="c")
    x, labels = _values(rng, (rows, 10))
    labels[rows // 2] = 10
    with pytest.raises(
        Exception,
        match=r"softmax_cross_entropy\[axis=1\].*label 10 is out of "
        r"range for axis 1 of size 10",
    ) as caught:
        f(x, labels)
    assert "built at" in str(caught.value) and "loss = sn.mean(sn.crossentropy(" in str(
        caught.value
    )


def test_layouts_the_kernel_does_not_take_run_the_reference(rng):
    x, labels = _values(rng, (6, 4), "float64")
    transposed = np.ascontiguousarray(x.T).T  # Fortran order: made C-ordered first
    inputs, outputs = _w2((6, 4), "float64")
    f = sn.function(inputs, outputs, backend="c")
    for g, w in zip(f(transposed, labels), _want(x, labels)):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-17)
    inputs, outputs = _w2((4, 6), "float64", axis=0)  # not the last axis
    f = sn.function(inputs, outputs, backend="c")
    loss, grad = f(x.T.copy(), labels)
    want_loss, want_grad = _want(x, labels)
    np.testing.assert_allclose(loss, want_loss, rtol=1e-12)
    np.testing.assert_allclose(grad, want_grad.T, rtol=1e-12, atol=1e-17)


def test_float16_runs_the_reference_and_says_so(rng):
    inputs, outputs = _w2((5, 4), "float16")
    f = sn.function(inputs, outputs, backend="c")
    kinds = {str(k.ops): (k.kind, k.reason) for k in f.kernels}
    kind, reason = kinds["softmax_cross_entropy[axis=1]"]
    assert kind == "library" and "float16" in reason
    x, labels = _values(rng, (5, 4), "float16")
    loss, grad = f(x, labels)
    want_loss, want_grad = _want(x, labels)
    assert loss.dtype == grad.dtype == np.float16
    np.testing.assert_allclose(loss, want_loss, rtol=2e-3)
    np.testing.assert_allclose(grad, want_grad, rtol=2e-2, atol=2e-3)


def test_a_scalar_upstream_gradient_broadcasts_over_the_rows(rng):
    """sum(loss) * 0.5 sends one 0-d gradient to every row of the gradient kernel."""
    x = sn.tensor("x", shape=(8, 5), dtype="float32")
    y = sn.tensor("y", shape=(8,), dtype="int64")
    loss = sn.sum(sn.crossentropy(sn.softmax(x), y)) * 0.5
    f = sn.function([x, y], sn.grad(loss, x), backend="c")
    assert any("softmax_cross_entropy_grad" in k.ops and k.kind == "kernel" for k in f.kernels)
    xv, labels = _values(rng, (8, 5))
    probs = sps.softmax(xv.astype("float64"), axis=1)
    np.testing.assert_allclose(f(xv, labels), (probs - np.eye(5)[labels]) * 0.5, rtol=1e-5)


@pytest.mark.parametrize("backend", ["py", "c"])
def test_a_weighted_loss_and_its_gradient_fuse_too(backend, rng):
    x = sn.tensor("x", shape=(6, 9))
    y = sn.tensor("y", shape=(6,), dtype="int64")
    w = sn.tensor("w", shape=(6,))
    loss = sn.sum(sn.crossentropy(sn.softmax(x), y) * w)
    outputs = [loss, sn.grad(loss, x), sn.grad(loss, w)]
    fused = sn.function([x, y, w], outputs, backend=backend)
    plain = sn.function([x, y, w], outputs, backend=backend, optimize="none")
    assert {k: fused.rewrites.counts().get(k) for k in FUSED} == FUSED
    values = [rng.normal(size=(6, 9)), rng.integers(0, 9, size=6), rng.normal(size=6)]
    for g, want in zip(fused(*values), plain(*values), strict=True):
        np.testing.assert_allclose(g, want, rtol=1e-12, atol=1e-15)
    probs = sps.softmax(values[0], axis=1)
    one_hot = np.eye(9)[values[1]]
    np.testing.assert_allclose(
        fused(*values)[1], (probs - one_hot) * values[2][:, None], rtol=1e-12
    )


def test_uint64_labels_beyond_int64_are_out_of_range_not_negative():
    inputs, outputs = _w2((2, 3), "float64", "uint64")
    f = sn.function(inputs, outputs, backend="c")
    labels = np.array([0, 2**64 - 1], dtype=np.uint64)  # -1 if read as int64
    with pytest.raises(Exception, match=r"label 18446744073709551615 is out of range"):
        f(np.zeros((2, 3)), labels)
    loss, _ = f(np.zeros((2, 3)), np.array([0, 2], dtype=np.uint64))
    np.testing.assert_allclose(loss, np.log(3), rtol=1e-15)


@needs_c
@pytest.mark.parametrize("how", ["no runner", "debug", "nanguard"])
def test_a_python_number_label_or_output_gradient_launches_without_the_runner(how):
    """A weak constant's slot holds the Python number (NumPy steps promote by it); a row
    kernel launched by the Python executor (no runner, or node by node in debug modes) read
    its ``.shape``: an AttributeError, where the runner took the number."""
    xv = np.linspace(-1.0, 1.0, 7)
    p = sps.softmax(xv)
    x = sn.vector("x")
    loss = sn.softmax_cross_entropy(x, 3)
    outputs = [loss, sn.Lop(sn.softmax_cross_entropy(x, np.int64(3)), x, 0.3)]
    mode = None if how == "no runner" else how
    before = sn.config.c_runner
    sn.config.c_runner = how != "no runner"
    try:
        got_loss, got_grad = sn.function([x], outputs, backend="c", mode=mode)(xv)
    finally:
        sn.config.c_runner = before
    np.testing.assert_allclose(got_loss, -np.log(p[3]), rtol=1e-12)
    np.testing.assert_allclose(got_grad, 0.3 * (p - np.eye(7)[3]), rtol=1e-12, atol=1e-15)
