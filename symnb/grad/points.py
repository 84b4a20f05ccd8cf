"""Eval points checked when the function runs: a point (a ``Lop`` cotangent, a known
gradient, a ``Rop`` tangent) must have its variable's shape, since one that broadcasts would
be summed silently; where dims unknown when the graph is built leave that open, the check
reads the shape off values the product computes anyway, so it asks for no other input.

For each variable, every axis's length is found as an expression (:class:`Length`) of named
lengths, each name the length that some computed ``(value, axis)`` pairs broadcast to: a
computed value reads itself; an op that says which input axes each output axis comes along
(``axis_sources``: elementwise ops, dimshuffles, matmul) or a reduction passes its inputs'
lengths on; any other op's output lengths come from its own shape rule (``infer_types``),
applied to stand-ins of its inputs whose dims are those expressions (``pad`` of an ``(a,
b)`` input is ``(a + 2, b + 2)``, ``concatenate`` of two is ``(a + c, b)``, ``repeat`` by 2
along axis 0 ``(2 * a, b)``).
"""

from __future__ import annotations

import itertools
from typing import NamedTuple

from symnb.core.dims import DimMismatch, evaluate, names_in
from symnb.core.graph import ancestors, substitute
from symnb.core.op import Apply
from symnb.core.shapes import warnings as shape_warnings
from symnb.core.types import TensorType
from symnb.core.variable import Constant, SharedVariable, Variable
from symnb.ops.broadcast import Reduce
from symnb.ops.checks import same_shape, shape_from
from symnb.ops.creation import zeros
from symnb.ops.elemwise import Elemwise, not_equal, where
from symnb.ops.index import getitem
from symnb.ops.shape import RuleShape, shape


def checked_points(results: list, pairs, what: str) -> list:
    """``results`` with each point of ``pairs`` (point, variable) checked to have its
    variable's shape when the function runs (where unknown dims leave it open: a point that
    broadcasts would be summed silently). The shape is read off values the results compute
    already (:class:`_Lengths`), so the check asks for no input the results do not read; a
    view where one such value has the variable's shape."""
    computed = {
        id(v)
        for node in ancestors([r for r in results if r is not None])
        for v in (*node.inputs, *node.outputs)
    }
    computed |= _shared_read([var for _, var in pairs])
    checked_pairs = [
        (p, v)
        for p, v in pairs
        if p.type.ndim and id(p) in computed and not _both_fixed(p.type.shape, v)
    ]  # a 0-d point is broadcast on purpose
    lengths = _Lengths([var for _, var in checked_pairs], computed, by_rule=True).found
    replace = {}
    for point, var in checked_pairs:
        desc = point.describe().replace("an unnamed variable (", "(")
        message = f"{what} {desc} does not have the shape of {var.describe()}"
        checked = _shape_checked(point, var, lengths.get(id(var)), message)
        if checked is not point:
            replace[point] = checked
    return substitute(results, replace) if replace else results


def _shared_read(variables: list) -> set:
    """Ids of the shared variables ``variables`` are computed from: their values are read,
    not computed, so a check may read their shapes without asking for any input (``h =
    dot(x, W)`` of a shared ``W``, whose gradient computes no ``W``). Their shapes are read
    when the function runs, since ``set_value`` may change them."""
    leaves = [v for v in variables if isinstance(v, SharedVariable)]
    leaves += [
        v for node in ancestors(variables) for v in node.inputs if isinstance(v, SharedVariable)
    ]
    return {id(v) for v in leaves}


def zeros_read_off(var: Variable, computed: set) -> Variable | None:
    """Zeros of ``var``'s dtype and shape whose lengths are read off values in ``computed``
    (ids) when the function runs, so that they ask for no other value: ``var`` itself may be
    one only a branch computes (the gradient with respect to it where the branch is not
    taken, ``grad/reverse.py``). None where some axis's length is not found so."""
    lengths = _Lengths([var], computed).found.get(id(var))
    if lengths is None:
        return None
    sizes: dict = {}
    dims = []
    for s in lengths:
        if isinstance(s.static, int) or isinstance(s.dim, int):
            dims.append(s.static if isinstance(s.static, int) else s.dim)
            continue
        for name, reads in s.names.items():
            if name not in sizes:
                sizes[name] = _broadcast_of(reads)
        dims.append(evaluate(s.dim, sizes))
    return zeros(tuple(dims), var.type.dtype)


def _broadcast_of(reads) -> Variable:
    """The length ``(value, axis)`` reads broadcast to, NumPy's rule: the first that is not 1."""
    lengths = [value.shape[axis] for value, axis in reads]
    length = lengths[-1]
    for other in reversed(lengths[:-1]):
        length = where(not_equal(other, 1), other, length)
    return length


def _both_fixed(point_shape, var: Variable) -> bool:
    """Whether the point's and the variable's dims are all fixed (compared when the graph
    was built: nothing is left to check)."""
    return all(isinstance(d, int) for d in (*point_shape, *var.type.shape))


class Length(NamedTuple):
    """The length of one axis when the function runs: ``static``, the dim its type says;
    ``dim``, an int or an expression of the names in ``names`` (name -> the ``(value,
    axis)`` pairs whose lengths broadcast to it, NumPy's rule: the one that is not 1; axis
    None: the value of an integer scalar, an entry of a :class:`RuleShape` vector, negative
    where the rule could not tell the length)."""

    static: object
    dim: object
    names: dict

    @property
    def bare(self) -> bool:
        """Whether the length is one name's: the broadcast of its reads."""
        return isinstance(self.dim, str) and len(self.names) == 1

    @property
    def reads(self) -> int:
        return sum(len(r) for r in self.names.values())

    def same_as(self, other: Length) -> bool:
        """The same expression of the same names, each the broadcast of the same reads (the
        values compared by identity: ``==`` of two variables is a symbolic comparison)."""
        return self.dim == other.dim and _keyed(self.names) == _keyed(other.names)

    def reads_only(self, value: Variable, axis: int) -> bool:
        """Whether the length is that of ``value``'s axis ``axis`` alone."""
        return self.bare and list(_keyed(self.names).values()) == [((id(value), axis),)]


def _keyed(names: dict) -> dict:
    """``names`` with each read's value by its id (:meth:`Length.same_as`)."""
    return {name: tuple((id(v), a) for v, a in reads) for name, reads in names.items()}


class _Lengths:
    """For ``variables`` and what they are computed from, ``found``: id -> one
    :class:`Length` per axis (no entry where an axis has none). ``by_rule``: an axis no
    expression of known lengths gives may be read off the op's shape rule applied when the
    function runs (:meth:`_by_rule`; its length may then be unknown when it runs, so only a
    check, which then compares the other axes, takes it)."""

    #: tries of a shape rule on stand-ins, each after two names it found to be one
    TRIES = 8

    def __init__(self, variables: list, computed: set, by_rule: bool = False):
        self.computed, self.by_rule = computed, by_rule
        self.found: dict[int, tuple] = {}
        self._names: dict = {}  # (id(value), axis) or reads -> its name, given in order
        self._count = itertools.count()
        for var in variables:  # leaves: a computed input reads itself
            if id(var) in computed:
                self.found[id(var)] = self._reads_itself(var)
        for node in ancestors(variables):
            for var in node.inputs:
                if id(var) in computed and id(var) not in self.found:
                    self.found[id(var)] = self._reads_itself(var)
            sources = _length_sources(node)
            for var in node.outputs:
                if id(var) in computed:
                    self.found[id(var)] = self._reads_itself(var)
                    continue
                axes = [None] * var.type.ndim
                if sources is not None:
                    axes = [self._passed_on(var, k, node, p) for k, p in enumerate(sources)]
                if None in axes:
                    axes = _either(self._inferred(node, var), axes)
                if None in axes and self.by_rule:
                    axes = _either(axes, self._by_rule(node, var))
                if None not in axes:
                    self.found[id(var)] = tuple(axes)

    def _name(self, reads: tuple) -> str:
        """The name of the length ``reads`` broadcast to (one per reads, in order of first
        use, so that the same graph gives the same check)."""
        key = tuple((id(v), a) for v, a in reads)
        if key not in self._names:
            self._names[key] = f"_point_length{next(self._count)}"
        return self._names[key]

    def _reads_itself(self, var: Variable) -> tuple:
        lengths = []
        for k, d in enumerate(var.type.shape):
            reads = ((var, k),)
            name = self._name(reads)
            lengths.append(Length(d, name, {name: reads}))
        return tuple(lengths)

    def _passed_on(self, var: Variable, k: int, node: Apply, pairs) -> Length | None:
        """Axis ``k`` of ``var``, an output of ``node``, from the input axes ``pairs`` it
        comes along: one input whose static dim is var's gives the length alone; otherwise
        the inputs' lengths broadcast (names: their reads together; one expression: it);
        None where neither, nor a fixed dim, says the length."""
        static = var.type.shape[k]
        subs = []
        for i, a in pairs:
            of_input = self.found.get(id(node.inputs[i]))
            subs.append(None if of_input is None else of_input[a])
        alone = [s for s in subs if s is not None and s.names and static is not None]
        alone = [s for s in alone if s.static == static]
        if alone:
            best = min(alone, key=lambda s: s.reads)
            return Length(static, best.dim, best.names)
        if subs and None not in subs:
            named = [s for s in subs if s.names]
            if named and all(s.bare for s in named):
                reads = {}
                for s in named:
                    for r in s.names.values():
                        reads.update(((id(v), a), (v, a)) for v, a in r)
                reads = tuple(reads.values())
                name = self._name(reads)
                return Length(static, name, {name: reads})
            if named and all(s.same_as(named[0]) for s in named):
                return Length(static, named[0].dim, named[0].names)
        return Length(static, static, {}) if isinstance(static, int) else None

    def _inferred(self, node: Apply, var: Variable) -> list | None:
        """``var``'s lengths from its op's shape rule (``infer_types``) applied to stand-ins
        of the float inputs whose lengths are found, their dims those lengths' expressions
        (other inputs, such as indices, sizes and constants, stay themselves). Two names the
        rule finds unequal (``concatenate``'s other axes) must be one length when the function
        runs: they are made one and the rule tried again. None where the rule does not take
        the stand-ins; None for an axis whose length is not made of known names."""
        names: dict = {}
        dims_of = []
        for x in node.inputs:
            lengths = self.found.get(id(x))
            if lengths is None or isinstance(x, Constant) or not x.type.is_float:
                dims_of.append(None)
                continue
            dims_of.append([s.static if isinstance(s.static, int) else s.dim for s in lengths])
            for s in lengths:
                names.update(s.names)
        if all(d is None for d in dims_of):
            return None
        for _ in range(self.TRIES):
            stand_ins = [
                x if dims is None else Variable(x.type.with_shape(tuple(dims)), source=None)
                for x, dims in zip(node.inputs, dims_of)
            ]
            try:
                with shape_warnings.quiet():
                    types = node.op.infer_types(*stand_ins)
                break
            except Exception as exc:  # noqa: BLE001 - a rule that refuses stand-ins: no check
                clash = exc if isinstance(exc, DimMismatch) else exc.__context__
                if not isinstance(clash, DimMismatch):
                    return None
                a, b = clash.a, clash.b
                if not (isinstance(a, str) and isinstance(b, str) and a in names and b in names):
                    return None
                merged = {(id(v), k): (v, k) for v, k in names[a] + names[b]}  # (by identity)
                names[a] = tuple(merged.values())
                dims_of = [
                    None if dims is None else [a if d == b else d for d in dims] for dims in dims_of
                ]
        else:
            return None
        shape = types[var.index].shape
        if len(shape) != var.type.ndim:
            return None
        lengths = []
        for static, d in zip(var.type.shape, shape):
            if isinstance(static, int) or isinstance(d, int):
                fixed = static if isinstance(static, int) else d
                lengths.append(Length(static, fixed, {}))
                continue
            used = names_in(d) if d is not None else None
            if not used or not used <= names.keys():
                lengths.append(None)
                continue
            lengths.append(Length(static, d, {n: names[n] for n in used}))
        return lengths

    def _by_rule(self, node: Apply, var: Variable) -> list | None:
        """``var``'s lengths read off its op's shape rule applied when the function runs
        (:class:`RuleShape`) to the shapes of the inputs (the values of the integer and
        boolean ones), where each input is computed anyway or a constant: a length no
        expression of known lengths gives (``x[i]``: i's length; ``x[1:]``: n - 1 or 0; a
        mask's count; ``svd``'s min(m, n); a scan's steps given by ``n_steps``). None where
        an input is not: the check computes no value the product did not need."""
        kinds, args = [], []
        for x in node.inputs:
            if not isinstance(x.type, TensorType):
                return None
            if not (isinstance(x, Constant) or id(x) in self.computed):
                return None
            by_value = x.type.dtype.kind in "biu"
            kinds.append((x.type.dtype.name, by_value))
            args.append(x if by_value else shape(x))
        vector = RuleShape(node.op, var.index, var.type.ndim, tuple(kinds))(*args)
        lengths = []
        for k, static in enumerate(var.type.shape):
            if isinstance(static, int):
                lengths.append(Length(static, static, {}))
                continue
            reads = ((getitem(vector, k), None),)
            name = self._name(reads)
            lengths.append(Length(static, name, {name: reads}))
        return lengths


def _either(axes: list | None, others: list | None) -> list:
    """Per axis, the length ``axes`` has, else the one of ``others`` (None: no lengths; one
    of them is not None)."""
    if axes is None or others is None:
        return others if axes is None else axes
    return [a if a is not None else b for a, b in zip(axes, others)]


def _length_sources(node: Apply) -> list | None:
    """For each axis of the node's output(s), the (input, axis) pairs whose lengths
    broadcast to its length: the op's ``axis_sources``, or a reduction's kept axes (which
    reductions do not declare: the shape warnings would then follow a batch through them)."""
    if isinstance(node.op, Reduce) and len(node.inputs) == 1:
        axis, keepdims = node.op.axis, node.op.keepdims
        kept = [[] if a in axis else [(0, a)] for a in range(node.inputs[0].type.ndim)]
        return kept if keepdims else [p for a, p in enumerate(kept) if a not in axis]
    if len(node.outputs) != 1 and not isinstance(node.op, Elemwise):
        return None
    sources = node.op.axis_sources(node)
    if sources is None or len(sources) != node.outputs[0].type.ndim:
        return None
    return sources


def _shape_checked(point: Variable, var: Variable, lengths, message: str) -> Variable:
    """``point`` checked to have ``var``'s shape from ``lengths`` (:class:`_Lengths`): a
    view (``same_shape``) where one value gives every axis, else ``shape_from`` the values
    its names read."""
    if lengths is None:
        return point
    like = None
    if lengths and lengths[0].bare:
        (reads,) = lengths[0].names.values()
        like = reads[0][0] if len(reads) == 1 else None
    if (
        like is not None
        and like.type.ndim == var.type.ndim
        and all(s.reads_only(like, k) for k, s in enumerate(lengths))
    ):
        return same_shape(point, like, message)
    sources: dict[int, tuple[int, Variable]] = {}
    dims, names = [], {}
    for s in lengths:
        if isinstance(s.static, int) or isinstance(s.dim, int):
            dims.append(s.static if isinstance(s.static, int) else s.dim)
            continue
        dims.append(s.dim)
        for name, reads in s.names.items():
            for v, _ in reads:
                sources.setdefault(id(v), (len(sources), v))
            names[name] = tuple((sources[id(v)][0], a) for v, a in reads)
    return shape_from(point, dims, tuple(names.items()), [v for _, v in sources.values()], message)
