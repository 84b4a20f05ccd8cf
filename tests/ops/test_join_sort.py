"""concatenate, stack, split, sort and argsort against NumPy: dtypes, axes, empty and named
dims, error messages, gradients."""

import numpy as np
import pytest

import symnb as sn
from symnb.core.dims import evaluate, parse_dim
from tests.helpers import check, random_array, reference_backend
from tests.helpers import run as run_on

# id -> (shapes of the parts, dtypes of the parts, axis)
CONCAT_ROWS = {
    "axis0": (((2, 3), (4, 3)), ("float64", "float64"), 0),
    "axis_neg": (((2, 3), (2, 1), (2, 2)), ("float32", "int8", "float32"), -1),
    "promote": (((3,), (2,)), ("int8", "uint8"), 0),
    "empty_part": (((0, 2), (3, 2)), ("float64", "int64"), 0),
    "flat": (((2, 2), (3,)), ("bool", "int32"), None),
    "one": (((2, 3),), ("float16",), 1),
}


@pytest.mark.parametrize("name", sorted(CONCAT_ROWS))
def test_concatenate_matches_numpy(name, rng, backend):
    shapes, dtypes, axis = CONCAT_ROWS[name]
    arrays = [random_array(rng, s, d) for s, d in zip(shapes, dtypes)]
    got = run_on(lambda *xs: sn.concatenate(xs, axis=axis), *arrays, backend=backend)
    check(got, np.concatenate(arrays, axis=axis))


@pytest.mark.parametrize("axis", [0, 1, -1, 2, -3])
@pytest.mark.parametrize("dtypes", [("float64", "float64"), ("int8", "float32")])
def test_stack_matches_numpy(axis, dtypes, rng, backend):
    a, b = (random_array(rng, (2, 3), d) for d in dtypes)
    check(
        run_on(lambda x, y: sn.stack([x, y], axis=axis), a, b, backend=backend),
        np.stack([a, b], axis),
    )
    s = np.array(1.5)
    check(run_on(lambda x: sn.stack([x, x, x]), s, backend=backend), np.stack([s, s, s]))


@pytest.mark.parametrize("join", ["concatenate", "stack"])
def test_joins_take_numpys_dtype_and_casting(join, backend):
    """np.concatenate/np.stack(..., dtype=, casting=): each array cast to the dtype where the
    rule allows it; sn.concatenate had no dtype= (a TypeError), and np.concatenate on
    variables said "has no dtype="."""
    a = np.linspace(-2.7, 3.7, 12).reshape(3, 4)
    b = np.arange(12, dtype=np.int32).reshape(3, 4)
    x = sn.tensor("x", shape=(None, 4))
    i = sn.tensor("i", shape=(None, 4), dtype="int32")
    sn_join, np_join = getattr(sn, join), getattr(np, join)
    outputs = [
        sn_join([x, i], dtype="float32"),
        np_join([x, i], 1, dtype=np.float32),
        sn_join([x, i], dtype="int8", casting="unsafe"),
        sn_join([i, i], casting="no"),
    ]
    wants = [
        np_join([a, b], dtype="float32"),
        np_join([a, b], 1, dtype=np.float32),
        np_join([a, b], dtype="int8", casting="unsafe"),
        np_join([b, b], casting="no"),
    ]
    for got, want in zip(sn.function([x, i], outputs, backend=backend)(a, b), wants):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_joins_refuse_a_cast_their_casting_rule_refuses():
    x = sn.tensor("x", shape=(None, 4))
    i = sn.tensor("i", shape=(None, 4), dtype="int32")
    with pytest.raises(sn.DTypeError) as info:
        sn.concatenate([i, x], dtype="int32")  # float64 -> int32 is no same_kind cast
    message = str(info.value)
    assert "concatenate: cannot cast 'x' (float64(?, 4)) to int32 according to the rule " in message
    assert "'same_kind'" in message and "test_join_sort.py" in message
    with pytest.raises(
        sn.DTypeError, match=r"stack: cannot cast 'i' \(int32\(\?, 4\)\) to float64 "
    ):
        np.stack([i, x], casting="no")
    with pytest.raises(sn.ArgumentError, match="concatenate: casting is one of no, equiv, safe"):
        sn.concatenate([x, x], casting="sometimes")
    with pytest.raises(sn.ArgumentError, match=r"stack\(\.\.\., out=ndarray\) of 'x'"):
        sn.stack([x, x], 0, np.empty((2, 3, 4)))


SPLIT_ROWS = {
    "sections": (3, 0, (6, 2)),
    "sections_neg_axis": (2, -1, (3, 4)),
    "indices": ([1, 3], 0, (5, 2)),
    "indices_empty_parts": ([0, 0, 4], 1, (2, 4)),
    "one_part": (1, 0, (3,)),
    "indices_past_the_end": ([2, 5], 1, (2, 3)),
    "indices_all_past_the_end": ([4, 9], 0, (3, 2)),
    "indices_unsorted": ([3, 2], 0, (6,)),
    "indices_negative": ([-2], 1, (2, 6)),
    "indices_both_ends": ([10, -10, -1], 0, (6, 2)),
    "indices_array": (np.array([1, 3]), 1, (2, 5)),
    "sections_0d_array": (np.array(2), 0, (4, 3)),
}


@pytest.mark.parametrize("name", sorted(SPLIT_ROWS))
def test_split_matches_numpy(name, rng, backend):
    spec, axis, shape = SPLIT_ROWS[name]
    a = random_array(rng, shape, "float32")
    got = run_on(lambda x: sn.split(x, spec, axis=axis), a, backend=backend)
    want = np.split(a, spec, axis=axis)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        check(g, w)


@pytest.mark.parametrize("spec", [[3, 2], [-2], [4, -4, 1], np.array([1])])
def test_split_takes_every_index_form_numpy_takes(spec, backend):
    """np.split's parts are the slices x[:i0], x[i0:i1], ..., x[ik:]: indices out of order
    give empty or overlapping parts, a negative one counts from the end, and an int array
    is indices; symnb refused them ("non-negative and sorted", "a list of int indices")."""
    a = np.arange(6.0)
    for shape in [(6,), (None,), ("k",)]:
        x = sn.tensor("x", shape=shape)
        parts = sn.split(x, spec)
        want = np.split(a, spec)
        got = sn.function([x], parts, backend=backend)(a)
        assert [g.shape for g in got] == [w.shape for w in want], (shape, spec)
        for part, g, w in zip(parts, got, want):
            check(g, w)
            assert evaluate(part.type.shape[0], {"k": 6}) in (None, w.shape[0]), (shape, part)
    with reference_backend():  # overlapping parts: each element's gradient counts its parts
        sn.check_grad(
            lambda v: sum(p.sum() * (i + 1) for i, p in enumerate(sn.split(v, spec))), [a]
        )


def test_static_shapes_add_up_and_unknown_stays_unknown():
    n, m = sn.tensor("a", shape=("n", 3)), sn.tensor("b", shape=("m", 3))
    assert sn.concatenate([n, m, n]).type.shape == (parse_dim("2*n+m"), 3)
    assert sn.concatenate(
        [sn.tensor("c", shape=(2, 3)), sn.tensor("d", shape=(5, None))]
    ).type.shape == (7, 3)
    assert sn.concatenate([n, sn.tensor("u", shape=(None, 3))]).type.shape == (None, 3)
    assert sn.stack([n, n], axis=1).type.shape == ("n", 2, 3)
    parts = sn.split(sn.tensor("x", shape=(6, "k")), 3)
    assert [p.type.shape for p in parts] == [(2, "k")] * 3
    # a part is x[a:b], clipped at a length not known: only a cut at 0 is known (as in x[:1])
    parts = sn.split(sn.tensor("y", shape=("k", 2)), [0, 1, 3])
    assert [str(p.type) for p in parts] == ["f64[0,2]", "f64[?,2]", "f64[?,2]", "f64[?,2]"]
    assert sn.split(sn.tensor("y", shape=("k", 2)), [0])[1].type.shape == ("k", 2)
    assert sn.split(sn.tensor("z", shape=("k",)), 2)[0].type.shape == (None,)


def test_join_errors_name_the_arrays_and_dims():
    a, b = sn.tensor("a", shape=(2, 3)), sn.tensor("b", shape=(2, 4))
    with pytest.raises(
        sn.ShapeError, match=r"concatenate: axis 1 differs: 3 in array 0 'a'.*4 in array 1 'b'"
    ):
        sn.concatenate([a, b], axis=0)
    with pytest.raises(sn.ShapeError, match="stack: axis 1 differs"):
        sn.stack([a, b])
    with pytest.raises(sn.ShapeError, match="concatenate: all arrays need the same number of dims"):
        sn.concatenate([a, sn.vector("v")])
    with pytest.raises(sn.ShapeError, match="concatenate: cannot join 0-d"):
        sn.concatenate([sn.scalar("s")])
    with pytest.raises(sn.ShapeError, match="stack: axis 3 is out of range for 3 dims"):
        sn.stack([a, a], axis=3)
    with pytest.raises(sn.ShapeError, match="split: axis 1 of 'a' .* does not divide into 2"):
        sn.split(a, 2, axis=1)


@pytest.mark.parametrize("spec", [[2, 5], [1], [0, 3, 3], [7]])
def test_split_past_the_end_of_a_length_known_when_called_follows_numpy(spec, backend):
    """NumPy's parts are slices, an index past the end giving empty ones; a static length
    was refused ("index 5 is past the end"), a symbolic one typed its parts as if long
    enough (k-3 for a length of 2)."""
    a = np.arange(6.0).reshape(2, 3)
    for shape in [(2, 3), (2, None), (2, "k")]:
        x = sn.tensor("x", shape=shape)
        parts = sn.split(x, spec, axis=1)
        got = sn.function([x], parts, backend=backend)(a)
        want = np.split(a, spec, axis=1)
        assert len(got) == len(want)
        for part, g, w in zip(parts, got, want):
            check(g, w)
            static = evaluate(part.type.shape[1], {"k": 3})  # None where not known
            assert static in (None, w.shape[1]), (shape, part)


def test_split_checks_the_length_at_run_time():
    x = sn.vector("x")
    f = sn.function([x], sn.split(x, 2), backend="py")
    with pytest.raises(Exception, match="array split does not result in an equal division"):
        f(np.arange(5.0))


@pytest.mark.parametrize("op,ref", [(sn.sort, np.sort), (sn.argsort, np.argsort)])
@pytest.mark.parametrize("axis", [-1, 0, None])
@pytest.mark.parametrize("dtype", ["float64", "int8", "bool"])
def test_sort_and_argsort_match_numpy(op, ref, axis, dtype, rng, backend):
    a = random_array(rng, (4, 3), dtype)
    want = ref(a, axis=axis, kind="stable")
    check(run_on(lambda x: op(x, axis=axis), a, backend=backend), want.astype(want.dtype))


def test_sort_puts_nan_last_and_handles_empty_and_sugar(backend):
    a = np.array([3.0, np.nan, -1.0, 2.0])
    check(run_on(sn.sort, a, backend=backend), np.sort(a))
    check(run_on(sn.argsort, a, backend=backend), np.argsort(a))
    e = np.zeros((0, 3))
    check(run_on(lambda x: x.sort(axis=0), e, backend=backend), np.sort(e, axis=0))
    check(run_on(lambda x: x.argsort(), e, backend=backend), np.argsort(e))
    with pytest.raises(sn.ShapeError, match="sort: axis -1 is out of range"):
        sn.sort(sn.scalar("s"))
    assert sn.argsort(sn.matrix("m")).owner.op.differentiable is False


# -- gradients ---------------------------------------------------------------------------
def test_join_gradients(rng):
    a, b = rng.normal(size=(2, 3)), rng.normal(size=(4, 3))
    with reference_backend():
        sn.check_grad(lambda x, y: sn.concatenate([x, y, x]), [a, b])
        sn.check_grad(lambda x, y: sn.concatenate([x, y], axis=None), [a, b])
        sn.check_grad(lambda x: sn.stack([x, 2 * x], axis=-1), [a])
        sn.check_grad(lambda y: sn.split(y, [1, 3])[1] * 2, [b])  # unused parts get zeros
        sn.check_grad(lambda y: sn.split(y, 3, axis=1)[0] + sn.split(y, 3, axis=1)[2], [b])


def test_sort_kinds_numpy_accepts_give_the_stable_order(backend):
    """NumPy's ``kind=``/``stable=`` on a variable: every kind sorts to the same values, and
    symnb's stable order of ties is one each may give; an unknown kind is refused."""
    x = sn.vector("x")
    a = np.array([3.0, 1.0, 3.0, 1.0, 2.0, 1.0])
    for kind in ("stable", "mergesort", "quicksort", "heapsort", None):
        got = sn.function([x], [np.argsort(x, kind=kind), np.sort(x, kind=kind)], backend=backend)
        order, values = got(a)
        check(order, np.argsort(a, kind="stable"))
        check(values, np.sort(a))
    order = sn.function([x], np.argsort(x, stable=True), backend=backend)(a)
    check(order, np.argsort(a, stable=True))
    with pytest.raises(sn.ArgumentError, match="argsort of 'x' .*: kind='bogus'"):
        sn.argsort(x, kind="bogus")


def test_sort_stable_is_a_bool_and_not_given_with_kind():
    """NumPy 2's ``stable`` is True, False or None: ``stable=1`` or ``"yes"`` (which NumPy
    reads as truthy) are refused as a keepdims that is not a bool is, and NumPy refuses
    ``kind`` and ``stable`` given together; each message names the variable."""
    x = sn.vector("x")
    for call, kwargs, told in [
        (sn.argsort, {"stable": 1}, "stable=1; stable is True, False or None"),
        (sn.sort, {"stable": "yes"}, "stable='yes'; stable is True, False or None"),
        (sn.sort, {"kind": "stable", "stable": True}, "kind='stable' and stable=True; give one"),
        (sn.sort, {"kind": 1}, "kind=1; NumPy's kinds are 'quicksort', 'mergesort', 'heapsort'"),
    ]:
        with pytest.raises(sn.ArgumentError, match=rf"sort of 'x' \(float64\(\?,\)\): {told}"):
            call(x, **kwargs)
    assert sn.argsort(x, stable=np.True_).type.dtype == "int64"
    assert sn.sort(x, kind=None, stable=False).type == x.type


@pytest.mark.parametrize("axis", [-1, 0, None])
def test_sort_gradient_follows_the_permutation(axis, rng):
    with reference_backend():
        sn.check_grad(lambda x: sn.sort(x, axis=axis), [rng.normal(size=(3, 4))])
        sn.check_grad(lambda x: sn.sort(x * x, axis=axis) ** 2, [rng.normal(size=(3, 4))])


@pytest.mark.parametrize("grad", [False, True], ids=["concatenate", "its gradient (split)"])
def test_concatenate_sums_the_part_dims_in_one_pass(monkeypatch, grad):
    # each part's dim was added to the running sum alone, rebuilding and re-sorting it: O(N^2)
    from symnb.core import dims

    sorts = [0]
    freeze = dims._freeze

    def counted(poly):
        sorts[0] += 1
        return freeze(poly)

    monkeypatch.setattr(dims, "_freeze", counted)

    def build(n):
        parts = [sn.vector(f"p{i}", shape=(f"n{i}",)) for i in range(n)]
        y = sn.concatenate(parts)
        total = 0
        for i in range(n):
            total = dims.add(total, f"n{i}")
        sorts[0] = 0
        if grad:
            sn.grad(y.sum(), parts[:1])
        else:
            y = sn.concatenate(parts)
        count = sorts[0]
        assert y.type.shape[0] == total
        return count

    assert build(40) == build(20)  # the sums are built once, whatever the number of parts
