"""symnb: a symbolic tensor compiler for Python that lives in Jupyter.

import symnb as sn
x = sn.tensor("x", shape=("batch", 3))
f = sn.function([x], sn.sum(x ** 2, axis=1))
"""

import sys as _sys

from symnb import (  # noqa: F401
    magics,  # sn.magics.stepper(f), with no %load_ext needed
    opt,  # sn.opt.register, sn.opt.RULES, sn.opt.PHASES
)
from symnb.backends import clear_cache  # noqa: F401 - sn.clear_cache()
from symnb.compile import Function, function
from symnb.config import config
from symnb.control import ifelse, scan, until  # noqa: F401
from symnb.control.jacobian import hessian, jacobian  # noqa: F401
from symnb.core import hooks as _hooks
from symnb.core.constructors import (
    constant,
    matrix,
    scalar,
    shared,
    tensor,
    tensor3,
    tensor4,
    vector,
)
from symnb.core.dims import DimExpr, dim  # noqa: F401
from symnb.core.graph import Graph
from symnb.core.shapes import infer_shape  # noqa: F401
from symnb.core.shapes.warnings import (  # noqa: F401 - one warning category per shape pattern
    BroadcastOuterWarning,
    LossTrailingOneWarning,
    PinnedDimWarning,
    ReshapeMovesDimWarning,
    ReshapeSplitsDimWarning,
    SqueezeUnknownDimWarning,
    SuspiciousAxisWarning,
)
from symnb.core.source import at_user_line as _at_user_line
from symnb.core.types import TensorType
from symnb.core.upcast import Float64Warning  # noqa: F401 - a float64 shared in float32 work
from symnb.core.variable import Constant, SharedVariable, Variable
from symnb.core.variable import describe_value as _describe_value
from symnb.errors import (
    ArgumentError,
    DeviceError,
    DeviceOutOfMemory,
    DTypeError,
    GraphError,
    InputError,
    ShapeError,
    ShapeIndexError,
    ShapeTypeError,
    ShapeWarning,
    SymbolicValueError,
    SymnbError,
    UpdateError,
)
from symnb.grad import (  # noqa: F401
    DisconnectedInputError,
    DisconnectedInputWarning,
    GradientError,
    Lop,
    NotDifferentiableError,
    Rop,
    check_grad,
    disconnected_grad,
    grad,
    grad_clip,
    stop_gradient,
    verify_grad,
    zero_grad,
)
from symnb.ops import *  # noqa: F403 - the op catalogue is the public API
from symnb.ops import getitem  # noqa: F401
from symnb.version import version as _version
from symnb.viz.progress import progress
from symnb.viz.text import format_expr, format_graph

config.progress = progress  # long work (compiling many kernels) shows a bar (tqdm's if installed)
_hooks.register("symnb", _sys.modules[__name__])  # the public names, for %%symcompile cells

__version__ = _version()


def load_ipython_extension(ipython):
    """``%load_ext symnb``: the magics and rich displays (IPython is imported only here)."""
    from symnb.magics import load_ipython_extension as load

    load(ipython)


def unload_ipython_extension(ipython):
    """``%unload_ext symnb``: the magics, the error cards and the warning cards go away."""
    from symnb.magics import unload_ipython_extension as unload

    unload(ipython)


def eval(var, inputs=None, backend="py"):  # noqa: A001 - mirrors var.eval
    """Compute ``var`` (a symbolic variable) for the given ``{variable: value}`` inputs;
    anything else for ``var`` is an ArgumentError naming it."""
    if not isinstance(var, Variable):
        several = (
            "; evaluate each (sn.eval(v, inputs)), or compile them together with sn.function"
            if isinstance(var, (list, tuple))
            else ""
        )
        raise _at_user_line(
            ArgumentError(
                f"sn.eval: var is the symbolic variable to compute, not "
                f"{_describe_value(var)}{several}"
            )
        )
    return var.eval(inputs, backend=backend)


__all__ = [
    "ArgumentError",
    "Constant",
    "DeviceError",
    "DeviceOutOfMemory",
    "DTypeError",
    "Function",
    "Graph",
    "GraphError",
    "InputError",
    "ShapeError",
    "ShapeIndexError",
    "ShapeTypeError",
    "ShapeWarning",
    "SharedVariable",
    "SymbolicValueError",
    "SymnbError",
    "TensorType",
    "UpdateError",
    "Variable",
    "config",
    "constant",
    "eval",
    "format_expr",
    "format_graph",
    "function",
    "matrix",
    "scalar",
    "shared",
    "tensor",
    "tensor3",
    "tensor4",
    "vector",
    "grad",
    "Lop",
    "check_grad",
    "GradientError",
    "DisconnectedInputError",
    "DisconnectedInputWarning",
    "NotDifferentiableError",
    "Rop",
    "jacobian",
    "hessian",
    "stop_gradient",
    "zero_grad",
    "disconnected_grad",
    "grad_clip",
    "verify_grad",
    "progress",
]
