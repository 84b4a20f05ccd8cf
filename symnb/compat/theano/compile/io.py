"""``theano.compile.io``: ``In`` (``Param``) and ``Out`` (``SymbolicOutput``), the wrappers
``theano.function`` takes for inputs with names and defaults and for outputs with a borrow flag
(``from theano.compile.io import In``)."""

from __future__ import annotations

from symnb.core.op import _at_user_line
from symnb.core.variable import Variable
from symnb.errors import ArgumentError


class In:
    """``theano.In(variable, name=None, value=None, ...)``: an input with a name and a
    default value (used when the call leaves it out)."""

    def __init__(
        self,
        variable,
        name=None,
        value=None,
        update=None,
        mutable=None,
        strict=False,
        allow_downcast=None,
        autoname=True,
        implicit=None,
        borrow=False,
        shared=False,
    ):
        if not isinstance(variable, Variable):
            raise _at_user_line(ArgumentError(f"In: {variable!r} is not a symbolic variable"))
        if update is not None:
            raise _at_user_line(NotImplementedError("In(update=...): use a shared variable"))
        self.variable, self.name, self.value = variable, name or variable.name, value
        self.allow_downcast = allow_downcast


class Out:
    """``theano.Out(variable, borrow=False)`` (``theano.compile.Out``, ``theano.compile.io``'s
    ``Out``/``SymbolicOutput``): an output with Theano's ``borrow`` flag, given to
    ``theano.function`` alone or in its list (or dict) of outputs. ``borrow=True`` allowed
    Theano to return its own buffer, which its next call overwrote; a result here is the
    caller's own array either way (no later call writes into it), which that permission
    covers, so the flag changes no result. ``sn.function(..., borrow=True)`` is symnb's
    no-copy option (for a whole function)."""

    def __init__(self, variable, borrow=False):
        if not isinstance(variable, Variable):
            raise _at_user_line(ArgumentError(f"Out: {variable!r} is not a symbolic variable"))
        self.variable, self.borrow = variable, borrow

    def __repr__(self):
        return f"Out({self.variable!r}, borrow={self.borrow!r})"


#: ``theano.compile.io.SymbolicOutput``, which ``Out`` names
SymbolicOutput = Out


def Param(variable, default=None, name=None, **kwargs) -> In:  # noqa: N802 - Theano's name
    """Theano's older ``Param(variable, default=...)``: an ``In`` with a default value."""
    return In(variable, name=name, value=default, **kwargs)
