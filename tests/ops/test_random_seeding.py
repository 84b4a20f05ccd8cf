"""Seeding, as a property of every random-stream operation: a stream seeded with ``s`` gives
the numbers of a new stream made with ``s``, for draws made before the seed call *and* after
it, in any mix; two seeds give different numbers. One seed path that forgets the draws made
later (``seed`` resetting the existing states but not the seed new draws start from) fails
here, for every operation."""

from __future__ import annotations

import numpy as np
import pytest

import symnb as sn
from symnb.compat.theano.sandbox.rng_mrg import MRG_RandomStreams
from symnb.compat.theano.tensor.shared_randomstreams import RandomStreams

#: every operation of a stream, each as a function of the stream (kept small: they run on "py")
OPERATIONS = {
    "uniform": lambda r: r.uniform((5,), low=-1.0, high=2.0),
    "normal": lambda r: r.normal((5,), avg=1.0, std=2.0, dtype="float32"),
    "bernoulli": lambda r: r.bernoulli((7,), p=0.5),
    "binomial_n1": lambda r: r.binomial((7,), n=1, p=0.3),
    "binomial_n5": lambda r: r.binomial((2, 4), n=5, p=0.5),
    "binomial_per_element_p": lambda r: r.binomial((4,), n=1, p=np.full(4, 0.5)),
    "integers": lambda r: r.integers(0, 1000, size=(6,)),
    "choice": lambda r: r.choice(50, size=(6,)),
    "choice_no_replace": lambda r: r.choice(50, size=(6,), replace=False),
    "choice_weighted": lambda r: r.choice(4, size=(6,), p=[0.1, 0.2, 0.3, 0.4]),
    "permutation_of_range": lambda r: r.permutation(12),
    "permutation_of_array": lambda r: r.permutation(np.arange(12.0)),
    "multinomial": lambda r: r.multinomial((3,), n=20, pvals=[0.2, 0.3, 0.5]),
}


def _values(*draws):
    """The draws' values from one function (each call advances them: two calls)."""
    f = sn.function([], list(draws), backend="py")
    return [np.asarray(v) for v in f()] + [np.asarray(v) for v in f()]


def _same(a, b):
    return len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b))


@pytest.mark.parametrize("op", list(OPERATIONS))
def test_seed_reaches_draws_made_after_it(op):
    make = OPERATIONS[op]
    rng = sn.RandomStream(1)
    rng.seed(77)
    want = _values(make(sn.RandomStream(77)))
    assert _same(_values(make(rng)), want)


@pytest.mark.parametrize("op", list(OPERATIONS))
def test_seed_restarts_draws_made_before_it(op):
    make = OPERATIONS[op]
    rng = sn.RandomStream(1)
    draw = make(rng)
    _values(draw)  # advanced
    rng.seed(77)
    assert _same(_values(draw), _values(make(sn.RandomStream(77))))


@pytest.mark.parametrize("op", list(OPERATIONS))
def test_seed_between_draws_gives_a_new_streams_order(op):
    """A draw made before the seed and one after: the numbers of a stream made with that seed
    making the same two draws (the second draw is the stream's second, not its first)."""
    make = OPERATIONS[op]
    rng = sn.RandomStream(1)
    first = make(rng)
    rng.seed(77)
    second = make(rng)
    fresh = sn.RandomStream(77)
    assert _same(_values(first, second), _values(make(fresh), make(fresh)))


@pytest.mark.parametrize("op", list(OPERATIONS))
def test_different_seeds_different_numbers(op):
    make = OPERATIONS[op]
    rng = sn.RandomStream(1)
    rng.seed(2)
    a = _values(make(rng))
    rng.seed(3)
    assert not _same(a, _values(make(rng)))


@pytest.mark.parametrize("cls", [RandomStreams, MRG_RandomStreams])
def test_theano_streams_seed_before_and_after_draws(cls):
    rng = cls()
    before = rng.uniform((4,))
    rng.seed(9)
    after = rng.normal((4,))
    fresh = cls(9)
    assert _same(_values(before, after), _values(fresh.uniform((4,)), fresh.normal((4,))))


def test_a_seed_is_a_non_negative_int_of_any_size_as_numpys():
    """NumPy's default_rng takes any non-negative int (2**64 and 2**200 included), and refuses
    floats, strings and negative numbers; a seed was int()-ed (1.5 silently 1, "abc" an
    internal ValueError) and wide ones wrapped (2**64 was the stream of 0)."""
    for bad in [1.5, "abc", -1, None, True, [1, 2]]:
        with pytest.raises(sn.ArgumentError, match="a seed is a non-negative int") as caught:
            sn.RandomStream(bad)  # the line named
        assert f"line {caught.tb.tb_lineno}" in str(caught.value)
        with pytest.raises(sn.ArgumentError, match="a seed is a non-negative int"):
            sn.RandomStream(0).seed(bad)
    draws = {}
    for seed in [0, 2**64, 2**64 + 1, 2**200, np.uint64(7)]:
        np.random.default_rng(seed)  # NumPy takes each
        draws[int(seed)] = sn.function([], sn.RandomStream(seed).uniform((4,)))().tolist()
    assert len({tuple(v) for v in draws.values()}) == len(draws)
    again = sn.function([], sn.RandomStream(2**200).uniform((4,)))()
    assert again.tolist() == draws[2**200]
