"""Stabilize rules: finite, accurate answers where the naive graph gives 0, inf or nan."""

import numpy as np
import pytest
from scipy import special

import symnb as sn
from tests.helpers import named_backends
from tests.opt.util import assert_same_values, compile_pair, fired

STABLE = "stable"


def _both(inputs, expr, values):
    plain, stable = compile_pair(inputs, expr, STABLE)
    with np.errstate(all="ignore"):
        return plain(*values), stable(*values), stable.rewrites.counts()


def test_log1p_and_expm1_keep_tiny_values():
    x = sn.vector("x")
    tiny = np.array([1e-20, 3e-17, 0.5])
    naive, good, counts = _both([x], sn.log(1 + x), [tiny])
    assert counts == {"log1p_of_sum": 1} and naive[0] == 0.0
    np.testing.assert_allclose(good, np.log1p(tiny), rtol=1e-15)
    naive, good, counts = _both([x], sn.exp(x) - 1, [tiny])
    assert counts == {"expm1_of_exp": 1} and naive[0] == 0.0
    np.testing.assert_allclose(good, np.expm1(tiny), rtol=1e-15)


def test_log1p_near_misses():
    x = sn.vector("x")
    i = sn.tensor("i", shape=(None,), dtype="int8")
    assert fired([x], sn.log(2 + x), STABLE) == {}  # not 1
    assert fired([i], sn.log(1 + i), STABLE) == {}  # integers wrap around
    assert fired([x], sn.exp(x) - 2, STABLE) == {}
    assert fired([x], sn.exp(x) + 1, STABLE) == {}


#: a -0.0 imaginary part (log(1 + z) is on the +pi side of the branch cut, log1p(z) on the
#: -pi side) and exp(inf+0j) - 1 = inf+0j (expm1 gives inf+nanj)
EDGES = np.array([complex(-2.0, -0.0), complex(-3.0, -0.0), complex(np.inf, 0.0), 1 + 1j])
#: imaginary parts that log wraps into (-pi, pi] and log_softmax (z - logsumexp(z)) keeps
SPREAD = np.array([4j, 3j, 2 + 3.5j, -1 + 10j])


@pytest.mark.parametrize("mode", ["fast", "stable"])
@pytest.mark.parametrize(
    "rule, build, reference, values",
    [
        ("log1p_of_sum", lambda z: sn.log(z + 1), lambda a: np.log(a + 1), EDGES),
        ("log1p_of_sum", lambda z: sn.log(1.0 + z), lambda a: np.log(1.0 + a), EDGES),
        ("expm1_of_exp", lambda z: sn.exp(z) - 1, lambda a: np.exp(a) - 1, EDGES),
        (
            "log_softmax_of_softmax",
            lambda z: sn.log(sn.softmax(z)),
            lambda a: np.log(special.softmax(a)),
            SPREAD,
        ),
        (
            "log_softmax_of_softmax",  # the formula written out becomes a softmax first
            lambda z: sn.log(sn.exp(z) / sn.sum(sn.exp(z), keepdims=True)),
            lambda a: np.log(np.exp(a) / np.sum(np.exp(a), keepdims=True)),
            SPREAD,
        ),
    ],
)
def test_rules_for_real_floats_leave_complex_values_as_written(
    rule, build, reference, values, mode
):
    """log1p, expm1 and log_softmax are not the written forms for complex values (a branch
    cut, an infinity, the imaginary part unwrapped): docs/rewrites.md, real float x only."""
    z = sn.tensor("z", shape=(4,), dtype="complex128")
    f = sn.function([z], build(z), backend="py", optimize=mode)
    with np.errstate(all="ignore"):
        got, want = f(values), reference(values)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
    assert rule not in f.rewrites.counts()


def test_log_sigmoid_is_minus_softplus():
    x = sn.vector("x")
    values = np.array([-1000.0, -30.0, 0.0, 40.0])
    naive, good, counts = _both([x], sn.log(sn.sigmoid(x)), [values])
    assert counts == {"log_sigmoid": 1} and np.isneginf(naive[0])
    np.testing.assert_allclose(good, special.log_expit(values), rtol=1e-12)
    assert fired([x], sn.log(sn.tanh(x)), STABLE) == {}


def test_logsumexp_of_large_values():
    x = sn.matrix("x")
    values = np.array([[1000.0, 999.0], [-5.0, 2.0]])
    for axis in (0, 1, None):
        naive, good, counts = _both([x], sn.log(sn.sum(sn.exp(x), axis=axis)), [values])
        assert counts == {"logsumexp_of_exp": 1} and not np.isfinite(naive).all()
        np.testing.assert_allclose(good, special.logsumexp(values, axis=axis), rtol=1e-12)
    assert fired([x], sn.log(sn.max(sn.exp(x), axis=1)), STABLE) == {}  # max, not sum
    assert fired([x], sn.log(sn.sum(sn.sqrt(x), axis=1)), STABLE) == {}


@pytest.mark.parametrize("labels", ["int", "onehot"])
def test_crossentropy_of_softmax_with_logits_of_1000(labels):
    logits = np.array([[1000.0, 0.0, -1000.0], [0.0, 1000.0, 0.0]])
    y_int = np.array([1, 0])
    x = sn.matrix("x")
    if labels == "int":
        y = sn.tensor("y", shape=(None,), dtype="int64")
        values = [logits, y_int]
    else:
        y = sn.matrix("y")
        values = [logits, np.eye(3)[y_int]]
    loss = sn.mean(sn.crossentropy(sn.softmax(x, axis=1), y))
    naive, good, counts = _both([x, y], loss, values)
    assert counts["log_softmax_of_softmax"] == 1
    assert not np.isfinite(naive)
    want = -np.mean(special.log_softmax(logits, axis=1)[np.arange(2), y_int])
    np.testing.assert_allclose(good, want, rtol=1e-12)
    assert good == pytest.approx(1000.0)


def test_log_softmax_keeps_the_axis():
    x = sn.matrix("x")
    values = np.array([[1000.0, 0.0], [3.0, -1000.0]])
    _, good, counts = _both([x], sn.log(sn.softmax(x, axis=0)), [values])
    assert counts == {"log_softmax_of_softmax": 1}
    np.testing.assert_allclose(good, special.log_softmax(values, axis=0), rtol=1e-12)
    assert fired([x], sn.log(x.T), STABLE) == {}  # a selection, but not of a softmax


@pytest.mark.parametrize("labels", ["int", "onehot"])
def test_crossentropy_gradient_with_logits_of_1000(labels):
    logits = np.array([[1000.0, 0.0, -5.0], [1.0, 2.0, 3.0]])
    y_int = np.array([1, 2])
    x = sn.matrix("x")
    if labels == "int":
        y, target = sn.tensor("y", shape=(None,), dtype="int64"), y_int
    else:
        y, target = sn.matrix("y"), np.eye(3)[y_int]
    loss = sn.mean(sn.crossentropy(sn.softmax(x, axis=1), y))
    naive, good, counts = _both([x, y], sn.grad(loss, x), [logits, target])
    # sn.grad differentiates log_softmax (symnb/grad/formulas.py): finite before any rewrite
    assert "softmax_grad_without_division" not in counts
    want = (special.softmax(logits, axis=1) - np.eye(3)[y_int]) / 2
    np.testing.assert_allclose(good, want, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(naive, want, rtol=1e-12, atol=1e-15)


def test_softmax_gradient_near_misses():
    x, h = sn.matrix("x"), sn.matrix("h")
    sm = sn.softmax(x, axis=1)
    g = h / sm
    assert fired([x, h], sm * (g - sn.sum(g * sm, axis=0, keepdims=True)), STABLE) == {}
    e = sn.exp(x)  # not a softmax
    g = h / e
    assert fired([x, h], e * (g - sn.sum(g * e, axis=1, keepdims=True)), STABLE) == {}
    g = h * sm  # no division to remove
    assert fired([x, h], sm * (g - sn.sum(g * sm, axis=1, keepdims=True)), STABLE) == {}


Z_SATURATED = np.array([100.0, -100.0, 100.0, -100.0, 20.0, -20.0, 0.3, -1.7], "float32")
T_BINARY = np.array([0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.25, 1.0], "float32")


@pytest.mark.parametrize("backend", named_backends("py", "c"))
@pytest.mark.parametrize("mode", ["fast", "stable"])
def test_binary_crossentropy_of_a_saturated_sigmoid_has_finite_loss_and_gradient(mode, backend):
    z, t = sn.vector("z", dtype="float32"), sn.vector("t", dtype="float32")
    loss = sn.mean(sn.binary_crossentropy(sn.sigmoid(z), t))
    outputs = [loss, sn.grad(loss, z)]
    f = sn.function([z, t], outputs, optimize=mode, backend=backend)
    got_loss, got_grad = f(Z_SATURATED, T_BINARY)
    z64, t64 = Z_SATURATED.astype("float64"), T_BINARY.astype("float64")
    want_loss = np.mean(np.logaddexp(0, z64) - z64 * t64)  # softplus(z) - z t
    want_grad = (special.expit(z64) - t64) / len(z64)
    np.testing.assert_allclose(got_loss, want_loss, rtol=1e-6)
    np.testing.assert_allclose(got_grad, want_grad, rtol=1e-5, atol=1e-7)
    counts = f.rewrites.counts()
    assert counts["log_one_minus_sigmoid"] == 1 and counts["log_sigmoid"] == 1
    with np.errstate(all="ignore"):
        naive_loss, naive_grad = sn.function([z, t], outputs, optimize="none")(
            Z_SATURATED, T_BINARY
        )
    assert not np.isfinite(naive_loss)  # what the rules fix
    # sn.grad differentiates -softplus (symnb/grad/formulas.py): finite before any rewrite
    np.testing.assert_allclose(naive_grad, want_grad, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize(
    "build, rule",
    [
        (lambda x: sn.log(1 - sn.sigmoid(x)), "log_one_minus_sigmoid"),
        (lambda x: sn.log1p(-sn.sigmoid(x)), "log1p_of_minus_sigmoid"),
    ],
)
def test_log_of_one_minus_sigmoid_is_minus_softplus(build, rule):
    x = sn.vector("x", dtype="float32")
    values = np.array([-100.0, -3.0, 0.0, 2.5, 20.0, 100.0], "float32")
    loss = build(x).sum()
    naive, (value, grad), counts = _both([x], [build(x), sn.grad(loss, x)], [values])
    assert counts[rule] == 1
    assert np.isneginf(naive[0][-1]) and np.isfinite(naive[1]).all()  # sn.grad's is stable
    want = special.log_expit(-values.astype("float64"))
    np.testing.assert_allclose(value, want, rtol=1e-6, atol=1e-40)  # float32 denormals
    want = -special.expit(values.astype("float64"))
    np.testing.assert_allclose(grad, want, rtol=1e-6, atol=1e-40)


def test_the_gradient_of_log_sigmoid_is_finite_where_sigmoid_underflows():
    x = sn.vector("x")
    values = np.array([-1000.0, -2.0, 3.0])
    naive, good, counts = _both([x], sn.grad(sn.log(sn.sigmoid(x)).sum(), x), [values])
    # sn.grad differentiates -softplus(-x) (symnb/grad/formulas.py): finite without rewrites
    assert "sigmoid_grad_without_division" not in counts
    np.testing.assert_allclose(good, special.expit(-values), rtol=1e-12)
    np.testing.assert_allclose(naive, special.expit(-values), rtol=1e-12)


def test_sigmoid_rules_keep_values_on_ordinary_inputs(rng):
    z, t = sn.matrix("z"), sn.matrix("t")
    loss = sn.sum(sn.binary_crossentropy(sn.sigmoid(z), t) * (z + 2))
    values = [rng.normal(size=(3, 4)), rng.uniform(size=(3, 4))]
    assert_same_values([z, t], [loss, sn.grad(loss, z)], values, STABLE, rtol=1e-10)
    sn.check_grad(lambda a: sn.log(1 - sn.sigmoid(a)).sum() * 3, [values[0]])


def test_sigmoid_near_misses():
    x, h = sn.vector("x"), sn.vector("h")
    s = sn.sigmoid(x)
    assert fired([x], sn.log(2 - s), STABLE) == {}
    assert fired([x], sn.log(1 - sn.tanh(x)), STABLE) == {}
    assert fired([x], sn.log1p(s), STABLE) == {}
    assert "sigmoid_grad_without_division" not in fired([x, h], h * s * (1 - s), STABLE)
    assert "sigmoid_grad_without_division" not in fired([x, h], (h / x) * s * (1 - s), STABLE)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_logistic_formula_and_its_cross_entropy_are_finite(backend, dtype):
    """``1 / (1 + exp(-z))`` as course code writes it: its binary cross-entropy and that
    loss's gradient equal sigmoid's, finite for any z (naively log(0) and inf / inf)."""
    z, y = sn.vector("z", dtype=dtype), sn.vector("y", dtype=dtype)
    p = 1 / (1 + sn.exp(-z))
    loss = sn.sum(-y * sn.log(p) - (1 - y) * sn.log(1 - p))
    f = sn.function([z, y], [loss, sn.grad(loss, z), p], backend=backend)
    zv = np.array([-800, -60, -3.5, 0.25, 7, 60, 800], dtype)
    yv = np.array([1, 1, 0, 1, 0, 0, 0], dtype)
    got_loss, got_grad, got_p = f(zv, yv)
    want_p = special.expit(zv.astype("float64"))
    want_loss = np.sum(np.logaddexp(0, zv.astype("float64")) - yv * zv)
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(got_loss, want_loss, rtol=tol)
    np.testing.assert_allclose(got_grad, want_p - yv, rtol=tol, atol=tol)
    np.testing.assert_allclose(got_p, want_p, rtol=tol, atol=1e-30)
    assert "sigmoid_of_formula" in f.rewrites.counts()


def test_a_gradient_below_or_inside_the_formula_keeps_it_as_written(rng):
    """A gradient requested of the formula's own value or of its ``1 + exp(-z)`` goes
    through the formula (the rebuilt cost would not depend on them)."""
    z = sn.vector("z")
    total = 1 + sn.exp(-z)
    p = 1 / total
    cost = sn.sum(sn.log(1 - p) * 3)
    g_p, g_total, g_z = sn.grad(cost, [p, total, z])
    zv = rng.normal(size=5)
    pv = special.expit(zv)
    f = sn.function([z], [g_p, g_total, g_z], backend="py")
    got_p, got_total, got_z = f(zv)
    np.testing.assert_allclose(got_p, -3 / (1 - pv), rtol=1e-12)
    np.testing.assert_allclose(got_total, 3 / (1 - pv) / (1 + np.exp(-zv)) ** 2, rtol=1e-12)
    np.testing.assert_allclose(got_z, -3 * pv, rtol=1e-12)


Z_GRID = np.array([[-100.0, -20.0, 0.0], [3.0, 30.0, 100.0]], "float32")
#: name -> (expression of z (2, 3) float32, its value from z in float64, the rule that fires):
#: a sigmoid or softmax moved or picked (reshape, transpose, indexing, flatten, flip, roll,
#: tile) between it and the log, outside or inside the ``1 -``
THROUGH_SELECTIONS = {
    "bce(sigmoid(z).reshape((-1, 1)), 1)": (
        lambda z: sn.binary_crossentropy(sn.sigmoid(z).reshape((-1, 1)), 1),
        lambda v: -special.log_expit(v).reshape(-1, 1),
        "log_one_minus_sigmoid",
    ),
    "bce(sigmoid(z).T, 0.25)": (
        lambda z: sn.binary_crossentropy(sn.sigmoid(z).T, 0.25),
        lambda v: -(0.25 * special.log_expit(v) + 0.75 * special.log_expit(-v)).T,
        "log_one_minus_sigmoid",
    ),
    "log(1 - sigmoid(z).reshape((-1, 1)))": (
        lambda z: sn.log(1 - sn.sigmoid(z).reshape((-1, 1))),
        lambda v: special.log_expit(-v).reshape(-1, 1),
        "log_one_minus_sigmoid",
    ),
    "log(sigmoid(z).T)": (
        lambda z: sn.log(sn.sigmoid(z).T),
        lambda v: special.log_expit(v).T,
        "log_sigmoid",
    ),
    "log((1 - sigmoid(z)).T)": (
        lambda z: sn.log((1 - sn.sigmoid(z)).T),
        lambda v: special.log_expit(-v).T,
        "log_one_minus_sigmoid",
    ),
    "log(1 - sigmoid(z).ravel()[::2])": (
        lambda z: sn.log(1 - sn.sigmoid(z).ravel()[::2]),
        lambda v: special.log_expit(-v).ravel()[::2],
        "log_one_minus_sigmoid",
    ),
    "log1p(-sigmoid(z)[:, 1:])": (
        lambda z: sn.log1p(-sn.sigmoid(z)[:, 1:]),
        lambda v: special.log_expit(-v)[:, 1:],
        "log1p_of_minus_sigmoid",
    ),
    "log(flip(sigmoid(z)))": (
        lambda z: sn.log(sn.flip(sn.sigmoid(z), 0)),
        lambda v: np.flip(special.log_expit(v), 0),
        "log_sigmoid",
    ),
    "log(1 - roll(sigmoid(z)))": (
        lambda z: sn.log(1 - sn.roll(sn.sigmoid(z), 1, 1)),
        lambda v: np.roll(special.log_expit(-v), 1, 1),
        "log_one_minus_sigmoid",
    ),
    "log(softmax(z).reshape(-1))": (
        lambda z: sn.log(sn.softmax(z).reshape((-1,))),
        lambda v: special.log_softmax(v, axis=1).ravel(),
        "log_softmax_of_softmax",
    ),
    "log(tile(softmax(z)))": (
        lambda z: sn.log(sn.tile(sn.softmax(z), (2, 1))),
        lambda v: np.tile(special.log_softmax(v, axis=1), (2, 1)),
        "log_softmax_of_softmax",
    ),
}


def _numeric_gradient(ref, v, eps=1e-6):
    out = np.zeros_like(v)
    for i in np.ndindex(v.shape):
        step = np.zeros_like(v)
        step[i] = eps
        out[i] = (ref(v + step).sum() - ref(v - step).sum()) / (2 * eps)
    return out


@pytest.mark.parametrize("name", list(THROUGH_SELECTIONS))
@pytest.mark.parametrize("backend", named_backends("py", "c"))
def test_logs_of_probabilities_moved_or_picked_stay_finite(name, backend):
    """Theano's test_binary_crossentropy_reshape (issue #4086): a reshape (or any op that
    only picks or moves elements) between the sigmoid or softmax and the log hid it from the
    rules and from sn.grad, so the loss was NaN or -inf where the sigmoid rounds to 1 or the
    softmax underflows, and its gradient NaN."""
    build, ref, rule = THROUGH_SELECTIONS[name]
    z = sn.tensor("z", shape=Z_GRID.shape, dtype="float32")
    loss = build(z)
    g = sn.grad(sn.sum(loss), z)
    v = Z_GRID.astype("float64")
    want, want_g = ref(v), _numeric_gradient(ref, v)
    for mode in ("fast", "stable"):
        f = sn.function([z], [loss, g], optimize=mode, backend=backend)
        got, got_g = f(Z_GRID)
        assert f.rewrites.counts()[rule] == 1, (mode, f.rewrites.counts())
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(got_g, want_g, rtol=1e-5, atol=1e-5)
    # sn.grad differentiates the stable form (symnb/grad/formulas.py): finite unoptimised
    with np.errstate(all="ignore"):
        got_g = sn.function([z], g, optimize="none", backend=backend)(Z_GRID)
    np.testing.assert_allclose(got_g, want_g, rtol=1e-5, atol=1e-5)


def test_selections_near_misses():
    x = sn.matrix("x")
    s = sn.sigmoid(x)
    assert fired([x], sn.log(2 - s.T), STABLE) == {}
    assert fired([x], sn.log(sn.sum(s, axis=0)), STABLE) == {}  # a sum is no selection
    assert fired([x], sn.log1p(s.T), STABLE) == {}
    assert fired([x], sn.log(sn.exp(x).reshape((-1,))), STABLE) == {}
