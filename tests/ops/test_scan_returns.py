"""What a scan step may return (Theano's rule): outputs, updates as a dict or as a list of
``(shared, new value)`` pairs, and an ``sn.until``, alone or together; each form against a
NumPy loop on the host backends. A list of pairs is never read as outputs (the shared
variables would silently never change), and a return value that fits no form is refused."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest

import symnb as sn
from tests.helpers import available_backends

HOST = [b for b in available_backends() if b in ("py", "c")]
XS = np.array([0.5, -1.0, 2.0, 0.25])


def _pairs(s, w):
    return [(s, 2 * s), (w, w + 1)]


# each form: step(x_t, s, w) -> what fn returns; whether it has an output; whether it stops
FORMS = {
    "pairs alone": (lambda x, s, w: _pairs(s, w), False, False),
    "tuple of pairs": (lambda x, s, w: tuple(_pairs(s, w)), False, False),
    "dict alone": (lambda x, s, w: dict(_pairs(s, w)), False, False),
    "OrderedDict alone": (lambda x, s, w: OrderedDict(_pairs(s, w)), False, False),
    "(output, pairs)": (lambda x, s, w: (x * w, _pairs(s, w)), True, False),
    "([output], pairs)": (lambda x, s, w: ([x * w], _pairs(s, w)), True, False),
    "(output, dict)": (lambda x, s, w: (x * w, dict(_pairs(s, w))), True, False),
    "(output, until)": (lambda x, s, w: (x * w, sn.until(x > 1.5)), True, True),
    "(pairs, until)": (lambda x, s, w: (_pairs(s, w), sn.until(x > 1.5)), False, True),
    "(output, pairs, until)": (
        lambda x, s, w: (x * w, _pairs(s, w), sn.until(x > 1.5)),
        True,
        True,
    ),
}


def _numpy_loop(has_updates: bool, stops: bool):
    """The outputs x_t * w and the final s, w of the loop, as the step defines them."""
    s, w, outs = 1.5, 1.0, []
    for x in XS:
        outs.append(x * w)
        if has_updates:
            s, w = 2 * s, w + 1
        if stops and x > 1.5:
            break
    return np.array(outs), s, w


@pytest.mark.parametrize("backend", HOST)
@pytest.mark.parametrize("form", list(FORMS))
def test_each_return_form_outputs_and_updates_as_numpy(form, backend):
    step, has_output, stops = FORMS[form]
    s = sn.shared(np.float64(1.5), name="s")
    w = sn.shared(np.float64(1.0), name="w")
    x = sn.tensor("x", shape=(4,), dtype="float64")
    out, updates = sn.scan(lambda x_t: step(x_t, s, w), sequences=x)
    has_updates = form != "(output, until)"
    assert list(updates) == ([s, w] if has_updates else [])
    want_out, want_s, want_w = _numpy_loop(has_updates, stops)
    f = sn.function([x], out if has_output else [], updates=updates, backend=backend)
    got = f(XS)
    if has_output:
        np.testing.assert_allclose(got, want_out)
    else:
        assert got == []
    assert (s.get_value(), w.get_value()) == (want_s, want_w)


@pytest.mark.parametrize("backend", HOST)
def test_outputs_info_with_pairs_after_the_outputs(backend):
    """Theano's test_shared_arguments_with_updates: ([outputs], [(W, new W)]) with states."""
    w = sn.shared(np.float64(1.0), name="w")
    h0 = sn.tensor("h0", shape=(), dtype="float64")
    x = sn.tensor("x", shape=(3,), dtype="float64")
    out, updates = sn.scan(
        lambda x_t, h: ([h + x_t * w, x_t * w], [(w, w * 2)]),
        sequences=x,
        outputs_info=[h0, None],
    )
    f = sn.function([x, h0], out, updates=updates, backend=backend)
    hs, plain = f(np.array([1.0, 2.0, 3.0]), 0.5)
    np.testing.assert_allclose(plain, [1.0, 4.0, 12.0])
    np.testing.assert_allclose(hs, 0.5 + np.cumsum([1.0, 4.0, 12.0]))
    assert w.get_value() == 8.0


def test_theano_scan_takes_the_pairs_without_outputs_info():
    """Theano's scan returns None as the outputs of a step returning only updates (it gave
    [], as sn.scan does), with return_list too; so do its views."""
    import symnb.compat.theano as theano
    import symnb.compat.theano.tensor as T

    s = theano.shared(np.float64(1.5), "state")
    n = T.iscalar("n")
    out, upd = theano.scan(lambda: [(s, 2 * s)], n_steps=n)
    assert out is None and list(upd) == [s]
    assert theano.function([n], out, updates=upd)(3) == []
    assert s.get_value() == 12.0
    assert theano.scan(lambda: {s: s + 1}, n_steps=2, return_list=True)[0] is None
    x = T.dvector("x")
    assert theano.foldl(lambda v: {s: s + v}, x, [])[0] is None
    assert sn.scan(lambda: [(s, 2 * s)], n_steps=n)[0] == []


def _line_of(marker: str) -> int:
    return next(i for i, line in enumerate(open(__file__), 1) if line.rstrip().endswith(marker))


def test_pairs_whose_keys_are_not_shared_are_refused_at_the_users_line():
    a = sn.tensor("a", shape=(3,), dtype="float64")
    with pytest.raises(sn.GraphError) as info:
        sn.scan(lambda x_t: [(x_t, 2 * x_t)], sequences=a)  # @pairs
    msg = str(info.value)
    assert "read as updates" in msg and "'a[t+0]'" in msg and "not a shared variable" in msg
    loc = info.value.location
    assert loc.filename == __file__ and loc.lineno == _line_of("# @pairs")


def test_a_pair_among_the_outputs_is_refused_not_read_as_two_outputs():
    w = sn.shared(np.float64(1.0), name="w")
    a = sn.tensor("a", shape=(3,), dtype="float64")
    for step in (lambda x_t: [x_t * w, (w, w + 1)], lambda x_t: ([x_t * w, (w, w + 1)], {})):
        with pytest.raises(sn.GraphError, match=r"cannot read what fn returned.*'w' \(float64"):
            sn.scan(step, sequences=a)


def test_two_untils_are_refused_not_one_dropped():
    """The later until replaced the earlier: the loop stopped on sum(h) > 1 alone."""
    h0 = sn.tensor("h0", shape=(3,), dtype="float64")
    with pytest.raises(sn.GraphError) as info:
        sn.scan(  # @two untils
            lambda h: (h + 1, sn.until(sn.sum(h) > 30), sn.until(sn.sum(h) > 1)),
            outputs_info=h0,
            n_steps=20,
        )
    msg = str(info.value)
    assert "two sn.until conditions" in msg and "sn.until(a | b)" in msg, msg
    assert info.value.location.lineno == _line_of("# @two untils")


@pytest.mark.parametrize(
    "step",
    [
        lambda s: lambda h: (h + 1, {s: s + 1.0}, {s: s * 3.0}),
        lambda s: lambda h: (h + 1, [(s, s + 1.0), (s, s * 3.0)]),
        lambda s: lambda h: [(s, s + 1.0), (s, s * 3.0)],
        lambda s: lambda h: (h + 1, [(s, s + 1.0)], {s: s * 3.0}),
    ],
    ids=["two dicts", "pairs naming it twice", "pairs alone", "pairs then dict"],
)
def test_a_shared_variable_updated_twice_in_a_step_is_refused(step):
    """The later update silently replaced the earlier (S went 1 -> 3 -> 9, no S + 1)."""
    s = sn.shared(np.array(1.0), name="S")
    h0 = sn.tensor("h0", shape=(3,), dtype="float64")
    with pytest.raises(sn.GraphError) as info:
        sn.scan(step(s), outputs_info=h0, n_steps=2)  # @twice
    assert "'S' (float64()) is updated twice" in str(info.value), str(info.value)
    assert info.value.location.lineno == _line_of("# @twice")


@pytest.mark.parametrize(
    ("step", "what"),
    [
        (lambda s, w: lambda h: (sn.until(sn.sum(h) > 3), h + 1), "outputs after an sn.until"),
        (lambda s, w: lambda h: ({s: s + 1}, h + 1), "outputs after the updates"),
        (lambda s, w: lambda h: ([(s, s + 1)], h + 1), "outputs after the updates"),
        (
            lambda s, w: lambda h: (h + 1, sn.until(sn.sum(h) > 3), {s: s + 1}),
            "updates after an sn.until",
        ),
        (lambda s, w: lambda h: (h + 1, {s: s + 1}, {w: w + 1}), "two sets of updates"),
    ],
    ids=["(until, h)", "(dict, h)", "(pairs, h)", "(h, until, dict)", "(h, dict, dict)"],
)
def test_a_return_out_of_order_is_refused_naming_the_order(step, what):
    """Theano refused these; they were read as if in order (or merged)."""
    s, w = sn.shared(np.array(1.0), name="S"), sn.shared(np.array(1.0), name="W")
    h0 = sn.tensor("h0", shape=(3,), dtype="float64")
    with pytest.raises(sn.GraphError) as info:
        sn.scan(step(s, w), outputs_info=h0, n_steps=2)
    msg = str(info.value)
    assert what in msg and "then optionally an sn.until, in that order" in msg, msg
