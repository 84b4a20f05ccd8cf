"""``theano.ifelse.ifelse``: symnb's lazy ``ifelse`` (only the branch taken runs)."""

from symnb.control.ifelse import ifelse  # noqa: F401
