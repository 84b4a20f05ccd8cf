"""Symbolic differentiation: gradients are ordinary graphs built from each op's rule."""

from symnb.grad.check import GradientError, check_grad, verify_grad  # noqa: F401
from symnb.grad.derived import hessian, jacobian  # noqa: F401
from symnb.grad.errors import (  # noqa: F401
    DisconnectedInputError,
    DisconnectedInputWarning,
    NotDifferentiableError,
)
from symnb.grad.forward import Rop  # noqa: F401
from symnb.grad.markers import disconnected_grad, stop_gradient, zero_grad  # noqa: F401
from symnb.grad.reverse import Lop, grad  # noqa: F401
