"""``theano.tensor.nnet.neighbours``: symnb has no op for ``images2neibs`` or
``neibs2images``; reading either is an error saying what to write instead."""

from __future__ import annotations

from symnb.compat.theano.missing import missing_names

_INSTEAD = (
    "slices of the image (x[:, :, i:i + h, j:j + w] for each patch, joined with T.stack), "
    "or a conv2d with one-hot filters for patches of a fixed size"
)


__getattr__ = missing_names(
    "theano.tensor.nnet.neighbours", "no op cuts images into patches", {}, _INSTEAD
)
