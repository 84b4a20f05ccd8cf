"""Theano 1.0's own API, as its unit tests call it: the top-level names of ``theano``,
``T.stack``'s argument forms, ``T.batched_dot`` for every rank, against NumPy."""

import copy
import itertools
import pickle
import re

import numpy as np
import pytest

import symnb as sn
import symnb.compat.theano as theano
import symnb.compat.theano.tensor as T
from symnb.compat.theano.compile.ops import as_op
from symnb.core.graph import leaves


def run(inputs, outputs, *values):
    return theano.function(inputs, outputs, mode="FAST_COMPILE")(*values)


def test_theano_top_level_has_theano_1_0s_names(rng):
    x, W = T.vector("x"), T.matrix("W")
    X, M = rng.random(3), rng.random((3, 2))
    assert np.allclose(run([x, W], theano.dot(x, W), X, M), X @ M)
    V, u = T.matrix("V"), T.vector("u")
    jv, vj = theano.Rop(T.dot(x, W), W, V), theano.Lop(T.dot(x, W), W, u)
    Vv, U = rng.random((3, 2)), rng.random(2)
    got_jv, got_vj = run([x, W, V, u], [jv, vj], X, M, Vv, U)
    assert np.allclose(got_jv, X @ Vv) and np.allclose(got_vj, np.outer(X, U))
    assert theano.get_scalar_constant_value(T.constant(3) * 2) == 6
    assert theano.pprint(x * 2) == theano.pp(x * 2)
    assert theano.sparse_grad(W[T.ivector()]) is not None


THEANO_1_0_TOP_LEVEL = {
    # what Theano 1.0's theano/__init__.py imported from each submodule
    "gof": "Apply Variable Constant Op Type",
    "compile": "In SymbolicOutput Out Mode FunctionMaker function Param shared as_op",
    "printing": "pprint pp",
    "scan_module": "scan map reduce foldl foldr clone",
    "updates": "OrderedUpdates",
    "gradient": "Rop Lop grad subgraph_grad",
}


@pytest.mark.parametrize("module", sorted(THEANO_1_0_TOP_LEVEL))
def test_every_theano_1_0_top_level_name_the_layer_has_is_at_the_top(module):
    """``theano.subgraph_grad`` (and ``as_op``, ``SymbolicOutput``, ``FunctionMaker``) were
    only in their submodules: a bare AttributeError where Theano's docs call them."""
    sub = getattr(theano, module)
    for name in THEANO_1_0_TOP_LEVEL[module].split():
        assert getattr(theano, name) is getattr(sub, name), name


def test_theano_subgraph_grad_runs_theano_s_docstring_example():
    x, t = T.fvector("x"), T.fvector("t")
    rng = np.random.RandomState(0)
    w1 = theano.shared(rng.randn(3, 4).astype("float32"))
    w2 = theano.shared(rng.randn(4, 2).astype("float32"))
    a1 = T.tanh(T.dot(x, w1))
    a2 = T.tanh(T.dot(a1, w2))
    cost2 = T.sqr(a2 - t).sum() + T.sqr(w2.sum())
    cost1 = T.sqr(w1.sum())
    params, costs, ends = [[w2], [w1]], [cost2, cost1], [[a1], [x]]
    next_grad, param_grads = None, []
    for i in range(2):
        param_grad, next_grad = theano.subgraph_grad(
            wrt=params[i], end=ends[i], start=next_grad, cost=costs[i]
        )
        next_grad = dict(zip(ends[i], next_grad))
        param_grads.extend(param_grad)
    true_grads = T.grad(cost1 + cost2, [w2, w1])
    got = run([x, t], param_grads + true_grads, np.ones(3, "f"), np.ones(2, "f"))
    assert got[0].shape == (4, 2) and got[1].shape == (3, 4)
    assert np.allclose(got[0], got[2], atol=1e-4) and np.allclose(got[1], got[3], atol=1e-4)


def test_theano_sparse_says_symnb_has_no_sparse_matrices():
    assert theano.sparse.enable_sparse is False
    with pytest.raises(NotImplementedError, match="no sparse matrices.*T.dot"):
        theano.sparse.csr_matrix("m")


@pytest.mark.parametrize(
    "build",
    [
        lambda a, b: T.stack([a, b], 1),
        lambda a, b: T.stack(tensors=[a, b], axis=1),
        lambda a, b: T.stack([a, b], axis=1),
        lambda a, b: T.stack((a, b), -2),
        lambda a, b: T.stack([a, b], T.constant(1)),
    ],
)
def test_stack_takes_the_axis_the_ways_theano_1_0_did(build):
    a, b = T.imatrix("a"), T.imatrix("b")
    A, B = np.array([[1, 2]], "int32"), np.array([[3, 4]], "int32")
    assert np.array_equal(run([a, b], build(a, b), A, B), np.stack([A, B], 1))


def test_stack_of_scalars_and_the_older_form():
    a, b, c = T.scalars("a", "b", "c")
    assert np.array_equal(run([a, b, c], T.stack(a, b, c), 1, 2, 3), [1, 2, 3])
    assert np.array_equal(run([a, b], T.stack([a, b], axis=0), 1, 2), [1, 2])
    m, n = T.matrices("m", "n")
    M = np.ones((2, 3))
    assert run([m, n], T.stack(m, n), M, M).shape == (2, 2, 3)
    grid = T.stacklists([[a, b], [c, a]])
    assert np.array_equal(run([a, b, c], grid, 1, 2, 3), [[1, 2], [3, 1]])


@pytest.mark.parametrize("floatx", ["float32", "float64"])
def test_python_numbers_in_stack_take_theanos_dtype_not_int64_or_float64(floatx):
    """Theano's ``stack`` made each Python number ``as_tensor_variable`` of it (an int the
    smallest int that holds it, a float floatX), then upcast: ``T.stack([fscalar, 1.])`` is
    float32, ``T.stack([iscalar, 1])`` int32, ``T.stack([bscalar, 1])`` int8."""
    theano.config.floatX = floatx
    f, i, b = T.fscalar("f"), T.iscalar("i"), T.bscalar("b")
    cases = [
        (T.stack([f, 1.0]), floatx),
        (T.stack([f, 1]), "float32"),
        (T.stack([i, 1]), "int32"),
        (T.stack([b, 1]), "int8"),
        (T.stack([b, 300]), "int16"),
        (T.stack([i, 2.5]), "float64"),
        (T.as_tensor_variable([i, 1]), "int32"),
        (T.stacklists([[f, 1], [f, f]]), "float32"),
        (T.stacklists([[f, 1.0], [f, f]]), floatx),
    ]
    assert [str(v.dtype) for v, _ in cases] == [want for _, want in cases]
    got = run([f], T.stack([f, 1.0, -2]), np.float32(2.5))
    assert got.dtype == floatx and np.array_equal(got, [2.5, 1.0, -2.0])
    got = run([b], T.stack([b, 300]), np.int8(-3))
    assert got.dtype == np.int16 and np.array_equal(got, [-3, 300])


def test_stack_and_join_say_what_is_wrong():
    a, b = T.matrices("a", "b")
    with pytest.raises(ValueError, match="tensors is empty"):
        T.stack([])
    with pytest.raises(TypeError, match="unexpected arguments"):
        T.stack([a, b], axes=1)
    with pytest.raises(NotImplementedError, match="computed when the function runs"):
        T.join(T.iscalar("k"), a, b)
    M = np.ones((2, 3))
    assert run([a, b], T.join(T.constant(1), a, b), M, M).shape == (2, 6)


#: each rank's test shape; b's contracted axis (max(1, ndim - 2)) gets a's last size
SHAPES = {1: (3,), 2: (3, 4), 3: (3, 2, 4), 4: (3, 5, 2, 4)}
MAKERS = {1: T.vector, 2: T.matrix, 3: T.tensor3, 4: T.tensor4}


def _b_shape(rank_a, rank_b):
    shape = [3, 2, 3, 2][:rank_b]
    if rank_a > 1 and rank_b > 1:
        shape[max(1, rank_b - 2)] = SHAPES[rank_a][-1]
    return tuple(shape)


@pytest.mark.parametrize("rank_a, rank_b", list(itertools.product(range(1, 5), repeat=2)))
def test_batched_dot_is_dot_of_each_pair_for_every_rank(rank_a, rank_b, rng):
    a, b = MAKERS[rank_a]("a"), MAKERS[rank_b]("b")
    A, B = rng.random(SHAPES[rank_a]), rng.random(_b_shape(rank_a, rank_b))
    want = np.array([np.dot(A[i], B[i]) for i in range(3)])
    out = T.batched_dot(a, b)
    got, ga, gb = run([a, b], [out, *T.grad((out**2).sum(), [a, b])], A, B)
    assert got.shape == want.shape and np.allclose(got, want)
    assert (ga.shape, gb.shape) == (A.shape, B.shape)
    T.verify_grad(lambda a, b: T.batched_dot(a, b), [A, B], rng=np.random.RandomState(0))


def test_batched_tensordot_against_numpy(rng):
    x, y = T.tensor4("x"), T.tensor3("y")
    X, Y = rng.random((2, 3, 4, 5)), rng.random((2, 5, 3))
    got = run([x, y], T.batched_tensordot(x, y, [[3, 1], [1, 2]]), X, Y)
    want = np.array([np.tensordot(X[i], Y[i], [[2, 0], [0, 1]]) for i in range(2)])
    assert np.allclose(got, want)
    with pytest.raises(ValueError, match="batch"):
        T.batched_tensordot(x, y, [[0], [1]])
    with pytest.raises(sn.ShapeError, match="no batch axis"):
        T.batched_dot(T.scalar(), y)


BATCH_CALLS = {
    "batched_dot": lambda a, b: T.batched_dot(a, b),
    "batched_tensordot": lambda a, b: T.batched_tensordot(a, b, [[2], [1]]),
}


@pytest.mark.parametrize("call", sorted(BATCH_CALLS))
@pytest.mark.parametrize("ones_on", ["left", "right"])
def test_batched_dot_refuses_a_batch_of_1_against_a_larger_one(call, ones_on, rng):
    """out[i] = dot(a[i], b[i]) pairs the batches (Theano's BatchedDot raised "inputs must
    have the same size in axis 0"): a batch of 1 against 5 was stretched by matmul (a silent
    (5, 3, 2) reusing b[0]) or, on the left, failed in an internal reshape. A ShapeError naming
    the call and both operands, when the graph is built where the types give the sizes."""
    A, B = rng.random((5, 3, 4)), rng.random((1, 4, 2))
    if ones_on == "left":
        A, B = rng.random((1, 3, 4)), rng.random((5, 4, 2))
    a, b = sn.tensor("a", shape=A.shape), sn.tensor("b", shape=B.shape)
    message = f"T.{call}: axis 0 (the batch) of 'a' (float64{A.shape}) has size {A.shape[0]} "
    message += f"but axis 0 of 'b' (float64{B.shape}) has size {B.shape[0]}"
    with pytest.raises(sn.ShapeError, match=re.escape(message)):
        BATCH_CALLS[call](a, b)


@pytest.mark.parametrize("backend", ["py", "c"])
@pytest.mark.parametrize("call", sorted(BATCH_CALLS))
def test_batched_dot_checks_unknown_batch_sizes_when_the_function_runs(call, backend, rng):
    """With sizes unknown when the graph is built, the batches are compared when the function
    runs (the check names the call, b and a's length); equal batches give dot of each pair."""
    a, b = T.tensor3("a"), T.tensor3("b")
    f = sn.function([a, b], BATCH_CALLS[call](a, b), backend=backend)
    for A, B in [
        (rng.random((5, 3, 4)), rng.random((1, 4, 2))),
        (rng.random((1, 3, 4)), rng.random((5, 4, 2))),
    ]:
        message = rf"T.{call}: axis 0 \(the batch\) of 'b' .* must have the length of axis 0 "
        message += rf"of 'a'.*\({B.shape[0]}, 4, 2\), not \(a.shape\[0\], .*\) = "
        message += rf"\({A.shape[0]}, "
        with pytest.raises(sn.ShapeError, match=message):
            f(A, B)
    A, B = rng.random((5, 3, 4)), rng.random((5, 4, 2))
    np.testing.assert_allclose(f(A, B), np.matmul(A, B))


def test_batched_dot_of_a_vector_checks_the_batch_too(rng):
    """A vector a scales b's rows, one number per batch: a b of batch 1 was stretched."""
    a, b = T.vector("a"), T.matrix("b")
    f = sn.function([a, b], T.batched_dot(a, b), backend="py")
    with pytest.raises(sn.ShapeError, match=r"batched_dot: axis 0 \(the batch\) of 'b'"):
        f(np.ones(3), np.ones((1, 4)))
    with pytest.raises(sn.ShapeError, match=r"axis 0 \(the batch\) of 'a' \(float64\(3,\)\)"):
        T.batched_dot(sn.tensor("a", shape=(3,)), sn.tensor("b", shape=(1, 4)))
    A, B = rng.random(3), rng.random((3, 4))
    np.testing.assert_allclose(f(A, B), A[:, None] * B)


def test_batched_dot_names_its_operands_where_summed_axes_differ(rng):
    """Summed axes of different sizes were matmul's "inner dims differ" about "an unnamed
    variable" of the 3-d reshape the user never wrote: the message names the call, the
    user's operands with their own shapes and the axes that clash, as sn.tensordot's does."""
    a, b = sn.tensor("a", shape=(2, 3, 7, 4)), sn.tensor("b", shape=(2, 5, 6))
    message = (
        "T.batched_dot: axis 3 of 'a' (float64(2, 3, 7, 4)) has size 4 but the axis 1 of 'b' "
        "(float64(2, 5, 6)) it is summed with has size 5"
    )
    with pytest.raises(sn.ShapeError, match=re.escape(message)):
        T.batched_dot(a, b)
    a3 = sn.tensor("a", shape=(2, 3, 4))
    message = message.replace("batched_dot", "batched_tensordot").replace("3, 7, 4", "3, 4")
    with pytest.raises(sn.ShapeError, match=re.escape(message.replace("axis 3", "axis 2"))):
        T.batched_tensordot(a3, b, [[2], [1]])
    x, y = sn.tensor("x", shape=(2, 3, None)), sn.tensor("y", shape=(2, None, 6))
    f = sn.function([x, y], T.batched_tensordot(x, y, [[2], [1]]), backend="py")
    message = (
        "T.batched_tensordot: axis 1 of 'y' (float64(2, ?, 6)) must have the length of axis 2 "
        "of 'x' (float64(2, 3, ?)) (summed together) (out[i] is tensordot(x[i], y[i], axes)) "
        "((2, 5, 6), not (?, x.shape[2], ?) = (?, 4, ?), when the function ran)"
    )
    with pytest.raises(sn.ShapeError, match=re.escape(message)):
        f(np.ones((2, 3, 4)), np.ones((2, 5, 6)))
    X, Y = rng.random((2, 3, 4)), rng.random((2, 4, 6))
    np.testing.assert_allclose(f(X, Y), X @ Y)


BAD_AXES = [
    # a negative count was range(ndim + 1, ndim): no axis, silently axes=0
    (-1, sn.ShapeError, "axes=-1 is a count of axes to sum, 0 or more"),
    # a str was int("x"): a bare "invalid literal for int()"
    ("x", sn.ArgumentError, r"T.batched_tensordot: axes is an int .* not 'x' \(str\)"),
    (1.5, sn.ArgumentError, r"T.batched_tensordot: axes is an int .* not 1.5 \(float\)"),
    # an axis listed twice was the transpose's "not a permutation"
    ([[1, 1], [1, 2]], sn.ShapeError, r"axis 1 of x 'x' \(float64\(\?, \?, \?\)\) is summed twice"),
    (
        [[1, -2], [1, 2]],
        sn.ShapeError,
        r"axis 1 of x 'x' .* is summed twice \(its axes \[1, -2\]\)",
    ),
    ([[1], [2, 2]], sn.ShapeError, r"axis 2 of y 'y' .* is summed twice"),
    ([[1, "a"], [1, 2]], sn.ShapeTypeError, r"an axis of x 'x' .* is an int, not 'a' \(str\)"),
]


@pytest.mark.parametrize("axes, error, message", BAD_AXES)
def test_batched_tensordot_refuses_axes_it_cannot_read(axes, error, message):
    x, y = T.tensor3("x"), T.tensor3("y")
    with pytest.raises(error, match=message):
        T.batched_tensordot(x, y, axes)
    X, Y = np.ones((2, 3, 4)), np.ones((2, 4, 5))  # a count of 1 still sums x's last with y's 1
    np.testing.assert_allclose(run([x, y], T.batched_tensordot(x, y, 1), X, Y), X @ Y)


def test_clone_without_share_inputs_reads_new_inputs():
    """``theano.clone(z, share_inputs=False)`` was the same as sharing them: the copy read
    ``x`` and ``y`` themselves. As in Theano, it reads new inputs (of the replacements'
    graphs too, one new variable wherever it is read); shared variables keep their value."""
    x, y, a = T.dvector("x"), T.dvector("y"), T.dvector("a")
    W = theano.shared(np.array([1.0, 2.0]), name="W")
    z = x * 2 + y * W

    def inputs(graph):
        return [v for v in leaves([graph]) if v.owner is None and v.name in ("x", "y", "a")]

    same = inputs(theano.clone(z))  # share_inputs=True, the default
    assert len(same) == 2 and same[0] is x and same[1] is y
    z2 = theano.clone(z, share_inputs=False)
    nx, ny = inputs(z2)
    assert (nx.name, ny.name) == ("x", "y") and nx is not x and ny is not y
    assert nx.type == x.type and any(v is W for v in leaves([z2]))
    got = theano.function([nx, ny], z2)(np.ones(2), np.ones(2))
    np.testing.assert_array_equal(got, [3.0, 4.0])
    with pytest.raises(sn.SymnbError, match="input 0 'x' .* is not used to compute the outputs"):
        theano.function([x, y], z2)  # not an input of the copy, in Theano too
    r = theano.clone(z, replace={y: a + x}, share_inputs=False)
    read = inputs(r)
    assert sorted(v.name for v in read) == ["a", "x"]
    assert not any(v is x or v is a for v in read)  # one new x, read twice
    got = theano.function(read, r)(*(np.ones(2) for _ in read))
    np.testing.assert_array_equal(got, [4.0, 6.0])


@pytest.mark.parametrize("mode", ["FAST_COMPILE", "FAST_RUN"])
def test_clone_carries_a_draws_default_update_through_its_replacements(mode):
    """``theano.clone(x + srng.uniform(x.shape), share_inputs=False)`` read a new x, but the
    draw's counter (a shared variable, kept) advanced by a default update reading the old x:
    compiling the copy over its x failed ("a different variable with the same name"), and
    likewise with ``replace={x: y}``. The copy carries the default update, replacements
    applied, as Theano's clone did: its draw advances by the copy's size, once a call, and
    the original keeps its own."""
    srng = T.shared_randomstreams.RandomStreams(2)
    x, y, f32 = T.dvector("x"), T.dvector("y"), T.fvector("f32")
    draw = srng.uniform(x.shape)

    def counter():
        return int(draw.rng.get_value().counter)

    copy = theano.clone(x + draw, share_inputs=False)
    (new_x,) = [v for v in leaves([copy]) if v.name == "x"]
    assert new_x is not x
    f = theano.function([new_x], copy, mode=mode)
    first, second = f(np.zeros(2)), f(np.zeros(2))
    assert first.shape == (2,) and not np.allclose(first, second) and counter() == 4
    srng.seed(2)  # the original's numbers, from the same stream
    original = theano.function([x], x + draw, mode=mode)
    np.testing.assert_array_equal(original(np.zeros(2)), first)
    original(np.zeros(5))
    assert counter() == 2 + 5
    theano.function([y], theano.clone(x + draw, replace={x: y}), mode=mode)(np.zeros(3))
    assert counter() == 10
    again = theano.clone(copy, replace={new_x: y * 1.0}, share_inputs=False)  # a copy's copy
    (new_y,) = [v for v in leaves([again]) if v.name == "y"]
    theano.function([new_y], again, mode=mode)(np.zeros(4))
    assert counter() == 14
    loose = theano.clone(x + draw, replace={x: f32}, strict=False)
    theano.function([f32], loose, mode=mode)(np.zeros(1, "float32"))
    assert counter() == 15
    k, k2 = T.dscalar("k"), T.dscalar("k2")  # one default update reading another's variable
    s, t = theano.shared(0.0, name="s"), theano.shared(0.0, name="t")
    s.default_update, t.default_update = s + k, t + s
    g = theano.function(
        [k2], theano.clone(t * 1, replace={k: k2}), on_unused_input="ignore", mode=mode
    )
    g(1.0), g(1.0)
    assert (float(s.get_value()), float(t.get_value())) == (2.0, 1.0)


@pytest.mark.parametrize("mode", ["FAST_COMPILE", "FAST_RUN"])
def test_clone_checks_each_replacements_type_as_givens_do(mode):
    """A clone keeps its nodes' types: an int64 replacement under an int32 ``y + 1`` wrapped
    (2**40 + 1 -> 1), a matrix under a vector's sum gave a vector from a scalar's type."""
    y, z, b = T.ivector("y"), T.lvector("z"), T.bvector("b")
    with pytest.raises(sn.DTypeError, match=r"clone: replace: 'y' \(int32.*'z' \(int64") as err:
        theano.clone(y + 1, replace={y: z})
    assert isinstance(err.value, TypeError) and "test_theano_api.py" in str(err.value)
    d, m = T.dvector("d"), T.dmatrix("m")
    with pytest.raises(sn.ShapeError, match=r"'d' \(float64\(\?,\)\) cannot take 'm'"):
        theano.clone(T.sum(d * 2), replace={d: m})
    for loose in (False, True):  # a replacement of another rank is refused either way
        with pytest.raises(sn.ShapeError, match="shape"):
            theano.clone(T.sum(d * 2), replace=[(d, m)], strict=loose)
    with pytest.raises(sn.DTypeError, match=r"'y' \(int32.*'b' \(int8.*Cannot convert Type"):
        theano.clone(y * 2, replace={y: b})  # a safe cast too, as Theano's convert_variable
    widened = theano.clone(y * 2, replace={y: T.cast(b, "int32")})
    small = np.array([-3, 100], "int8")
    got = theano.function([b], widened, mode=mode)(small)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, small.astype("int32") * 2)
    loose = theano.clone(y + 1, replace={y: z}, strict=False)  # nodes built again: int64
    big = np.array([2**40, 3])
    got = theano.function([z], loose, mode=mode)(big)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, big + 1)


@pytest.mark.parametrize("mode", ["FAST_COMPILE", "FAST_RUN"])
def test_clone_checks_a_replacements_unproven_size_when_the_function_runs(mode):
    """``theano.clone(out, replace={x: y})``, x of fixed size 3 and y of unknown size: the
    copy keeps x's type, so y's size is checked when the function runs, as givens are (it
    was an internal failure for a concatenate, a silent ``y[-1]`` for ``x[-1]``)."""
    y = T.dvector("y")
    x = sn.vector("x", shape=(3,))
    both = theano.function([y], theano.clone(sn.concatenate([x, x]) * 1, replace={x: y}), mode=mode)
    last = theano.function([y], theano.clone(x[-1], replace={x: y}), mode=mode)
    np.testing.assert_array_equal(both(np.arange(3.0)), [0, 1, 2, 0, 1, 2])
    assert last(np.arange(3.0)) == 2.0
    for f in (both, last):
        with pytest.raises(sn.ShapeError) as err:
            f(np.arange(5.0))
        message = str(err.value)
        assert "theano.clone: replace" in message and "test_theano_api.py" in message, message
        assert "'x' (float64(3,)) was given 'y' (float64(?,))" in message, message
        assert "(5,), not (3,)" in message, message


def test_ifelse_takes_any_scalar_condition_zero_being_false():
    """Theano's IfElse takes any scalar (0 false, anything else true): a float condition,
    ``ifelse(T.scalar("a"), x, y)``, was sn.ifelse's DTypeError. A tensor condition is still
    refused, and sn.ifelse keeps asking for the comparison."""
    from symnb.compat.theano.ifelse import ifelse

    a, x, y = T.scalar("a"), T.vector("x"), T.vector("y")
    ones, zeros = np.ones(2), np.zeros(2)
    for cond, values in [(a, (0.0, 0.5, -2.0, np.nan)), (T.cscalar("c"), (0j, 1j))]:
        f = theano.function([cond, x, y], ifelse(cond, x, y), mode="FAST_COMPILE")
        for v in values:
            np.testing.assert_array_equal(f(v, ones, zeros), ones if v != 0 else zeros, str(v))
    both = ifelse(a, [x, 2 * x], [y, 2 * y])
    np.testing.assert_array_equal(run([a, x, y], both, 0.0, ones, zeros)[1], zeros)
    with pytest.raises(sn.ShapeError, match="must be a scalar"):
        ifelse(x, x, y)
    with pytest.raises(sn.DTypeError, match="must be boolean or an integer"):
        sn.ifelse(a, x, y)


def numpy_dot(a, b):
    """as_op's function in the test below (module level: the suite's kernels are pickled
    with the ops they read, and an as_op holds its function)."""
    return np.dot(a, b)


def sort_and_order(a):
    return np.sort(a).astype("float64"), np.argsort(a)  # a float64 result is cast


@as_op(itypes=[T.dvector], otypes=[T.dvector])
def numpy_sort(a):
    """An op decorated at a module's top level, as the Extending-Theano tutorial writes it."""
    return np.sort(a)


@pytest.mark.parametrize("backend", ["py", "c"])
def test_an_as_op_decorated_at_a_module_s_top_level_pickles(backend):
    """It did not pickle (nor did a graph or a function using it): the op pickled its
    function by reference, and the module's name holds the op ("not the same object as
    ...numpy_sort"). As Theano 1.0's ``FromFunctionOp.__reduce__``, it pickles by name."""
    x, xv = T.dvector("x"), np.array([3.0, 1.0, 2.0])
    y = numpy_sort(x) * 2
    f = sn.function([x], y, backend=backend)
    assert pickle.loads(pickle.dumps(numpy_sort)) is numpy_sort
    assert copy.deepcopy(numpy_sort) is numpy_sort
    x2, y2 = pickle.loads(pickle.dumps((x, y)))
    assert y2.owner.inputs[0].owner.op is numpy_sort
    np.testing.assert_array_equal(sn.function([x2], y2, backend=backend)(xv), [2.0, 4.0, 6.0])
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(f))(xv), [2.0, 4.0, 6.0])
    dot_op = as_op(itypes=[T.dmatrix, T.dmatrix], otypes=[T.dmatrix])(numpy_dot)
    assert pickle.loads(pickle.dumps(dot_op)).fn is numpy_dot  # its function at its name
    local = as_op(itypes=[T.dvector], otypes=[T.dvector])(lambda a: a)
    with pytest.raises(
        pickle.PicklingError, match=r"as_op\(<lambda>\): .* by its name, .*<lambda> is not found"
    ):
        pickle.dumps(local)


@pytest.mark.parametrize("backend", ["py", "c"])
def test_as_op_runs_a_numpy_function_as_an_op(backend):
    """The Extending-Theano tutorial's ``as_op`` (``theano.compile.ops``, also
    ``theano.compile.as_op``) was a bare ModuleNotFoundError: the function runs as the op's
    NumPy reference on every backend, with Theano's types as its inputs' and outputs'; a
    gradient through it is a NotDifferentiableError naming it; an input of another dtype is
    refused at the user's line."""
    from symnb.compat.theano.compile.ops import as_op

    assert theano.compile.as_op is as_op
    dot_op = as_op(itypes=[T.dmatrix, T.dmatrix], otypes=[T.dmatrix])(numpy_dot)
    sorting = [T.TensorType("float32", (False,))], [T.fvector, T.lvector]
    sort_op = as_op(*sorting)(sort_and_order)
    x, y, v = T.dmatrix("x"), T.dmatrix("y"), T.fvector("v")
    a, b = np.arange(6.0).reshape(2, 3), np.ones((3, 2))
    f = sn.function([x, y], dot_op(x, y) + 1, backend=backend)
    np.testing.assert_array_equal(f(a, b), a @ b + 1)
    np.testing.assert_array_equal(theano.function([x, y], dot_op(x, y))(a, b), a @ b)
    s, order = sort_op(v)
    got = sn.function([v], [s, order], backend=backend)(np.array([3, 1, 2], "float32"))
    assert got[0].dtype == np.float32 and got[1].dtype == np.int64
    np.testing.assert_array_equal(got[0], [1, 2, 3])
    np.testing.assert_array_equal(got[1], [1, 2, 0])
    assert str(dot_op) == "as_op(numpy_dot)"
    with pytest.raises(sn.NotDifferentiableError, match=r"as_op\(numpy_dot\) has no gradient"):
        T.grad(dot_op(x, y).sum(), x)
    with pytest.raises(sn.DTypeError, match=r"as_op\(numpy_dot\): input 1, 'z' \(float32"):
        dot_op(x, T.fmatrix("z"))
    with pytest.raises(sn.ArgumentError, match="numpy_dot takes 2 inputs, got 1|as_op takes 2"):
        dot_op(x)
    with pytest.raises(sn.ArgumentError, match="as_op: itypes is a list of Theano types"):
        as_op(itypes=["float64"], otypes=[T.dmatrix])


def test_a_clone_of_a_theano_shared_variable_shares_its_container():
    """Theano's ``SharedVariable.clone()`` shares the container: ``set_value`` of either, or
    a function's update of either, is seen by both. It was an independent copy."""
    W = theano.shared(np.ones(3), name="W")
    Wc = W.clone()
    assert isinstance(Wc, T.sharedvar.TensorSharedVariable) and Wc.dtype == "float64"
    Wc.set_value(np.zeros(3))
    assert W.get_value().tolist() == [0.0, 0.0, 0.0]
    theano.function([], [], updates=[(Wc, Wc + 5)])()
    assert W.get_value().tolist() == [5.0, 5.0, 5.0]
    W.set_value(np.full(3, 9.0))
    assert Wc.get_value(return_internal_type=True).tolist() == [9.0, 9.0, 9.0]
    with pytest.raises(sn.DTypeError):  # Theano's filter, through the clone too
        Wc.set_value(np.ones(3, "complex128"))
