"""Ops and their applications.

An :class:`Op` is stateless and hashable by its parameters (``__props__``), so identical
nodes can be merged and kernels cached by content. Each op defines, in one class, its type
and shape rule (:meth:`Op.infer_types`, run when the node is built), its NumPy reference
(:meth:`Op.perform`) and its gradient (:meth:`Op.grad`).
"""

from __future__ import annotations

import copyreg
import functools
import inspect

from symnb.core.hooks import provided
from symnb.core.keys import exact_key
from symnb.core.source import at_user_line as _at_user_line  # noqa: F401 - re-exported
from symnb.core.source import pin_location, unpin_location, user_location
from symnb.core.types import TensorType
from symnb.core.upcast import check_upcast
from symnb.core.variable import (
    FIND_SOURCE,
    Tag,
    Variable,
    as_variable,
    deep_copy,
    saving_node,
)
from symnb.core.words import counted
from symnb.errors import ArgumentError, DTypeError, OpDefinitionError, ShapeError

OP_REGISTRY: dict[str, type[Op]] = {}


class NotDifferentiable(Exception):
    """Raised by a gradient rule for an input no gradient can flow through."""


class Apply:
    """One op applied to input variables, producing output variables."""

    __slots__ = ("op", "inputs", "outputs", "tag")

    def __init__(
        self, op: Op, inputs: list[Variable], output_types: list[TensorType], source=FIND_SOURCE
    ):
        """``source``: the user's line, which every output takes (``Op.make_node`` finds it
        once per node; by default each output finds it)."""
        self.op = op
        self.inputs = list(inputs)
        if len(output_types) == 1:  # most ops
            self.outputs = [Variable(output_types[0], self, 0, None, source)]
        else:
            self.outputs = _outputs_of(self, output_types, source)
        self.tag: Tag = Tag()

    @property
    def out(self) -> Variable:
        (output,) = self.outputs
        return output

    def clone_with(self, inputs: list[Variable], op: Op | None = None) -> Apply:
        """The same op (or ``op``, whose outputs have the same types) on other inputs,
        keeping output names, sources and tags."""
        new = Apply.__new__(Apply)
        new.op, new.inputs, new.tag = op or self.op, list(inputs), Tag(self.tag)
        new.outputs = []
        for old in self.outputs:
            var = old.clone()
            var.owner = new
            new.outputs.append(var)
        return new

    def __repr__(self):
        return f"Apply({self.op}, {self.inputs})"

    # -- pickle and copy (core/variable.py: a graph goes as a flat list, at any depth) -----
    def __reduce_ex__(self, protocol):
        """Its op, inputs, outputs and tag (as Python's default for ``__slots__``); the
        outputs, saved within it, go shallow. (The lists are copies: the outputs must be
        saved here, even where the pickle holds the list itself and is saving it now.)"""
        saving_node(self)
        inputs, outputs = list(self.inputs), list(self.outputs)
        state = {"op": self.op, "inputs": inputs, "outputs": outputs, "tag": self.tag}
        return copyreg.__newobj__, (type(self),), (None, state)

    def __copy__(self):
        new = Apply.__new__(Apply)
        new.op, new.inputs, new.outputs, new.tag = self.op, self.inputs, self.outputs, self.tag
        return new

    def __deepcopy__(self, memo):
        return deep_copy(self, memo)


def _outputs_of(node: Apply, output_types: list, source) -> list[Variable]:
    """The outputs of a node of several (a comprehension of its own: one in
    ``Apply.__init__`` would make a cell of ``self`` for every node built)."""
    return [Variable(t, node, i, None, source) for i, t in enumerate(output_types)]


class Op:
    """Base of every operation. Subclasses set ``__props__`` and implement the three rules."""

    __props__: tuple[str, ...] = ()
    nout = 1
    #: how many inputs the op takes; None: what :meth:`infer_types` names (``def
    #: infer_types(self, a, b)``: 2, ``*rest``: any number more). An op whose count is a
    #: parameter (an elementwise op, a fused one) sets it. ``_build`` checks it for every op.
    nin: int | None = None
    #: False for ops with no gradient at all (argmax, comparisons): documented in docs/ops.md
    differentiable = True
    #: False for an op that runs as often as it is written (a random draw, ``print_value``):
    #: never merged with a twin, folded, or computed twice in one call
    pure = True
    #: True where the result has the first input's shape whatever the values (a sort, a
    #: print) and computing it can fail for no shape: a shape it is read for alone is read
    #: off that input (``opt.rules._util.shape_source``), so the op does not run for it
    keeps_shape = False
    #: True for an op that computes the identity of its first input and changes only what the
    #: reverse pass sends back (grad_clip, grad_scale): ``sn.Rop`` differentiates it as x
    backward_only = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if not cls.__name__.startswith("_"):
            OP_REGISTRY.setdefault(cls.op_name(), cls)

    @classmethod
    def op_name(cls) -> str:
        """The name users and the text form see: ``Sum`` -> ``sum``, ``TrueDiv`` -> ``true_div``."""
        name = cls.__dict__.get("name")
        if name:
            return name
        out = "".join("_" + c.lower() if c.isupper() else c for c in cls.__name__)
        return out.lstrip("_")

    # -- identity ---------------------------------------------------------------------------
    def params(self) -> tuple:
        props = self.__props__
        if not props:
            return ()
        values = []  # a loop, not a comprehension, which would make a cell of self each call
        for p in props:
            values.append(getattr(self, p))
        return tuple(values)

    def prop_key(self) -> tuple:
        """The parameters as compared: by value and by the sign of a zero and the bits of a
        NaN (``symnb.core.keys``), so ``pad(x, 1, constant_values=-0.0)`` is not merged
        into the same pad with ``0.0``."""
        params = self.params()
        return exact_key(params) if params else params

    def __eq__(self, other):
        return type(self) is type(other) and self.prop_key() == other.prop_key()

    def __hash__(self):
        return hash((type(self), self.prop_key()))

    def __str__(self):
        if not self.__props__:
            return self.op_name()
        inner = ", ".join(f"{p}={getattr(self, p)!r}" for p in self.__props__)
        return f"{self.op_name()}[{inner}]"

    __repr__ = __str__

    # -- building ---------------------------------------------------------------------------
    def __call__(self, *inputs):
        """Apply the op; errors from its shape/type rule point at the user's line."""
        node = _build(self, inputs, user_location(skip=1))
        outputs = node.outputs
        return outputs[0] if len(outputs) == 1 else list(outputs)

    def make_node(self, *inputs) -> Apply:
        """The node, its outputs at the user's line, found once here (a variable a rule makes
        on the way finds the same line: every frame between is symnb's)."""
        return _build(self, inputs, user_location(skip=1))

    def symbolic_size(self, node: Apply, size_of) -> object:
        """The dim the int scalar output of ``node`` stands for (``x.shape[0]`` is x's first
        dim, ``x.shape[1] * 2`` twice its second), given ``size_of(var)`` for its inputs; None
        when it is no size the graph knows. ``reshape`` reads it to infer named dims."""
        return None

    def axis_sources(self, node: Apply) -> list | None:
        """For each axis of the (only) output, the ``(input index, input axis)`` pairs its
        elements come along, or None when the op does not say. The shape warnings follow the
        examples through it (the batch of unknown size, see ``core/shapes/roles.py``)."""
        return None

    def output_label(self, node: Apply) -> str | None:
        """A short name for the unnamed output of ``node`` in messages (None: no name)."""
        return None

    def default_updates(self, node: Apply) -> list:
        """``(shared variable, value)`` pairs that replace those variables' own
        ``default_update`` in a graph reading ``node``: a loop that advances a random stream
        step by step gives its last value, so a function not passed the loop's updates still
        moves the stream past every draw the loop made (none repeats in the next call)."""
        return []

    def count_error(self, inputs: list[Variable], takes: str) -> Exception:
        """The error for ``inputs`` of a number the op does not take (``takes``: "2 inputs",
        "at least 1 input"): an ArgumentError naming the op and both counts
        (``sn.matmul(a, b, c)``: "matmul takes 2 inputs, got 3"); an op whose wrong count
        has a meaning of its own (NumPy's ``where(cond)``) says so instead."""
        return ArgumentError(f"{self.op_name()} takes {takes}, got {len(inputs)}")

    # -- the rules every op defines --------------------------------------------------------
    def infer_types(self, *inputs: Variable) -> list[TensorType]:
        """Output types from input variables; raise ShapeError/DTypeError on misuse."""
        raise _no_rule(
            self,
            "infer_types",
            "(self, *inputs)",
            "a list of its outputs' types "
            "(TensorType(dtype, shape) each), computed from the inputs' .type",
        )

    def perform(self, *arrays):
        """The NumPy reference: one array, or a tuple (or list) of ``nout`` arrays, each of the
        dtype, rank and fixed sizes :meth:`infer_types` promised (every executor checks it:
        a RuntimeFailure naming the op otherwise)."""
        raise NotImplementedError(
            f"{type(self).__name__} defines no perform: an Op subclass defines "
            "perform(self, *arrays), its NumPy reference, returning one array (or a tuple of "
            "nout arrays) of the types its infer_types promised"
        )

    def grad(self, inputs: list[Variable], outputs: list[Variable], output_grads: list):
        """Symbolic gradient of each input given the outputs' gradients (None = zero)."""
        raise NotDifferentiable(f"{self.op_name()} has no gradient")

    def grad_wrt(self, needed: list[int], inputs, outputs, output_grads) -> list:
        """The gradients ``sn.grad`` asks for: those of the inputs at ``needed`` (the others
        may be anything; they are never used). By default all of :meth:`grad`; an op whose
        rule builds separate work per input overrides it to skip the rest."""
        return self.grad(inputs, outputs, output_grads)


def _no_rule(op: Op, method: str, signature: str, returning: str) -> OpDefinitionError:
    """The error for an op class that does not define ``method``, a rule symnb needs."""
    cls = type(op)
    return OpDefinitionError(
        f"{cls.__name__} (op {cls.op_name()!r}) defines no {method}: an Op subclass defines "
        f"{method}{signature}, returning {returning}"
        + (
            "; symnb builds each node with it (a make_node of its own is not called)"
            if "make_node" in cls.__dict__
            else ""
        )
    )


def _build(op: Op, inputs: tuple, loc) -> Apply:
    """``op`` applied to ``inputs`` (values other than variables wrapped as constants), its
    outputs at ``loc``: what ``op(...)`` and ``op.make_node(...)`` both do, each finding the
    user's line from its own caller outward (``op(...)`` is the common one: one call less)."""
    variables = inputs  # variables only, the common case (Apply makes the list)
    for x in inputs:
        if not isinstance(x, Variable):
            variables = _with_constants(inputs, loc)
            break
    if op.nin != len(inputs):  # (nin None: _check_count reads infer_types' parameters)
        _check_count(op, variables)
    try:
        types = op.infer_types(*variables)
    except (ShapeError, DTypeError, OpDefinitionError) as exc:
        raise _at_user_line(exc) from None
    check_upcast(op, variables, types)
    node = Apply(op, variables, types, loc)
    built = provided("node_built")  # a layer above that watches nodes (Theano's test values)
    if built is not None:
        built(node)
    return node


def _check_count(op: Op, inputs) -> None:
    """A wrong number of inputs is the op's ``count_error`` at the user's line, before the
    rule runs, whose own TypeError would name ``infer_types`` and its parameters."""
    nin, count = op.nin, len(inputs)
    least, most = (nin, nin) if nin is not None else _signature_count(type(op))
    if least <= count and (most is None or count <= most):
        return
    if most is None:
        takes = f"at least {counted(least, 'input')}"
    elif least == most:
        takes = counted(least, "input")
    else:
        takes = f"{least} to {counted(most, 'input')}"
    raise _at_user_line(op.count_error(inputs, takes))


@functools.cache
def _signature_count(cls: type[Op]) -> tuple[int, int | None]:
    """The fewest and most inputs (None: no limit) the op class's ``infer_types`` takes
    (its first parameter is ``self``)."""
    least, most = 0, 0
    for parameter in list(inspect.signature(cls.infer_types).parameters.values())[1:]:
        if parameter.kind == parameter.VAR_POSITIONAL:
            return least, None
        if parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD):
            most += 1
            least += parameter.default is parameter.empty
    return least, most


def _with_constants(inputs: tuple, loc) -> list:
    """The inputs, values other than variables wrapped as constants (a comprehension of its
    own: one in ``_build`` would make ``loc`` a cell on every node built)."""
    return [x if isinstance(x, Variable) else _wrapped(x, loc) for x in inputs]


def _wrapped(value, loc) -> Variable:
    """``as_variable(value)`` (the 0.9 of ``x * 0.9``) at the node's line, known already."""
    token = pin_location(loc)
    try:
        return as_variable(value)
    except (DTypeError, ShapeError) as exc:  # a value no constant holds (2**70, a ragged list)
        raise _at_user_line(exc) from None
    finally:
        unpin_location(token)


def located_call(fn, *args, errors=(ShapeError, DTypeError, ArgumentError)):
    """``fn(*args)``, a building or parsing step whose errors point at the user's line, as
    the errors of building a node do."""
    try:
        return fn(*args)
    except errors as exc:
        raise _at_user_line(exc) from None
