"""``theano.tests``: ``unittest_tools`` (``verify_grad``, ``seed_rng``) for course tests."""

from symnb.compat.theano.tests import unittest_tools  # noqa: F401
