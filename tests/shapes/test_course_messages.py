"""Messages a course's students see (issue 34): each test reads the message itself."""

import textwrap
import warnings

import numpy as np

import symnb as sn
from symnb.cli import main

TIME_MAJOR = textwrap.dedent(
    """\
    import numpy as np
    import symnb as sn

    h = sn.tensor("h", shape=("T", "batch", 16))
    w = sn.shared(np.ones(16), name="w")
    scores = h @ w
    attention = sn.softmax(scores, axis=0)
    context = sn.sum(attention[:, :, None] * h, axis=0)
    """
)


def _warnings_of(build) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        build()
    return [str(w.message) for w in caught if issubclass(w.category, sn.ShapeWarning)]


def test_time_major_attention_over_time_does_not_warn(tmp_path, capsys):
    """("T", "batch", ...): the explicit batch name beats the role heuristic that took T."""
    h = sn.tensor("h", shape=("T", "batch", 16))
    w = sn.shared(np.ones(16), name="w")
    assert _warnings_of(lambda: sn.softmax(h @ w, axis=0)) == []
    program = tmp_path / "attention.py"
    program.write_text(TIME_MAJOR)
    assert main(["check", "--strict", str(program)]) == 0
    assert "0 errors, 0 warnings" in capsys.readouterr().out


def test_softmax_over_the_batch_still_warns():
    h = sn.tensor("h", shape=("T", "batch", 16))
    w = sn.shared(np.ones(16), name="w")
    (message,) = _warnings_of(lambda: sn.softmax(h @ w, axis=1))
    assert "over axis 1" in message and "named 'batch'" in message
    x = sn.tensor("x", shape=("n", 10))  # no batch name: the role heuristic still speaks
    (message,) = _warnings_of(lambda: sn.softmax(x, axis=0))
    assert "which holds the examples ('n', axis 0 of the data input 'x'" in message
