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
