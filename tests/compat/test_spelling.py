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


SCAN_AND_FUNCTION = """
import numpy as np
import symnb.compat.theano as theano
import symnb.compat.theano.tensor as T
theano.config.floatX = "float32"
xs, h0 = T.matrix("xs"), T.vector("h0")
x, index = T.matrix("x"), T.lscalar("index")
data = theano.shared(np.zeros((10, 3)), name="data")
W = theano.shared(np.zeros(3, dtype="float32"), name="W")
{body}
"""
#: Theano code whose errors the scan builder's checks and the givens/updates fit raised
#: already located, so they skipped the spelling: "sn.scan ... sn.cast", "sn.shared(...)"
LOCATED_CASES = [
    (
        "theano.scan(lambda x_t, h: (x_t + h, x_t), sequences=xs, outputs_info=h0)",
        sn.ShapeError,
        ["theano.scan: fn returned 2 output(s)"],
    ),
    (
        "theano.scan(lambda x_t, a: a + x_t.sum(), sequences=xs, outputs_info=T.constant(0))",
        sn.ShapeError,
        ["theano.scan: output 0", "with T.cast"],
    ),
    (
        "theano.scan(lambda x_t: {W: W + T.cast(x_t, 'float64')}, sequences=xs)",
        sn.ShapeError,
        ["theano.scan: 'W'", "with T.cast"],
    ),
    (
        "theano.function([index], x.sum(), givens={x: data[index * 2 : (index + 1) * 2]})",
        sn.DTypeError,
        ["givens: 'x'", "theano.shared(np.asarray(value, 'float32'))"],
    ),
]


@pytest.mark.parametrize("body, error, theano_words", LOCATED_CASES)
def test_located_scan_and_givens_errors_take_theanos_names(body, error, theano_words):
    with pytest.raises(error) as info:
        exec(compile(SCAN_AND_FUNCTION.format(body=body), "course.py", "exec"), {})
    message = str(info.value)
    assert all(word in message for word in theano_words), message
    assert "sn." not in message and "course.py, line 10" in message
    assert info.value.location is not None and info.value.location.lineno == 10


def test_the_same_scan_error_in_native_code_keeps_symnbs_names():
    body = "sn.scan(lambda x_t, h: (x_t + h, x_t), sequences=sn.matrix('xs'), outputs_info=x)"
    with pytest.raises(sn.ShapeError) as info:
        exec(compile(NATIVE_CODE.format(body=body), "script.py", "exec"), {})
    assert str(info.value).startswith("sn.scan: fn returned 2 output(s)")
    assert "script.py, line 4" in str(info.value)


def test_the_quoted_line_of_the_users_program_keeps_the_names_it_was_written_with(tmp_path):
    """Code that mixes both APIs: the message speaks Theano's names, the quoted source line is
    the user's own text (it said ``T.any(x > 0)`` for ``sn.any`` written there)."""
    course = tmp_path / "course.py"
    course.write_text(
        THEANO_CODE.format(body="import symnb as sn\nifelse(sn.any(x > 0) * x, x, x)")
    )
    with pytest.raises(sn.ShapeError) as info:
        exec(compile(course.read_text(), str(course), "exec"), {})
    message = str(info.value)
    said, _, quoted = message.partition("course.py, line 6: ")
    assert "T.switch(cond, a, b)" in said and "sn." not in said, message
    assert quoted == "ifelse(sn.any(x > 0) * x, x, x)", message
