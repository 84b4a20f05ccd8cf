"""``optimize="stable"`` keeps IEEE semantics (issue #35): the rewrites that assume values in
the ops' domain (``x - x -> 0``, ``exp(log(x)) -> x``, ...) are left out, so NaN, infinities,
negative logs and signed zeros give what NumPy gives; ``"fast"`` keeps Theano's choice."""

import warnings

import numpy as np
import pytest

import symnb as sn
from symnb.opt.registry import RULES
from symnb.opt.select import plan
from tests.helpers import check

SPECIALS = np.array([np.nan, np.inf, -np.inf, -2.0, -0.0, 0.0, 1e308, 3.0])
GRAPHS = {
    "x - x": (lambda x: x - x, lambda a: a - a),
    "exp(log(x))": (lambda x: sn.exp(sn.log(x)), lambda a: np.exp(np.log(a))),
    "log(exp(x))": (lambda x: sn.log(sn.exp(x)), lambda a: np.log(np.exp(a))),
    "x + 0": (lambda x: x + 0, lambda a: a + 0),
    "collected": (lambda x: 1e308 * x - 1e308 * (x * 1), lambda a: 1e308 * a - 1e308 * (a * 1)),
}


def reference(fn, a):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return fn(a)


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_stable_mode_gives_numpy_results_on_special_values(name, backend):
    build, numpy_fn = GRAPHS[name]
    x = sn.vector("x")
    got = sn.function([x], build(x), backend=backend, optimize="stable")(SPECIALS)
    want = reference(numpy_fn, SPECIALS)
    check(got, want)
    numbers = ~np.isnan(want)  # a NaN's sign means nothing; a zero's does
    assert np.array_equal(np.signbit(got[numbers]), np.signbit(want[numbers])), (got, want)


def test_fast_mode_keeps_theanos_choice_and_says_so():
    x = sn.vector("x")
    f = sn.function([x], [x - x, sn.exp(sn.log(x))], backend="py", optimize="fast")
    zero, same = f(SPECIALS)
    np.testing.assert_array_equal(zero, np.zeros_like(SPECIALS))
    np.testing.assert_array_equal(same, SPECIALS)
    fired = {r.rule for r in f.rewrites}
    assert {"sub_self", "exp_of_log"} <= fired, fired


@pytest.mark.parametrize("optimize", ["stable", {"include": ["stable"]}])
def test_stable_selects_no_rule_that_changes_ieee_results(optimize):
    chosen = {rule.name for _, rules in plan(optimize) for rule in rules}
    not_ieee = {name for name, rule in RULES.items() if not rule.ieee}
    assert {"sub_self", "exp_of_log", "log_of_exp", "add_zero"} <= not_ieee
    assert chosen and not chosen & not_ieee
    assert not_ieee <= {r.name for _, rules in plan("fast") for r in rules}


def test_a_rule_named_next_to_stable_runs_though_it_changes_ieee_results():
    """docs/rewrites.md: name such a rule in include to have it anyway (exclude still wins)."""
    not_ieee = {name for name, rule in RULES.items() if not rule.ieee}
    chosen = {r.name for _, rules in plan({"include": ["stable", "sub_self"]}) for r in rules}
    assert chosen & not_ieee == {"sub_self"}
    both = {"include": ["stable", "sub_self"], "exclude": ["sub_self"]}
    assert not {r.name for _, rules in plan(both) for r in rules} & not_ieee
    x = sn.vector("x")
    f = sn.function([x], [x - x, x + 0], backend="py", optimize={"include": ["stable", "sub_self"]})
    zero, same = f(SPECIALS)
    np.testing.assert_array_equal(zero, np.zeros_like(SPECIALS))  # NaN and inf too
    assert np.signbit(same[SPECIALS == 0]).tolist() == [False, False]  # add_zero did not run
    assert f.rewrites.counts() == {"sub_self": 1}


def test_rules_reading_softmax_as_exp_log_softmax_say_they_change_ieee_results():
    """On a row holding +inf softmax is NaN throughout and exp(log_softmax) is 0 at the
    finite logits: the rules trading one for the other are ieee=False (docs/rewrites.md)."""
    assert not RULES["softmax_from_log_softmax"].ieee
    assert not RULES["softmax_crossentropy_grad_fused"].ieee
    assert RULES["softmax_crossentropy_fused"].ieee  # its loss is log_softmax's there too
    x = sn.matrix("x")
    row = np.array([[1.0, np.inf, 2.0]])
    with np.errstate(all="ignore"):
        fast = sn.function([x], [sn.softmax(x), sn.log_softmax(x)], backend="py")
        stable = sn.function([x], [sn.softmax(x), sn.log_softmax(x)], optimize="stable")
        np.testing.assert_array_equal(fast(row)[0], [[0.0, np.nan, 0.0]])
        np.testing.assert_array_equal(stable(row)[0], [[np.nan] * 3])
    assert "softmax_from_log_softmax" in fast.rewrites.counts()
