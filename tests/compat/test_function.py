"""``theano.function``, ``theano.shared``, ``theano.scan``, ``theano.printing`` and the
errors Theano-style misuse gets."""

import copy
import io
import subprocess
import sys
import warnings

import numpy as np
import pytest

import symnb as sn
import symnb.compat.theano as theano
import symnb.compat.theano.tensor as T


@pytest.fixture(autouse=True)
def _on_the_reference_backend():
    """These check the layer's mapping, which is the same on every backend: they compile on
    the NumPy reference ("py", Theano's FAST_COMPILE); the training programs run on "c"."""
    theano.config.mode = "FAST_COMPILE"


def test_updates_as_a_list_of_pairs_or_a_dict_and_givens_by_value():
    for as_dict in (False, True):
        count = theano.shared(np.int64(0), name="count")
        step = T.lscalar("step")
        updates = [(count, count + step)]
        f = theano.function([step], count, updates=dict(updates) if as_dict else updates)
        assert [int(f(2)), int(f(3))] == [0, 2]
        assert int(count.get_value()) == 5
    x, y = T.dvector("x"), T.dscalar("y")
    g = theano.function([x], x * y, givens={y: np.float64(3.0)})
    np.testing.assert_array_equal(g([1.0, 2.0]), [3.0, 6.0])
    assert theano.function([], updates=[(count, count * 2)])() == []  # no outputs: []


def test_in_and_param_defaults_and_keywords():
    x, y = T.dscalar("x"), T.dscalar("y")
    f = theano.function([x, theano.In(y, value=1.0, name="bias")], x + y)
    assert f(2.0) == 3.0 and f(2.0, 5.0) == 7.0 and f(2.0, bias=0.5) == 2.5 and f(x=1.0) == 2.0
    g = theano.function([x, theano.Param(y, default=10.0)], x * y)
    assert g(2.0) == 20.0
    with pytest.raises(sn.InputError, match="missing input 0 'x'"):
        f()
    with pytest.raises(sn.InputError, match="no input named 'z'"):
        f(1.0, z=2.0)


def test_an_input_given_by_position_and_by_keyword_is_refused():
    """Theano's "Multiple values for input": neither value may win silently."""
    x, y = T.dscalar("x"), T.dscalar("y")
    f = theano.function([x, y], x - y)
    with pytest.raises(sn.InputError, match=r"multiple values for input 1 'y'.* keyword y="):
        f(1.0, 2.0, y=10.0)  # every input positional: the direct path is not taken
    with pytest.raises(sn.InputError, match=r"multiple values for input 0 'x'.* keyword x="):
        f(5.0, x=1.0)
    g = theano.function([x, theano.In(y, value=1.0, name="bias")], x + y)
    with pytest.raises(sn.InputError, match=r"multiple values for input 1 'y'.* keyword bias="):
        g(2.0, 5.0, bias=0.5)
    assert f(1.0, y=10.0) == -9.0 and g(2.0, bias=0.5) == 2.5


def test_a_keyword_two_inputs_share_is_ambiguous_as_in_theano():
    """Theano's "Ambiguous name": two inputs named "x" (a cell run twice) are given by
    position; the keyword took the last of them silently."""
    x1, x2 = T.dscalar("x"), T.dscalar("x")
    f = theano.function([x1, x2], x1 - x2)
    for call in (lambda: f(1.0, x=5.0), lambda: f(x=1.0)):
        with pytest.raises(sn.InputError, match=r"Ambiguous name: inputs 0 and 1 are both named"):
            call()
    assert f(1.0, 5.0) == -4.0
    g = theano.function([x1, theano.In(x2, name="x2", value=5.0)], x1 - x2)
    assert g(x=1.0) == -4.0 and g(x=1.0, x2=2.0) == -1.0  # named apart: both keywords work


def test_allow_input_downcast():
    x = T.fvector("x")
    strict = theano.function([x], x * 2)
    with pytest.raises(sn.InputError, match="allow_input_downcast=True"):
        strict(np.array([0.1, 0.2]))  # float64 data into a float32 input
    loose = theano.function([x], x * 2, allow_input_downcast=True)
    got = loose(np.array([0.1, 0.2]))
    assert got.dtype == "float32"
    np.testing.assert_allclose(got, np.float32([0.2, 0.4]))
    n = T.ivector("n")
    assert theano.function([n], n + 1, allow_input_downcast=True)([1.0, 2.0]).dtype == "int32"


def test_a_positional_call_with_nothing_to_convert_goes_straight_to_the_function(monkeypatch):
    x, y = T.dvector("x"), T.dscalar("y")
    f = theano.function([x, theano.In(y, value=3.0)], x * y)
    loose = theano.function([x, y], x * y, allow_input_downcast=True)
    bound = []
    for g in (f, loose):
        monkeypatch.setattr(g, "_values", lambda a, k, g=g: bound.append(g) or [np.ones(2), 2.0])
    np.testing.assert_array_equal(f(np.arange(2.0), 2.0), [0.0, 2.0])  # direct
    assert bound == []
    np.testing.assert_array_equal(f(np.arange(2.0)), [2.0, 2.0])  # a default: bound
    np.testing.assert_array_equal(f(x=np.arange(2.0), y=2.0), [2.0, 2.0])  # keywords: bound
    np.testing.assert_array_equal(loose([1, 2], 2), [2.0, 2.0])  # a downcast: bound
    assert bound == [f, f, loose]


def test_a_shared_variable_as_an_input_is_theanos_error_even_when_unused():
    W, x = theano.shared(np.ones(3), name="W"), T.dvector("x")
    for outputs in (x * W, x * 2):
        with pytest.raises(TypeError, match=r"Cannot use a shared variable \(W\) as explicit"):
            theano.function([x, W], outputs)
    with pytest.raises(TypeError, match=r"via the `givens` parameter\n  at .*test_function"):
        theano.function([theano.In(W)], x * W, givens={x: W})


def test_an_input_only_a_folded_gradient_or_zeros_like_reads_is_used_as_in_theano():
    """``T.grad(3 * s, s)``, ``T.zeros_like(s)``, ``T.ones_like(s)`` fold to constants here,
    but Theano's graphs read s (``fill(cost, 1)``, ``fill(model, 0)``): UnusedInputError was
    raised where Theano compiled them. An input they really leave out is still refused."""
    s, t = T.dscalar("s"), T.dscalar("t")
    cases = [
        (T.grad(3 * s, s), 3.0),
        (T.grad(s + 1, s), 1.0),
        (T.zeros_like(s), 0.0),
        (T.ones_like(s), 1.0),
        (T.grad(3 * s, s) + 1, 4.0),
    ]
    for output, want in cases:
        assert float(theano.function([s], output)(2.0)) == want
    with pytest.raises(theano.compile.UnusedInputError, match=r"input 1 't'"):
        theano.function([s, t], T.grad(3 * s, s))
    zero = T.grad(3 * s, t, disconnected_inputs="ignore")  # Theano: zeros_like(t)
    with pytest.raises(theano.compile.UnusedInputError, match=r"input 0 's'"):
        theano.function([s, t], zero)
    assert float(theano.function([t], zero)(1.0)) == 0.0


@pytest.mark.parametrize("mode", ["FAST_RUN", "FAST_COMPILE"])
def test_rebuild_strict_false_rebuilds_the_graph_over_a_given_of_another_type(mode):
    """``rebuild_strict=False`` was ignored: a float64 given for a float32 key was refused
    as lossy. It rebuilds the graph as ``theano.clone(strict=False)`` does."""
    x, d = T.fvector("x"), T.dvector("d")
    with pytest.raises(sn.DTypeError, match="without losing precision"):
        theano.function([d], x * 2, givens={x: d}, mode=mode)
    f = theano.function([d], x * 2, givens={x: d}, rebuild_strict=False, mode=mode)
    out = f(np.array([1.0, 1e-10]))
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, [2.0, 2e-10])
    r, m = T.row("r"), T.matrix("m")
    g = theano.function([m], [r * 2], givens=[(r, m)], rebuild_strict=False, mode=mode)
    np.testing.assert_array_equal(g(np.ones((3, 2)))[0], np.full((3, 2), 2.0))
    w = theano.shared(np.zeros(2), name="w")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (w + x: a float64 shared variable read with float32)
        step = w + x
    h = theano.function([d], updates={w: step}, givens={x: d}, rebuild_strict=False, mode=mode)
    h(np.array([1.0, 2.0]))
    np.testing.assert_array_equal(w.get_value(), [1.0, 2.0])


@pytest.mark.parametrize("mode", ["FAST_RUN", "FAST_COMPILE"])
def test_rebuild_strict_false_applies_the_givens_inside_default_updates(mode):
    """``rebuild_strict=False`` applied the givens to the outputs and updates but not to the
    default updates sn.function collected afterwards: a draw sized by a key
    (``srng.uniform(x.shape)``) or a ``default_update`` reading a key failed to compile ("the
    outputs depend on 'x' ..."). The default updates are rebuilt with the rest, as Theano's
    ``rebuild_collect_shared`` did: the same numbers and advances as ``rebuild_strict=True``."""
    x, y = T.dvector("x"), T.dvector("y")
    srng = T.shared_randomstreams.RandomStreams(1)
    draw = srng.uniform(x.shape)
    seen = []
    for strict in (True, False):
        srng.seed(1)
        f = theano.function([y], x + draw, givens={x: y}, rebuild_strict=strict, mode=mode)
        first, second = f(np.ones(3)), f(np.ones(3))
        seen.append((first, second, int(draw.rng.get_value().counter)))
    assert not np.allclose(seen[1][0], seen[1][1])  # the draws advance
    assert seen[1][2] == seen[0][2] == 6  # by 3 blocks a call, once
    for got, want in zip(seen[1][:2], seen[0][:2]):
        np.testing.assert_array_equal(got, want)
    k, i, kf = T.dscalar("k"), T.dscalar("i"), T.fscalar("kf")
    s = theano.shared(0.0, name="s")
    s.default_update = s + k
    g = theano.function(
        [i], s * 1, givens={k: i}, rebuild_strict=False, on_unused_input="ignore", mode=mode
    )
    assert [float(g(1.0)), float(g(2.0))] == [0.0, 1.0]
    assert float(s.get_value()) == 3.0
    built = dict(givens={k: i}, rebuild_strict=False, on_unused_input="ignore", mode=mode)
    for skip in ([s], True):
        theano.function([i], s * 1, no_default_updates=skip, **built)(5.0)
        assert float(s.get_value()) == 3.0
    t = theano.shared(0.0, name="t")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (t + kf: a float64 shared variable read with float32)
        t.default_update = t + kf  # a float64 given for a float32 key: rebuilt over it
    theano.function([i], t * 1, **dict(built, givens={kf: i}))(1e-10)
    assert float(t.get_value()) == 1e-10  # (not rounded to float32)


def test_allow_input_downcast_names_the_input_a_value_cannot_convert_to():
    """300 for an int8 input: NumPy 2's bare OverflowError ("Python integer 300 out of
    bounds for int8") named no input (Theano's NumPy wrapped it to 44)."""
    b, bv = T.bscalar("b"), T.bvector("bv")
    f = theano.function([b], b * 1, allow_input_downcast=True)
    assert int(f(7)) == 7
    with pytest.raises(sn.InputError) as info:
        f(300)  # <- the call
    message = str(info.value)
    assert message.startswith("input 0 'b' (int8()): allow_input_downcast cannot convert 300")
    assert "to int8: Python integer 300 out of bounds for int8" in message
    assert "<- the call" in message
    g = theano.function([b, bv], bv * b, allow_input_downcast=True)
    with pytest.raises(sn.InputError, match=r"^input 1 'bv' \(int8\(\?,\)\): .*\[1, 300\]"):
        g(1, [1, 300])
    with pytest.raises(sn.InputError, match=r"cannot convert 'abc' to int8"):
        g(1, "abc")
    np.testing.assert_array_equal(g(2, np.array([1, 2], dtype=np.int64)), [2, 4])


def test_allow_input_downcast_reads_arrays_of_every_kind_as_a_call_without_it_does():
    """``allow_input_downcast`` converted every value with a bare ``np.asarray``: a DataArray
    was read by position (transposed), a torch tensor that requires grad or has its negative
    bit set raised torch's RuntimeError. Read as symnb reads them (core/array_kinds.py),
    then cast."""
    xr = pytest.importorskip("xarray")
    torch = pytest.importorskip("torch")
    x = sn.tensor("x", shape=("batch", "time"), dtype="float32")
    da = xr.DataArray(np.arange(6.0).reshape(3, 2), dims=("time", "batch"))
    loose = theano.function([x], x * 1, allow_input_downcast=True)
    assert loose(da).tolist() == [[0.0, 2.0, 4.0], [1.0, 3.0, 5.0]]
    assert loose(da).tolist() == theano.function([x], x * 1)(da.astype("float32")).tolist()
    with pytest.raises(sn.InputError, match=r"^input 0 'x' has dims \('batch', 'time'\); the D"):
        loose(da.rename({"batch": "row"}))  # <- named apart
    v = T.fvector("v")
    f = theano.function([v], v * 2, allow_input_downcast=True)
    t = torch.tensor([0.5, 1.5], dtype=torch.float64, requires_grad=True)
    with pytest.warns(sn.errors.InputWarning, match=r"^input 0 'v' got a torch tensor that re"):
        got = f(t)
    assert got.dtype == np.float32 and got.tolist() == [1.0, 3.0] and t.grad is None
    assert f(torch.tensor([0.5, 1.0])._neg_view()).tolist() == [-1.0, -2.0]
    z = T.cvector("z")
    conj = theano.function([z], z * 1, allow_input_downcast=True)
    assert conj(torch.tensor([1 + 2j, 3 - 1j]).conj()).tolist() == [1 - 2j, 3 + 1j]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_allow_input_downcast_refuses_a_masked_array_as_a_call_without_it_does(dtype):
    """A masked array's mask was dropped silently with ``allow_input_downcast=True`` where
    its dtype differs from the input's (Theano's filter ran ``np.asarray``); symnb refuses
    it with or without."""
    m = sn.tensor("m", shape=(None,), dtype=dtype)
    ma = np.ma.masked_array([1.0, 2.0, 3.0], mask=[0, 1, 0])
    with pytest.raises(sn.InputError) as strict:
        theano.function([m], m * 2)(ma)
    with pytest.raises(sn.InputError) as loose:
        theano.function([m], m * 2, allow_input_downcast=True)(ma)  # <- the call
    for info in (strict, loose):
        assert str(info.value).startswith(
            "input 0 'm' got a masked array; symnb computes on plain arrays and would drop the "
            "mask: pass value.filled(fill_value)"
        )
    assert "<- the call" in str(loose.value)
    assert "hint" not in str(strict.value)  # (allow_input_downcast=True does not help)


def test_on_unused_input_raises_by_default_naming_the_input_and_the_line():
    x, unused = T.dvector("x"), T.dvector("unused")
    with pytest.raises(theano.compile.UnusedInputError, match=r"input 1 'unused'") as info:
        theano.function([x, unused], x * 2)
    assert "test_function.py" in str(info.value)  # the user's line
    with pytest.warns(UserWarning, match="'unused'"):
        theano.function([x, unused], x * 2, on_unused_input="warn")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f = theano.function([x, unused], x * 2, on_unused_input="ignore")
    np.testing.assert_array_equal(f([1.0], [5.0]), [2.0])
    index = T.lscalar()
    data = theano.shared(np.arange(6.0))
    used_through_givens = theano.function([index], x.sum(), givens={x: data[index:]})
    assert used_through_givens(4) == 9.0


@pytest.mark.parametrize("mode", ["FAST_RUN", "FAST_COMPILE"])
def test_an_input_only_a_default_update_reads_is_used(mode):
    """With ``s.default_update = s + k``, ``theano.function([k], s * 1)`` was an
    UnusedInputError, though the function's default update reads k (and, with
    ``on_unused_input='ignore'``, advanced s by it). Theano checked its inputs against the
    outputs and every update, default updates included, unless ``no_default_updates`` left
    them out; a default update is read with the givens applied."""
    k, i = T.dscalar("k"), T.dscalar("i")
    s, t = theano.shared(0.0, name="s"), theano.shared(0.0, name="t")
    s.default_update = s + k
    f = theano.function([k], s * 1, mode=mode)
    assert [float(f(1.0)), float(f(2.0))] == [0.0, 1.0]
    assert float(s.get_value()) == 3.0
    t.default_update = t + s  # k read through s's default update, which t's reads
    g = theano.function([k], t * 1, mode=mode)
    g(1.0)
    assert (float(t.get_value()), float(s.get_value())) == (3.0, 4.0)
    h = theano.function([i], s * 1, givens={k: i}, mode=mode)
    h(0.5)
    assert float(s.get_value()) == 4.5
    for options in (
        {"no_default_updates": True},
        {"no_default_updates": [s]},
        {"updates": {s: s + 1}},  # an explicit update: the default one is not written
    ):
        with pytest.raises(theano.compile.UnusedInputError, match=r"input 0 'k' \(float64"):
            theano.function([k], s * 1, mode=mode, **options)


@pytest.mark.parametrize("on_unused_input", [None, "warn", "ignore"])
def test_an_input_that_is_also_a_givens_key_is_theanos_error(on_unused_input):
    """Theano's pfunc refused it whatever ``on_unused_input`` said ("Replacing inputs is
    currently forbidden because it has no effect"); here it was an unused-input error that
    did not mention givens, or, with 'warn'/'ignore', a function ignoring the x passed."""
    x, y = T.dmatrix("x"), T.ivector("y")
    data = theano.shared(np.ones((10, 4)), name="data")
    with pytest.raises(RuntimeError) as info:
        theano.function(
            [x, y], x.sum() + y.sum(), givens={x: data[0:5]}, on_unused_input=on_unused_input
        )
    message = str(info.value)
    assert message.startswith(
        "theano.function: You are trying to replace variable 'x' (float64(?, ?)) (input 0) "
        "through the `givens` parameter, but this variable is an input to your function."
    )
    assert "theano.function([y], f(x), givens={x: g(y)})" in message
    assert isinstance(info.value, theano.compile.GivenInputError)
    assert isinstance(info.value, sn.GraphError) and "test_function.py" in message


def test_an_input_computed_from_other_variables_is_read_as_given():
    """Theano cut its inputs free of their owners: ``theano.function([h], T.tanh(h))`` with
    ``h = T.dot(x, W)`` computes tanh of the value given for h (it said h "is not used"), and
    in ``theano.function([x, h], ...)`` x is the unused input (h was blamed)."""
    x = T.dmatrix("x")
    W = theano.shared(np.ones((4, 3)), name="W")
    h = T.dot(x, W)
    out = T.tanh(h)
    H = np.full((2, 3), 0.5)
    f = theano.function([h], out)
    np.testing.assert_allclose(f(H), np.tanh(H))
    np.testing.assert_allclose(f.copy()(H), np.tanh(H))
    acc, y = theano.shared(np.zeros((2, 3)), name="acc"), T.dmatrix("y")
    g = theano.function([h], y.sum(), updates=[(acc, acc + h)], givens={y: h * 2})
    assert g(H) == 6.0
    np.testing.assert_array_equal(acc.get_value(), H)  # the update read the h given too
    with pytest.raises(theano.compile.UnusedInputError) as info:
        theano.function([x, h], out)
    message = str(info.value)
    assert message.startswith("theano.function: input 0 'x' (float64(?, ?)) is not used")
    assert "input 1 an unnamed variable (float64(?, ?)) is computed from it" in message
    both = theano.function([x, h], out + x.sum(), on_unused_input="ignore")
    np.testing.assert_allclose(both(np.ones((2, 4)), H), np.tanh(H) + 8.0)


@pytest.mark.parametrize("mode", ["FAST_RUN", "FAST_COMPILE"])
def test_a_computed_input_is_cut_free_of_the_default_updates_too(mode):
    """A draw sized by a computed input (``srng.uniform(h.shape)``, h = x * 2) kept a default
    update (its counter's advance) reading the original h, so ``theano.function([h], ...)``
    failed ("the outputs depend on 'x' ..."). Theano cut its inputs free across outputs and
    updates alike: the draw advances by the size of the h given, once a call, and a draw only
    what computes h reads does not advance (it is not run)."""
    x = T.dvector("x")
    srng = T.shared_randomstreams.RandomStreams(1)
    inner = srng.normal((4,))
    h = x * 2 + inner[:1]
    draw = srng.uniform(h.shape)
    f = theano.function([h], h + draw, mode=mode)
    first, second = f(np.ones(3)), f(np.ones(3))
    assert int(draw.rng.get_value().counter) == 6 and int(inner.rng.get_value().counter) == 0
    y, twin = T.dvector("y"), T.shared_randomstreams.RandomStreams(1)
    twin.normal((4,))
    g = theano.function([y], y + twin.uniform(y.shape), mode=mode)  # the same stream, plain
    np.testing.assert_array_equal(first, g(np.ones(3)))
    np.testing.assert_array_equal(second, g(np.ones(3)))
    assert not np.allclose(first, second)
    for skip in (True, [draw.rng]):
        theano.function([h], h + draw, no_default_updates=skip, mode=mode)(np.ones(3))
        assert int(draw.rng.get_value().counter) == 6
    k = T.dscalar("k")
    tripled = k * 3
    s = theano.shared(0.0, name="s")
    s.default_update = s + tripled
    count = theano.function([tripled], s * 1, on_unused_input="ignore", mode=mode)
    assert [float(count(1.0)), float(count(2.0))] == [0.0, 1.0]
    assert float(s.get_value()) == 3.0


@pytest.mark.parametrize("make", [lambda x: x, lambda x: theano.In(x)])
def test_inputs_not_in_a_list_are_refused_as_in_theano(make):
    """Theano 1.0 refused ``theano.function(inputs=x, ...)``: "Input variables of a Theano
    function should be contained in a list, even when there is a single input."; it was
    accepted here, so a script that ran here failed on Theano."""
    x = T.dmatrix("x")
    with pytest.raises(TypeError) as info:
        theano.function(inputs=make(x), outputs=T.sum(x))
    message = str(info.value)
    assert message.startswith(
        "theano.function: Input variables of a Theano function should be contained in a list, "
        "even when there is a single input"
    )
    assert "'x' (float64(?, ?))" in message and "write inputs=[x]" in message
    assert theano.function((x,), T.sum(x))(np.ones((2, 2))) == 4.0  # a tuple is a list too


def test_copy_swaps_shared_variables_read_through_givens():
    """Theano swapped in the compiled graph, after ``givens``: a dataset read only through
    ``givens={x: data[i:j]}`` (the deeplearning.net tutorials') is swapped too. A key the
    function never reads is Theano's ValueError, and the copy keeps the mode."""
    data = theano.shared(np.arange(10.0), name="data")
    data2 = theano.shared(np.arange(10.0) * 100, name="data2")
    index, x = T.lscalar("index"), T.dvector("x")
    f = theano.function([index], x.sum(), givens={x: data[index : index + 2]})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        g = f.copy(swap={data: data2})
    assert (f(1), g(1)) == (3.0, 300.0)
    assert not caught  # (the copy's given was unread: a GraphWarning)
    assert g.copy(swap={data2: data})(1) == 3.0  # a copy's copy
    assert g.maker.mode is f.maker.mode is theano.compile.get_mode("FAST_COMPILE")
    with pytest.raises(ValueError, match=r"swap of 'data2' .*neither reads nor updates it"):
        f.copy(swap={data2: data})
    srng = T.shared_randomstreams.RandomStreams(seed=3)
    draws = theano.function([], srng.uniform((2,)) + data.sum()).copy(swap={data: data2})
    assert not np.array_equal(draws(), draws())  # the stream's update is the copy's too


def test_copy_copy_is_f_copy():
    """Theano's ``Function.__copy__`` is ``self.copy()``: a function compiled again that
    reads and updates the same shared variables, keeping the mode (copy.copy reused the
    compiled symnb function itself, where ``sn.function``'s copy.copy builds it again)."""
    w = theano.shared(np.zeros(2), name="w")
    f = theano.function([], w * 2, updates=[(w, w + 1)], mode="FAST_RUN")
    g = copy.copy(f)
    assert type(g) is type(f) and g.symnb_function is not f.symnb_function
    assert g.maker.mode is f.maker.mode
    assert (f().tolist(), g().tolist()) == ([0.0, 0.0], [2.0, 2.0])
    assert w.get_value().tolist() == [2.0, 2.0]


def test_on_unused_input_looks_at_the_graph_after_givens():
    """Theano checked the graph its givens made: an input read only where a given replaces
    the expression reading it is unused (the call would ignore its value)."""
    x, y = T.dvector("x"), T.dvector("y")
    h = x * 2
    with pytest.raises(theano.compile.UnusedInputError, match=r"input 0 'x'"):
        theano.function([x, y], h + 1, givens={h: y})
    f = theano.function([x, y], h + x, givens={h: y})  # x is still read outside h
    np.testing.assert_array_equal(f(np.ones(2), np.zeros(2)), [1.0, 1.0])
    g = theano.function([x, y], h + 1, givens={h: y}, on_unused_input="ignore")
    np.testing.assert_array_equal(g(np.full(2, 100.0), np.zeros(2)), [1.0, 1.0])


@pytest.mark.parametrize(
    "mode, backend, option, check",
    [
        ("FAST_RUN", None, "fast", None),
        ("FAST_COMPILE", "py", "stable", None),
        (theano.Mode(linker="py", optimizer=None), "py", "none", None),
        ("DebugMode", None, "fast", "debug"),
        ("NanGuardMode", None, "fast", "nanguard"),
        (
            theano.Mode(linker="py").excluding("fuse"),
            "py",
            {"include": ["fast"], "exclude": ["fuse"]},
            None,
        ),
    ],
)
def test_mode_names_map_to_symnb(mode, backend, option, check):
    assert theano.compile.get_mode(mode).options() == {
        "backend": backend,
        "optimize": option,
        "mode": check,
    }
    if backend == "py":  # compiled and run (backend "c" is what the training programs use)
        x = T.dvector("x")
        f = theano.function([x], T.exp(x) * 2, mode=mode)
        np.testing.assert_allclose(f([0.0, 1.0]), [2.0, 2 * np.e])
        assert f.symnb_function.backend == "py"
    with pytest.raises(ValueError, match="unknown mode 'FAST'"):
        theano.function([], T.constant(1.0), mode="FAST")


def test_shared_borrow_get_and_set_value_and_changing_shape():
    value = np.zeros((2, 3))
    w = theano.shared(value, borrow=True, name="w")
    assert w.get_value(borrow=True) is value and w.get_value() is not value
    w.set_value(np.ones((4, 3)))  # a Theano shared variable may change shape
    assert w.get_value().shape == (4, 3) and w.type.shape == (None, None)
    row = theano.shared(np.ones((1, 3)), broadcastable=(True, False))
    assert row.type.shape == (1, None)
    x = T.matrix("x")
    got = theano.function([x], x + row)(np.zeros((2, 3)))
    np.testing.assert_array_equal(got, np.ones((2, 3)))
    copy = theano.shared(value)
    value[0, 0] = 5.0
    assert copy.get_value()[0, 0] == 0.0  # copied unless borrow=True


def test_theano_shared_reads_its_value_as_sn_shared_does():
    """``theano.shared`` ran ``np.asarray(value)`` first (for the value's number of dims): a
    torch tensor that requires grad or has its conjugate bit set raised torch's
    RuntimeError, a ragged list a bare ValueError. Read as sn.shared reads it, once."""
    torch = pytest.importorskip("torch")
    t = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        w = theano.shared(t, name="w")
    assert [str(c.message) for c in caught] == [
        "shared 'w' got a torch tensor that requires grad: symnb computes on its values "
        "(detached), so no gradient flows back to torch; pass value.detach() to say so"
    ]
    assert w.get_value().tolist() == [1.0, 2.0, 3.0] and w.type.shape == (None,)
    z = theano.shared(torch.tensor([1 + 2j, 3 - 1j]).conj(), name="z")
    assert z.get_value().tolist() == [1 - 2j, 3 + 1j]
    with pytest.raises(sn.ShapeError) as info:
        R = theano.shared([[1.0], [1.0, 2.0]])  # noqa: F841 <- ragged
    assert str(info.value).startswith("shared 'R': [[1.0], [1.0, 2.0]] is not a rectangular")
    assert "<- ragged" in str(info.value)
    held = np.zeros(2)
    lent = theano.shared(torch.from_numpy(held), borrow=True)  # the caller's memory: lent
    held[0] = 4.0
    assert lent.lent and lent.get_value().tolist() == [4.0, 0.0]
    assert not theano.shared([1.0, 2.0], borrow=True).lent  # a list: read into its own copy


def test_shared_set_value_converts_by_theanos_filter_with_strict_and_allow_downcast():
    """Theano 1.0's ``TensorType.filter`` (its test_shared.py): a float64 array is refused by
    a float32 variable (it was rounded silently), ``allow_downcast=True`` converts anything
    (8.23 into int64 is 8; it was refused), ``strict=True`` takes only an ndarray of the
    variable's dtype (an int32 was cast); values that convert without loss are taken."""
    c = theano.shared(np.zeros((2, 2), dtype="float32"), name="c")
    with pytest.raises(
        TypeError,
        match=r"'c' \(float32\(\?, \?\)\) cannot store a value of dtype "
        r"float64 without risking loss of precision",
    ):
        c.set_value(np.random.rand(2, 2))
    with pytest.raises(sn.DTypeError, match=r"cannot store accurately the value \[\[0\.1, 0\.5\]"):
        c.set_value([[0.1, 0.5], [1.0, 2.0]])
    c.set_value(np.ones((2, 2), "int8"))  # int8 upcasts to float32
    c.set_value([[1.0, 0.5], [2.0, 3.0]])  # Python floats float32 holds exactly
    assert c.get_value().dtype == np.float32 and c.get_value()[1, 1] == 3.0
    for value in (8.23, [8.23]):
        b = theano.shared(np.int64(7) if value == 8.23 else np.int64([7]), allow_downcast=True)
        b.set_value(value)
        assert b.get_value().dtype == np.int64 and b.get_value().tolist() in (8, [8])
    default = theano.shared(np.int64(7), name="default")
    with pytest.raises(TypeError, match=r"cannot store accurately the value 8\.23: int64 would"):
        default.set_value(8.23)
    default.set_value(np.int32(8))
    assert default.get_value() == 8 and default.get_value().dtype == np.int64
    s = theano.shared(np.int64(7), strict=True, name="s")
    for value in (np.int32(8), 8, np.array(8, "int32")):
        with pytest.raises(TypeError, match=r"'s' \(int64\(\)\) was made with strict=True"):
            s.set_value(value)
    s.set_value(np.array(9))
    assert s.get_value() == 9
    floatx = theano.config.floatX
    try:
        theano.config.floatX = "float32"
        f32 = theano.shared(np.float32(0), name="f32")
        f32.set_value(0.1)  # Theano's exception: a Python float into floatX, rounded
        assert f32.get_value() == np.float32(0.1)
    finally:
        theano.config.floatX = floatx
    native = sn.shared(np.zeros(2, "float32"))
    native.set_value(np.array([0.1, 0.2]))  # symnb's own rule is unchanged: rounded
    assert native.get_value().dtype == np.float32


def test_shared_set_value_filters_a_tensor_or_memoryview_by_its_dtype_as_an_ndarray():
    """A float64 torch tensor or memoryview into a float32 ``theano.shared`` was rounded
    silently where the same float64 ndarray is refused (Theano's filter): an array of any
    kind is read as an ndarray first (a masked array refused, even with allow_downcast=True,
    where its mask was dropped), then meets the ndarray rule by its dtype."""
    torch = pytest.importorskip("torch")
    values = {
        "torch Tensor": torch.tensor([0.1, 0.2], dtype=torch.float64),
        "memoryview": memoryview(np.array([0.1, 0.2])),
    }
    hints = {
        "torch Tensor": "value.to(torch.float32)",
        "memoryview": "np.asarray(value, 'float32')",
    }
    for kind, value in values.items():
        c = theano.shared(np.zeros(2, dtype="float32"), name="c")
        with pytest.raises(sn.DTypeError) as info:
            c.set_value(value)  # <- set
        assert str(info.value).startswith(
            f"shared 'c' (float32(?,)) cannot store a {kind} of dtype float64 without risking "
            "loss of precision (Theano's rule: float64 does not upcast to float32, whatever "
            f"the values); cast it with {hints[kind]}, or make the variable with"
        )
        assert "<- set" in str(info.value) and c.get_value().tolist() == [0.0, 0.0]
        loose = theano.shared(np.zeros(2, dtype="float32"), name="loose", allow_downcast=True)
        loose.set_value(value)
        assert loose.get_value().tolist() == np.float32([0.1, 0.2]).tolist()
    c.set_value(torch.tensor([1, 2], dtype=torch.int8))  # int8 upcasts to float32
    assert c.get_value().tolist() == [1.0, 2.0] and c.get_value().dtype == np.float32
    held = np.zeros(2, "float32")
    c.set_value(torch.from_numpy(held), borrow=True)  # its dtype: kept without a copy
    held[0] = 5.0
    assert c.get_value().tolist() == [5.0, 0.0]
    masked = np.ma.masked_array([1.0, 2.0], mask=[0, 1])
    for var in (c, loose):
        with pytest.raises(sn.InputError, match=r"got a masked array; symnb computes on plain"):
            var.set_value(masked)
    assert loose.get_value().tolist() == np.float32([0.1, 0.2]).tolist()


def test_an_update_must_have_its_shared_variables_type():
    """Theano's rebuild_collect_shared: an update of another broadcastable pattern (a row
    for a matrix) or dtype is a TypeError at the theano.function line; the row update turned
    a (3, 4) weight into a (1, 4) one at the first call, and a float32 update was cast."""
    W = theano.shared(np.arange(12.0).reshape(3, 4), name="W")
    with pytest.raises(TypeError) as info:
        theano.function([], [], updates=[(W, W.mean(axis=0, keepdims=True))])  # <- row
    message = str(info.value)
    assert isinstance(info.value, sn.ShapeError)
    assert message.startswith(
        "An update must have the same type as the original shared variable (shared_var='W' "
        "(float64(?, ?)), shared_var.type=TensorType(float64, (False, False)), update_val=an "
        "unnamed variable (float64(1, ?)), update_val.type=TensorType(float64, (True, False)))."
        " If the difference is related to the broadcast pattern, you can call the "
        "tensor.unbroadcast(var, axis_to_unbroadcast[, ...]) function"
    )
    assert "(here T.unbroadcast(value, 0))" in message and "# <- row" in message
    with pytest.raises(sn.DTypeError, match=r"update_val.type=TensorType\(float32, \(False, Fa"):
        theano.function([], [], updates=[(W, T.cast(W, "float32"))])
    b = theano.shared(np.zeros((1, 4)), broadcastable=(True, False), name="b")
    x = T.matrix("x")
    with pytest.raises(TypeError, match=r"T\.addbroadcast\(value, 0\)"):
        theano.function([x], [], updates=[(b, b + x)])
    f = theano.function([], [], updates=[(W, T.unbroadcast(W.mean(axis=0, keepdims=True), 0))])
    g = theano.function([x], [], updates=[(b, T.addbroadcast(b + x, 0))])
    f()  # Theano's way to let it change shape
    g(np.ones((1, 4)))
    assert W.get_value().tolist() == [[4.0, 5.0, 6.0, 7.0]]
    assert b.get_value().tolist() == [[1.0, 1.0, 1.0, 1.0]]
    W.set_value(np.ones((3, 4)))
    theano.function([], [], updates={W: W * 2})()  # the same type: taken
    assert W.get_value()[0, 0] == 2.0


def test_get_value_takes_theanos_return_internal_type():
    """Theano's ``get_value(borrow=True, return_internal_type=True)`` (GPU-era code): the
    internal type is a NumPy array here, the variable's own with ``borrow=True``."""
    value = np.arange(3.0)
    w = theano.shared(value, borrow=True, name="w")
    assert w.get_value(borrow=True, return_internal_type=True) is value
    got = w.get_value(return_internal_type=True)
    assert type(got) is np.ndarray and got is not value
    np.testing.assert_array_equal(got, value)
    srng = T.shared_randomstreams.RandomStreams(seed=1)
    draw = srng.uniform((2,))
    state = draw.rng.get_value(borrow=True, return_internal_type=True)
    assert type(state).__name__ == "PhiloxState"


@pytest.mark.parametrize("mode", ["FAST_RUN", "FAST_COMPILE"])
def test_a_default_update_is_written_only_where_read_after_the_givens(mode):
    """Theano collected default updates from the graph after its givens: ``s`` replaced by
    ``s2`` is not read, so it is not written (it was: s := s2 + 1); a default update the
    outputs read after the givens is applied with the givens, as Theano cloned it."""
    s = theano.shared(0.0, name="s")
    s.default_update = s + 1
    s2 = theano.shared(100.0, name="s2")
    f = theano.function([], s * 2, givens={s: s2}, mode=mode)
    assert float(f()) == 200.0 and float(s.get_value()) == 0.0
    assert float(s2.get_value()) == 100.0
    t = theano.shared(1.0, name="t")
    t.default_update = t + s
    g = theano.function([], t * 1, givens={s: s2}, mode=mode)
    assert float(g()) == 1.0 and float(t.get_value()) == 101.0
    assert float(s.get_value()) == 0.0
    h = theano.function([], t + s, mode=mode)  # both read: both advance
    assert float(h()) == 101.0
    assert (float(t.get_value()), float(s.get_value())) == (101.0, 1.0)


@pytest.mark.parametrize("mode", ["FAST_RUN", "FAST_COMPILE"])
def test_a_given_or_replacement_looser_than_its_key_is_refused_as_theano_did(mode):
    """Theano's strict rebuild (``filter_variable``) refused a matrix given for a row; the
    layer took it, and a (3, 2) value came out of an output typed as a row (or an internal
    error). A row for a matrix, or a matrix marked by ``T.addbroadcast``, is taken."""
    r, m = T.row("r"), T.matrix("m")
    want = r"'r' \(float64\(1, \?\)\) cannot take 'm' \(float64\(\?, \?\)\): Cannot convert"
    with pytest.raises(TypeError, match="theano.function: givens: " + want) as info:
        theano.function([m], r * 2, givens={r: m}, mode=mode)
    assert isinstance(info.value, sn.ShapeError)
    assert "T.addbroadcast(value, 0)" in str(info.value)
    with pytest.raises(TypeError, match="clone: replace: " + want):
        theano.clone(r * 2, replace={r: m})
    f = theano.function([m], r * 2, givens={r: T.addbroadcast(m, 0)}, mode=mode)
    np.testing.assert_array_equal(f(np.ones((1, 2))), [[2.0, 2.0]])
    g = theano.function([r], m * 2, givens={m: r}, mode=mode)
    np.testing.assert_array_equal(g(np.ones((1, 2))), [[2.0, 2.0]])


def test_a_given_or_replacement_of_another_dtype_is_refused_under_a_strict_rebuild():
    """Theano's strict rebuild (``convert_variable``: the same dtype only) refused an ivector
    given for a dvector; the layer cast it silently. A lossy one keeps its message naming
    what widens it; ``rebuild_strict=False`` and ``strict=False`` take both."""
    v, y, i, f = T.dvector("v"), T.ivector("y"), T.iscalar("i"), T.fvector("f")
    want = (
        r"'v' \(float64\(\?,\)\) cannot take 'y' \(int32\(\?,\)\): Cannot convert Type "
        r"TensorType\(int32, \(False,\)\) \(of Variable y\) into Type "
        r"TensorType\(float64, \(False,\)\)\. .*T\.cast\(y, 'float64'\)"
    )
    for call, what in [
        (lambda: theano.function([y], v * 2, givens={v: y}), "theano.function: givens: "),
        (lambda: theano.function([y], v * 2, givens=[(v, y)]), "theano.function: givens: "),
        (lambda: theano.clone(v * 2, replace={v: y}, strict=True), "clone: replace: "),
    ]:
        with pytest.raises(sn.DTypeError, match=what + want) as info:
            call()
        assert "test_function.py" in str(info.value)
    with pytest.raises(sn.DTypeError, match=r"'v' .* cannot take .*T\.cast\(value, 'float64'\)"):
        theano.function([f], v.sum(), givens={v: f * 2})
    s = T.dscalar("s")
    with pytest.raises(sn.DTypeError, match="rebuild_strict=False the graph is built again"):
        theano.function([i], s + 1, givens={s: i})
    with pytest.raises(sn.DTypeError, match="without losing precision"):  # lossy: as before
        theano.function([v], f * 2, givens={f: v})
    out = theano.function([y], v * 2, givens={v: y}, rebuild_strict=False)(np.array([1, 2], "i"))
    assert out.dtype == np.int32 and list(out) == [2, 4]
    cloned = theano.clone(v * 2, replace={v: y}, strict=False)
    assert cloned.dtype == "int32"
    g = theano.function([y], v * 2, givens={v: T.cast(y, "float64")})
    np.testing.assert_array_equal(g(np.array([1, 2], "i")), [2.0, 4.0])


def test_a_shared_variables_default_update_attribute_is_applied_as_in_theano():
    """Theano's ``v.default_update = v + 1`` was accepted and ignored (only the tag was read):
    the counter stayed 0. Every function reading ``v`` writes it, unless excluded."""
    calls = theano.shared(0, name="calls")
    assert not hasattr(calls, "default_update")  # as in Theano, until set
    calls.default_update = calls + 1
    assert calls.tag["default_update"] is calls.default_update  # symnb's spelling too
    f = theano.function([], calls * 10)
    assert [int(f()), int(f()), int(f())] == [0, 10, 20]
    assert int(calls.get_value()) == 3
    sn.function([], calls * 1)()  # symnb's own function honours it too
    assert int(calls.get_value()) == 4
    for skip in ([calls], True):
        theano.function([], calls * 1, no_default_updates=skip)()
        sn.function([], calls * 1, no_default_updates=skip)()
        assert int(calls.get_value()) == 4
    theano.function([], calls, updates={calls: calls + 10})()  # an explicit update wins
    assert int(calls.get_value()) == 14
    calls.default_update = 0  # a number is a constant, as Theano's filter_variable made it
    theano.function([], calls)()
    assert int(calls.get_value()) == 0
    del calls.default_update
    theano.function([], calls * 1)()
    assert not hasattr(calls, "default_update") and int(calls.get_value()) == 0
    with pytest.raises(sn.DTypeError, match=r"'calls' \(int64\(\)\)\.default_update: cannot") as e:
        calls.default_update = "one"  # <- the line named
    assert "<- the line named" in str(e.value)


def test_scan_accumulates_and_differentiates(rng):
    x = T.dvector("x")
    a = rng.normal(size=5)
    total, updates = theano.scan(lambda v, acc: acc + v, sequences=x, outputs_info=T.constant(0.0))
    f = theano.function([x], [total, T.grad(total[-1] * total[-1], x)], updates=updates)
    running, g = f(a)
    np.testing.assert_allclose(running, np.cumsum(a))
    np.testing.assert_allclose(g, np.full(5, 2 * a.sum()))
    out, _ = theano.scan(lambda v: v * 2, sequences=[x], return_list=True)
    assert isinstance(out, list) and len(out) == 1


@pytest.mark.parametrize("flag", [True, False])
def test_scan_refuses_a_bool_n_steps(flag):
    """``theano.scan(n_steps=True)`` ran one step (symnb's scan took a bool for an int)."""
    with pytest.raises(sn.DTypeError, match=rf"^theano.scan: n_steps .* the Python bool {flag}"):
        theano.scan(lambda h: h * 2, outputs_info=T.dvector("h0"), n_steps=flag)


@pytest.mark.parametrize("mode", ["FAST_COMPILE", "FAST_RUN"])
@pytest.mark.parametrize("fixed", [False, True])
def test_scan_taps_read_the_first_rows_of_a_longer_initial_value(mode, fixed):
    """Theano reads ``initial[:-min(taps)]`` (tap k at row k - min(taps)): rows past those
    are ignored, whether the initial's length is fixed or known only when it runs."""
    x0 = sn.tensor("x0", shape=(5,), dtype="float64") if fixed else T.dvector("x0")
    out, _ = theano.scan(
        lambda a, c: a * 10 + c, outputs_info={"initial": x0, "taps": [-3, -1]}, n_steps=4
    )
    start = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    hist, want = list(start[:3]), []
    for _ in range(4):
        hist.append(hist[-3] * 10 + hist[-1])
        want.append(hist[-1])
    np.testing.assert_array_equal(theano.function([x0], out, mode=mode)(start), want)


def test_scan_taps_none_are_the_default_taps():
    """Theano fills an explicit ``"taps": None``: [0] for a sequence, [-1] for an output
    with an initial value; the layer refused both ("a non-empty list of ints, not None")."""
    x, h0 = T.matrix("x"), T.vector("h0")
    xv = np.arange(12.0).reshape(4, 3)
    doubled, _ = theano.scan(lambda a: a * 2, sequences={"input": x, "taps": None})
    np.testing.assert_array_equal(theano.function([x], doubled)(xv), xv * 2)
    sums, _ = theano.scan(
        lambda a, h: [a + h, a * 2],
        sequences=[{"input": x, "taps": None}],
        outputs_info=[{"initial": h0, "taps": None}, {"initial": None, "taps": None}],
    )
    got = theano.function([x, h0], sums)(xv, np.ones(3))
    np.testing.assert_array_equal(got[0], 1 + np.cumsum(xv, axis=0))
    np.testing.assert_array_equal(got[1], xv * 2)


@pytest.mark.parametrize("mode", ["FAST_COMPILE", "FAST_RUN"])
def test_scan_views_map_reduce_foldl_foldr_against_numpy(mode, rng):
    """Theano's scan_views: map is a scan without state; reduce, foldl and foldr keep the
    last step of each output, foldr (and reduce's go_backwards) reading the sequences from
    the end; each returns scan's updates."""
    from symnb.compat.theano import scan_module

    assert all(getattr(theano, n) is getattr(scan_module, n) for n in ("map", "reduce"))
    x, y, c = T.dvector("x"), T.dvector("y"), T.dscalar("c")
    a, b = rng.normal(size=5), rng.normal(size=5)
    zero = T.constant(0.0)

    def run(outputs, updates):
        f = theano.function(
            [x, y, c], outputs, updates=updates, mode=mode, on_unused_input="ignore"
        )
        return f(a, b, 1.5)

    got = run(*theano.map(lambda u, v, k: [u * v + k, u - v], [x, y], [c]))
    np.testing.assert_allclose(got[0], a * b + 1.5)
    np.testing.assert_allclose(got[1], a - b)
    np.testing.assert_allclose(run(*theano.map(lambda u: u * 2, x, go_backwards=True)), a[::-1] * 2)

    def horner(u, acc, k):  # acc * k + u: the order of the steps shows in the result
        return acc * k + u

    left, right = 0.0, 0.0
    for v in a:
        left = left * 1.5 + v
    for v in a[::-1]:
        right = right * 1.5 + v
    np.testing.assert_allclose(run(*theano.foldl(horner, x, zero, c)), left)
    np.testing.assert_allclose(run(*theano.foldr(horner, x, zero, c)), right)
    np.testing.assert_allclose(run(*theano.reduce(horner, x, zero, c, go_backwards=True)), right)
    both, updates = theano.reduce(
        lambda u, v, s, p: [s + u * v, p * v], [x, y], [zero, T.constant(1.0)]
    )
    assert isinstance(both, list) and len(both) == 2 and not updates
    np.testing.assert_allclose(run(both, updates), [a @ b, np.prod(b)])
    from symnb.compat.theano.tensor.shared_randomstreams import RandomStreams

    srng = RandomStreams(seed=1)
    _, updates = theano.foldr(lambda u, acc: acc + u * srng.uniform(()), x, zero)
    assert len(updates) == 1  # the stream's state after the loop's draws
    total, _ = theano.foldl(lambda u, acc: acc + u**2, x, zero)
    grad = theano.function([x], T.grad(total, x), mode=mode)(a)
    np.testing.assert_allclose(grad, 2 * a)


@pytest.mark.parametrize("mode", ["FAST_COMPILE", "FAST_RUN"])  # backends "py" and "c"
def test_random_draws_in_scan_never_repeat_across_calls_without_scans_updates(mode):
    from symnb.compat.theano.tensor.shared_randomstreams import RandomStreams

    srng, x = RandomStreams(seed=1), T.vector("X")
    r, _ = theano.scan(lambda v: v + srng.uniform((2,)), sequences=x)
    f = theano.function([x], r, mode=mode)  # scan's updates not passed
    first, second = f(np.zeros(3)).ravel(), f(np.zeros(3)).ravel()
    assert not set(first) & set(second)  # the stream moved past all 3 steps' draws
    srng, x = RandomStreams(seed=1), T.vector("X")
    r, updates = theano.scan(lambda v: v + srng.uniform((2,)), sequences=x)
    g = theano.function([x], r, updates=updates, mode=mode)
    np.testing.assert_array_equal(g(np.zeros(3)).ravel(), first)
    np.testing.assert_array_equal(g(np.zeros(3)).ravel(), second)  # as if they were passed
    frozen = theano.function([x], r, no_default_updates=True, mode=mode)
    np.testing.assert_array_equal(frozen(np.zeros(3)), frozen(np.zeros(3)))  # Theano's


@pytest.mark.parametrize("scan_first", [True, False])
def test_scans_updates_are_ordered_updates_that_add_to_a_list_of_pairs(scan_first):
    """Theano's scan returned ``OrderedUpdates``, so course code writes
    ``scan_updates + [(W, W - lr * gW)]`` (or the list first); a plain OrderedDict raised
    "unsupported operand type(s) for +". A shared variable given two new values is refused
    (Theano's KeyError 'Collision'), the same value twice kept once."""
    from symnb.compat.theano.tensor.shared_randomstreams import RandomStreams

    srng, xs = RandomStreams(seed=1), T.matrix("xs")
    W = theano.shared(np.ones(2), name="W")
    h, scan_updates = theano.scan(lambda x_t: x_t * srng.uniform((2,)), sequences=xs)
    assert isinstance(scan_updates, theano.updates.OrderedUpdates)
    assert theano.OrderedUpdates is theano.updates.OrderedUpdates
    mine = [(W, W * 2)]
    merged = scan_updates + mine if scan_first else mine + scan_updates
    assert isinstance(merged, theano.updates.OrderedUpdates) and len(merged) == 2
    assert list(merged)[0 if scan_first else 1] is list(scan_updates)[0]
    f = theano.function([xs], h.sum(), updates=merged)
    first, second = f(np.ones((3, 2))), f(np.ones((3, 2)))
    assert W.get_value().tolist() == [4.0, 4.0] and first != second  # both updates ran
    assert len(merged + {W: merged[W]}) == 2  # the same value again: kept once
    with pytest.raises(KeyError, match=r"Collision: 'W' .*two new values") as info:
        merged + [(W, W * 3)]
    assert isinstance(info.value, sn.errors.GraphError) and "test_function.py" in str(info.value)
    with pytest.raises(TypeError, match=r"the key 'xs' .*is not a shared variable"):
        scan_updates + [(xs, xs * 2)]


def test_debugprint_and_pydotprint(tmp_path):
    x = T.dvector("x")
    y = T.tanh(x) * 2
    text = theano.printing.debugprint(y, file="str")
    assert "tanh" in text and "x:f64[?]" in text
    out = io.StringIO()
    f = theano.function([x], y)
    theano.printing.debugprint(f, file=out)
    assert out.getvalue() == f.text() + "\n"
    target = tmp_path / "graph.dot"
    theano.printing.pydotprint(f, outfile=str(target), print_output_file=False)
    assert target.read_text().startswith("digraph")
    png = tmp_path / "graph.png"
    try:
        theano.printing.pydotprint(y, outfile=str(png), format="png", print_output_file=False)
    except sn.viz.render.RenderUnavailable:  # no Graphviz here: the DOT file is what we check
        return
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_debugprint_pp_and_pydotprint_take_an_apply_and_a_function_graph():
    """Theano's printers take "a Variable, an Apply, a Function or a FunctionGraph":
    ``debugprint(f.maker.fgraph)`` and ``debugprint(y.owner)`` were TypeErrors."""
    x = T.dmatrix("x")
    y = T.tanh(x).sum()
    f = theano.function([x], y)
    assert theano.printing.debugprint(f.maker.fgraph, file="str") == f.text()
    formula = "sum[axis=(0, 1), keepdims=False](tanh(x))"
    assert theano.printing.pp(f.maker.fgraph) == theano.printing.pp(f) == formula
    assert theano.printing.pp(y.owner) == formula
    by_node = theano.printing.debugprint(y.owner, file="str")
    assert by_node == theano.printing.debugprint(y, file="str")
    assert "tanh x" in by_node and "x:f64[?,?]" in by_node
    dot = theano.printing.pydotprint(y.owner, format="dot", return_image=True).decode()
    assert dot.startswith("digraph") and '"tanh#0" -> "sum#0"' in dot
    fgraph_dot = theano.printing.pydotprint(f.maker.fgraph, format="dot", return_image=True)
    assert fgraph_dot.decode().startswith("digraph")
    for printer, name in [(theano.printing.pp, "pp"), (theano.printing.debugprint, "debugprint")]:
        with pytest.raises(sn.ArgumentError) as info:
            printer(42)
        message = str(info.value)
        assert message.startswith(f"{name}: expected a variable, a list of variables, an Apply")
        assert "not 42" in message and "test_function.py" in message


def test_pp_writes_theanos_infix_form_on_one_line():
    """``pp(x + y)`` is Theano's ``(x + y)``; it was symnb's multi-line text form."""
    x, y = T.dvector("x"), T.dvector("y")
    assert theano.printing.pp(x + y) == theano.pprint(x + y) == "(x + y)"
    assert theano.pp((x + y) * 2) == "((x + y) * 2)"
    assert theano.pp(-(x**2) - T.constant(-2.0) ** y) == "((-(x ** 2)) - ((-2.0) ** y))"
    assert theano.pp(T.tanh(T.dot(x, T.dmatrix("W")))) == "tanh((x @ W))"
    assert theano.pp(x[1:3].sum()) == "sum[axis=(0,), keepdims=False](x[1:3])"
    assert theano.pp([x * 2, T.exp(y)]) == "(x * 2)\nexp(y)"  # one line an output


def test_pydotprint_reads_a_format_in_any_case_and_refuses_one_graphviz_lacks(tmp_path):
    y = T.tanh(T.dvector("x"))
    dot = tmp_path / "graph.DOT"  # the format from the extension, in any case
    theano.printing.pydotprint(y, outfile=str(dot), print_output_file=False)
    assert dot.read_text().startswith("digraph")
    with pytest.raises(sn.ArgumentError) as info:  # not Graphviz's own TypeError
        theano.printing.pydotprint(y, outfile=str(tmp_path / "g.xyz"), print_output_file=False)
    message = str(info.value)
    assert "'xyz' (the extension of outfile=" in message and "png, pov" in message
    assert "test_function.py" in message and not (tmp_path / "g.xyz").exists()
    with pytest.raises(sn.ArgumentError, match="format 'jpgg' .format='jpgg'.: Graphviz"):
        theano.printing.pydotprint(y, format="jpgg", return_image=True)
    png = tmp_path / "graph.PNG"
    try:
        theano.printing.pydotprint(y, outfile=str(png), print_output_file=False)
    except sn.viz.render.RenderUnavailable:  # no Graphviz here
        return
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_a_format_this_graphviz_lacks_is_render_failed_naming_it(monkeypatch):
    pygraphviz = pytest.importorskip("pygraphviz")

    def lacking(self, path=None, format=None, prog=None, args=""):  # noqa: A002
        raise TypeError("'int' object is not subscriptable")  # what a missing format gives

    monkeypatch.setattr(pygraphviz.AGraph, "draw", lacking)
    with pytest.raises(sn.viz.render.RenderFailed, match="cannot draw the graph as 'bmp'"):
        theano.printing.pydotprint(T.dvector("x"), format="BMP", return_image=True)


def test_shape_mistakes_get_symnb_errors_at_the_users_line():
    x = theano.shared(np.zeros((3, 4)), name="x")
    w = theano.shared(np.zeros((5, 2)), name="w")
    f = theano.function([], T.dot(x, w))
    with pytest.raises(sn.SymnbError) as info:  # unknown dims: found when it runs
        f()
    message = str(info.value)  # both operands, the clash, and where the product was built
    assert "'x'" in message and "'w'" in message and "5 is different from 4" in message
    assert "test_function.py" in message
    m = T.TensorType("float64", (False, False), shape=(3, 4))("m")
    with pytest.raises(sn.ShapeError, match=r"test_function\.py") as info:
        T.dot(m, T.TensorType("float64", (False, False), shape=(5, 2))("k"))
    assert "'m'" in str(info.value)


def test_misused_inputs_are_refused_at_the_users_line():
    with pytest.raises(TypeError, match=r"not a symbolic variable[\s\S]*test_function\.py"):
        theano.function([np.zeros(3)], T.constant(1.0))
    x = T.dvector("x")
    f = theano.function([x], x * 2)
    with pytest.raises(sn.InputError, match="takes 1 input, got 2"):
        f([1.0], [2.0])
    with pytest.raises(sn.ShapeError, match="scalar"):
        T.grad(x * 2, x)  # the cost of T.grad is a scalar, as in Theano


def test_the_optimised_graph_is_reachable_as_maker_fgraph():
    x = T.dmatrix("x")
    f = theano.function([x], T.exp(x) * 2 + 1, mode="FAST_RUN")
    nodes = f.maker.fgraph.toposort()
    assert [node.op.op_name() for node in nodes] == ["composite"]  # fused into one kernel
    assert f.maker.fgraph.inputs == [x] and len(f.maker.fgraph.outputs) == 1
    assert f.maker.inputs[0].variable is x


@pytest.mark.parametrize("mode", ["FAST_COMPILE", "FAST_RUN"])
def test_a_tuple_of_outputs_returns_a_list_as_in_theano(mode):
    """Theano returned a list for any sequence of outputs; ``sn.function`` keeps the
    container it is given."""
    y = T.dvector("y")
    got = theano.function([y], (y * 2, y.sum()), mode=mode)(np.ones(2))
    assert type(got) is list and len(got) == 2
    np.testing.assert_array_equal(got[0], [2.0, 2.0])
    assert got[1] == 2.0
    one = theano.function([y], (y.sum(),), mode=mode)(np.ones(2))
    assert type(one) is list and one == [2.0]
    assert type(sn.function([y], (y * 2, y.sum()))(np.ones(2))) is tuple


def test_theanos_gpu_test_script_out_and_trust_input():
    """Theano's "Testing Theano with GPU" script (a smaller vector) runs as written and finds
    an Elemwise node; ``theano.Out`` wraps outputs (results stay the caller's own arrays);
    ``f.trust_input`` reads False before it is set."""
    from symnb.compat.theano import config, function, shared, tensor

    rng = np.random.RandomState(22)
    x = shared(np.asarray(rng.rand(30), config.floatX))
    f = function([], tensor.exp(x))
    r = f()
    np.testing.assert_allclose(r, np.exp(x.get_value()))
    assert np.any(
        [
            isinstance(n.op, tensor.Elemwise) and ("Gpu" not in type(n.op).__name__)
            for n in f.maker.fgraph.toposort()
        ]
    )
    fused = theano.function([], T.exp(x) * 2 + 1, mode="FAST_RUN")
    assert all(isinstance(n.op, T.Elemwise) for n in fused.maker.fgraph.toposort())
    assert not isinstance(T.sum(x).owner.op, T.Elemwise)
    y = T.dvector("y")
    for borrow in (False, True):
        g = theano.function([y], theano.Out(y * 2, borrow=borrow))
        first = g(np.ones(2))
        np.testing.assert_array_equal(g(np.zeros(2)), [0.0, 0.0])
        np.testing.assert_array_equal(first, [2.0, 2.0])  # not overwritten by the next call
    both = theano.function([y], [theano.compile.io.Out(y + 1), y.sum()])(np.ones(2))
    np.testing.assert_array_equal(both[0], [2.0, 2.0])
    assert both[1] == 2.0
    keyed = theano.function([y], {"s": theano.compile.Out(y.sum(), borrow=True)})
    assert keyed(np.ones(3)) == {"s": 3.0}
    with pytest.raises(TypeError, match=r"Out: 3 is not a symbolic variable[\s\S]*test_function"):
        theano.Out(3)
    assert f.trust_input is False
    f.trust_input = True  # accepted; the arguments are checked all the same
    with pytest.raises(sn.InputError, match="takes 0 inputs, got 1"):
        f(np.ones(2))


def test_dict_outputs_return_a_dict_with_the_same_keys():
    """Theano 0.9's dict outputs: the keys come back, in the order given; every input is
    used through the dict's values (the check read the keys before)."""
    x = T.dvector("x")
    w = theano.shared(np.float64(1.0), name="w")
    f = theano.function([x], {"twice": x * 2, "plus_w": x + w}, updates=[(w, w + 1)])
    got = f(np.array([1.0, 2.0]))
    assert list(got) == ["twice", "plus_w"]
    np.testing.assert_array_equal(got["twice"], [2.0, 4.0])
    np.testing.assert_array_equal(got["plus_w"], [2.0, 3.0])
    np.testing.assert_array_equal(f(x=np.array([0.0]))["plus_w"], [2.0])  # keywords too
    assert f.maker.output_keys == f.output_keys == ["twice", "plus_w"]
    copy = f.copy(delete_updates=True)
    np.testing.assert_array_equal(copy(np.array([0.0]))["plus_w"], [3.0])
    assert list(copy(np.array([0.0]))) == ["twice", "plus_w"] and w.get_value() == 3.0
    assert theano.function([x], {"one": x.sum()})(np.ones(3)) == {"one": 3.0}
    with pytest.raises(theano.compile.UnusedInputError, match=r"input 0 'x'"):
        theano.function([x], {"w": w * 2})


def test_a_disconnected_input_hint_names_the_theano_argument_at_the_users_line():
    """T.grad's argument is ``disconnected_inputs`` (sn.grad's ``disconnected=`` is a
    TypeError there): the hint names the one the user can pass, and the following call works."""
    m, v = T.dmatrix("m"), T.dvector("v")
    with pytest.raises(sn.DisconnectedInputError, match="T.grad: .*'v'") as info:
        T.grad(T.sum(m), v)
    assert "pass disconnected_inputs='ignore' or 'warn'" in str(info.value)
    assert "test_function.py" in str(info.value)  # the user's line
    zeros = T.grad(T.sum(m), v, disconnected_inputs="ignore")
    np.testing.assert_array_equal(theano.function([v], zeros)(np.ones(2)), [0.0, 0.0])
    with pytest.warns(sn.DisconnectedInputWarning, match="disconnected_inputs='ignore'") as got:
        T.grad(T.sum(m), v, disconnected_inputs="warn")
    assert got[0].filename == __file__
    text = str(got[0].message)  # the warning is in Theano's names too, as the error is
    assert "theano.gradient.disconnected_grad" in text and "sn." not in text
    with pytest.raises(sn.DisconnectedInputError, match="T.jacobian: .*disconnected_inputs="):
        T.jacobian(T.sum(m, axis=0), v)
    with pytest.raises(sn.DisconnectedInputError, match="T.Rop: .*disconnected_outputs="):
        T.Rop(m, v, v)  # an output with no tangent (Theano's Rop gives m * 2 a zero one)
    with pytest.raises(sn.DisconnectedInputError, match=r"sn.grad: .*disconnected='ignore'"):
        sn.grad(sn.sum(m), v)  # symnb's own words, outside the layer


def test_nanguardmode_imports_from_theanos_path_and_stops_at_nan_or_inf():
    from symnb.compat.theano.compile.nanguardmode import NanGuardMode
    from symnb.compile.debugmode import NanGuardError

    x = T.dvector("x")
    mode = NanGuardMode(nan_is_error=True, inf_is_error=True, big_is_error=True)
    f = theano.function([x], T.log(x), mode=mode)
    np.testing.assert_allclose(f(np.array([1.0, np.e])), [0.0, 1.0])
    with pytest.raises(NanGuardError, match="1 Inf at node log"):
        f(np.array([0.0, 1.0]))
    assert theano.compile.get_mode("NanGuardMode").options()["mode"] == "nanguard"
    with pytest.raises(NotImplementedError, match="inf_is_error=False") as info:
        NanGuardMode(inf_is_error=False)
    assert "test_function.py" in str(info.value)


def test_nanguardmode_runs_only_the_branch_an_ifelse_takes():
    """Theano's NanGuardMode ran on the lazy VM: ``ifelse(x > 0, log(x), 0)`` at -1 never
    computed ``log(-1)``, so it raised nothing (symnb raised at the log)."""
    from symnb.compat.theano.compile.nanguardmode import NanGuardMode
    from symnb.compat.theano.ifelse import ifelse
    from symnb.compile.debugmode import NanGuardError

    x = T.dscalar("x")
    mode = NanGuardMode(nan_is_error=True, inf_is_error=True, big_is_error=True)
    f = theano.function([x], ifelse(T.gt(x, 0), T.log(x), T.constant(0.0)), mode=mode)
    assert f(-1.0) == 0.0 and np.isclose(f(np.e), 1.0)
    g = theano.function([x], ifelse(T.gt(x, 0), T.log(x), T.log(x - 1)), mode=mode)
    with pytest.raises(NanGuardError, match="log is the first step"):  # the side taken
        g(-1.0)


def test_compile_submodules_are_attributes_after_a_plain_import():
    """``theano.compile.nanguardmode.NanGuardMode`` after ``import theano`` alone, as course
    code writes ``mode=theano.compile.nanguardmode.NanGuardMode(...)`` (a fresh process: in
    this one another test imported the module already)."""
    code = (
        "import symnb.compat.theano as theano\n"
        "for name in ('nanguardmode', 'debugmode', 'io', 'sharedvalue', 'ops'):\n"
        "    getattr(theano.compile, name)\n"
        "print(theano.compile.nanguardmode.NanGuardMode is theano.compile.NanGuardMode)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True"


def test_shared_weights_made_inside_an_expression_are_not_named_after_its_result():
    """``h = T.tanh(T.dot(x, theano.shared(...)))``: the (4, 3) weights are an unnamed
    variable in the product's error, not 'h' (the tanh output); ``theano.shared(...)`` that is
    the whole value of an assignment, over several lines, is named after its target."""
    x = T.matrix("x")
    h = T.tanh(T.dot(x, theano.shared(np.ones((4, 3)))))
    f = theano.function([x], h)
    with pytest.raises(Exception) as info:
        f(np.ones((2, 5)))
    message = str(info.value)
    assert "matmul('x' (float64(?, ?)), an unnamed variable (float64(?, ?)))" in message
    assert "'h'" not in message
    W = theano.shared(
        value=np.zeros(3),
        name=None,
        borrow=True,
    )
    assert W.assigned_name() == "W" and W.describe() == "'W' (float64(?,))"
