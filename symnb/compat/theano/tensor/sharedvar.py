"""``theano.tensor.sharedvar``: ``TensorSharedVariable``."""

from symnb.compat.theano.tensor.var import TensorSharedVariable  # noqa: F401
