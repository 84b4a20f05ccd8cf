"""The data of the Theano-style programs: scikit-learn's digits (8x8 images, 10 classes),
scaled to [0, 1], split once into shared train and test sets."""

import numpy as np
import pytest
from sklearn.datasets import load_digits

import symnb.compat.theano as theano
from tests.compat.programs import shared_dataset


@pytest.fixture(scope="session")
def digits():
    data = load_digits()
    order = np.random.default_rng(0).permutation(len(data.target))
    x, y = data.data[order] / 16.0, data.target[order]
    return (x[:1200], y[:1200]), (x[1200:], y[1200:])


@pytest.fixture
def datasets(digits):
    train, test = digits
    return shared_dataset(train), shared_dataset(test)


@pytest.fixture(autouse=True)
def _theano_defaults():
    """Every test starts from Theano's defaults (float64 floatX, FAST_RUN)."""
    before = theano.config.floatX, theano.config.mode
    yield
    theano.config.floatX, theano.config.mode = before
