"""Theano names the layer has no op for: a module's ``__getattr__`` that says what to write
instead (``theano.tensor.nlinalg.eigh``...), so a course program stops at its own line with
an alternative, not a bare AttributeError."""

from __future__ import annotations


def missing_names(module: str, has: str, instead: dict[str, str], default: str):
    """A module ``__getattr__``: reading a name of ``module`` the layer lacks is an
    AttributeError naming it, what the module ``has`` and what to write (``instead[name]``,
    else ``default``); dunder names stay plain AttributeErrors (import machinery, pickle)."""

    def __getattr__(name):  # noqa: N807 - the module protocol's name
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError(
            f"{module}.{name} is not in symnb's Theano layer ({has}); use "
            f"{instead.get(name, default)}"
        )

    return __getattr__
