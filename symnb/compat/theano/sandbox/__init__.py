"""``theano.sandbox``: ``rng_mrg.MRG_RandomStreams``."""

from symnb.compat.theano.sandbox import rng_mrg  # noqa: F401
