"""The Theano-style programs of tests/compat/programs.py train to stated accuracies on
scikit-learn's digits (1200 images to train on, 597 to test on)."""

import numpy as np
import pytest

import symnb.compat.theano as theano
from tests.compat import programs


@pytest.mark.parametrize("mode", ["FAST_RUN", "FAST_COMPILE"])  # backend "c", backend "py"
def test_logistic_regression_with_minibatch_givens(datasets, mode):
    losses, error = programs.sgd_logistic(datasets, mode=mode)
    assert losses[-1] < 0.5 * losses[0]
    assert error < 0.10  # over 90% of the test digits right


def test_mlp(datasets):
    assert programs.mlp(datasets) < 0.08


def test_denoising_autoencoder_with_random_streams(datasets):
    (train_x, _), _ = datasets
    costs, reconstruct = programs.denoising_autoencoder(train_x)
    assert costs[-1] < 0.85 * costs[0]  # 27.1 -> 20.2 nats per image
    clean = train_x.get_value()[:20]
    error = np.mean((reconstruct(0) - clean) ** 2)
    assert error < 0.5 * np.mean((clean - clean.mean()) ** 2)  # beats predicting the mean


def test_rbm_with_persistent_contrastive_divergence(digits):
    """Gibbs sampling in scan with a probability per unit, ``consider_constant``, updates
    returned by scan and added to; the pseudo-likelihood rises as it learns."""
    (train_x, _), _ = digits
    binary = theano.shared((train_x > 0.5).astype(theano.config.floatX), borrow=True)
    costs = programs.rbm_pcd(binary)
    assert all(np.isfinite(costs)) and costs[-1] > costs[0] + 3, costs


def test_a_denoising_autoencoder_on_shared_weights_given_to_it():
    """The SdA hands each dA its hidden layer's weights: ``if not W:`` must see them."""
    W = theano.shared(np.full((64, 32), 0.01), name="W")
    layer = programs.dA(np.random.RandomState(0), input=theano.tensor.matrix("x"), W=W)
    assert layer.W is W and layer.params[0] is W
    assert layer.b.get_value().shape == (32,)


def test_scan_rnn(datasets):
    assert programs.rnn_classifier(datasets) < 0.25


def test_lenet_convnet(datasets):
    assert programs.lenet(datasets) < 0.12


def test_logistic_regression_in_float32(digits):
    """``theano.config.floatX = "float32"`` before building: data, weights, the loss and
    its updates all stay float32 (Python literals such as the learning rate do not widen)."""
    theano.config.floatX = "float32"
    train, test = digits
    datasets = programs.shared_dataset(train), programs.shared_dataset(test)
    losses, error = programs.sgd_logistic(datasets, mode="FAST_COMPILE")
    assert datasets[0][0].dtype == "float32" and np.asarray(losses[0]).dtype == "float32"
    assert error < 0.10


@pytest.mark.parametrize("floatx", ["float64", "float32"])
def test_the_theano_tutorials_logistic_regression_matches_numpy(floatx):
    """The tutorial's example as written there: the sigmoid spelled ``1 / (1 + T.exp(...))``,
    weights from ``randn`` (logits of +-30 and more, so p rounds to 0 or 1). Its loss and
    gradient go through sigmoid's finite forms, so every step equals NumPy's analytic one."""
    rng = np.random.RandomState(42)
    n, feats = 60, 40
    data = rng.randn(n, feats).astype(floatx), rng.randint(size=n, low=0, high=2).astype(floatx)
    before = theano.config.floatX
    theano.config.floatX = floatx
    try:
        T = theano.tensor
        x, y = T.matrix("x"), T.vector("y")
        w0 = rng.randn(feats).astype(floatx) * 8
        w = theano.shared(w0.copy(), name="w")
        b = theano.shared(np.asarray(0.0, floatx), name="b")
        p_1 = 1 / (1 + T.exp(-T.dot(x, w) - b))
        xent = -y * T.log(p_1) - (1 - y) * T.log(1 - p_1)
        cost = xent.mean() + 0.01 * (w**2).sum()
        gw, gb = T.grad(cost, [w, b])
        train = theano.function(
            [x, y], [p_1 > 0.5, xent], updates=((w, w - 0.1 * gw), (b, b - 0.1 * gb))
        )
    finally:
        theano.config.floatX = before
    X, Y = (a.astype("float64") for a in data)
    wn, bn = w0.astype("float64"), 0.0
    for _ in range(30):
        _, losses = train(*data)
        assert np.all(np.isfinite(losses))
        z = X @ wn + bn
        g = (1 / (1 + np.exp(-z)) - Y) / n
        wn, bn = wn - 0.1 * (X.T @ g + 0.02 * wn), bn - 0.1 * g.sum()
    tol = 1e-4 if floatx == "float32" else 1e-10
    np.testing.assert_allclose(w.get_value(), wn, rtol=tol, atol=tol)
