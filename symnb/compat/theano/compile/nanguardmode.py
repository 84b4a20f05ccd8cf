"""``theano.compile.nanguardmode``: ``from theano.compile.nanguardmode import NanGuardMode``."""

from symnb.compat.theano.compile.mode import NanGuardMode  # noqa: F401
