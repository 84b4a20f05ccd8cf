"""Symbolic differentiation: gradients are ordinary graphs built from each op's rule.

``sn.jacobian`` and ``sn.hessian`` are built from these reverse passes one layer up, in
:mod:`symnb.control.jacobian` (a symbolic shape takes its rows from a scan).
"""

from symnb.grad.check import GradientError, check_grad, verify_grad  # noqa: F401
from symnb.grad.errors import (  # noqa: F401
    DisconnectedInputError,
    DisconnectedInputWarning,
    NotDifferentiableError,
)
from symnb.grad.forward import Rop  # noqa: F401
from symnb.grad.reverse import Lop, grad  # noqa: F401
from symnb.ops.markers import (  # noqa: F401
    disconnected_grad,
    grad_clip,
    stop_gradient,
    zero_grad,
)
