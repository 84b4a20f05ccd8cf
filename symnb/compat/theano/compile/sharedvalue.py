"""``theano.compile.sharedvalue``: ``SharedVariable`` (symnb's) and ``shared``."""

from symnb.compat.theano.compile import shared  # noqa: F401
from symnb.core.variable import SharedVariable  # noqa: F401
