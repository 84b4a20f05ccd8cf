"""The op catalogue, one module per family; every public op function is re-exported here."""

from symnb.ops.elemwise import (  # noqa: F401
    abs,
    add,
    bitwise_and,
    bitwise_or,
    bitwise_xor,
    cast,
    cos,
    divide,
    equal,
    exp,
    floor_div,
    greater,
    greater_equal,
    invert,
    less,
    less_equal,
    log,
    mod,
    mul,
    neg,
    not_equal,
    pos,
    pow,
    sigmoid,
    sign,
    sin,
    sqrt,
    sub,
    tanh,
    true_div,
)
from symnb.ops.linalg import dot, matmul  # noqa: F401
from symnb.ops.reduce import max, mean, min, sum  # noqa: F401
from symnb.ops.shape import expand_dims, reshape, shape, squeeze, transpose  # noqa: F401
from symnb.ops.index import (  # noqa: F401
    getitem,
    inc_subtensor,
    set_subtensor,
    take,
    take_along_axis,
)
