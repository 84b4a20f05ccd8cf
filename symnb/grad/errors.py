"""What differentiation reports: disconnected inputs and ops with no gradient."""

from __future__ import annotations

from contextvars import ContextVar

from symnb.core.op import NotDifferentiable
from symnb.errors import SymnbError

#: the call and the argument that the disconnected-input report names: ``sn.grad``'s own,
#: unless a layer over it sets those its caller used (the Theano layer: ``T.grad``'s
#: ``disconnected_inputs``), so that following the hint works
DISCONNECTED_HINT: ContextVar[tuple[str, str]] = ContextVar(
    "disconnected_hint", default=("sn.grad", "disconnected")
)


class DisconnectedInputError(SymnbError, ValueError):
    """``sn.grad`` was asked for an input the cost does not depend on (``disconnected="raise"``)."""


class DisconnectedInputWarning(UserWarning):
    """The same finding as :class:`DisconnectedInputError`, with ``disconnected="warn"``."""


class NotDifferentiableError(SymnbError, NotDifferentiable, TypeError):
    """A gradient must flow through an op that has none; the message names the op and path."""
