"""``theano.tensor.nnet.bn.batch_normalization``: the formula, in symnb's elementwise ops
(the rewrites fuse it into one kernel)."""

from __future__ import annotations

from symnb.core.variable import as_variable


def batch_normalization(inputs, gamma, beta, mean, std, mode="low_mem"):
    """``(inputs - mean) * (gamma / std) + beta``; ``mode`` is accepted (one formula)."""
    inputs, gamma, beta = as_variable(inputs), as_variable(gamma), as_variable(beta)
    return (inputs - mean) * (gamma / std) + beta
