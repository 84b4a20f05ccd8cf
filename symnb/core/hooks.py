"""Where a lower layer reaches a higher one: named hooks that the higher layer fills.

core sits below the op catalogue, the compiler and the displays, yet ``x + 1`` builds an op,
``Variable.eval`` compiles and a graph draws itself in Jupyter. Rather than importing upward,
the lower layer asks for a hook by name, and the layer that provides it registers it when it
is imported: ``symnb.ops`` registers "ops", ``symnb.compile`` registers "function",
``symnb.viz`` the displays. ``import symnb`` imports all three, and importing any symnb module
imports ``symnb`` first, so every hook is there by the time one is asked for.
"""

from __future__ import annotations

_hooks: dict[str, object] = {}


def register(name: str, provider):
    """Provide hook ``name`` (a later registration replaces an earlier one); returns it."""
    _hooks[name] = provider
    return provider


def hook(name: str):
    """The provider registered as ``name``."""
    try:
        return _hooks[name]
    except KeyError:
        raise LookupError(f"symnb: no {name!r} hook is registered; import symnb first") from None


def provided(name: str):
    """The provider registered as ``name``, or None: for hooks a layer above may add (the
    Theano layer's truth values) that nothing below needs."""
    return _hooks.get(name)


def spelled(message: str) -> str:
    """``message`` in the names of the API the user's code calls symnb through: the Theano
    layer registers a "spelling" hook that writes ``T.switch`` for ``sn.where`` where the
    user's code is Theano code; symnb's own names otherwise."""
    spell = _hooks.get("spelling")
    return message if spell is None else spell(message)
