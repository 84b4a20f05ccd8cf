"""The IPython extension (``%load_ext symnb``): magics, styled errors, graph displays.

It adds no engine: every magic calls the library and ``symnb.viz``.
"""

from __future__ import annotations

# ``sn.magics.stepper(f)`` works without ``%load_ext symnb`` (ipywidgets is imported when a
# stepper is made, IPython only by the extension)
from symnb.magics.stepper_widget import stepper  # noqa: F401 - the rewrite stepper widget


def load_ipython_extension(shell) -> None:
    from symnb.magics import errors
    from symnb.magics.commands import SymnbMagics

    shell.register_magics(SymnbMagics)
    errors.install(shell)


def unload_ipython_extension(shell) -> None:
    from symnb.magics import errors
    from symnb.magics.commands import SymnbMagics

    errors.uninstall(shell)
    manager = shell.magics_manager
    for kind, names in SymnbMagics.magics.items():
        for name in names:
            manager.magics[kind].pop(name, None)
    manager.registry.pop(SymnbMagics.__name__, None)
