"""``theano.tests.unittest_tools``: ``verify_grad`` with a seeded generator, ``seed_rng``,
``fetch_seed``, as Theano's own tests (and course tests copied from them) use them."""

from __future__ import annotations

import numpy as np

from symnb.compat.theano.configparser import config
from symnb.compat.theano.gradient import verify_grad as _verify_grad


def fetch_seed(pseed=None):
    """The seed: ``pseed``, else ``theano.config.unittests.rseed`` (None if it is "random")."""
    seed = pseed if pseed is not None else config.unittests.rseed
    if seed == "random":
        return None
    return int(seed)


def seed_rng(pseed=None):
    """Seed NumPy's global generator with ``fetch_seed(pseed)``; returns the seed."""
    seed = fetch_seed(pseed)
    np.random.seed(seed)
    return seed


def verify_grad(op, pt, n_tests=2, rng=None, *args, **kwargs):
    """``theano.gradient.verify_grad`` with a ``RandomState(fetch_seed())`` by default."""
    if rng is None:
        seed_rng()
        rng = np.random.RandomState(fetch_seed())
    return _verify_grad(op, pt, n_tests, rng, *args, **kwargs)


verify_grad.E_grad = _verify_grad.E_grad
