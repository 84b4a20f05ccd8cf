"""The programs of Theano's own tutorial (theano.readthedocs.io, "Tutorial"), with only their
imports changed, against the outputs the tutorial prints: what a course built on it runs
first. Each test is one section; the expected values are the tutorial's."""

import numpy as np
import pytest

import symnb.compat.theano as theano
import symnb.compat.theano.tensor as T
from symnb.compat.theano import In, function, shared
from symnb.compat.theano.ifelse import ifelse
from symnb.compat.theano.tensor.shared_randomstreams import RandomStreams


def test_baby_steps_and_plural_constructors():
    x, y = T.dscalars("x", "y")
    assert (x.name, y.name, x.dtype, y.type.shape) == ("x", "y", np.float64, ())
    f = function([x, y], x + y)
    assert f(2, 3) == 5.0 and f(16.3, 12.1) == pytest.approx(28.4)
    a, b = T.dmatrices("a", "b")
    diff = a - b
    f = function([a, b], [diff, abs(diff), diff**2])
    got = f([[1, 1], [1, 1]], [[0, 1], [2, 3]])
    np.testing.assert_array_equal(got[0], [[1, 0], [-1, -2]])
    np.testing.assert_array_equal(got[1], [[1, 0], [1, 2]])
    np.testing.assert_array_equal(got[2], [[1, 0], [1, 4]])


@pytest.mark.parametrize(
    "plural, dtype, shape",
    [
        (T.scalars, "float64", ()),
        (T.iscalars, "int32", ()),
        (T.fvectors, "float32", (None,)),
        (T.lvectors, "int64", (None,)),
        (T.matrices, "float64", (None, None)),
        (T.imatrices, "int32", (None, None)),
        (T.rows, "float64", (1, None)),
        (T.dcols, "float64", (None, 1)),
        (T.ftensor3s, "float32", (None,) * 3),
        (T.tensor4s, "float64", (None,) * 4),
    ],
)
def test_plural_constructors_make_one_variable_per_name(plural, dtype, shape):
    made = plural("p", "q", "r")
    assert [v.name for v in made] == ["p", "q", "r"]
    assert all(v.type.dtype == np.dtype(dtype) and v.type.shape == shape for v in made)
    single = plural("o")
    assert single.name == "o" and single.type.shape == shape  # one name: one variable
    # one string alone is one name per letter, as Theano's _multi: x, y = T.vectors("xy")
    assert [v.name for v in plural("only")] == ["o", "n", "l", "y"]
    counted = plural(2)
    assert len(counted) == 2 and counted[0] is not counted[1]
    assert [v.name for v in plural(1)] == [None]  # a count always gives a list


def test_default_values_shared_variables_and_givens():
    x, y, w = T.dscalars("x", "y", "w")
    f = function([x, In(y, value=1), In(w, value=2, name="w_by_name")], (x + y) * w)
    assert (f(33), f(33, 2), f(33, 0, 1), f(33, w_by_name=1)) == (68.0, 70.0, 33.0, 34.0)
    state = shared(0)
    inc = T.iscalar("inc")
    accumulator = function([inc], state, updates=[(state, state + inc)])
    assert accumulator(1) == 0 and accumulator(300) == 1 and state.get_value() == 301
    foo = T.scalar(dtype=state.dtype)
    skip_shared = function([inc, foo], state * 2 + inc, givens=[(state, foo)])
    assert skip_shared(1, 3) == 7 and state.get_value() == 301


def test_copying_functions_swaps_shared_variables_or_drops_updates():
    state = shared(0)
    inc = T.iscalar("inc")
    accumulator = function([inc], state, updates=[(state, state + inc)])
    accumulator(10)
    assert state.get_value() == 10
    new_state = shared(0)
    new_accumulator = accumulator.copy(swap={state: new_state})
    assert new_accumulator(100) == 0
    assert (new_state.get_value(), state.get_value()) == (100, 10)
    null_accumulator = accumulator.copy(delete_updates=True)
    assert null_accumulator(9000) == 10 and state.get_value() == 10
    with pytest.raises(TypeError, match="types differ"):
        accumulator.copy(swap={state: shared(np.zeros(3))})


def test_random_streams_and_no_default_updates():
    srng = RandomStreams(seed=234)
    rv_u, rv_n = srng.uniform((2, 2)), srng.normal((2, 2))
    f = function([], rv_u)
    g = function([], rv_n, no_default_updates=True)  # the tutorial: rv_n's state stays put
    first, second = f(), f()
    assert first.shape == (2, 2) and not np.array_equal(first, second)
    assert np.all((first >= 0) & (first < 1))
    np.testing.assert_array_equal(g(), g())
    nearly_zero = function([], rv_u + rv_u - 2 * rv_u)  # one draw per call, used three times
    np.testing.assert_allclose(nearly_zero(), 0, atol=1e-15)


def test_seeding_and_sharing_streams_through_rv_rng():
    srng = RandomStreams(seed=234)
    rv_u = srng.uniform((2, 2))
    f = function([], rv_u)
    nearly_zeros = function([], rv_u + rv_u - 2 * rv_u)
    f()  # (not in the tutorial: seeding restarts a stream that has drawn already)
    rng_val = rv_u.rng.get_value(borrow=True)  # "Seeding Streams"
    rng_val.seed(89234)
    rv_u.rng.set_value(rng_val, borrow=True)
    seeded = f()  # what a stream seeded with 89234 draws first
    np.testing.assert_array_equal(seeded, function([], RandomStreams(89234).uniform((2, 2)))())
    state_after_v0 = rv_u.rng.get_value().get_state()  # "Sharing Streams Between Functions"
    nearly_zeros()  # this affects rv_u's generator
    v1 = f()
    rng = rv_u.rng.get_value(borrow=True)
    rng.set_state(state_after_v0)
    rv_u.rng.set_value(rng, borrow=True)
    v2, v3 = f(), f()
    assert not np.array_equal(v1, v2)
    np.testing.assert_array_equal(v1, v3)
    assert srng.state_updates[0][0] is rv_u.rng
    with pytest.raises(TypeError, match=r"Philox key and counter, not RandomState.*seed"):
        rv_u.rng.set_value(np.random.RandomState(3))


def test_copying_random_state_between_graphs():
    class Graph:
        def __init__(self, seed=123):
            self.rng = RandomStreams(seed)
            self.y = self.rng.uniform(size=(1,))

    g1 = Graph(seed=123)
    f1 = theano.function([], g1.y)
    g2 = Graph(seed=987)
    f2 = theano.function([], g2.y)
    assert f1() != f2()  # by default, the two functions are out of sync

    def copy_random_state(g1, g2):
        for su1, su2 in zip(g1.rng.state_updates, g2.rng.state_updates):
            su2[0].set_value(su1[0].get_value())

    copy_random_state(g1, g2)
    assert f1() == f2()
    assert f1() == f2()  # and they stay in step


def test_a_per_element_probability_draws_bernoulli_samples():
    """An RBM's Gibbs step draws each unit with its own probability."""
    srng = RandomStreams(seed=5)
    p = T.dvector("p")
    draw = function([p], srng.binomial(size=p.shape, n=1, p=p, dtype="float64"))
    probs = np.array([0.0, 0.1, 0.5, 0.9, 1.0])
    counts = np.mean([draw(probs) for _ in range(2000)], axis=0)
    np.testing.assert_allclose(counts, probs, atol=0.04)
    assert counts[0] == 0.0 and counts[-1] == 1.0
    three = function([p], srng.binomial(size=p.shape, n=3, p=p))  # as NumPy takes it
    counts = np.mean([three(probs) for _ in range(2000)], axis=0)
    np.testing.assert_allclose(counts, 3 * probs, atol=0.12)


def test_derivatives_jacobian_and_hessian_through_scan():
    x = T.dscalar("x")
    gy = T.grad(x**2, x)
    f = function([x], gy)
    assert f(4) == 8.0 and f(94.2) == pytest.approx(188.4)
    m = T.dmatrix("x")
    dlogistic = function([m], T.grad(T.sum(1 / (1 + T.exp(-m))), m))
    np.testing.assert_allclose(
        dlogistic([[0, 1], [-1, -2]]), [[0.25, 0.19661193], [0.19661193, 0.10499359]], rtol=1e-7
    )
    v = T.dvector("x")
    y = v**2
    J, updates = theano.scan(
        lambda i, y, x: T.grad(y[i], x), sequences=T.arange(y.shape[0]), non_sequences=[y, v]
    )
    np.testing.assert_array_equal(function([v], J, updates=updates)([4, 4]), [[8, 0], [0, 8]])
    gcost = T.grad(y.sum(), v)
    steps = T.arange(gcost.shape[0])
    H, updates = theano.scan(
        lambda i, gy, x: T.grad(gy[i], x), sequences=steps, non_sequences=[gcost, v]
    )
    np.testing.assert_array_equal(function([v], H, updates=updates)([4, 4]), [[2, 0], [0, 2]])


def test_rop_and_lop():
    W, V = T.dmatrices("W", "V")
    x, v = T.dvectors("x", "v")
    y = T.dot(x, W)
    f = function([W, V, x], T.Rop(y, W, V))
    np.testing.assert_array_equal(f([[1, 1], [1, 1]], [[2, 2], [2, 2]], [0, 1]), [2, 2])
    f = function([v, x], T.Lop(y, W, v))  # the product's gradient does not read W
    np.testing.assert_array_equal(f([2, 2], [0, 1]), [[0, 0], [2, 2]])


def test_conditions_switch_and_ifelse():
    a, b = T.scalars("a", "b")
    x, y = T.matrices("x", "y")
    f_switch = function([a, b, x, y], T.switch(T.lt(a, b), T.mean(x), T.mean(y)))
    f_lazy = function([a, b, x, y], ifelse(T.lt(a, b), T.mean(x), T.mean(y)))
    ones, twos = np.ones((100, 100)), np.full((100, 100), 2.0)
    assert f_switch(0.0, 1.0, ones, twos) == 1.0 and f_lazy(0.0, 1.0, ones, twos) == 1.0
    assert f_switch(1.0, 0.0, ones, twos) == 2.0 and f_lazy(1.0, 0.0, ones, twos) == 2.0


def test_loops_power_polynomial_and_taps():
    k, A = T.iscalar("k"), T.vector("A")
    result, updates = theano.scan(
        lambda prior, A: prior * A, outputs_info=T.ones_like(A), non_sequences=A, n_steps=k
    )
    power = function([A, k], result[-1], updates=updates)
    np.testing.assert_array_equal(power(range(10), 2), np.arange(10.0) ** 2)
    coefficients, z = T.vector("coefficients"), T.scalar("x")
    powers = T.arange(10000)
    components, _ = theano.scan(
        lambda c, p, free: c * (free**p),
        outputs_info=None,
        sequences=[coefficients, powers],
        non_sequences=z,
    )
    polynomial = function([coefficients, z], components.sum())
    assert polynomial(np.asarray([1, 0, 2], dtype=np.float32), 3) == 19.0
    X = T.vector("X")
    fib, _ = theano.scan(lambda a, b: a + b, outputs_info=dict(initial=X, taps=[-2, -1]), n_steps=5)
    np.testing.assert_array_equal(function([X], fib)(np.array([1.0, 1.0])), [2, 3, 5, 8, 13])


def test_broadcastable_patterns():
    assert T.row().broadcastable == (True, False)
    assert T.matrix().broadcastable == (False, False)
    assert T.col().broadcastable == (False, True)
    assert shared(np.zeros((1, 3)), broadcastable=(True, False)).broadcastable == (True, False)
    x = T.matrix("x")
    np.testing.assert_array_equal(function([x], (x**2).shape)(np.ones((3, 4))), [3, 4])


def test_theano_variables_are_true_and_comparisons_refuse():
    """Theano's rule, which tutorial code leans on (``if not input:``, ``if not W:``): its
    variables are true in ``if``; a comparison's result is not a truth value."""
    x, W = T.matrix("x"), shared(np.ones((2, 2)))
    assert x and W and not (not x)
    with pytest.raises(TypeError, match="truth value"):
        bool(x > 0)
    assert isinstance(x * 2, T.TensorVariable) and isinstance(W, T.TensorSharedVariable)
    assert not isinstance(x, T.TensorSharedVariable)


def test_dtypes_are_strings_that_also_act_as_numpy_dtypes():
    y, W = T.ivector("y"), shared(np.zeros(3, "float32"))
    assert y.dtype.startswith("int") and W.dtype.startswith("float")
    assert y.dtype == "int32" and y.dtype == np.int32 and y.dtype == np.dtype("int32")
    assert y.dtype != "int64" and y.dtype.kind == "i" and y.dtype.itemsize == 4
    assert np.zeros(2, dtype=W.dtype).dtype == np.float32
