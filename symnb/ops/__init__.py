"""The op catalogue, one module per family; every public op function is re-exported here
(the control-flow ops, ``scan`` and ``ifelse``, are in :mod:`symnb.control`, above grad).

It registers itself as core's "ops" hook: the operators on variables (``x + y``, ``x.sum()``,
in :mod:`symnb.core.sugar`) forward to it.
"""

import sys as _sys

from symnb.core import hooks as _hooks
from symnb.ops.conv import avg_pool2d, conv2d, max_pool2d  # noqa: F401
from symnb.ops.creation import (  # noqa: F401
    alloc,
    arange,
    broadcast_to,
    eye,
    full,
    full_like,
    one_hot,
    ones,
    ones_like,
    zeros,
    zeros_like,
)
from symnb.ops.debug import print_value  # noqa: F401
from symnb.ops.einsum import einsum  # noqa: F401
from symnb.ops.elemwise import (  # noqa: F401  # noqa: F401
    abs,
    add,
    bitwise_and,
    bitwise_or,
    bitwise_xor,
    cast,
    ceil,
    clip,
    cos,
    divide,
    equal,
    exp,
    floor,
    floor_div,
    greater,
    greater_equal,
    invert,
    isfinite,
    isinf,
    isnan,
    less,
    less_equal,
    log,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    maximum,
    minimum,
    mod,
    mul,
    neg,
    not_equal,
    pos,
    pow,
    relu,
    round,
    sigmoid,
    sign,
    sin,
    sqrt,
    sub,
    switch,
    tanh,
    true_div,
    trunc,
    where,
)
from symnb.ops.index import IndexUpdate as _IndexUpdate
from symnb.ops.index import getitem, inc_subtensor, set_subtensor  # noqa: F401
from symnb.ops.join import concatenate, split, stack  # noqa: F401
from symnb.ops.layout import (  # noqa: F401
    diag,
    dimshuffle,
    flatten,
    flip,
    pad,
    tril,
    triu,
)
from symnb.ops.linalg import (  # noqa: F401
    cholesky,
    det,
    dot,
    inv,
    matmul,
    norm,
    outer,
    slogdet,
    solve,
    svd,
    tensordot,
    trace,
)
from symnb.ops.math import (  # noqa: F401
    arccos,
    arcsin,
    arcsinh,
    arctan,
    arctan2,
    conj,
    conjugate,
    cosh,
    digamma,
    erf,
    erfc,
    erfcinv,
    erfcx,
    erfinv,
    expm1,
    gamma,
    gammaln,
    imag,
    log1p,
    log2,
    log10,
    logaddexp,
    polygamma,
    psi,
    real,
    reciprocal,
    sinh,
    softplus,
    square,
    tan,
    trigamma,
)
from symnb.ops.nnet import (  # noqa: F401
    binary_crossentropy,
    categorical_crossentropy,
    crossentropy,
    log_softmax,
    sigmoid_binary_crossentropy,
    softmax,
    softmax_cross_entropy,
)
from symnb.ops.numpy_api import NumpyDispatch as _NumpyDispatch
from symnb.ops.products import inner, kron, matrix_power, vdot  # noqa: F401
from symnb.ops.random import RandomStream  # noqa: F401
from symnb.ops.reduce import (  # noqa: F401  # noqa: F401
    all,
    any,
    argmax,
    argmin,
    cumprod,
    cumsum,
    logsumexp,
    max,
    mean,
    min,
    prod,
    std,
    sum,
    var,
)
from symnb.ops.repeats import repeat, roll, tile  # noqa: F401
from symnb.ops.shape import expand_dims, reshape, shape, squeeze, swapaxes, transpose  # noqa: F401
from symnb.ops.sort import argsort, sort  # noqa: F401
from symnb.ops.take import take, take_along_axis  # noqa: F401

_hooks.register("ops", _sys.modules[__name__])
_hooks.register("numpy", _NumpyDispatch(_sys.modules[__name__]))
_hooks.register("index_update", _IndexUpdate)
