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
from symnb.compat.theano.missing import missing_names
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
PureOp = _TheanoOp  # Theano's base of Op: the same name for isinstance, the same refusal


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


#: Theano's graph-package names symnb has no equivalent of, and what to write instead
_MISSING = {
    "local_optimizer": (
        "a symnb rewrite rule: @sn.opt.rule(phase, sn.opt.Pattern(OpClass, 'x')) on a function "
        "of the match returning the replacement (docs/rewrites.md, 'Writing a rule'), chosen "
        "with theano.compile.Mode().including(name)"
    ),
    "COp": (
        "a symnb Op (infer_types, perform, grad) whose perform runs NumPy, or "
        "theano.compile.ops.as_op of a NumPy function: symnb writes its kernels itself from "
        "its ops, and C code of an op's own is not supported"
    ),
    "ExternalCOp": "a symnb Op (infer_types, perform, grad) whose perform runs NumPy",
    "OpenMPOp": "a symnb Op (infer_types, perform, grad); symnb's kernels choose their threads",
    "Generic": "a symnb tensor (symnb's only type is TensorType: a dtype and a shape)",
    "generic": "a symnb tensor (symnb's only type is TensorType: a dtype and a shape)",
    "FunctionGraph": "f.maker.fgraph of a compiled function, or sn.function(...).graph",
    "opt": "symnb.opt (rules in phases, docs/rewrites.md)",
    "toolbox": "symnb.opt (rules in phases, docs/rewrites.md)",
}

__getattr__ = missing_names(
    "theano.gof",
    "it has Variable, Constant, Apply, Op, PureOp, Type and graph",
    _MISSING,
    "symnb's own API (docs/theano.md)",
)
