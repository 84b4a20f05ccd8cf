"""``theano.tensor.signal``: pooling (``pool.pool_2d``, ``downsample.max_pool_2d``)."""

from symnb.compat.theano.tensor.signal import downsample, pool  # noqa: F401
