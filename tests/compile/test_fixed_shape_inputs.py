"""Call-time checks of inputs whose dims are all fixed (0-d included), on every backend: an
array of the right dtype and the wrong shape is refused with an error naming the input, never
computed into a wrong-shaped result. (The C runner and the Python fast path both check these
shapes themselves, without the slow path's help; each must compare every dim.)"""

from __future__ import annotations

import numpy as np
import pytest

import symnb as sn
from symnb.errors import InputError
from tests.helpers import named_backends, needs_c

DECLARED = [(3,), (2, 3), (), (1,), (2, 1, 4)]
WRONG = {
    (3,): [(5,), (1,), (0,), (), (3, 1), (1, 3)],
    (2, 3): [(3, 2), (2, 4), (2,), (2, 3, 1), (6,), ()],
    (): [(1,), (2,), (1, 1)],
    (1,): [(2,), (), (1, 1)],
    (2, 1, 4): [(2, 2, 4), (2, 1, 5), (1, 1, 4), (2, 4), (2, 1, 4, 1)],
}


@pytest.mark.parametrize("declared", DECLARED, ids=str)
@pytest.mark.parametrize("dtype", ["float64", "float32", "int32"])
def test_wrong_shapes_of_the_right_dtype_are_refused(declared, dtype, backend):
    x = sn.tensor("weights", shape=declared, dtype=dtype)
    f = sn.function([x], x * 2 + 1, backend=backend)
    good = np.ones(declared, dtype)
    np.testing.assert_array_equal(f(good), good * 2 + 1)
    for shape in WRONG[declared]:
        for _ in range(2):  # a second call must not take a fast path the first one set up
            with pytest.raises(InputError, match="'weights'") as info:
                f(np.ones(shape, dtype))
            message = str(info.value)
            assert f"expects shape {declared}" in message, message
            assert f"got an array of shape {shape}" in message, message


@pytest.mark.parametrize("backend_name", named_backends("py", "c"))
def test_two_fixed_inputs_checked_independently(backend_name):
    a = sn.tensor("a", shape=(3,), dtype="float64")
    b = sn.tensor("b", shape=(3,), dtype="float64")
    f = sn.function([a, b], a - b, backend=backend_name)
    np.testing.assert_array_equal(f(np.arange(3.0), np.ones(3)), np.arange(3.0) - 1)
    with pytest.raises(InputError, match="'b'"):
        f(np.arange(3.0), np.ones(4))
    with pytest.raises(InputError, match="'a'"):
        f(np.ones(1), np.ones(3))  # would broadcast, but a is declared (3,)


def test_numpy_scalars_fit_only_0d_inputs(backend):
    s = sn.tensor("s", shape=(), dtype="float64")
    v = sn.tensor("v", shape=(1,), dtype="float64")
    assert sn.function([s], s + 1, backend=backend)(np.float64(2.0)) == 3.0
    with pytest.raises(InputError, match="'v'"):
        sn.function([v], v + 1, backend=backend)(np.float64(2.0))


@needs_c
def test_results_of_refused_calls_never_escape_through_the_runner():
    x = sn.tensor("x", shape=(3,), dtype="float64")
    f = sn.function([x], sn.exp(x), backend="c")
    f(np.zeros(3))
    with pytest.raises(InputError):
        f(np.zeros(5))
    if f.runner is not None:
        assert f.runner.declined >= 1 and f.runner.runs >= 1
