"""Linear algebra against NumPy: contractions, einsum, decompositions, trace, norms, gradients."""

import numpy as np
import pytest

import symnb as sn
from symnb.core.graph import ancestors
from symnb.ops.linalg import Tensordot
from tests.helpers import check, random_array, tolerance
from tests.helpers import run as run_on

DTYPES = ["float64", "float32", "int32"]


def well_conditioned(rng, shape, dtype="float64"):
    """Random square matrices with a dominant diagonal (symmetric positive definite)."""
    a = rng.uniform(-1, 1, size=shape)
    n = shape[-1]
    spd = a @ np.swapaxes(a, -1, -2) + n * np.eye(n)
    return spd.astype(dtype)


TENSORDOT = [
    ((3, 4), (4, 5), 1),
    ((2, 3, 4), (3, 4, 5), 2),
    ((2, 3, 4), (4, 3, 5), ([1, 2], [1, 0])),
    ((2, 3, 4), (5, 2), ([0], [-1])),
    ((3,), (4,), 0),
    ((3, 4), (3, 4), 2),
    ((0, 4), (4, 2), 1),
]


@pytest.mark.parametrize("sa,sb,axes", TENSORDOT)
@pytest.mark.parametrize("dtype", DTYPES)
def test_tensordot_matches_numpy(sa, sb, axes, dtype, rng, backend):
    a, b = random_array(rng, sa, dtype), random_array(rng, sb, "float32")
    got = run_on(lambda x, y: sn.tensordot(x, y, axes=axes), a, b, backend=backend)
    check(got, np.tensordot(a, b, axes=axes), rtol=1e-5)


@pytest.mark.parametrize("sa,sb", [((3,), (4,)), ((2, 2), (3,)), ((0,), (2,)), ((), (2,))])
@pytest.mark.parametrize("dtype", DTYPES)
def test_outer_matches_numpy(sa, sb, dtype, rng, backend):
    a, b = random_array(rng, sa, dtype), random_array(rng, sb, dtype)
    check(run_on(sn.outer, a, b, backend=backend), np.outer(a, b))


EINSUM = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("ij->ji", [(3, 4)]),
    ("ijk->kij", [(2, 3, 4)]),
    ("ij->", [(3, 4)]),
    ("ij->j", [(3, 4)]),
    ("i,i->", [(5,), (5,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ij,ij->i", [(3, 4), (3, 4)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("ijk,ikl", [(2, 3, 4), (2, 4, 3)]),
    ("ba", [(3, 4)]),
    ("ij,kj->ik", [(0, 3), (2, 3)]),
]


@pytest.mark.parametrize("subscripts,shapes", EINSUM)
@pytest.mark.parametrize("dtype", DTYPES)
def test_einsum_matches_numpy(subscripts, shapes, dtype, rng, backend):
    arrays = [random_array(rng, s, dtype) for s in shapes]
    got = run_on(lambda *xs: sn.einsum(subscripts, *xs), *arrays, backend=backend)
    check(got, np.einsum(subscripts, *arrays), rtol=1e-5)


EINSUM_BROADCAST = [  # a 0-d operand's empty term, and size-1 dims that broadcast
    (",ij->ij", [(), (2, 3)]),
    ("ij,->ji", [(2, 3), ()]),
    ("i,", [(3,), ()]),
    (",->", [(), ()]),
    ("->", [()]),
    ("ij,ij->i", [(3, 1), (3, 4)]),
    ("ij,jk->ik", [(3, 1), (4, 5)]),
    ("ij,kj->ik", [(2, 1), (3, 4)]),
    ("i,i->", [(1,), (3,)]),
    ("bij,bjk->bik", [(1, 3, 4), (2, 4, 5)]),
    ("ij,jk,kl->il", [(2, 1), (3, 4), (1, 2)]),
    ("ij,ij->ij", [(1, 4), (3, 1)]),
    ("ij,ij->ij", [(1, 1), (1, 1)]),
    ("ij,ji", [(1, 3), (1, 2)]),
    ("bb,b->", [(1, 1), (3,)]),  # a diagonal of length 1 broadcasts too
    ("bb,b->b", [(1, 1), (3,)]),
    ("ibb,bj->ij", [(2, 1, 1), (3, 4)]),
]


EINSUM_ELLIPSIS_AND_DIAGONALS = [  # NumPy's '...' and an index repeated inside one term
    ("...i->...", [(2, 3)]),
    ("...i", [(2, 3)]),
    ("i...", [(3, 2)]),
    ("...", [(3,)]),
    ("...,...", [(3,), (3,)]),
    ("...ij,...jk->...ik", [(4, 2, 3), (3, 5)]),
    ("...ij,...jk", [(4, 2, 3), (3, 5)]),
    ("i...,i...->i...", [(2, 1, 3), (2, 4, 1)]),
    ("ij...,jk...->ik...", [(2, 3, 5), (3, 4, 1)]),
    ("a...b,b->...", [(2, 3, 4), (4,)]),
    ("i,...->i...", [(2,), ()]),
    ("...qd,...kd->...qk", [(2, 3, 4, 5), (2, 3, 6, 5)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("iii->i", [(3, 3, 3)]),
    ("iji->j", [(2, 3, 2)]),
    ("i...i", [(3, 2, 3)]),
    ("...ii->...i", [(5, 3, 3)]),
    ("bii,bj->bij", [(2, 3, 3), (2, 4)]),
    ("ij,jj->i", [(2, 3), (3, 3)]),
]


@pytest.mark.parametrize("subscripts,shapes", EINSUM_ELLIPSIS_AND_DIAGONALS)
@pytest.mark.parametrize("dtype", ["float64", "int32"])
def test_einsum_takes_ellipses_and_diagonals(subscripts, shapes, dtype, rng, backend):
    """'...' names the axes a term leaves out, broadcast from the right and first in an
    implicit output; a repeated index takes the diagonal (both were refused)."""
    arrays = [random_array(rng, s, dtype) for s in shapes]
    got = run_on(lambda *xs: sn.einsum(subscripts, *xs), *arrays, backend=backend)
    check(got, np.einsum(subscripts, *arrays), rtol=1e-5)


@pytest.mark.parametrize("optimize", [True, False, "greedy", "optimal"])
def test_einsum_takes_numpys_optimize(optimize, rng):
    """Code written for np.einsum passes optimize=; the values are the same."""
    a, b, c = (random_array(rng, s, "float64") for s in [(2, 3), (3, 4), (4, 2)])
    got = run_on(lambda *xs: sn.einsum("ij,jk,kl->il", *xs, optimize=optimize), a, b, c)
    check(got, np.einsum("ij,jk,kl->il", a, b, c))


EINSUM_ORDERS = [  # three or more operands, whose orders differ in cost
    ("ij,jk,k->i", [(4, 5), (5, 6), (6,)]),
    ("ij,jk,kl,l->i", [(2, 3), (3, 4), (4, 5), (5,)]),
    ("i,ij,jk,kl->l", [(6,), (6, 2), (2, 5), (5, 3)]),
    ("bij,bjk,bk->bi", [(2, 3, 4), (2, 4, 5), (2, 5)]),
    ("ab,cd,bc,da->", [(2, 3), (4, 5), (3, 4), (5, 2)]),
    ("ij,k,jk,l->il", [(2, 3), (4,), (3, 4), (5,)]),
    ("ii,ij,jk->k", [(3, 3), (3, 4), (4, 2)]),
    ("...ij,jk,k->...i", [(2, 3, 4), (4, 5), (5,)]),
    ("ij,jk,kl->il", [(2, 1), (3, 4), (1, 2)]),
    ("ij,jk,kl,lm,mn->in", [(2, 3), (3, 6), (6, 1), (1, 4), (4, 5)]),
]


@pytest.mark.parametrize("subscripts,shapes", EINSUM_ORDERS)
@pytest.mark.parametrize("optimize", [True, False, "greedy", "optimal", ("greedy", 1e6), "path"])
def test_einsum_of_several_operands_matches_numpy_in_every_order(
    subscripts, shapes, optimize, rng, backend
):
    """Each order (by cost, left to right, NumPy's own path) gives np.einsum's values."""
    arrays = [random_array(rng, s, "float64") for s in shapes]
    if optimize == "path":
        optimize = np.einsum_path(subscripts, *arrays, optimize="optimal")[0]
    got = run_on(
        lambda *xs: sn.einsum(subscripts, *xs, optimize=optimize), *arrays, backend=backend
    )
    check(got, np.einsum(subscripts, *arrays), rtol=1e-10)


def first_contraction(out):
    """The inputs of the first tensordot that builds ``out``."""
    nodes = [n for n in ancestors([out]) if isinstance(n.op, Tensordot)]
    return nodes[0].inputs


@pytest.mark.parametrize("n", [1000, None, "n"])
def test_einsum_contracts_the_cheapest_pair_first(n):
    """'ij,jk,k->i' was (A @ B) @ v, n**3 multiply-adds where A @ (B @ v) does 2 n**2 (180x
    slower at n = 1000): the order is chosen by cost, also of unknown and named dims;
    optimize=False keeps left to right."""
    a, b, v = sn.tensor("a", (n, n)), sn.tensor("b", (n, n)), sn.tensor("v", (n,))
    for optimize in [True, "greedy", "optimal"]:
        out = sn.einsum("ij,jk,k->i", a, b, v, optimize=optimize)
        assert first_contraction(out) == [b, v], optimize
    assert first_contraction(sn.einsum("ij,jk,k->i", a, b, v)) == [b, v]
    assert first_contraction(sn.einsum("ij,jk,k->i", a, b, v, optimize=False)) == [a, b]
    path = ["einsum_path", (0, 2), (0, 1)]
    assert first_contraction(sn.einsum("ij,k,jk->i", a, v, b, optimize=path)) == [a, b]


@pytest.mark.parametrize("batch,first", [(2, "x w1"), (None, "w1 w2"), ("batch", "w1 w2")])
def test_einsum_counts_a_dim_unknown_when_built_as_100(batch, first):
    """x @ w1 @ w2 of a known batch of 2 starts with x @ w1; a batch unknown or named counts
    as 100, and then w1 @ w2 (784 x 100 x 10) costs less than x @ w1 (100 x 784 x 100)."""
    x = sn.tensor("x", (batch, 784))
    w1, w2 = sn.tensor("w1", (784, 100)), sn.tensor("w2", (100, 10))
    inputs = first_contraction(sn.einsum("bi,ij,jk->bk", x, w1, w2))
    assert " ".join(v.name for v in inputs) == first


def test_einsum_counts_a_named_dim_by_its_expression():
    """Names are the same size where they match, and n*n is n times n: 'ij,jk,kl->il' of
    (n, n), (n, n*n), (n*n, n) costs 2 n**4 left to right and n**4 + n**3 from the right."""
    a, b, c = sn.tensor("a", ("n", "n")), sn.tensor("b", ("n", "n*n")), sn.tensor("c", ("n*n", "n"))
    assert first_contraction(sn.einsum("ij,jk,kl->il", a, b, c)) == [b, c]


EINSUM_OPTIMIZE_ERRORS = [
    ("fastest", r"optimize is True .*, not 'fastest'"),
    (3, r"optimize is True .*, not 3"),
    (("greedy", "big"), r"optimize is True .*, not \('greedy', 'big'\)"),
    (["einsum_path", (0, 3)], r"step \(0, 3\) of the path .* among the 3 operands left"),
    (["einsum_path", (1, 1)], r"step \(1, 1\) of the path .* not distinct positions"),
    (["einsum_path", (0, 1)], r"leaves 2 of the 3 operands uncontracted"),
]


@pytest.mark.parametrize("optimize,message", EINSUM_OPTIMIZE_ERRORS)
def test_einsum_names_an_optimize_it_does_not_take(optimize, message):
    """optimize was taken and ignored whatever it was."""
    a, b, v = sn.tensor("a", (3, 4)), sn.tensor("b", (4, 5)), sn.tensor("v", (5,))
    with pytest.raises(sn.ArgumentError, match=message) as caught:
        sn.einsum("ij,jk,k->i", a, b, v, optimize=optimize)
    assert "test_linalg.py" in str(caught.value)


def test_einsum_diagonals_of_unknown_size(rng):
    """A diagonal whose length is known only when the function runs."""
    x = sn.tensor("x", shape=("n", None, "n"))
    a = rng.normal(size=(4, 2, 4))
    f = sn.function([x], [sn.einsum("iji->j", x), sn.einsum("i...i", x)], backend="py")
    for got, want in zip(f(a), [np.einsum("iji->j", a), np.einsum("i...i", a)]):
        check(got, want)


DIAGONALS_OF_UNEQUAL_AXES = [  # (subscripts, the operand's type, a value, the sizes said)
    (
        "ii->i",
        (None, None),
        (3, 4),
        r"index 'i' at axes 0, 1 .*\(\(3, 4\), not \(\?, i\) = \(\?, 3\)",
    ),
    ("ii", (None, None), (4, 3), r"index 'i' at axes 0, 1 .*\(\(4, 3\), not \(\?, i\) = \(\?, 4\)"),
    ("ii->i", (None, None), (1, 4), r"\(\(1, 4\), not \(\?, i\) = \(\?, 1\)"),
    (
        "iji->j",
        (None, None, None),
        (2, 3, 4),
        r"index 'i' at axes 0, 2 .*\(\?, \?, i\) = \(\?, \?, 2\)",
    ),
    ("ii->i", (3, None), (3, 4), r"\(float64\(3, \?\)\) repeats index 'i'"),
    ("ijij->ij", (None,) * 4, (2, 3, 2, 4), r"index 'i' at axes 0, 2 and index 'j' at axes 1, 3"),
]


@pytest.mark.parametrize("subscripts, dims, shape, message", DIAGONALS_OF_UNEQUAL_AXES)
def test_einsum_checks_a_diagonal_s_axes_when_the_function_runs(
    subscripts, dims, shape, message, backend, rng
):
    """A repeated index on dims unknown when the graph is built was never compared: "ii->i"
    of a (3, 4) array gave [0, 5, 10] and "ii" 15 (a (4, 3) one an internal IndexError).
    NumPy raises "dimensions in single operand for collapsing index 'i' don't match"; einsum
    raises a ShapeError naming itself, the operand, the index and the sizes when it runs."""
    value = np.arange(np.prod(shape), dtype=float).reshape(shape)
    with pytest.raises(ValueError, match="collapsing index"):
        np.einsum(subscripts, value)
    x = sn.tensor("x", shape=dims)
    f = sn.function([x], sn.einsum(subscripts, x), backend=backend)
    with pytest.raises(sn.ShapeError, match=rf"einsum: operand 0 'x' .*{message}"):
        f(value)
    square = rng.normal(size=(shape[0],) * len(shape))  # one length: still NumPy's values
    check(f(square), np.einsum(subscripts, square))


@pytest.mark.parametrize("subscripts,shapes", EINSUM_BROADCAST)
@pytest.mark.parametrize("dtype", ["float64", "int32"])
def test_einsum_takes_0d_operands_and_broadcasts_size_1_dims(
    subscripts, shapes, dtype, rng, backend
):
    arrays = [random_array(rng, s, dtype) for s in shapes]
    got = run_on(lambda *xs: sn.einsum(subscripts, *xs), *arrays, backend=backend)
    check(got, np.einsum(subscripts, *arrays), rtol=1e-5)


@pytest.mark.parametrize("subscripts,shapes", EINSUM + EINSUM_BROADCAST)
@pytest.mark.parametrize("other", ["bool", "int8", "float32"])
def test_einsum_of_bool_operands_is_numpys(subscripts, shapes, other, rng, backend):
    """np.einsum takes bool: all bool gives bool, an OR of ANDs ("ij,jk->ik" of bools was
    "DTypeError: tensordot: ... is boolean", an op the user never called); a bool operand
    beside another dtype is its 0/1."""
    dtypes = ["bool"] + [other] * (len(shapes) - 1)
    arrays = [rng.random(s) > 0.5 for s in shapes]
    arrays = [a.astype(d) if d != "bool" else a for a, d in zip(arrays, dtypes)]
    got = run_on(lambda *xs: sn.einsum(subscripts, *xs), *arrays, backend=backend)
    check(got, np.einsum(subscripts, *arrays))


def test_einsum_broadcasts_a_size_1_dim_against_a_named_one(rng):
    a, b = sn.tensor("a", (3, 1)), sn.tensor("b", ("n", 5))
    out = sn.einsum("ij,jk->ik", a, b)
    assert out.type.shape == (3, 5)
    x, y = random_array(rng, (3, 1), "float64"), random_array(rng, (4, 5), "float64")
    check(sn.function([a, b], out, backend="py")(x, y), np.einsum("ij,jk->ik", x, y))


@pytest.mark.parametrize("size", [3, None])
def test_einsum_broadcasts_a_diagonal_of_size_1(size, rng, backend):
    """An index repeated in one term whose dims are all 1 broadcasts against its larger size
    elsewhere, as in NumPy ("bb,b->" of (1, 1) and (3,) is 6.0 for [[2]] and 0, 1, 2): it was
    a ShapeError at build for a known 3, an internal failure when run for an unknown one."""
    a, x = sn.tensor("a", (1, 1)), sn.tensor("x", (size,))
    av, xv = np.full((1, 1), 2.0), np.arange(3.0)
    out = sn.einsum("bb,b->", a, x)
    got = sn.function([a, x], [out, *sn.grad(out, [a, x])], backend=backend)(av, xv)
    for g, want in zip(got, [6.0, [[3.0]], [2.0, 2.0, 2.0]]):
        check(g, np.asarray(want))
    arrays = [random_array(rng, (1, 1), "float64"), random_array(rng, (3,), "float64")]
    sn.check_grad(lambda *xs: sn.einsum("bb,b->b", *xs), arrays)


def test_einsum_names_an_index_that_is_not_a_letter():
    a, b = sn.tensor("a", (2, 3)), sn.tensor("b", (3, 4))
    with pytest.raises(sn.ArgumentError, match="index '1' in 'i1,1k->ik' is not a letter") as e:
        sn.einsum("i1,1k->ik", a, b)
    assert e.value.location.filename == __file__
    with pytest.raises(ValueError, match="index '-' in 'ij-jk' is not a letter"):
        sn.einsum("ij-jk", a)


INTERLEAVED = [  # NumPy's einsum(op0, sublist0, op1, sublist1, ..., [sublist_out])
    ([(3, 4)], lambda a: (a, [0, 1], [1])),
    ([(3, 4)], lambda a: (a, [1, 0])),
    ([(3, 4), (4, 5)], lambda a, b: (a, [0, 1], b, [1, 2], [0, 2])),
    ([(3, 4), (4, 5)], lambda a, b: (a, (30, 1), b, (1, 2))),  # implicit: sorted, A..Z a..z
    ([(2, 3), (2, 3)], lambda a, b: (a, [51, 0], b, [51, 0], [51])),
    ([(4, 3)], lambda a: (a, [Ellipsis, 1], [1, Ellipsis])),
    ([(3, 3), (3,)], lambda a, b: (a, [0, 0], b, [0])),
]


@pytest.mark.parametrize("shapes, spell", INTERLEAVED)
def test_einsum_takes_numpys_interleaved_form(shapes, spell, rng, backend):
    """``sn.einsum(x, [0, 1], [1])`` was an internal AttributeError ('Variable' object has
    no attribute 'replace')."""
    arrays = [random_array(rng, s, "float64") for s in shapes]
    got = run_on(lambda *xs: sn.einsum(*spell(*xs)), *arrays, backend=backend)
    check(got, np.einsum(*spell(*arrays)), rtol=1e-10)
    m = sn.matrix("m", dtype="float64")
    check(sn.function([m], np.einsum(m, [0, 1], [0]), backend="py")(arrays[0]), arrays[0].sum(1))


EINSUM_MISUSES = {
    "None": (lambda x: sn.einsum(None, x), "einsum: the subscripts are a str.*not None"),
    "a list": (lambda x: sn.einsum(["ij"], x), r"got 'x' \(float64\(3, 4\)\) after operand 0"),
    "an int": (lambda x: sn.einsum(7, x), "einsum: the subscripts are a str.*after operand 0"),
    "an operand alone": (lambda x: sn.einsum(x), r"interleaved form.*, not 'x' \(float64"),
    "no operands": (lambda x: sn.einsum("ij->ij"), "einsum: 'ij->ij' has no operands"),
    "an index past 51": (lambda x: sn.einsum(x, [0, 52]), "an int in 0..51, not 52"),
    "an operand as the output": (lambda x: sn.einsum(x, [0, 1], x), "as the output's indices"),
}


@pytest.mark.parametrize("case", list(EINSUM_MISUSES))
def test_einsum_names_itself_when_the_subscripts_are_no_str(case):
    """An AttributeError from inside the parser, or (no operands) np.result_type's "at least
    one array or dtype is required"."""
    call, message = EINSUM_MISUSES[case]
    with pytest.raises(sn.ArgumentError, match=message) as caught:
        call(sn.tensor("x", shape=(3, 4), dtype="float64"))
    assert caught.value.location.filename == __file__


SQUARE_SHAPES = [(3, 3), (2, 4, 4), (1, 1), (0, 2, 2)]
DECOMPOSITIONS = {
    "inv": (sn.inv, np.linalg.inv),
    "det": (sn.det, np.linalg.det),
    "cholesky": (sn.cholesky, np.linalg.cholesky),
    "slogdet sign": (lambda x: sn.slogdet(x)[0], lambda a: np.linalg.slogdet(a)[0]),
    "slogdet log": (lambda x: sn.slogdet(x)[1], lambda a: np.linalg.slogdet(a)[1]),
}


@pytest.mark.parametrize("name", sorted(DECOMPOSITIONS))
@pytest.mark.parametrize("shape", SQUARE_SHAPES)
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
def test_decompositions_match_numpy(name, shape, dtype, rng, backend):
    fn, ref = DECOMPOSITIONS[name]
    a = np.round(well_conditioned(rng, shape)).astype(dtype)
    want = np.asarray(ref(a))
    check(
        run_on(fn, a, backend=backend),
        want,
        rtol=tolerance(want.dtype, 100),
        atol=tolerance(want.dtype, 100),
    )


@pytest.mark.parametrize(
    "sa,sb", [((3, 3), (3,)), ((3, 3), (3, 2)), ((2, 3, 3), (3, 4)), ((2, 3, 3), (1, 3, 2))]
)
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
def test_solve_matches_numpy(sa, sb, dtype, rng, backend):
    a = np.round(well_conditioned(rng, sa)).astype(dtype)
    b = random_array(rng, sb, dtype)
    want = np.linalg.solve(a, b)
    check(run_on(sn.solve, a, b, backend=backend), want, rtol=tolerance(want.dtype, 100))


TRACES = [
    ((3, 4), 0, (0, 1)),
    ((3, 4), 1, (0, 1)),
    ((3, 4), -2, (1, 0)),
    ((2, 3, 4), 0, (-1, -2)),
    ((0, 3), 0, (0, 1)),
]


@pytest.mark.parametrize("shape,offset,axes", TRACES)
@pytest.mark.parametrize("dtype", ["float32", "int32", "bool"])
def test_trace_matches_numpy(shape, offset, axes, dtype, rng, backend):
    a = random_array(rng, shape, dtype)
    got = run_on(lambda x: sn.trace(x, offset, *axes), a, backend=backend)
    check(got, np.trace(a, offset, *axes))


TRACE_OFFSETS = [
    lambda m: sn.trace(m, offset=1.5),
    lambda m: m.trace(1.5),
    lambda m: sn.trace(m, True),
]


@pytest.mark.parametrize("build", TRACE_OFFSETS, ids=["offset=1.5", "m.trace(1.5)", "True"])
def test_a_trace_offset_is_an_int(build):
    """NumPy refuses a float offset; symnb truncated it (1.5 summed the diagonal 1)."""
    m = sn.matrix("m", dtype="float64")
    with pytest.raises(sn.ShapeTypeError, match=r"trace: offset \(the diagonal\) is an int, not"):
        build(m)
    a = np.arange(12.0).reshape(3, 4)
    got = sn.function([m], sn.trace(m, np.int64(1)), backend="py")(a)
    check(got, np.trace(a, np.int64(1)))


NORMS = [
    ((5,), None, None),
    ((5,), 1, None),
    ((5,), 2, None),
    ((5,), np.inf, None),
    ((5,), -np.inf, None),
    ((5,), 0, None),
    ((5,), 3, None),
    ((3, 4), None, None),
    ((3, 4), "fro", None),
    ((3, 4), 1, None),
    ((3, 4), -1, None),
    ((3, 4), np.inf, None),
    ((3, 4), -np.inf, None),
    ((3, 4), 2, None),
    ((4, 3), -2, None),
    ((3, 4), "nuc", None),
    ((2, 3, 4), 2, (2, 0)),
    ((2, 3, 4), None, -1),
    ((2, 3, 4), 1, (2, 0)),
    ((2, 3, 4), "fro", (0, 1)),
    ((2, 3, 4), 2, 1),
    ((0, 4), None, None),
]


@pytest.mark.parametrize("shape,ord,axis", NORMS)
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
@pytest.mark.parametrize("keepdims", [False, True])
def test_norm_matches_numpy(shape, ord, axis, dtype, keepdims, rng, backend):
    a = random_array(rng, shape, dtype) - (random_array(rng, shape, dtype) > 1)
    got = run_on(lambda x: sn.norm(x, ord, axis, keepdims), a, backend=backend)
    check(got, np.linalg.norm(a, ord, axis, keepdims), rtol=1e-5)


EMPTY_NORMS = [((0,), None), ((0, 0), None), ((0, 3), None), ((3, 0), None), ((2, 0, 0), (1, 2))]
ORDS = [None, "fro", "nuc", np.inf, -np.inf, 0, 1, -1, 2, -2, 3, 0.5]


def _numpy_norm(a, ord, axis):
    """np.linalg.norm, or the ValueError it raises (the min of nothing, a bad ord)."""
    try:
        with np.errstate(divide="ignore"):
            return np.linalg.norm(a, ord, axis)
    except ValueError as exc:
        return exc


@pytest.mark.parametrize("shape,axis", EMPTY_NORMS)
@pytest.mark.parametrize("static", [True, False])
def test_norm_of_empty_matches_numpy(shape, axis, static, backend):
    """NumPy's norms built on a max take it with initial=0 (0 for nothing); those built on a
    min raise. The max raised "zero-size array" here, for static and unknown sizes alike."""
    a = np.zeros(shape)
    x = sn.tensor("x", shape=shape if static else (None,) * len(shape), dtype="float64")
    for ord in ORDS:
        want = _numpy_norm(a, ord, axis)
        if isinstance(want, ValueError):
            with pytest.raises((ValueError, RuntimeError), match="zero-size|not a"):
                sn.function([x], sn.norm(x, ord, axis), backend=backend)(a)
            continue
        with np.errstate(divide="ignore"):
            got = sn.function([x], sn.norm(x, ord, axis), backend=backend)(a)
        check(got, want)


@pytest.mark.parametrize("shape,ord", [((5,), np.inf), ((3, 4), 1), ((3, 4), np.inf), ((3, 4), 2)])
def test_norm_over_unknown_sizes_keeps_values_and_gradients(shape, ord, rng, backend):
    """An axis of unknown size gets a zero to take the max from: the same values and
    gradients as over a fixed size (whose graph is unchanged), at zeros too."""
    x = sn.tensor("x", shape=(None,) * len(shape), dtype="float64")
    fixed = sn.tensor("fixed", shape=shape, dtype="float64")
    f, f_fixed = (
        sn.function([v], [sn.norm(v, ord), sn.grad(sn.norm(v, ord), v)], backend=backend)
        for v in (x, fixed)
    )
    for a in (random_array(rng, shape, "float64") - 1.2, np.zeros(shape)):
        value, grad = f(a)
        check(value, np.linalg.norm(a, ord))
        check(grad, f_fixed(a)[1])


@pytest.mark.parametrize("shape", [(3, 4), (4, 3), (2, 3, 3), (0, 2, 3)])
@pytest.mark.parametrize("full_matrices", [True, False])
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
def test_svd_matches_numpy(shape, full_matrices, dtype, rng, backend):
    a = random_array(rng, shape, dtype)
    u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    got_s = run_on(lambda x: sn.svd(x, compute_uv=False), a, backend=backend)
    check(got_s, s, rtol=tolerance(s.dtype, 100))
    got_u, got_s, got_vh = run_on(lambda x: list(sn.svd(x, full_matrices)), a, backend=backend)
    assert (got_u.shape, got_vh.shape, got_u.dtype) == (u.shape, vh.shape, u.dtype)
    k = s.shape[-1]
    rebuilt = got_u[..., :k] @ (got_s[..., None] * got_vh[..., :k, :])
    tol = tolerance(u.dtype, 100)
    check(rebuilt, a.astype(u.dtype), rtol=tol, atol=tol)


def test_svd_of_full_matrices_has_no_gradient_through_the_extra_columns():
    x = sn.matrix("x", shape=(3, 2))
    u, s, vh = sn.svd(x)
    assert sn.grad(sn.sum(s), x).type.shape == (3, 2)
    with pytest.raises(sn.NotDifferentiableError, match="pass full_matrices=False"):
        sn.grad(sn.sum(u), x)
    named = sn.matrix("named", shape=("m", "n"))  # named apart: different sizes, as elsewhere
    with pytest.raises(sn.NotDifferentiableError, match="not unique for a non-square matrix"):
        sn.grad(sn.sum(sn.svd(named)[2]), named)


ERRORS = [
    (
        lambda a, b: sn.tensordot(a, b, axes=([1], [1])),
        "axis 1 of 'a'.*size 4 but the axis 1 of 'b'.*size 3",
    ),
    (
        lambda a, b: sn.einsum("ij,ij->i", a, b),
        "index 'i' is 3 in operand 0 'a'.*but 4 in operand 1 'b'",
    ),
    (lambda a, b: sn.einsum("ii->i", a), "index 'i' is 3 in operand 0 'a'.*but 4 in operand 0"),
    (lambda a, b: sn.einsum("...ij->ij", sn.tensor("t", (2, 3, 4))), "has no '...' for the 1"),
    (lambda a, b: sn.einsum("i.j", a), "a '.' outside one '...'"),
    (lambda a, b: sn.einsum("...ijk", a), "names 3 indices but operand 0 'a'"),
    (lambda a, b: sn.einsum("ij,jk->ik", a), "names 2 operands, got 1"),
    (
        lambda a, b: sn.inv(a),
        r"'a' \(float64\(3, 4\)\) is not square: its last two dims are 3 and 4",
    ),
    (lambda a, b: sn.solve(sn.tensor("s", (4, 4)), a), "has 4 rows but 'a'.* has 3"),
    (lambda a, b: sn.det(sn.vector("v")), "1 dims; a matrix is needed"),
    (lambda a, b: sn.trace(a, 0, 1, -1), "both axis 1"),
    (lambda a, b: sn.norm(a, 3), "not a matrix norm"),
    (lambda a, b: sn.norm(a, "nuc", axis=0), "not a vector norm"),
]


@pytest.mark.parametrize("build,message", ERRORS)
def test_linalg_errors_name_the_clashing_dims(build, message):
    a, b = sn.tensor("a", (3, 4)), sn.tensor("b", (4, 3))
    with pytest.raises((sn.ShapeError, ValueError), match=message):
        build(a, b)


def test_linalg_dtype_rules():
    assert sn.inv(sn.matrix("m", dtype="int32")).dtype == np.float64
    assert sn.det(sn.matrix("m", dtype="float32")).dtype == np.float32
    with pytest.raises(sn.DTypeError, match="float16"):
        sn.inv(sn.matrix("m", dtype="float16"))
    with pytest.raises(sn.DTypeError, match="boolean"):
        sn.tensordot(sn.matrix("m", dtype="bool"), sn.matrix("n"))


GRADS = {
    "tensordot 2 axes": (lambda a, b: sn.tensordot(a, b, ([1, 2], [1, 0])), [(2, 3, 4), (4, 3, 2)]),
    "tensordot 1 axis": (lambda a, b: sn.tensordot(a, b, ([0], [2])), [(2, 3), (4, 3, 2)]),
    "tensordot outer": (lambda a, b: sn.tensordot(a, b, 0), [(2,), (3, 2)]),
    "outer": (sn.outer, [(2, 2), (3,)]),
    "einsum chain": (lambda a, b: sn.einsum("ij,jk,kl->li", a, b, a), [(2, 3), (3, 2)]),
    "einsum batch": (lambda a, b: sn.einsum("bij,bjk->bki", a, b), [(2, 2, 3), (2, 3, 2)]),
    "einsum broadcast": (lambda a, b: sn.einsum("ij,jk->ik", a, b), [(3, 1), (4, 2)]),
    "einsum broadcast batch": (lambda a, b: sn.einsum("ij,ij->i", a, b), [(3, 1), (1, 4)]),
    "einsum 0-d": (lambda a, b: sn.einsum(",ij->ji", a, b), [(), (2, 3)]),
    "einsum ellipsis": (lambda a, b: sn.einsum("...ij,...jk", a, b), [(2, 2, 3), (3, 2)]),
    "einsum diagonal": (lambda a, b: sn.einsum("iji,jk->ik", a, b), [(3, 2, 3), (2, 4)]),
    "einsum 3 by cost": (lambda *xs: sn.einsum("ij,jk,k->i", *xs), [(2, 3), (3, 4), (4,)]),
    "einsum 3 left to right": (
        lambda *xs: sn.einsum("ij,jk,k->i", *xs, optimize=False),
        [(2, 3), (3, 4), (4,)],
    ),
    "einsum 4 greedy": (
        lambda *xs: sn.einsum("ij,jk,kl,l->i", *xs, optimize="greedy"),
        [(2, 3), (3, 4), (4, 2), (2,)],
    ),
    "einsum 4 path": (
        lambda *xs: sn.einsum(
            "ij,jk,kl,l->i", *xs, optimize=["einsum_path", (2, 3), (0, 1), (0, 1)]
        ),
        [(2, 3), (3, 4), (4, 2), (2,)],
    ),
    "einsum 4 ring": (
        lambda *xs: sn.einsum("ab,cd,bc,da->ac", *xs),
        [(2, 3), (4, 2), (3, 4), (2, 2)],
    ),
    "einsum 3 batch": (
        lambda *xs: sn.einsum("bij,bjk,bk->bi", *xs, optimize="optimal"),
        [(2, 2, 3), (2, 3, 4), (2, 4)],
    ),
    "trace": (lambda a: sn.trace(a, 1), [(3, 4)]),
    "trace batched": (lambda a: sn.trace(a, 0, -1, 0), [(3, 2, 3)]),
}


@pytest.mark.parametrize("case", sorted(GRADS))
def test_contraction_gradients(case, rng):
    fn, shapes = GRADS[case]
    sn.check_grad(fn, [random_array(rng, s, "float64") for s in shapes])


SQUARE_GRADS = {
    "inv": sn.inv,
    "det": sn.det,
    "slogdet": lambda a: sn.slogdet(a)[1],
    "cholesky": sn.cholesky,
    "solve vector": lambda a: sn.solve(a, sn.sum(a, axis=-1)),
    "solve matrix": lambda a: sn.solve(a, a[..., :2] * 3),
}


@pytest.mark.parametrize("name", sorted(SQUARE_GRADS))
@pytest.mark.parametrize("shape", [(3, 3), (2, 2, 2)])
def test_square_matrix_gradients(name, shape, rng):
    sn.check_grad(SQUARE_GRADS[name], [well_conditioned(rng, shape)])


def test_solve_gradient_through_broadcast_batch(rng):
    a, b = well_conditioned(rng, (3, 3)), random_array(rng, (2, 3, 2), "float64")
    sn.check_grad(sn.solve, [a, b])


NORM_GRADS = [
    (None, None),
    (1, None),
    (np.inf, 0),
    (3, 1),
    ("fro", None),
    (1, (0, 1)),
    (-np.inf, (1, 0)),
    (2, -1),
    (2, None),
    (-2, (1, 0)),
    ("nuc", None),
]


@pytest.mark.parametrize("ord,axis", NORM_GRADS)
def test_norm_gradients(ord, axis, rng):
    a = random_array(rng, (3, 4), "float64") * np.where(rng.random((3, 4)) > 0.5, 1, -1)
    sn.check_grad(lambda x: sn.norm(x, ord, axis), [a])


@pytest.mark.parametrize(
    "axes",
    [np.int64(1), (np.int64(1), np.int64(0)), np.array(1), np.array([[1], [0]]), ([], [])],
    ids=["np.int64", "pair of np.int64", "0-d array", "2-d array", "no axes"],
)
def test_tensordot_takes_the_axes_numpy_takes(axes, rng):
    a, b = random_array(rng, (2, 3), "float64"), random_array(rng, (3, 4), "float64")
    check(run_on(lambda x, y: sn.tensordot(x, y, axes), a, b), np.tensordot(a, b, axes))


@pytest.mark.parametrize("axes", [1.0, "x", ([1], [0], [0]), None])
def test_tensordot_refuses_other_axes_at_the_users_line(axes):
    a, b = sn.tensor("a", (2, 3)), sn.tensor("b", (3, 4))
    with pytest.raises(sn.ArgumentError, match=r"axes is an int .* or a pair .*, not ") as info:
        sn.tensordot(a, b, axes)
    assert info.value.location.filename == __file__
    assert repr(axes) in str(info.value)


def test_tensordot_names_an_axis_summed_twice():
    a, b = sn.tensor("a", (2, 2)), sn.tensor("b", (2, 2))
    with pytest.raises(sn.ShapeError, match=r"axis 0 of 'a' \(float64\(2, 2\)\) is summed twice"):
        sn.tensordot(a, b, ([0, -2], [0, 1]))
    with pytest.raises(sn.ShapeError, match=r"axis 1 of 'b' .* is summed twice") as info:
        sn.tensordot(a, b, ([0, 1], [1, 1]))
    assert info.value.location.filename == __file__


@pytest.mark.parametrize("a_shape", [(3, 3), (2, 3, 3)])
def test_solve_with_a_0d_b_is_a_shape_error(a_shape):
    a, b = sn.tensor("a", a_shape), sn.tensor("b", ())
    with pytest.raises(sn.ShapeError, match=r"'b' \(float64\(\)\) is 0-d; b is a vector or mat"):
        sn.solve(a, b)


@pytest.mark.parametrize("shape", [(None, None), ("n", None), (3, None), (2, None, None)])
def test_svd_gradient_through_full_factors_of_unknown_squareness(shape, rng, backend):
    """U and Vh of full_matrices=True differentiate where the matrix may be square when run:
    the square matrix's gradient, the squareness checked then (a ShapeError saying so)."""

    def loss(x):
        u, _, vh = sn.svd(x)
        return sn.sum(u**3) + sn.sum(vh**4)

    x = sn.tensor("x", shape)
    f = sn.function([x], sn.grad(loss(x), x), backend=backend)
    a = random_array(rng, (2, 3, 3)[-len(shape) :], "float64")
    fixed = sn.tensor("fixed", a.shape)
    want = sn.function([fixed], sn.grad(loss(fixed), fixed), backend="py")(a)
    check(f(a), want, rtol=1e-9)
    for bad, more in [((3, 2), "rows than columns"), ((2, 3), "columns than rows")]:
        if shape[-2] == 3 and bad[0] != 3:
            continue
        with pytest.raises(sn.ShapeError, match=f"'x' .* had more {more} when the function ran"):
            f(random_array(rng, a.shape[:-2] + bad, "float64"))


@pytest.mark.parametrize("axis", [np.int64(1), (np.int64(0), np.int32(1)), -1])
def test_norm_takes_numpy_integer_axes(axis):
    a = np.arange(12.0).reshape(3, 4)
    x = sn.tensor("x", shape=(3, 4), dtype="float64")
    got = sn.function([x], sn.norm(x, axis=axis), backend="py")(a)
    np.testing.assert_allclose(got, np.linalg.norm(a, axis=axis))


@pytest.mark.parametrize("axis", [1.0, "1"])
def test_norm_axis_that_is_no_int_is_a_shape_type_error(axis):
    x = sn.tensor("x", shape=(3, 4), dtype="float64")
    with pytest.raises(sn.errors.ShapeTypeError) as info:
        sn.norm(x, axis=axis)
    message = str(info.value)
    assert f"norm: axis is an int, a tuple of ints or None, not {axis!r}" in message
    assert "'x' (float64(3, 4))" in message and "test_linalg.py, line" in message
