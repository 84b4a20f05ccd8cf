"""``theano.config``: Theano's flags that course material reads or sets.

``floatX`` is symnb's own setting (``sn.config.floatX``), so setting either sets both. The
other flags keep Theano's defaults; ``mode`` and ``on_unused_input`` are what
``theano.function`` uses when it is not told. Setting a flag Theano did not have is an error
that names it (a typo would otherwise be ignored silently).
"""

from __future__ import annotations

from symnb.config import config as _symnb_config

#: Theano's flags and their defaults (only ``floatX``, ``mode`` and ``on_unused_input`` change
#: what symnb does; the others are accepted so that scripts which set them still run)
FLAGS = {
    "mode": "FAST_RUN",
    "on_unused_input": "raise",
    "device": "cpu",
    "optimizer": "fast_run",
    "cast_policy": "custom",
    "int_division": "floatX",
    "exception_verbosity": "low",
    "compute_test_value": "off",
    "warn_float64": "ignore",
    "allow_gc": True,
    "openmp": False,
    "profile": False,
    "print_active_device": True,
}
ON_UNUSED = ("raise", "warn", "ignore")


class TheanoConfig:
    """``theano.config``: ``floatX`` is ``sn.config.floatX``; the rest are Theano's flags."""

    def __init__(self):
        object.__setattr__(self, "_flags", dict(FLAGS))

    @property
    def floatX(self) -> str:  # noqa: N802 - Theano's spelling
        return _symnb_config.floatX

    @floatX.setter
    def floatX(self, value: str) -> None:  # noqa: N802
        _symnb_config.floatX = value  # symnb checks the value

    def __getattr__(self, name):
        flags = object.__getattribute__(self, "_flags")
        if name in flags:
            return flags[name]
        raise AttributeError(f"theano.config has no flag {name!r} ({_known()})")

    def __setattr__(self, name, value):
        if name == "floatX":
            object.__setattr__(self, name, value)
            return
        if name not in self._flags:
            raise AttributeError(f"theano.config has no flag {name!r} ({_known()})")
        if name == "on_unused_input" and value not in ON_UNUSED:
            raise ValueError(f"theano.config.on_unused_input must be one of {ON_UNUSED}")
        self._flags[name] = value

    def __repr__(self):
        items = {"floatX": self.floatX, **self._flags}
        return "theano.config(" + ", ".join(f"{k}={v!r}" for k, v in items.items()) + ")"


def _known() -> str:
    return "known flags: " + ", ".join(["floatX", *FLAGS])


config = TheanoConfig()


def resolve_dtype(dtype):
    """Theano's dtype spellings: ``"floatX"`` is the current ``config.floatX``."""
    return _symnb_config.floatX if dtype == "floatX" else dtype
