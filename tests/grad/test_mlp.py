"""A 2-layer MLP with a hand-written softmax cross-entropy: sn.grad vs hand-derived NumPy."""

import numpy as np

import symnb as sn


def mlp_loss(x, y, w1, b1, w2, b2):
    """tanh hidden layer, softmax written from exp/max/sum/log, one-hot labels, mean loss."""
    z = sn.tanh(x @ w1 + b1) @ w2 + b2
    shifted = z - sn.max(z, axis=1, keepdims=True)
    log_p = shifted - sn.log(sn.sum(sn.exp(shifted), axis=1, keepdims=True))
    return -sn.mean(sn.sum(y * log_p, axis=1))


def numpy_gradients(x, y, w1, b1, w2, b2):
    """Backpropagation by hand: d loss / d (w1, b1, w2, b2)."""
    h = np.tanh(x @ w1 + b1)
    z = h @ w2 + b2
    p = np.exp(z - z.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    dz = (p - y) / len(x)
    dh = dz @ w2.T * (1 - h**2)
    return [x.T @ dh, dh.sum(axis=0), h.T @ dz, dz.sum(axis=0)]


def mlp_problem(rng, batch=16, features=5, hidden=7, classes=4):
    x = rng.standard_normal((batch, features))
    y = np.eye(classes)[rng.integers(0, classes, batch)]
    params = [
        rng.standard_normal((features, hidden)),
        rng.standard_normal(hidden),
        rng.standard_normal((hidden, classes)),
        rng.standard_normal(classes),
    ]
    return x, y, params


def symbolic_gradients(x, y, params, backend="py"):
    xs = sn.tensor("x", shape=("batch", x.shape[1]), dtype="float64")
    ys = sn.tensor("y", shape=("batch", y.shape[1]), dtype="float64")
    ws = [sn.tensor(name, shape=p.shape, dtype="float64") for name, p in zip("ABCD", params)]
    loss = mlp_loss(xs, ys, *ws)
    return sn.function([xs, ys, *ws], sn.grad(loss, ws), backend=backend)(x, y, *params)


def test_mlp_gradients_match_hand_derived_numpy_to_1e_10(rng, backend):
    x, y, params = mlp_problem(rng)
    got = symbolic_gradients(x, y, params, backend)
    want = numpy_gradients(x, y, *params)
    for g, w, p in zip(got, want, params):
        assert g.dtype == np.float64 and g.shape == p.shape
        assert np.max(np.abs(g - w)) < 1e-10


def test_mlp_gradients_pass_the_numeric_checker(rng):
    x, y, params = mlp_problem(rng, batch=4, features=3, hidden=3, classes=3)
    sn.check_grad(lambda w1, b1, w2, b2: mlp_loss(x, y, w1, b1, w2, b2), params)
