"""What a ``%%symcompile`` cell compiles when ``--outputs`` and its last expression disagree,
and when its last expression holds no symbolic variable (run without IPython)."""

import warnings

import numpy as np
import pytest

from symnb.errors import GraphWarning
from symnb.magics.cell import CellError, parse_line, symcompile

BODY = "x = tensor('x', shape=(3,))\ny = x * 2\n"


def _compile(line: str, cell: str):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        f = symcompile(parse_line(f"f --backend py --quiet {line}"), cell, None, {})
    return f, [w for w in caught if issubclass(w.category, GraphWarning)]


def test_outputs_named_by_the_option_over_another_last_expression_are_said():
    """``--outputs y`` on a cell ending in ``x + 1`` compiled y and dropped ``x + 1`` without
    a word: a GraphWarning names both, at the last expression's line."""
    f, said = _compile("--outputs y", BODY + "x + 1")
    np.testing.assert_array_equal(f(np.ones(3)), [2.0, 2.0, 2.0])
    assert len(said) == 1, [str(w.message) for w in said]
    message = str(said[0].message)
    assert "the cell's last expression (" in message and "is not compiled" in message
    assert "--outputs y names the outputs instead" in message
    assert said[0].lineno == 4  # x + 1 (line 1 is the %%symcompile line)
    for same in ("y", "(y)", "[y]"):  # the expression is what the option names: no word
        assert _compile("--outputs y", BODY + same)[1] == []
    assert _compile("--outputs y,x", BODY + "y, x")[1] == []
    assert _compile("--outputs y", BODY + "print('done')")[1] == []  # a statement's None


@pytest.mark.parametrize(
    ("line", "cell", "says"),
    [
        ("", BODY + "2", "the cell's last expression (2) holds no symbolic variable"),
        ("", BODY + "x.ndim, 3.0", "the cell's last expression ((1, 3.0)) holds no symbolic"),
        ("--outputs n", BODY + "n = 2", "--outputs n (2) holds no symbolic variable"),
    ],
)
def test_outputs_with_no_symbolic_variable_are_refused(line, cell, says):
    """A cell ending in ``2`` (or ``x.ndim``) compiled a function of no inputs returning
    that constant: a CellError says so. A constant beside a variable, or sn.constant, is
    still compiled."""
    with pytest.raises(CellError) as info:
        _compile(line, cell)
    assert says in str(info.value), str(info.value)
    assert "sn.constant(value)" in str(info.value)
    f, _ = _compile("", BODY + "y, 2.0")
    assert [a.tolist() for a in f(np.ones(3))] == [[2.0, 2.0, 2.0], 2.0]
    assert _compile("", "sn.constant(2)")[0]().tolist() == 2
