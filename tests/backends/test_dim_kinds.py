"""Every reduction, on every backend, over tensors whose dims are fixed, unknown, named or a mix:
a lowering that compares a dim with an int (``(shape[-1] or 0) < SHORT_ROW`` once did, and
crashed on a name) fails here for the dim kind it forgets."""

import warnings

import numpy as np
import pytest
import scipy.special

import symnb as sn
from tests.helpers import check

# name -> (symbolic, reference); each takes (array, axis)
REDUCTIONS = {
    "sum": (sn.sum, np.sum),
    "mean": (sn.mean, np.mean),
    "prod": (sn.prod, np.prod),
    "max": (sn.max, np.max),
    "min": (sn.min, np.min),
    "var": (sn.var, np.var),
    "std": (sn.std, np.std),
    "all": (lambda x, axis: sn.all(x > 1.0, axis=axis), lambda a, axis: np.all(a > 1.0, axis)),
    "any": (lambda x, axis: sn.any(x > 1.5, axis=axis), lambda a, axis: np.any(a > 1.5, axis)),
    "logsumexp": (sn.logsumexp, scipy.special.logsumexp),
}
SINGLE_AXIS = {
    "argmax": (sn.argmax, np.argmax),
    "argmin": (sn.argmin, np.argmin),
    "cumsum": (sn.cumsum, np.cumsum),
    "softmax": (sn.softmax, scipy.special.softmax),
    "log_softmax": (sn.log_softmax, scipy.special.log_softmax),
}
SHAPE = (3, 4, 5)
DIMS = {
    "fixed": SHAPE,
    "unknown": (None, None, None),
    "named": ("a", "b", "c"),
    "mixed": (3, None, "c"),
    "named last two": (3, "b", "c"),
}
AXES = [None, -1, (-2, -1), 0, (0, 2), (0, 1)]


def _compare(op, reference, axis, dims, backend, rng):
    a = rng.uniform(0.5, 2.0, size=SHAPE)
    x = sn.tensor("x", shape=dims, dtype="float64")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "axis 0 holds the examples": on purpose here
        got = sn.function([x], op(x, axis=axis), backend=backend)(a)
        want = np.asarray(reference(a, axis=axis))
    check(got, want.astype(np.asarray(got).dtype) if want.dtype.kind == "f" else want)


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@pytest.mark.parametrize("kind", sorted(DIMS))
def test_reductions_over_every_kind_of_dim(name, kind, backend, rng):
    op, ref = REDUCTIONS[name]
    for axis in AXES:
        _compare(op, ref, axis, DIMS[kind], backend, rng)


@pytest.mark.parametrize("name", sorted(SINGLE_AXIS))
@pytest.mark.parametrize("kind", sorted(DIMS))
def test_one_axis_reductions_over_every_kind_of_dim(name, kind, backend, rng):
    op, ref = SINGLE_AXIS[name]
    for axis in (-1, 0, 1):
        _compare(op, ref, axis, DIMS[kind], backend, rng)
