"""Symbolic differentiation: gradients are ordinary graphs built from each op's rule."""

from symnb.grad.check import GradientError, check_grad  # noqa: F401
from symnb.grad.errors import (  # noqa: F401
    DisconnectedInputError,
    DisconnectedInputWarning,
    NotDifferentiableError,
)
from symnb.grad.reverse import Lop, grad  # noqa: F401
