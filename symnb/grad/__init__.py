"""Symbolic differentiation: gradients are ordinary graphs built from each op's rule."""

from symnb.core.hooks import register as _register
from symnb.grad.check import GradientError, check_grad, verify_grad  # noqa: F401
from symnb.grad.derived import hessian, jacobian  # noqa: F401
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

_register("lop", Lop)  # the gradient of a scan differentiates its inner graph (ops/scan_grad.py)
