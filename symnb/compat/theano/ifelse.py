"""``theano.ifelse.ifelse``: symnb's lazy ``ifelse`` (only the branch taken runs)."""

from symnb.ops.ifelse import ifelse  # noqa: F401
