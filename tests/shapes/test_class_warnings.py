"""Shape warnings as a class meets them: a pinned batch on the cross-entropy path and by a
hard-coded reshape, at the line that pins, once per line; the suspicious-axis warning finds the
batch by its role, whatever its name."""

import warnings

import numpy as np
import pytest

import symnb as sn
from symnb.compat.theano import tensor as T


def _line_of(marker: str) -> int:
    with open(__file__) as f:
        return next(i for i, line in enumerate(f, start=1) if marker in line)


def _caught(build) -> list:
    """Every ShapeWarning ``build`` gives, under the "always" filter (no deduplication)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        build()
    return [w for w in caught if issubclass(w.category, sn.ShapeWarning)]


def _one(build, category, marker):
    hits = _caught(build)
    assert [w.category for w in hits] == [category], [str(w.message) for w in hits]
    assert (hits[0].filename, hits[0].lineno) == (__file__, _line_of(marker))
    return str(hits[0].message)


def test_integer_labels_of_a_named_batch_against_32_rows_warn_at_the_loss_line():
    logits = sn.tensor("logits", shape=(32, 10))
    y = sn.tensor("y", shape=("batch",), dtype="int64")
    message = _one(
        lambda: sn.crossentropy(sn.softmax(logits), y),  # <- labels pin
        sn.PinnedDimWarning,
        "<- labels pin",
    )
    assert "categorical_crossentropy: named dim 'batch' (axis 0 of 'y' (int64(batch,)))" in message
    assert "is forced to equal 32" in message


@pytest.mark.parametrize("target", [(32, -1), (32, 784)])
def test_a_hard_coded_batch_in_reshape_warns_at_the_reshape(target):
    x = sn.tensor("x", shape=("batch", 28, 28))
    W = sn.shared(np.zeros((784, 10)), name="W")

    def model():
        h = x.reshape(target)  # <- hard-coded reshape
        return h @ W

    message = _one(model, sn.PinnedDimWarning, "<- hard-coded reshape")
    assert "reshape: named dim 'batch' (axis 0 of 'x' (float64(batch, 28, 28)))" in message
    assert f"replaced by the fixed size 32 in {target}" in message
    assert "x.reshape((x.shape[0], " in message and 'x.reshape(("batch", ' in message


def test_reshapes_that_keep_the_batch_do_not_warn():
    x = sn.tensor("x", shape=("batch", 28, 28))
    assert _caught(lambda: x.reshape((x.shape[0], -1))) == []
    assert _caught(lambda: x.reshape(("batch", 784))) == []
    assert _caught(lambda: x.reshape((-1, 28))) == []
    assert _caught(lambda: sn.tensor("v", shape=(1, "n")).reshape((1, -1))) == []


def test_one_line_that_pins_twice_warns_once():
    a = sn.tensor("a", shape=("n", 3))
    c = sn.tensor("c", shape=(5, 3))
    hits = _caught(lambda: sn.concatenate([c, a, a], axis=1))
    assert len(hits) == 1 and "named dim 'n'" in str(hits[0].message)
    p, t = sn.tensor("p", shape=(32, 10)), sn.tensor("t", shape=("batch", 10))
    hits = _caught(lambda: (p - t) ** 2 + (p - t))  # two nodes find the same pin
    assert len(hits) == 1 and "forced to equal 32" in str(hits[0].message)


def test_stack_warns_once_naming_the_users_operands():
    """stack joins expanded copies with an internal concatenate, which warned a second time
    about "an unnamed variable (float64(1, n))" the user never wrote."""
    s1, s2 = sn.tensor("s1", shape=("n",)), sn.tensor("s2", shape=(5,))
    for axis in (0, -1):
        hits = _caught(lambda a=axis: sn.stack([s1, s2], axis=a))  # <- stack pins n
        assert len(hits) == 1, [str(w.message) for w in hits]
        message = str(hits[0].message)
        assert message.startswith("stack: named dim 'n' (axis 0 of 's1' (float64(n,)))"), message
        assert hits[0].lineno == _line_of("<- stack pins n")
    with pytest.raises(sn.ShapeError, match="stack: axis 0 differs"):  # errors still raised
        sn.stack([s2, sn.tensor("s3", shape=(4,))])


def test_the_same_line_warns_again_in_a_new_call():
    def build():
        return sn.tensor("t", shape=("batch", 10)) - sn.tensor("p", shape=(32, 10))

    assert len(_caught(build)) == 1 and len(_caught(build)) == 1


def test_the_gradient_of_a_pinned_graph_adds_no_warning():
    x, t = sn.tensor("x", shape=(32, 784)), sn.tensor("t", shape=("batch", 10))
    W = sn.shared(np.zeros((784, 10)), name="W")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loss = sn.mean(sn.crossentropy(sn.softmax(x @ W), t))
    assert _caught(lambda: sn.grad(loss, W)) == []


# -- the batch by its role ----------------------------------------------------------------------
W = sn.shared(np.zeros((784, 10)), name="W")


@pytest.mark.parametrize("batch", ["n", "N", "samples", "batch", None, sn.dim("n") * 2])
@pytest.mark.parametrize("op", [sn.softmax, sn.log_softmax, sn.argmax])
def test_softmax_or_argmax_over_the_batch_warns_whatever_its_name(batch, op):
    x = sn.tensor("x", shape=(batch, 784))
    message = _one(
        lambda: op(x @ W, axis=0),  # <- over the batch
        sn.SuspiciousAxisWarning,
        "<- over the batch",
    )
    shown = "?" if batch is None else str(batch)
    assert f"over axis 0 of an unnamed variable (float64({shown}, 10))" in message
    assert "which holds the examples" in message and "the data input 'x'" in message
    assert "hint: the classes are usually the last axis (axis=-1)" in message
    assert _caught(lambda: op(x @ W, axis=-1)) == []


def test_the_batch_is_followed_through_transposes_and_products():
    x = sn.tensor("x", shape=(None, 784))
    logits_t = (x @ W).T  # (10, ?): the examples are now axis 1
    assert _caught(lambda: sn.softmax(logits_t, axis=0)) == []
    assert len(_caught(lambda: sn.softmax(logits_t, axis=1))) == 1
    scores = x @ sn.shared(np.zeros(784), name="w")  # one score per example
    assert len(_caught(lambda: sn.softmax(scores, axis=0))) == 1
    flat = sn.tensor("img", shape=(None, 28, 28))
    h = flat.reshape((flat.shape[0], -1)) @ W
    assert len(_caught(lambda: sn.argmax(h, axis=0))) == 1


def test_labels_sharing_a_leading_dim_make_it_the_batch():
    y = sn.tensor("y", shape=("m",), dtype="int64")
    scores = sn.tensor("scores", shape=("m",))
    assert _caught(lambda: sn.softmax(scores, axis=0)) == []  # one vector: not a batch by itself
    assert len(_caught(lambda: sn.softmax(scores + y, axis=0))) == 1


@pytest.mark.parametrize(
    "build",
    [
        lambda: sn.argmax(sn.matrix("m"), axis=0),  # an all-unknown matrix is any matrix
        lambda: sn.softmax(sn.tensor("a", shape=(3, 4)), axis=0),  # fixed sizes: no batch
        lambda: sn.softmax(W, axis=0),  # weights are not data
        lambda: (lambda q: sn.softmax(q @ q.T, axis=-1))(sn.tensor("q", shape=(None, 64))),
    ],
)
def test_axes_that_are_not_provably_the_batch_stay_silent(build):
    assert _caught(build) == []


def test_squeeze_with_no_axis_of_unknown_dims_warns_that_it_keeps_them():
    """``p.squeeze()`` of a ``(?, 1)`` p kept the unknown dim silently, also in a call where
    it is 1 (``np.squeeze`` drops it): a SqueezeUnknownDimWarning at the user's line says
    which axes it drops and how to name them. Named or fixed dims, an explicit axis, and
    Theano's ``T.squeeze`` (Theano documents this rule) do not warn."""
    p = sn.tensor("p", shape=(None, 1))
    squeezed = lambda: p.squeeze()  # noqa: E731 - <- keeps axis 0
    message = _one(squeezed, sn.SqueezeUnknownDimWarning, "<- keeps" + " axis 0")
    assert message.startswith("squeeze: 'p' (float64(?, 1)) has an unknown dim (axis 0)")
    assert "(axis 1 here)" in message and "np.squeeze would drop it" in message
    assert "hint: name the axes to drop: p.squeeze(axis=1)" in message
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sn.SqueezeUnknownDimWarning)
        f = sn.function([p], p.squeeze(), backend="py")
    assert f(np.ones((1, 1))).shape == (1,)  # the behaviour the warning describes
    of_a_matrix = lambda: sn.squeeze(sn.matrix("m"))  # noqa: E731 - <- drops none
    message = _one(of_a_matrix, sn.SqueezeUnknownDimWarning, "<- drops" + " none")
    assert "unknown dims (axes [0, 1])" in message and "(none here)" in message
    quiet = [
        lambda: sn.tensor("b", shape=("batch", 1)).squeeze(),
        lambda: sn.tensor("t", shape=(2, 1, 3)).squeeze(),
        lambda: sn.squeeze(p, 1),
        lambda: T.squeeze(p),
    ]
    for build in quiet:
        assert _caught(build) == []
