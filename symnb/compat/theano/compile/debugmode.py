"""``theano.compile.debugmode``: ``from theano.compile.debugmode import DebugMode``."""

from symnb.compat.theano.compile.mode import DebugMode  # noqa: F401
