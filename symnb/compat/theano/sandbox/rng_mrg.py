"""``theano.sandbox.rng_mrg.MRG_RandomStreams``: the same streams as ``RandomStreams``
(symnb's Philox generator stands in for MRG31k3p; the numbers differ from Theano's)."""

from __future__ import annotations

from symnb.compat.theano.tensor.shared_randomstreams import RandomStreams


class MRG_RandomStreams(RandomStreams):  # noqa: N801 - Theano's name
    """``MRG_RandomStreams(seed=12345)``: ``uniform``, ``normal``, ``binomial``..."""

    default_seed = 12345
