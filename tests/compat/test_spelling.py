"""Messages name Theano's functions where the user's code is Theano code, symnb's elsewhere."""

import pytest

import symnb as sn
import symnb.compat.theano.tensor as T

THEANO_CODE = """
import symnb.compat.theano.tensor as T
from symnb.compat.theano.ifelse import ifelse
x = T.dvector("x")
{body}
"""
NATIVE_CODE = """
import symnb as sn
x = sn.vector("x")
{body}
"""
CASES = [
    ("if x > 0:\n    pass", TypeError, ["ifelse(x > 0", "T.switch(cond, a, b)"]),
    ("ifelse(x > 0, x, x)", sn.ShapeError, ["T.switch(cond, a, b)", "T.any(cond)"]),
]


@pytest.mark.parametrize("body, error, theano_words", CASES)
def test_messages_take_the_names_of_the_api_the_code_uses(body, error, theano_words):
    with pytest.raises(error) as theano_error:
        exec(compile(THEANO_CODE.format(body=body), "course.py", "exec"), {})
    message = str(theano_error.value)
    assert all(word in message for word in theano_words), message
    assert "sn." not in message and "course.py, line 5" in message
    if body.startswith("ifelse"):
        body = "sn.ifelse(x > 0, x, x)"
    with pytest.raises(error) as native_error:
        exec(compile(NATIVE_CODE.format(body=body), "script.py", "exec"), {})
    assert "sn.where(cond, a, b)" in str(native_error.value)
    assert "T." not in str(native_error.value)


def test_a_module_holding_any_of_the_layer_counts_as_theano_code():
    from symnb.compat.theano.spelling import uses_theano

    assert uses_theano({"T": T}) and uses_theano({"function": sn.compat.theano.function})
    assert not uses_theano({"sn": sn, "np": pytest, "n": 3})
