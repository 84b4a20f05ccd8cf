"""``theano.tensor`` on symnb: ``import symnb.compat.theano.tensor as T``.

Constructors (``T.matrix``, ``T.ivector``, ``T.TensorType``...), the elementwise, reduction,
layout and indexing functions, ``T.grad`` (and ``T.Rop``, ``T.Lop``, ``T.jacobian``,
``T.hessian``), and the submodules ``T.nnet``, ``T.signal`` and ``T.shared_randomstreams``.
Where Theano's semantics differ from NumPy's the functions here follow Theano; docs/theano.md
lists each difference.
"""

from symnb.compat.theano.gradient import (  # noqa: F401
    Lop,
    Rop,
    grad,
    hessian,
    jacobian,
    verify_grad,
)
from symnb.compat.theano.missing import missing as _missing
from symnb.compat.theano.tensor import (  # noqa: F401
    basic,
    extra_ops,
    methods,
    nlinalg,
    nnet,
    opt,
    shared_randomstreams,
    sharedvar,
    signal,
    slinalg,
    subtensor,
    xlogx,
)
from symnb.compat.theano.tensor.basic import *  # noqa: F403
from symnb.compat.theano.tensor.basic import all, any, max, min, round, sum  # noqa: F401, A004
from symnb.compat.theano.tensor.var import *  # noqa: F403

#: ``T.Elemwise``, for ``isinstance(node.op, T.Elemwise)`` over ``f.maker.fgraph.toposort()``:
#: symnb's elementwise ops, fused kernels (``Composite``) among them, as Theano's fused ones
#: were Elemwise too. The ops name no device (docs/theano.md)
from symnb.ops.elemwise import Elemwise  # noqa: E402, F401

# ``T.var`` is the variance, as in Theano, whose ``theano/tensor/var.py`` also shares the
# name: loading the submodule ``tensor.var`` (above, and first through ``compile``) binds
# the package's ``var`` to it, so the function is bound again last. ``from
# symnb.compat.theano.tensor.var import TensorVariable`` still finds the module.
var = basic.var


#: Theano's names in ``theano.tensor`` that symnb has no op for, each with what to write instead
_MISSING = {
    "choose": "T.switch(T.eq(a, 0), c0, c1) (nested for more choices), or "
    "T.stack(choices)[a, T.arange(n)] for vectors",
    "permute_row_elements": "y[..., x] for one permutation x (a vector) of every row, or "
    "symnb.ops.take_along_axis(y, x, axis=-1) for one per row (inverse=True: T.argsort(x, "
    "axis=-1) in x's place)",
    "chi2sf": "scipy.stats.chi2.sf(x, k) on the values (symnb has no incomplete gamma "
    "function), or in the graph theano.compile.ops.as_op(itypes=[T.dvector, T.dscalar], "
    "otypes=[T.dvector])(scipy.stats.chi2.sf) (a Python step, no gradient)",
}
#: Theano 1.0's Bessel functions (``T.j0``...), which symnb has no op for: the SciPy function
#: of the same name, on the values or in the graph through ``as_op``
for _name, _args in (
    ("j0", "x"),
    ("j1", "x"),
    ("jv", "v, x"),
    ("i0", "x"),
    ("i1", "x"),
    ("iv", "v, x"),
):
    _itypes = "T.dvector" if _args == "x" else "T.dscalar, T.dvector"
    _MISSING[_name] = (
        f"scipy.special.{_name}({_args}) on the values (symnb has no Bessel function), or in "
        f"the graph theano.compile.ops.as_op(itypes=[{_itypes}], otypes=[T.dvector])"
        f"(scipy.special.{_name}) (a Python step, no gradient)"
    )
del _name, _args, _itypes


#: the names Theano 1.0's ``theano.tensor`` exported from ``extra_ops`` that symnb has no op
#: for: the hint is ``extra_ops``'s own (one table, ``extra_ops._MISSING``)
_FROM_EXTRA_OPS = (
    "bincount",
    "fill_diagonal",
    "fill_diagonal_offset",
    "unravel_index",
    "ravel_multi_index",
    "bartlett",
)


def __getattr__(name):
    if name in _FROM_EXTRA_OPS:
        instead = extra_ops._MISSING[name]
        raise _missing(
            name,
            f"theano.tensor.{name} (theano.tensor.extra_ops.{name}) is not in symnb's "
            f"Theano layer; use {instead}",
        )
    if name not in _MISSING:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    raise _missing(
        name, f"theano.tensor.{name} is not in symnb's Theano layer; use {_MISSING[name]}"
    )
