"""``theano.gof``: the names course code imports from Theano's graph package.

``Variable``, ``Constant``, ``graph`` (``inputs``, ``ancestors``) are symnb's; ``Apply`` builds
symnb's node from Theano's arguments (``Apply(op, inputs, [x.type()])``). ``Op`` and ``Type``
exist for ``isinstance`` checks (also as ``theano.Op``, ``theano.Type``); subclassing them to
write an op or a type in Python (Theano's ``make_node``/``perform``) is refused with an error
naming symnb's way (docs/theano.md).
"""

from __future__ import annotations

from symnb.compat.theano.gof import graph  # noqa: F401
from symnb.compat.theano.gof.graph import Apply  # noqa: F401
from symnb.core.op import Op as _SymnbOp
from symnb.core.types import TensorType
from symnb.core.variable import Constant, Variable  # noqa: F401


class _AnyOp(type(_SymnbOp)):
    """``isinstance(node.op, theano.gof.Op)`` is true of every symnb op."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, _SymnbOp)

    def __subclasscheck__(cls, sub):
        return issubclass(sub, _SymnbOp)


class _TheanoOp(_SymnbOp, metaclass=_AnyOp):
    """Theano's ``gof.Op`` (a name starting with ``_``: no op of its own is registered)."""

    def __init_subclass__(cls, **kwargs):
        raise NotImplementedError(
            f"class {cls.__name__}(theano.Op): ops written in Python with Theano's "
            "make_node/perform are not supported by symnb's Theano layer; compose the op "
            "from T functions, or write a symnb Op (infer_types, perform, grad: docs/ops.md)"
        )


Op = _TheanoOp


class _AnyType(type):
    """``isinstance(x.type, theano.gof.Type)`` is true of symnb's types."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, TensorType)

    def __subclasscheck__(cls, sub):
        return issubclass(sub, TensorType)


class Type(metaclass=_AnyType):
    """Theano's ``gof.Type`` (also ``theano.Type``), for ``isinstance``: symnb has one kind of
    type, a dtype and a shape (``TensorType``); a type of one's own is refused."""

    def __init_subclass__(cls, **kwargs):
        raise NotImplementedError(
            f"class {cls.__name__}(theano.Type): types written in Python (Theano's "
            "filter/values_eq) are not supported by symnb's Theano layer; symnb has one kind "
            "of type, a dtype and a shape: use T.TensorType(dtype, broadcastable) (or "
            "sn.tensor(name, shape, dtype))"
        )
