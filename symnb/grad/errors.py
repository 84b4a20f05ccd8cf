"""What differentiation reports: disconnected inputs and ops with no gradient."""

from __future__ import annotations

from symnb.core.op import NotDifferentiable
from symnb.errors import SymnbError


class DisconnectedInputError(SymnbError, ValueError):
    """``sn.grad`` was asked for an input the cost does not depend on (``disconnected="raise"``)."""


class DisconnectedInputWarning(UserWarning):
    """The same finding as :class:`DisconnectedInputError`, with ``disconnected="warn"``."""


class NotDifferentiableError(SymnbError, NotDifferentiable, TypeError):
    """A gradient must flow through an op that has none; the message names the op and path."""
