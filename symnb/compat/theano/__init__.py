"""Theano on symnb: run Theano programs by changing their imports.

    import symnb.compat.theano as theano          # was: import theano
    import symnb.compat.theano.tensor as T        # was: import theano.tensor as T

``theano.function``, ``theano.shared``, ``theano.scan`` (and ``map``, ``reduce``,
``foldl``, ``foldr``), ``theano.config`` (``floatX``),
``theano.In``/``Param``, ``theano.Out``, ``theano.tensor`` (``T``), ``theano.tensor.nnet``,
``theano.tensor.signal.pool``, ``theano.updates.OrderedUpdates`` (what ``theano.scan``'s
updates are), random streams (``theano.tensor.shared_randomstreams``,
``theano.sandbox.rng_mrg``), ``theano.printing``, ``theano.gradient`` and ``theano.ifelse``,
and Theano 1.0's top-level ``theano.dot``, ``grad``, ``Rop``, ``Lop``, ``subgraph_grad``,
``as_op``, ``get_scalar_constant_value``, ``pprint`` and ``sparse_grad`` map onto symnb's
engine: the graphs they build are symnb graphs, compiled by ``sn.function``.
``theano.sparse`` says that symnb has no sparse matrices. The differences from Theano, and
where Theano differs from NumPy, are listed in docs/theano.md.
"""

from symnb.compat.theano import (  # noqa: F401
    compile,  # noqa: F401, A004
    gof,
    gradient,
    ifelse,
    misc,
    printing,
    sandbox,
    scalar,
    sparse,
    spelling,
    tensor,
    tests,  # noqa: F401 - theano.tests.unittest_tools
    testvalues,
    updates,
)
from symnb.compat.theano.compile import (  # noqa: F401 - and the submodules
    FunctionMaker,
    In,
    Mode,
    Out,
    Param,
    SymbolicOutput,
    as_op,
    debugmode,
    function,
    io,
    shared,
    sharedvalue,
)
from symnb.compat.theano.configparser import change_flags, config  # noqa: F401
from symnb.compat.theano.gof import Apply, Constant, Op, Type  # noqa: F401 - as Theano 1.0
from symnb.compat.theano.gradient import Lop, Rop, grad, subgraph_grad  # noqa: F401
from symnb.compat.theano.printing import pp, pprint  # noqa: F401
from symnb.compat.theano.scan_module import (  # noqa: F401
    clone,
    foldl,
    foldr,
    map,  # noqa: A004 - theano.map
    reduce,  # noqa: A004 - theano.reduce
    scan,
)
from symnb.compat.theano.tensor.basic import dot, get_scalar_constant_value  # noqa: F401
from symnb.compat.theano.updates import OrderedUpdates  # noqa: F401
from symnb.core.variable import Variable  # noqa: F401 - theano.Variable

#: the Theano release whose API this layer follows (``theano.__version__ >= "0.9"`` checks)
__version__ = "1.0.5"


def sparse_grad(var):
    """``theano.sparse_grad(W[indices])``: Theano stored that gradient as a sparse matrix to
    save memory; the values are the same, and symnb's is dense, so ``var`` is returned."""
    return var
