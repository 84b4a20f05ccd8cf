"""Random streams in the forms Theano's own tests use: a symbolic shape vector whose length
``ndim`` gives, and MRG's ``choice`` without replacement (word2vec's negative sampling)."""

import numpy as np
import pytest
from scipy import stats

import symnb as sn
import symnb.compat.theano as theano
import symnb.compat.theano.tensor as T
from symnb.compat.theano.sandbox.rng_mrg import MRG_RandomStreams
from symnb.compat.theano.tensor.shared_randomstreams import RandomStreams


@pytest.mark.parametrize("draw", ["uniform", "normal", "binomial"])
def test_a_shape_vector_of_unknown_length_with_ndim(draw):
    shape = T.lvector("shape")
    f = theano.function([shape], getattr(RandomStreams(1), draw)(size=shape, ndim=2))
    assert f([2, 3]).shape == (2, 3) and f([4, 8]).shape == (4, 8)
    with pytest.raises(sn.ShapeError) as info:  # was reshape's "cannot reshape array of size 3"
        f([2, 3, 4])  # a vector of another length fails when the function runs
    assert "size vector 'shape' (int64(?,)) must have ndim=2 entries ((3,), not (2,)" in str(
        info.value
    )


def test_ndim_that_contradicts_a_known_size_is_refused():
    with pytest.raises(ValueError, match="ndim=3"):
        RandomStreams(1).uniform(size=(2, 3), ndim=3)


P = np.array([[0.5, 0.3, 0.2, 0.0], [0.1, 0.1, 0.1, 0.7]])


def test_mrg_choice_without_replacement_per_row():
    srng = MRG_RandomStreams(3)
    f = theano.function([], srng.choice(size=3, a=None, replace=False, p=P))
    draws = np.array([f() for _ in range(3000)])  # (calls, rows, picks)
    assert draws.shape == (3000, 2, 3) and draws.dtype == np.int64
    assert all(len(set(row)) == 3 for call in draws for row in call)
    assert (draws[:, 0, :] != 3).all()  # a column of probability 0 is never drawn
    first = [np.bincount(draws[:, r, 0], minlength=4) / len(draws) for r in range(2)]
    assert np.allclose(first, P, atol=0.04)
    # the second pick is drawn from the columns left, renormalised: 0.3 / 0.5 after column 0
    after0 = draws[draws[:, 0, 0] == 0, 0, 1]
    assert abs(np.mean(after0 == 1) - 0.6) < 0.05


def test_mrg_choice_theano_form_gives_the_only_column():
    p = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
    srng = MRG_RandomStreams(234)
    picked = theano.function([], srng.choice(size=1, p=p, replace=False))()
    assert np.array_equal(picked, [[1], [0]])
    assert np.array_equal(
        theano.function([], srng.multinomial_wo_replacement(n=1, pvals=p))(), [[1], [0]]
    )


def test_mrg_choice_says_what_it_needs():
    srng = MRG_RandomStreams(1)
    with pytest.raises(NotImplementedError, match="replace=False.*multinomial"):
        srng.choice(size=1, a=None, p=P)
    with pytest.raises(sn.ShapeError, match="must be a matrix"):
        srng.choice(size=1, a=None, replace=False, p=P[0])
    assert theano.function([], srng.choice(a=5))().shape == ()  # RandomStreams' form


def test_mrg_choice_of_more_columns_than_p_has_is_refused():
    """Theano refused k distinct columns from fewer than k; a slice gave fewer, silently."""
    srng = MRG_RandomStreams(1)
    with pytest.raises(sn.ShapeError, match=r"at most the column count of p .*\(5 > 4\)") as e:
        srng.choice(size=5, a=None, replace=False, p=P)  # <- known when built
    assert "<- known when built" in str(e.value)
    with pytest.raises(sn.ShapeError, match="not negative"):
        srng.choice(size=-1, a=None, replace=False, p=P)
    p = T.matrix("p")
    f = theano.function([p], srng.choice(size=4, a=None, replace=False, p=p))
    assert sorted(f(P)[0].tolist()) == [0, 1, 2, 3]  # all four columns, each once
    with pytest.raises(sn.SymnbError, match=r"column count of p 'p'.*\(4 > 2\)"):
        f(np.array([[0.5, 0.5]]))  # known when the function runs
    k = T.lscalar("k")
    g = theano.function([p, k], srng.choice(size=k, a=None, replace=False, p=p))
    assert g(P, 2).shape == (2, 2)
    with pytest.raises(sn.SymnbError, match=r"\(5 > 4\)"):
        g(P, 5)
    with pytest.raises(sn.ShapeTypeError, match="size is an int"):
        srng.choice(size=(2, 3), a=None, replace=False, p=p)


REFUSED_DRAWS = [  # (streams, the draw refused when built, its error)
    (RandomStreams, lambda s: s.choice((3,), 300, dtype="int8"), sn.DTypeError),
    (RandomStreams, lambda s: s.permutation((2,), 300, dtype="int8"), sn.DTypeError),
    (RandomStreams, lambda s: s.permutation(n=300, dtype="int8"), sn.DTypeError),
    (RandomStreams, lambda s: s.choice((2,), np.array([0.5, 1.5]), dtype="int32"), sn.DTypeError),
    (RandomStreams, lambda s: s.uniform((2,), ndim=3), sn.ShapeError),
    (RandomStreams, lambda s: s.normal((2,), std=-1.0, truncate=True), sn.ArgumentError),
    (
        MRG_RandomStreams,
        lambda s: s.choice(size=3, p=np.full((4, 2), 0.5), replace=False),
        sn.ShapeError,
    ),
    (
        MRG_RandomStreams,
        lambda s: s.multinomial_wo_replacement(n=3, pvals=np.full((4, 2), 0.5)),
        sn.ShapeError,
    ),
]


@pytest.mark.parametrize("streams, refused, error", REFUSED_DRAWS)
def test_a_draw_refused_when_built_leaves_the_streams_as_they_were(streams, refused, error):
    """A draw refused after a draw inside it made its state (``choice``'s and
    ``permutation``'s dtype checked after the draw, MRG ``choice``'s size after its uniform)
    kept that state: ``state_updates`` listed a draw that does not exist and every later
    draw got other numbers. Now the later draws are those of a stream without the refused
    line, as for ``sn.RandomStream``."""
    s, fresh = streams(5), streams(5)
    first, want_first = s.uniform((3,), dtype="float64"), fresh.uniform((3,), dtype="float64")
    with pytest.raises(error):
        refused(s)  # <- refused
    after, want_after = s.normal((4,), dtype="float64"), fresh.normal((4,), dtype="float64")
    assert len(s.state_updates) == 2 and len(s.states) == 2
    assert [r.name for r, _ in s.state_updates] == ["rng0", "rng1"] and after.rng.index == 1
    got = theano.function([], [first, after])()
    want = theano.function([], [want_first, want_after])()
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])


@pytest.mark.parametrize("streams", [RandomStreams, MRG_RandomStreams])
def test_choice_and_permutation_draw_the_dtype_asked_for(streams):
    """``dtype`` was ignored: int64 came back (an int32 shared variable's update then failed)."""
    s = streams(3)
    picked = s.choice(size=(50,), a=300, dtype="int16")
    shuffled = s.permutation(n=6, dtype="int32")
    as_float = s.permutation(n=6, dtype="float32")
    assert (picked.dtype, shuffled.dtype, as_float.dtype) == ("int16", "int32", "float32")
    got, perm, fperm = theano.function([], [picked, shuffled, as_float])()
    assert (got.dtype, perm.dtype, fperm.dtype) == (np.int16, np.int32, np.float32)
    assert got.min() >= 0 and got.max() < 300
    np.testing.assert_array_equal(np.sort(perm), np.arange(6))
    np.testing.assert_array_equal(np.sort(fperm), np.arange(6, dtype="float32"))
    floats = np.array([0.5, 1.5])
    assert set(theano.function([], s.choice(size=(8,), a=floats))()) <= {0.5, 1.5}
    with pytest.raises(sn.DTypeError, match=r"choice: a value drawn \(299\).*int8"):
        s.choice(size=(2,), a=300, dtype="int8")
    with pytest.raises(sn.DTypeError, match=r"permutation: a value drawn \(299\).*int8"):
        s.permutation(n=300, dtype="int8")
    with pytest.raises(sn.DTypeError, match=r"dtype=int32 cannot hold.*float64"):
        s.choice(size=(2,), a=floats, dtype="int32")


@pytest.mark.parametrize("streams", [RandomStreams, MRG_RandomStreams])
def test_seed_without_an_argument_goes_back_to_the_constructors_seed(streams):
    """Theano's ``seed(seed=None)`` reseeds from ``default_instance_seed``; it was a TypeError
    ("RandomStream.seed() missing 1 required positional argument")."""
    srng = streams(seed=234)
    f = theano.function([], srng.uniform((3,)))
    first = f()
    f()
    srng.seed(5)
    after_five = f()
    srng.seed()
    np.testing.assert_array_equal(f(), first)
    assert srng.default_instance_seed == 234
    srng.seed(5)
    np.testing.assert_array_equal(f(), after_five)
    default = streams()
    g = theano.function([], default.uniform((3,)))
    start = g()
    default.seed()
    np.testing.assert_array_equal(g(), start)
    np.testing.assert_array_equal(start, theano.function([], streams().uniform((3,)))())


def test_mrg_takes_theanos_six_int_seed():
    """Theano's MRG seed is an int or six (MRG31k3p's state); a list was an ArgumentError."""

    def numbers(seed):
        return theano.function([], MRG_RandomStreams(seed).uniform((4,)))()

    np.testing.assert_array_equal(numbers([5] * 6), numbers(5))  # Theano repeated an int
    six = numbers([1, 2, 3, 4, 5, 6])
    np.testing.assert_array_equal(numbers((1, 2, 3, 4, 5, 6)), six)
    np.testing.assert_array_equal(numbers(np.arange(1, 7)), six)
    assert not np.array_equal(numbers([1, 2, 3, 4, 5, 7]), six)
    assert not np.array_equal(numbers([2, 1, 3, 4, 5, 6]), six)
    srng = MRG_RandomStreams(9)
    f = theano.function([], srng.uniform((4,)))
    srng.seed([1, 2, 3, 4, 5, 6])
    np.testing.assert_array_equal(f(), six)
    for bad, says in [
        ([1, 2, 3], "1 non-negative int or a list of 6"),
        ([1.5] * 6, "1 non-negative int or a list of 6"),
        ([0, 0, 0, 1, 2, 3], "first 3 values of a 6-int seed must not all be 0"),
        ([1, 2, 3, 0, 0, 0], "last 3 values of a 6-int seed must not all be 0"),
        ([2**31, 1, 1, 1, 1, 1], "first 3 values .* less than 2147483647"),
        ([1, 1, 1, 2147462579, 1, 1], "last 3 values .* less than 2147462579"),
    ]:
        with pytest.raises(sn.ArgumentError, match=says) as e:
            MRG_RandomStreams(bad)  # <- the line named
        assert "<- the line named" in str(e.value)
        with pytest.raises(sn.ArgumentError, match=says):
            srng.seed(bad)


@pytest.mark.parametrize("streams", [RandomStreams, MRG_RandomStreams])
def test_no_default_updates_takes_a_draws_rng_as_theano_did(streams):
    """``no_default_updates=[rv_u.rng]`` (Theano's shared state of the draw) freezes that draw
    and leaves the others advancing; it was a GraphError about a StreamState."""
    srng = streams(seed=234)
    rv_u, rv_n = srng.uniform((2,)), srng.normal((2,))
    f = theano.function([], [rv_u, rv_n], no_default_updates=[rv_u.rng])
    (u1, n1), (u2, n2) = f(), f()
    np.testing.assert_array_equal(u1, u2)
    assert not np.array_equal(n1, n2)
    assert rv_u.rng.get_value().counter == 0 and rv_n.rng.get_value().counter == 4
    g = theano.function([], [rv_u, rv_n], no_default_updates=rv_n.rng)  # one, not in a list
    (u3, n3), (u4, n4) = g(), g()
    np.testing.assert_array_equal(n3, n4)
    np.testing.assert_array_equal(u3, u1)  # rv_u had not moved
    assert not np.array_equal(u3, u4)


@pytest.mark.parametrize("streams", [RandomStreams, MRG_RandomStreams])
def test_choice_of_a_symbolic_int_draws_from_its_range(streams):
    """Theano documents ``a`` as "a 1-D array or a positive scalar" (``range(a)``), through
    ``as_tensor_variable``: ``choice(size=(1000,), a=T.lscalar())`` was a ShapeError."""
    k = T.lscalar("k")
    draw = streams(seed=3).choice(size=(1000,), a=k)
    assert draw.dtype == "int64"
    out = theano.function([k], draw)(5)
    assert out.shape == (1000,) and set(np.unique(out)) == {0, 1, 2, 3, 4}
    with pytest.raises(sn.DTypeError, match=r"dtype=int8 cannot hold every value drawn"):
        streams(seed=3).choice(size=(4,), a=k, dtype="int8")  # (a symbolic a: no known bound)


@pytest.mark.parametrize("streams", [RandomStreams, MRG_RandomStreams])
def test_float_draws_take_theanos_upcast_of_floatx_and_their_parameters(streams):
    """Theano's ``uniform``/``normal`` without a dtype are ``upcast(floatX, low.dtype,
    high.dtype)`` (``avg``/``std``): with floatX float32 a float64 mean gave float32 numbers,
    ``1e8 + 1e-3 z`` rounded to 1e8."""
    theano.config.floatX = "float32"
    srng = streams(seed=1)
    mu, lo = T.dvector("mu"), T.dscalar("lo")
    n = srng.normal((3,), avg=mu, std=1e-3)
    u = srng.uniform((3,), low=lo, high=lo + 1e-3)
    assert (n.dtype, u.dtype) == ("float64", "float64")
    got_n, got_u = theano.function([mu, lo], [n, u])(np.full(3, 1e8), 1e8)
    assert got_n.dtype == got_u.dtype == np.float64
    assert np.all(got_n != 1e8) and np.all((got_u > 1e8) & (got_u < 1e8 + 1e-3))
    f32 = T.fvector("f32")
    kept = [
        srng.uniform((2,)),  # Python floats are floatX
        srng.normal((2,), avg=f32),
        srng.uniform((2,), low=0, high=T.bscalar("b")),  # small ints: floatX
        srng.normal((2,), avg=1.0, std=2.0, dtype="float16"),  # a dtype given wins
    ]
    assert [d.dtype for d in kept] == ["float32", "float32", "float32", "float16"]
    assert srng.uniform((2,), high=np.array([1.0, 2.0])).dtype == "float64"  # a float64 array
    assert srng.normal(std=[1.0, 2.0]).dtype == "float64"  # a list: NumPy's float64
    # int32 with float32 is float64 under Theano's default cast_policy 'custom', float32
    # under 'numpy+floatX' (which also reads a Python int as int64)
    assert srng.normal((2,), avg=T.ivector("iv")).dtype == "float64"
    assert srng.uniform((2,), low=0, high=100000).dtype == "float64"  # int8, int32
    with theano.change_flags(cast_policy="numpy+floatX"):
        assert srng.normal((2,), avg=T.ivector("iv")).dtype == "float32"
        assert srng.uniform((2,), low=0, high=100000).dtype == "float32"
        assert srng.normal((2,), avg=mu).dtype == "float64"
    theano.config.floatX = "float64"
    assert srng.normal((2,), avg=f32).dtype == "float64"  # at least floatX


def test_random_integers_includes_high_for_any_integer_dtype_and_a_list():
    """``random_integers`` computed ``high + 1`` in high's own dtype: an int8 ``high`` of 127
    wrapped to -128 (a run-time error, or with a wider low a draw that never reached high),
    a list ``high`` was an internal TypeError, and errors named ``high + 1``."""
    srng = RandomStreams(seed=3)
    h, lo = T.bscalar("h"), T.lscalar("lo")
    out = theano.function([h], srng.random_integers((2000,), 0, h))(127)
    assert (out.min(), out.max()) == (0, 127)
    out = theano.function([lo, h], srng.random_integers((2000,), lo, h))(-200, 127)
    assert (out.min(), out.max()) == (-200, 127)
    out = theano.function([], srng.random_integers(low=0, high=[1, 2, 3]))()
    assert out.shape == (3,) and np.all((out >= 0) & (out <= [1, 2, 3]))
    assert set(theano.function([], srng.random_integers((300,), 2, 4))()) == {2, 3, 4}
    with pytest.raises(sn.ArgumentError, match=r"high \(3\) must be at least low \(5\)"):
        srng.random_integers((3,), low=5, high=3)
    with pytest.raises(sn.DTypeError, match=r"high \(300\) is out of bounds for int8"):
        srng.random_integers((3,), low=0, high=300, dtype="int8")
    f = theano.function([lo, h], srng.random_integers((2,), lo, h))
    with pytest.raises(sn.SymnbError, match=r"high \(4\) must be at least low \(5\)"):
        f(5, 4)


@pytest.mark.parametrize("streams", [RandomStreams, MRG_RandomStreams])
def test_multinomial_of_an_array_n_or_a_scalar_pvals_is_a_clear_error(streams):
    """An array ``n`` was a bare TypeError from inside symnb (docs/random.md: n is a scalar);
    ``pvals=0.5`` was "pvals must sum to 1"."""
    with pytest.raises(sn.ShapeError, match=r"n is one count for every distribution") as e:
        streams(1).multinomial(n=np.array([3, 4]), pvals=np.full((2, 2), 0.5))  # <- named
    assert "<- named" in str(e.value)
    with pytest.raises(sn.ShapeError, match=r"pvals must be 1-d .* or 2-d .*, not 0\.5"):
        streams(1).multinomial(pvals=0.5)


@pytest.mark.parametrize("streams", [RandomStreams, MRG_RandomStreams])
def test_permutation_with_a_size_draws_one_permutation_per_element(streams):
    """Theano's ``permutation(size, n)``: shape ``size + (n,)``, each row a permutation of
    its own; it raised NotImplementedError for any size but ()."""
    s = streams(5)
    rows = theano.function([], s.permutation((2000,), 3))()
    assert rows.shape == (2000, 3) and rows.dtype == np.int64
    np.testing.assert_array_equal(np.sort(rows, axis=1), np.tile(np.arange(3), (2000, 1)))
    counts = np.unique(rows, axis=0, return_counts=True)[1]
    assert len(counts) == 6 and counts.min() > 250  # every order, about as often (333)
    grid = theano.function([], s.permutation((2, 3), 4, dtype="int16"))()
    assert grid.shape == (2, 3, 4) and grid.dtype == np.int16
    assert (np.sort(grid, axis=-1) == np.arange(4)).all()
    size, n = T.lvector("size"), T.iscalar("n")
    f = theano.function([size, n], s.permutation(size, n, ndim=1))
    got = f([3], 5)
    assert got.shape == (3, 5) and (np.sort(got, axis=1) == np.arange(5)).all()
    assert theano.function([], s.permutation(n=4))().shape == (4,)
    for bad, shown in [(-1, r"-1 \(int\)"), (2.5, r"2.5 \(float\)"), (T.fscalar("f"), "'f'")]:
        with pytest.raises(sn.ArgumentError, match=rf"permutation: n .* not {shown}"):
            s.permutation((2,), bad)


@pytest.mark.parametrize("streams", [RandomStreams, MRG_RandomStreams])
def test_shuffle_row_elements_permutes_each_row_on_its_own(streams):
    """Theano's ``RandomStreams.shuffle_row_elements(input)`` was a bare AttributeError:
    each row (the last axis) of input permuted by its own permutation, the result's
    ``permutation`` (of shape ``input.shape[:-1] + (n,)``)."""
    s, x = streams(2), T.dtensor3("x")
    shuffled = s.shuffle_row_elements(x)
    assert shuffled.type.ndim == 3 and shuffled.rng is shuffled.permutation.rng
    value = np.arange(4 * 50 * 6.0).reshape(4, 50, 6)
    got, perm = theano.function([x], [shuffled, shuffled.permutation])(value)
    assert got.shape == value.shape and perm.shape == value.shape and perm.dtype == np.int64
    np.testing.assert_array_equal(np.sort(got, axis=-1), value)  # each row: its own values
    np.testing.assert_array_equal(got, np.take_along_axis(value, perm, axis=-1))
    assert len({tuple(row) for row in perm.reshape(-1, 6)}) > 100  # 200 rows of 720 orders
    np.testing.assert_allclose(perm.reshape(-1, 6).mean(axis=0), 2.5, atol=0.4)  # 5 SE
    v = T.dvector("v")
    once = theano.function([v], streams(2).shuffle_row_elements(v))(np.arange(7.0))
    np.testing.assert_array_equal(np.sort(once), np.arange(7.0))
    with pytest.raises(sn.ShapeError, match="shuffle_row_elements: input is a tensor of at"):
        s.shuffle_row_elements(T.dscalar("c"))  # <- refused
    assert len(s.state_updates) == 1


def test_mrg_truncated_normal_and_normal_truncate_as_theano_drew_them():
    """MRG's ``truncated_normal(size, avg, std)`` (a bare AttributeError) and
    ``normal(truncate=True)`` (a NotImplementedError): a normal truncated to avg +- 2 sd by
    the inverse CDF of a uniform, as Theano 1.0 drew it; ``truncated_normal`` divides std by
    the truncated normal's own sd (0.8796), so its draws have sd ``std``."""
    s, n = MRG_RandomStreams(1), 200_000
    avg, std = T.dscalar("avg"), T.dscalar("std")
    trunc = s.truncated_normal((n,), avg=avg, std=std, dtype="float64")
    cut = s.normal((n,), avg=avg, std=std, truncate=True, dtype="float64")
    rs = RandomStreams(1).normal((n,), avg=1.0, std=2.0, truncate=True)
    assert rs.dtype == theano.config.floatX and trunc.rng is not cut.rng
    f = theano.function([avg, std], [trunc, cut, *T.grad(T.sum(cut), [avg, std])])
    a, b, g_avg, g_std = f(1.0, 2.0)
    for draw, sd in ((a, 2.0 / 0.87962566103423978), (b, 2.0)):
        assert -2 * sd <= (draw - 1.0).min() and (draw - 1.0).max() <= 2 * sd
        assert abs((draw - 1.0).min() + 2 * sd) < 0.01 * sd  # reaching both ends
        assert stats.kstest((draw - 1.0) / sd, stats.truncnorm(-2, 2).cdf).pvalue > 1e-4
        assert abs(draw.mean() - 1.0) < 5 * draw.std() / np.sqrt(n)
    assert abs(a.std() - 2.0) < 0.02 and abs(b.std() - 2.0 * 0.87962566103423978) < 0.02
    assert g_avg == n and g_std == pytest.approx((b.sum() - n) / 2.0)  # d/dstd = (b - avg)/std
    with pytest.raises(sn.ArgumentError, match="normal: std must be >= 0"):
        s.truncated_normal((3,), std=-1.0)
