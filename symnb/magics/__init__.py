"""The IPython extension (``%load_ext symnb``): magics, styled errors, graph displays.

It adds no engine: every magic calls the library and ``symnb.viz``.
"""

from __future__ import annotations


def load_ipython_extension(shell) -> None:
    from symnb.magics import errors
    from symnb.magics.commands import SymnbMagics

    shell.register_magics(SymnbMagics)
    errors.install(shell)


def unload_ipython_extension(shell) -> None:
    from symnb.magics import errors

    errors.uninstall(shell)


def stepper(function):
    """The rewrite stepper widget for ``function`` (see symnb.magics.stepper_widget)."""
    from symnb.magics.stepper_widget import stepper as make

    return make(function)
