"""``theano.tensor.nnet.neighbours``: symnb has no op for ``images2neibs`` or
``neibs2images``; reading either is an error saying what to write instead."""

from __future__ import annotations

_INSTEAD = (
    "slices of the image (x[:, :, i:i + h, j:j + w] for each patch, joined with T.stack), "
    "or a conv2d with one-hot filters for patches of a fixed size"
)


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    raise AttributeError(
        f"theano.tensor.nnet.neighbours.{name} is not in symnb's Theano layer (no op cuts "
        f"images into patches); use {_INSTEAD}"
    )
