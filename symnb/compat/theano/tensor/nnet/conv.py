"""``theano.tensor.nnet.conv.conv2d``: Theano's first convolution interface (a true
convolution, as the newer ``theano.tensor.nnet.conv2d``)."""

from __future__ import annotations

from symnb.compat.theano.tensor.nnet.abstract_conv import theano_conv
from symnb.core.op import _at_user_line
from symnb.core.variable import Variable
from symnb.errors import ArgumentError


def conv2d(
    input,  # noqa: A002 - Theano's parameter names
    filters,
    image_shape=None,
    filter_shape=None,
    border_mode="valid",
    subsample=(1, 1),
    **kargs,
) -> Variable:
    """``conv.conv2d(input, filters, image_shape, filter_shape, border_mode, subsample)``:
    border_mode is ``"valid"`` or ``"full"``."""
    if border_mode not in ("valid", "full"):
        raise _at_user_line(
            ArgumentError(
                f"conv.conv2d: border_mode must be 'valid' or 'full', not {border_mode!r}"
            )
        )
    unknown = set(kargs) - {"imshp", "kshp", "nkern", "bsize", "verbose"}
    if unknown:
        raise _at_user_line(ArgumentError(f"conv.conv2d: unexpected arguments {sorted(unknown)}"))
    return theano_conv(
        input, filters, border_mode, subsample, True, (1, 1), 1, filter_shape, image_shape
    )
