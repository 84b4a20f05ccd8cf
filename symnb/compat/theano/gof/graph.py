"""``theano.gof.graph``: ``Variable``, ``Apply``, ``Constant``, ``inputs``, ``ancestors``."""

from __future__ import annotations

from symnb.core.graph import ancestors as _ancestors
from symnb.core.graph import leaves as _leaves
from symnb.core.op import Apply as _Apply
from symnb.core.op import _at_user_line
from symnb.core.types import TensorType
from symnb.core.variable import Constant, Variable  # noqa: F401
from symnb.core.variable import describe_value as _describe
from symnb.errors import ArgumentError


class _TheanoApply(type):
    """``theano.gof.Apply`` is symnb's ``Apply`` for ``isinstance``, built with Theano's
    arguments."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, _Apply)

    def __subclasscheck__(cls, sub):
        return issubclass(sub, _Apply)

    def __call__(cls, op, inputs, outputs):
        """Theano's ``Apply(op, inputs, outputs)``: ``outputs`` are new Variables
        (``x.type()``), which become the node's outputs (a type is taken too: symnb's
        ``Apply`` takes the outputs' types). The node is symnb's ``Apply``."""
        inputs, outputs = list(inputs), list(outputs)
        for var in inputs:
            if not isinstance(var, Variable):
                raise _refused(f"its inputs are Variables, got {_describe(var)}")
        types = []
        for var in outputs:
            if isinstance(var, TensorType):
                types.append(var)
            elif isinstance(var, Variable) and var.owner is None and not _is_leaf_value(var):
                types.append(var.type)
            else:
                raise _refused(
                    "its outputs are new Variables (x.type(), with no owner yet) or types, "
                    f"got {_described_output(var)}"
                )
        node = _Apply(op, inputs, types)
        for k, var in enumerate(outputs):
            if isinstance(var, Variable):  # the variable given is the output, as in Theano
                var.owner, var.index = node, k
                node.outputs[k] = var
        return node


def _is_leaf_value(var) -> bool:
    """A constant or a shared variable: a value of its own, never a node's output."""
    return isinstance(var, Constant) or hasattr(var, "get_value")


def _described_output(var) -> str:
    if isinstance(var, Variable) and var.owner is not None:
        return f"{var.describe()}, already the output of {var.owner.op}"
    return _describe(var)


def _refused(problem: str) -> ArgumentError:
    return _at_user_line(
        ArgumentError(f"theano.gof.Apply(op, inputs, outputs): {problem}"), spell=False
    )


class Apply(metaclass=_TheanoApply):
    """Theano's ``theano.gof.Apply(op, inputs, outputs)`` (also ``theano.Apply``): the node
    of ``op`` applied to ``inputs``; ``isinstance`` is true of every symnb node."""


def inputs(variables, blockers=None) -> list:
    """The variables with no owner that ``variables`` are computed from. With ``blockers``
    (Theano's): those of the walk that stops at each blocker (``ancestors``), so a leaf only
    reached through a blocker is left out, and a blocker is listed only if it has no owner."""
    variables = _variable_list(variables, "inputs", "variable_list")
    if blockers:
        return [v for v in ancestors(variables, blockers) if v.owner is None]
    return list(_leaves(variables))


def ancestors(variables, blockers=None) -> list:
    """Every variable ``variables`` depend on (themselves included). With ``blockers``
    (Theano 1.0's): the walk, depth first from each variable through its owner's inputs,
    stops at each blocker, which is listed but not gone through."""
    variables = _variable_list(variables, "ancestors", "variable_list")
    if blockers:
        blocked = {id(v) for v in _variable_list(blockers, "ancestors", "blockers")}
        found: dict[int, Variable] = {}
        stack = list(reversed(variables))
        while stack:
            var = stack.pop()
            if id(var) in found:
                continue
            found[id(var)] = var
            if var.owner is not None and id(var) not in blocked:
                stack.extend(reversed(var.owner.inputs))
        return list(found.values())
    nodes = _ancestors(variables)
    found = {id(v): v for v in variables}
    for node in nodes:
        for v in [*node.inputs, *node.outputs]:
            found.setdefault(id(v), v)
    return list(found.values())


def _variable_list(values, function: str, argument: str) -> list:
    """``values`` as a list of variables; else a TypeError (an ArgumentError) at the user's
    line naming the function, the argument and what was given (Theano failed inside its
    walk: 'int' object has no attribute 'owner')."""
    where = f"theano.gof.graph.{function}: {argument}"
    if isinstance(values, Variable) or not isinstance(values, (list, tuple, set)):
        raise _at_user_line(
            ArgumentError(
                f"{where} is {_describe(values)}; it takes a list of symbolic variables "
                f"({function}([y]), not {function}(y))"
            ),
            spell=False,
        )
    values = list(values)
    for i, var in enumerate(values):
        if not isinstance(var, Variable):
            raise _at_user_line(
                ArgumentError(f"{where}[{i}] is {_describe(var)}, not a symbolic variable"),
                spell=False,
            )
    return values
