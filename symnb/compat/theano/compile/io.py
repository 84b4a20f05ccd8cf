"""``theano.compile.io``: ``In`` and ``Out`` (``SymbolicOutput``), as Theano's programs import
them (``from theano.compile.io import In``)."""

from symnb.compat.theano.compile import In, Out, SymbolicOutput  # noqa: F401
