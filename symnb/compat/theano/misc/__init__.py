"""``theano.misc``: ``pkl_utils`` (``dump``/``load``)."""

from symnb.compat.theano.misc import pkl_utils  # noqa: F401
