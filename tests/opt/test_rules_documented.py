"""docs/rewrites.md's table lists every rule ``sn.function`` can run, and the differences it
documents for "fast" and "stable" are what the rules do."""

import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import symnb as sn
from symnb.opt.registry import PHASES, RULES

DOC = Path(__file__).resolve().parents[2] / "docs" / "rewrites.md"


def test_every_registered_rule_is_in_the_rules_table():
    rows = set(re.findall(r"^\| `(\w+)` \|", DOC.read_text(), flags=re.MULTILINE))
    missing = sorted(name for name, rule in RULES.items() if rule.default and name not in rows)
    assert not missing, f"rules missing from docs/rewrites.md's table: {missing}"
    unknown = sorted(rows - set(RULES) - set(PHASES))  # (the phases' table has rows too)
    assert not unknown, f"docs/rewrites.md's table names rules that do not exist: {unknown}"


def test_fast_drops_an_operand_that_would_raise_and_stable_does_not():
    """Documented under '"fast" and "stable" outside the ops' domain'."""
    x = sn.vector("x")
    value = np.arange(3.0)
    assert sn.function([x], x[5] - x[5], backend="py")(value) == 0.0
    for mode in ("stable", "none"):
        f = sn.function([x], x[5] - x[5], backend="py", optimize=mode)
        with pytest.raises(Exception, match="out of bounds|index"):
            f(value)
    assert "x[5] - x[5]" in DOC.read_text()


@pytest.mark.parametrize("mode", ["fast", "stable"])
def test_softmax_of_formula_on_a_row_holding_inf_is_the_ops_value(mode):
    """Documented: the formula gives [0, nan], softmax [nan, nan]; finite rows are exact."""
    X = sn.matrix("X")
    e = sn.exp(X)
    out = e / sn.sum(e, axis=1, keepdims=True)
    rows = np.array([[3.0, np.inf], [1000.0, 0.0]])
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        f = sn.function([X], out, backend="py", optimize=mode)
        written = sn.function([X], out, backend="py", optimize="none")(rows)
        got = f(rows)
    assert "softmax_of_formula" in f.rewrites.counts()
    np.testing.assert_array_equal(written[0], [0.0, np.nan])
    np.testing.assert_array_equal(got[0], [np.nan, np.nan])
    np.testing.assert_array_equal(got[1], [1.0, 0.0])
    assert "[[3, inf]]" in DOC.read_text()
