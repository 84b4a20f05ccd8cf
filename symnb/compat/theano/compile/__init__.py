"""``theano.function`` and ``theano.compile``'s names: ``In``/``Param``/``Out`` (``io.py``),
``Mode`` and the modes Theano named (``mode.py``), ``shared`` (``sharedvalue.py``).

``theano.function`` compiles with ``sn.function`` and adds what Theano's callers rely on:
inputs given as ``In(x, value=...)`` with defaults and names, ``allow_input_downcast``, the
check that every input is used (``on_unused_input``), Theano's mode names, and ``[]`` as
the result of a function with no outputs. ``theano.shared`` makes a symnb shared variable
whose dims are unknown (Theano's ``set_value`` may change a shape) unless ``broadcastable``
marks them 1.
"""

from __future__ import annotations

import warnings
from collections import Counter

import numpy as np

from symnb.compat.theano.compile import debugmode, nanguardmode, ops  # noqa: F401 - attributes
from symnb.compat.theano.compile.io import In, Out, Param, SymbolicOutput  # noqa: F401
from symnb.compat.theano.compile.mode import (  # noqa: F401
    MODES,
    DebugMode,
    Mode,
    MonitorMode,
    NanGuardMode,
    get_mode,
)
from symnb.compat.theano.compile.ops import as_op  # noqa: F401 - theano.compile.as_op
from symnb.compat.theano.compile.sharedvalue import shared  # noqa: F401
from symnb.compat.theano.configparser import ON_UNUSED, config
from symnb.compat.theano.folded import reads_of
from symnb.compat.theano.strict import refuse_looser_replacements, theano_type
from symnb.compat.theano.tensor.shared_randomstreams import StreamState
from symnb.compile.arguments import ambiguous_keyword
from symnb.compile.fit import check_givens, with_default_updates
from symnb.compile.function import function as _sn_function
from symnb.compile.update_pairs import as_given_pairs, as_update_pairs
from symnb.core import array_kinds
from symnb.core.graph import clone_graph, leaves, node_default_updates
from symnb.core.op import _at_user_line
from symnb.core.variable import SharedVariable, Variable
from symnb.core.words import counted
from symnb.errors import (
    ArgumentError,
    DTypeError,
    GraphError,
    InputError,
    InputShapeError,
    ShapeTypeError,
)


class UnusedInputError(GraphError):
    """An input of ``theano.function`` that no output or update depends on."""


class GivenInputError(GraphError, RuntimeError):
    """An input of ``theano.function`` that is also a ``givens`` key (its value would be
    ignored): a GraphError that ``except RuntimeError`` catches, as Theano's ``pfunc`` raised."""


def function(
    inputs,
    outputs=None,
    mode=None,
    updates=None,
    givens=None,
    no_default_updates=False,
    accept_inplace=False,
    name=None,
    rebuild_strict=True,
    allow_input_downcast=None,
    profile=None,
    on_unused_input=None,
):
    """``theano.function``: compile ``outputs`` as a function of ``inputs`` (variables or
    ``In``), with ``updates`` (a dict or a list of pairs) and ``givens``. ``outputs`` may be
    a dict (Theano 0.9's): the function then returns a dict with the same keys; a list or a
    tuple of outputs returns a list, as in Theano. An output may be wrapped in ``Out``.
    ``inputs`` is a list (or tuple), even of one input, as Theano 1.0 required. An input
    computed from other variables (``h = T.dot(x, W)``) is read as given, as Theano cut its
    inputs free of what computes them; an input that is also a ``givens`` key is refused."""
    if not isinstance(inputs, (list, tuple)):
        raise _at_user_line(
            ArgumentError(
                "theano.function: Input variables of a Theano function should be contained in "
                f"a list, even when there is a single input (inputs={_describe(inputs)}: "
                f"write inputs=[{_label(inputs)}])"
            )
        )
    if profile:
        raise _at_user_line(NotImplementedError("profile=True: call f.profile() instead"))
    output_keys = None
    if isinstance(outputs, dict):  # compiled as a list; the call puts the keys back
        output_keys, outputs = list(outputs), list(outputs.values())
    elif isinstance(outputs, tuple):  # Theano returns a list for any sequence of outputs
        outputs = list(outputs)
    if isinstance(outputs, Out):
        outputs = outputs.variable
    elif isinstance(outputs, list):
        outputs = [out.variable if isinstance(out, Out) else out for out in outputs]
    specs = [spec if isinstance(spec, In) else In(spec) for spec in inputs]
    variables = [spec.variable for spec in specs]
    for variable in variables:
        if isinstance(variable, SharedVariable):  # (before it is reported as unused)
            raise _at_user_line(
                InputError(
                    f"Cannot use a shared variable ({variable.name or variable.describe()}) "
                    "as explicit input. Consider substituting a non-shared variable via the "
                    "`givens` parameter"
                )
            )
    updates = as_update_pairs(updates)
    _check_update_types(updates)
    # (keys that are variables, for _check_used); rebuild_strict=False: a given of another
    # dtype is taken, the graph rebuilt over it with its types inferred anew (theano.clone's
    # strict=False)
    givens = as_given_pairs(givens)
    if rebuild_strict:  # (before check_givens casts a safe dtype)
        refuse_looser_replacements(givens, "theano.function: givens", "rebuild_strict=False")
    givens = list(check_givens(givens, fit_types=rebuild_strict).items())
    _refuse_given_inputs(variables, givens)
    skipped = _without_defaults(no_default_updates)
    policy = on_unused_input or config.on_unused_input
    _check_used(variables, outputs, updates, givens, policy, skipped)
    compiled_inputs, outputs, updates, givens = _cut_free(
        variables, outputs, updates, givens, skipped
    )
    if not rebuild_strict:
        outputs, updates, givens = _rebuilt_over(givens, outputs, updates, skipped)
    built = {
        "outputs": [] if outputs is None else outputs,
        "updates": _pairs(updates),
        "givens": _pairs(givens),
        "name": name,
        "no_default_updates": skipped,
        **get_mode(mode).options(),
    }
    compiled = _sn_function(compiled_inputs, **built)
    return TheanoFunction(
        compiled, specs, allow_input_downcast, built, output_keys, mode=get_mode(mode)
    )


def _check_update_types(updates: list) -> None:
    """Theano's ``rebuild_collect_shared``: a symbolic update must have its shared variable's
    type, the same dtype (no cast is made: a float32 value of a float64 variable is refused)
    and the same broadcastable pattern (a dim known to be 1 where the variable's is not, as
    ``W.mean(axis=0, keepdims=True)`` of a matrix, or the reverse). A value that is not a
    variable (a number, an array) is converted as ``sn.function`` converts it."""
    for target, value in updates:
        if not (isinstance(target, SharedVariable) and isinstance(value, Variable)):
            continue  # (a target that is no shared variable: sn.function's error names it)
        want, got = target.type, value.type
        same_dtype = got.dtype == want.dtype
        if same_dtype and got.broadcastable == want.broadcastable:
            continue
        if not same_dtype:
            fix = f"Cast the update with T.cast(value, '{want.dtype.name}')."
            error = DTypeError
        else:
            fix, error = _pattern_fix(got.broadcastable, want.broadcastable), ShapeTypeError
        raise _at_user_line(
            error(
                "An update must have the same type as the original shared variable "
                f"(shared_var={target.describe()}, shared_var.type={theano_type(want)}, "
                f"update_val={value.describe()}, update_val.type={theano_type(got)}). {fix}"
            )
        )


def _pattern_fix(got: tuple, want: tuple) -> str:
    """What makes an update's broadcastable pattern ``got`` its variable's ``want``."""
    if len(got) != len(want):
        return f"The update has {len(got)} dims where the variable has {len(want)}."
    loose = [str(i) for i, (a, b) in enumerate(zip(got, want)) if a and not b]
    fixed = [str(i) for i, (a, b) in enumerate(zip(got, want)) if b and not a]
    fixes = []
    if loose:
        fixes.append(
            "If the difference is related to the broadcast pattern, you can call the "
            "tensor.unbroadcast(var, axis_to_unbroadcast[, ...]) function to remove "
            f"broadcastable dimensions (here T.unbroadcast(value, {', '.join(loose)}))."
        )
    if fixed:  # (the variable's dims of length 1: the value's must be known to be 1 too)
        fixes.append(
            f"The variable's dim {', '.join(fixed)} is broadcastable (of length 1): "
            f"T.addbroadcast(value, {', '.join(fixed)}) marks the update's so."
        )
    return " ".join(fixes)


def _without_defaults(skipped):
    """Theano's ``no_default_updates``: True, False, or the shared variables whose default
    updates are left out, where a draw's ``rng`` (Theano's shared variable holding the
    draw's generator; a ``StreamState`` here) stands for the counter the draw advances."""
    if isinstance(skipped, (list, tuple, set)):
        return [var.counter if isinstance(var, StreamState) else var for var in skipped]
    return [skipped.counter] if isinstance(skipped, StreamState) else skipped


def _pairs(mapping) -> list:
    """Updates or givens as a list of pairs (Theano takes a dict or pairs)."""
    return list(mapping.items()) if isinstance(mapping, dict) else list(mapping or [])


def _as_list(inputs) -> list:
    return list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]


def _describe(value) -> str:
    if isinstance(value, In):
        return f"In({value.variable.describe()})"
    return value.describe() if isinstance(value, Variable) else repr(value)


def _label(value) -> str:
    """How the fix names an input: its name, else ``x``."""
    variable = value.variable if isinstance(value, In) else value
    return getattr(variable, "name", None) or "x"


def _refuse_given_inputs(variables: list, givens: list) -> None:
    """Theano's ``pfunc`` refused an input that is also a ``givens`` key, whatever
    ``on_unused_input`` says: the given replaces it, so its value would be ignored."""
    for i, var in enumerate(variables):
        if not any(var is key for key, _ in givens):
            continue
        raise _at_user_line(
            GivenInputError(
                f"theano.function: You are trying to replace variable {var.describe()} (input "
                f"{i}) through the `givens` parameter, but this variable is an input to your "
                "function. Replacing inputs is currently forbidden because it has no effect. "
                "One way to modify an input `x` to a function evaluating f(x) is to define a "
                "new input `y` and use `theano.function([y], f(x), givens={x: g(y)})`. Another "
                "solution consists in using `theano.clone`, e.g. like this: "
                "`theano.function([x], theano.clone(f(x), replace={x: g(x)}))`."
            )
        )


def _cut_free(variables: list, outputs, updates: list, givens: list, skipped=False):
    """Theano's ``FunctionGraph`` cut its inputs free of their owners
    (``clone_get_equiv(copy_inputs_and_orphans=True)``): an input computed from other
    variables, ``h = T.dot(x, W)`` in ``theano.function([h], T.tanh(h))``, is read as the
    value given for it, not computed. Each such input is replaced, wherever the outputs,
    updates, default updates (those ``skipped``, ``no_default_updates``, left out) and
    givens' replacements read it, by a new input of its type and name; the inputs to
    compile, outputs, updates (the default updates among them) and givens are returned. The
    default updates are those of the graph so cut (what computes an input is not read: a
    draw only it reads does not advance), each cut too (a draw sized by ``h.shape``)."""
    owned = [var for var in variables if var.owner is not None]
    if not owned:
        return variables, outputs, updates, givens
    fresh = {var: var.clone() for var in owned}  # (clone_graph keys its table by id)
    inputs = [fresh[var] if var.owner is not None else var for var in variables]

    def cut(values: list) -> list:
        copies = iter(clone_graph([v for v in values if isinstance(v, Variable)], fresh))
        return [next(copies) if isinstance(v, Variable) else v for v in values]

    if isinstance(outputs, Variable):
        outputs = cut([outputs])[0]
    elif isinstance(outputs, list):
        outputs = cut(outputs)
    updates = list(zip([t for t, _ in updates], cut([v for _, v in updates]), strict=True))
    givens = list(zip([k for k, _ in givens], cut([v for _, v in givens]), strict=True))
    # collected as sn.function collects them (after the givens), reading the cut inputs
    reads = [v for v in _as_list([] if outputs is None else outputs) if isinstance(v, Variable)]
    found = with_default_updates(updates, reads, skipped, {**fresh, **dict(givens)})
    defaults = found[len(updates) :]
    updates += zip([t for t, _ in defaults], cut([v for _, v in defaults]), strict=True)
    return inputs, outputs, updates, givens


def _rebuilt_over(givens: list, outputs, updates: list, skipped=False):
    """``rebuild_strict=False``: the outputs and updates' values with ``givens`` applied,
    every node above a replacement built again by its op (types inferred anew, as Theano's
    ``rebuild_collect_shared(rebuild_strict=False)``); no givens are left to apply. The
    default updates (those ``skipped``, ``no_default_updates``, left out) are collected
    first, as ``sn.function`` collects them after its givens, and rebuilt with the updates:
    one reading a key (a draw sized by ``x.shape``) reads its replacement, as the outputs do,
    where ``sn.function``, given no givens, would have added it reading the key itself."""
    if not givens:
        return outputs, updates, givens
    as_list = outputs if isinstance(outputs, list) else [outputs]
    reads = [v for v in as_list if isinstance(v, Variable)]
    updates = with_default_updates(updates, reads, skipped, dict(givens))
    values = [v for v in as_list + [v for _, v in updates] if isinstance(v, Variable)]
    copies = iter(clone_graph(values, dict(givens), rebuild=True))

    def swap(v):
        return next(copies) if isinstance(v, Variable) else v

    new_outputs = [swap(v) for v in as_list]
    updates = [(target, swap(value)) for target, value in updates]
    return (new_outputs if isinstance(outputs, list) else new_outputs[0]), updates, []


def _check_used(variables, outputs, updates, givens, policy, skipped=False) -> None:
    """Theano refuses (by default) an input that nothing computed depends on: usually a
    variable left out of the graph by mistake. As in Theano, the walk from the outputs stops
    at every input: an input that only another (computed) input is computed from is unused,
    since that input is read as given (``theano.function([x, h], T.tanh(h))``, h =
    ``T.dot(x, W)``: x). The default updates the function writes are read too (Theano
    checked the updates its ``rebuild_collect_shared`` collected), but for those ``skipped``
    (``no_default_updates``)."""
    if policy not in ON_UNUSED:
        raise _at_user_line(ArgumentError(f"on_unused_input must be one of {ON_UNUSED}"))
    if policy == "ignore":
        return
    used = _used_leaves(outputs, updates, givens, variables, skipped)
    for i, var in enumerate(variables):
        if id(var) in used:
            continue
        blocker = next(
            (
                (j, other)
                for j, other in enumerate(variables)
                if other.owner is not None and any(var is leaf for leaf in leaves([other]))
            ),
            None,
        )
        why = (
            ""
            if blocker is None
            else f" (input {blocker[0]} {blocker[1].describe()} is computed from it, but an "
            "input is read as given, not computed)"
        )
        message = (
            f"theano.function: input {i} {var.describe()} is not used to compute the "
            f"outputs or updates{why}; pass on_unused_input='warn' or 'ignore' to allow it"
        )
        if policy == "raise":
            raise _at_user_line(UnusedInputError(message))
        warnings.warn(message, stacklevel=3)


def _used_leaves(outputs, updates, givens, inputs=(), skipped=True) -> set[int]:
    """Ids of the leaves and ``inputs`` the outputs and updates read once ``givens``
    replaced their keys, as Theano checked the graph after its givens: what only a key reads
    (``h`` of ``givens={h: y}``, ``h = x * 2``) is not read. A replacement is read as written
    (givens are not applied inside one, as ``sn.function`` substitutes them). The walk stops
    at an input: what computes it is not read. Unless ``skipped`` is True, the default update
    of each shared variable so read is read too (givens applied), as ``sn.function`` collects
    them, but for one updated already or in ``skipped`` (``no_default_updates``' list)."""
    pairs = updates.items() if isinstance(updates, dict) else (updates or [])
    reads = [v for v in _as_list([] if outputs is None else outputs) if isinstance(v, Variable)]
    reads += [v for _, v in pairs if isinstance(v, Variable)]
    given = givens.items() if isinstance(givens, dict) else (givens or [])
    substitute = {id(k): v for k, v in given}
    stops = {id(v) for v in inputs}
    # the shared variables whose default update is not read: updated, skipped, or read
    taken = {id(t) for t, _ in pairs} | {id(v) for v in _skipped_ones(skipped)}
    by_node: dict[int, Variable] = {}  # a node's own default updates (a loop's last counter)
    found: set[int] = set()
    met: list = []  # shared variables read, whose default updates are read next
    seen: set[tuple[int, bool]] = set()
    pending = [(v, True) for v in reads]  # (variable, whether givens apply there)
    while pending:
        while pending:
            var, replacing = pending.pop()
            if (id(var), replacing) in seen:
                continue
            seen.add((id(var), replacing))
            if replacing and id(var) in substitute:
                if isinstance(substitute[id(var)], Variable):
                    pending.append((substitute[id(var)], False))
            elif var.owner is None or id(var) in stops:
                found.add(id(var))
                if isinstance(var, SharedVariable) and skipped is not True:
                    met.append(var)
            else:
                pending.extend((v, replacing) for v in var.owner.inputs)
                for target, value in node_default_updates(var.owner):
                    by_node.setdefault(id(target), value)
            # what Theano's graph of it read, where symnb's folded it (T.grad(3 * s, s))
            pending.extend((v, replacing) for v in reads_of(var))
        for leaf in met:  # every read walked: then the default updates of what it read
            default = by_node.get(id(leaf), leaf.tag.get("default_update"))
            if default is not None and id(leaf) not in taken:
                taken.add(id(leaf))
                pending.append((default, True))
        met = []
    return found


def _skipped_ones(skipped) -> list:
    """``no_default_updates`` as the list of shared variables it leaves out (True: see
    ``_used_leaves``; False or None: none)."""
    if isinstance(skipped, (list, tuple, set)):
        return list(skipped)
    return [skipped] if isinstance(skipped, Variable) else []


def _check_swap(swap: dict, after: list, updates: list) -> None:
    """``f.copy(swap=...)``: each key a shared variable the function reads (its graph after
    ``givens``) or updates, each value a shared variable of the key's type."""
    read = [v for v in leaves(after) if isinstance(v, SharedVariable)]
    read += [target for target, _ in updates if not any(target is v for v in read)]
    for old, new in swap.items():
        if not (isinstance(old, SharedVariable) and isinstance(new, SharedVariable)):
            raise _at_user_line(
                ArgumentError(
                    f"copy: swap maps shared variables to shared variables, not {old!r} -> {new!r}"
                )
            )
        if not any(old is v for v in read):
            names = ", ".join(v.describe() for v in read) or "none"
            raise _at_user_line(
                GraphError(
                    f"copy: swap of {old.describe()}: the function neither reads nor updates "
                    f"it (Theano: 'SharedVariable: {old.name} not found'); the shared "
                    f"variables it reads or updates, after its givens: {names}"
                )
            )
        if old.type != new.type:
            raise _at_user_line(
                ArgumentError(
                    f"copy: swap of {old.describe()} for {new.describe()}: their types differ"
                )
            )


class FunctionGraph:
    """``f.maker.fgraph``: symnb's optimised ``Graph`` (``toposort()``, ``inputs``,
    ``outputs``, ``clients``, ``nodes``...) with Theano's ``apply_nodes`` and ``variables``,
    both sets."""

    def __init__(self, graph):
        self.graph = graph

    @property
    def apply_nodes(self) -> set:
        return set(self.graph.nodes)

    @property
    def variables(self) -> set:
        return set(self.graph.variables())

    def __getattr__(self, name):
        if name == "graph":  # not set yet (unpickling)
            raise AttributeError(name)
        return getattr(self.graph, name)

    def __repr__(self):
        return f"FunctionGraph({self.graph!r})"


class FunctionMaker:
    """What ``f.maker`` holds in Theano that programs read: ``fgraph``, the graph after the
    rewrites (``FunctionGraph``), ``inputs``, the ``In`` specs, ``mode``, the ``Mode`` it
    was compiled with, and ``output_keys``, the keys of dict outputs (else None)."""

    def __init__(self, fgraph, inputs, output_keys=None, mode=None):
        self.fgraph, self.inputs, self.output_keys = FunctionGraph(fgraph), inputs, output_keys
        self.mode = mode


class TheanoFunction:
    """A compiled ``theano.function``: call it with positional values, keywords by input
    name, or neither for inputs with defaults. ``symnb_function`` is the symnb Function
    (its ``graph``, ``text()``, ``kernels``, ``profile()`` are reachable here too).
    ``output_keys``: the keys of outputs given as a dict, which a call returns (else None)."""

    #: Theano's ``f.trust_input``: True let Theano skip checking the arguments. Every call
    #: here checks them (in the C runner's entry, where there is one: cheap), so setting it
    #: changes nothing; a wrong argument is an error either way
    trust_input = False

    def __init__(
        self,
        compiled,
        specs: list[In],
        allow_input_downcast,
        built: dict,
        output_keys=None,
        mode=None,
    ):
        self.symnb_function = compiled
        #: the ``Mode`` it was compiled with (``f.maker.mode``)
        self.mode = mode
        self.output_keys = output_keys
        self.specs = specs
        self.allow_input_downcast, self.built = allow_input_downcast, built
        named = Counter(spec.name for spec in specs if spec.name)
        #: the inputs a keyword names: only a name one input has (two inputs named "x": f(x=...)
        #: is Theano's "Ambiguous name" error, where it took the last)
        self.names = {spec.name: i for i, spec in enumerate(specs) if named[spec.name] == 1}
        self.downcast = [
            spec.allow_downcast if spec.allow_downcast is not None else allow_input_downcast
            for spec in specs
        ]
        self.no_outputs = not compiled.results
        #: a call with every input given positionally and none to convert goes straight to
        #: the compiled function (its entry checks the values): about 1.5 us less per call
        self.direct = len(specs), not any(self.downcast)

    def __call__(self, *args, **kwargs):
        count, direct = self.direct
        if kwargs or len(args) != count or not direct:
            args = self._values(args, kwargs)
        try:
            result = self.symnb_function(*args)
        except InputShapeError:
            raise
        except InputError as exc:  # a dtype that does not convert safely
            if any(isinstance(v, np.ma.MaskedArray) for v in args):
                raise  # (refused with allow_input_downcast too)
            raise type(exc)(
                f"{exc}\n  hint: theano.function(..., allow_input_downcast=True) "
                "converts inputs to the declared dtypes"
            ) from None
        if self.output_keys is not None:
            return dict(zip(self.output_keys, result or ()))
        return [] if self.no_outputs else result

    def _values(self, args, kwargs) -> list:
        """The inputs in order: keywords and defaults filled in, downcasts applied."""
        values = self._bind(args, kwargs)
        return [
            _downcast(v, s.variable, i) if d else v
            for i, (v, s, d) in enumerate(zip(values, self.specs, self.downcast))
        ]

    def _bind(self, args, kwargs) -> list:
        if len(args) > len(self.specs):
            raise InputError(
                f"the function takes {counted(len(self.specs), 'input')}, got {len(args)}"
            )
        values = list(args) + [_MISSING] * (len(self.specs) - len(args))
        for key, value in kwargs.items():
            if key not in self.names:
                raise InputError(self._unbound_keyword(key))
            i = self.names[key]
            if values[i] is not _MISSING:  # Theano refuses it too; here the keyword won
                raise InputError(
                    f"multiple values for input {i} {self.specs[i].variable.describe()}: "
                    f"given by position and as the keyword {key}="
                )
            values[i] = value
        for i, spec in enumerate(self.specs):
            if values[i] is _MISSING:
                if spec.value is None:
                    raise InputError(f"missing input {i} {spec.variable.describe()}")
                values[i] = spec.value
        return values

    def _unbound_keyword(self, key) -> str:
        both = ambiguous_keyword(key, [spec.name for spec in self.specs])
        if both:  # (Theano's words first)
            return f"Ambiguous name: {both} (or name them apart: In(x, name=...))"
        return f"the function has no input named {key!r}"

    @property
    def maker(self) -> FunctionMaker:
        """``f.maker.fgraph``: the optimised graph (``toposort()``, ``inputs``, ``outputs``),
        as course code inspects it after compiling."""
        mode = self.__dict__.get("mode")  # (a pickle of a copy made before copies had one)
        return FunctionMaker(self.symnb_function.graph, self.specs, self.output_keys, mode)

    def copy(self, share_memory=False, swap=None, delete_updates=False, name=None, profile=None):
        """``f.copy()``: the same function compiled again from its graph after ``givens``
        (Theano copied its compiled graph), with the same updates, random streams' included.
        ``swap`` maps shared variables to others of the same type that the copy reads and
        updates instead, wherever the function reads them (through a given's replacement
        too: ``givens={x: data[i:j]}``); a key it neither reads nor updates is a ValueError,
        as in Theano. ``delete_updates=True`` leaves out every update (random streams' too).
        ``share_memory`` is accepted: copies never share buffers here."""
        swap = dict(swap or {})
        compiled = self.symnb_function
        after = list(compiled.graph_before.outputs)  # the outputs, then the updates' values
        _check_swap(swap, after, compiled.updates)
        if swap:
            after = clone_graph(after, swap)
        n_out = len(compiled.results)
        outputs = self.built["outputs"]
        swapped = {id(old): new for old, new in swap.items()}
        built = dict(
            self.built,
            outputs=after[:n_out] if isinstance(outputs, (list, tuple)) else after[0],
            givens=[],  # applied already
            # every update of the original, default updates included, so none is added
            updates=[]
            if delete_updates
            else [
                (swapped.get(id(target), target), value)
                for (target, _), value in zip(compiled.updates, after[n_out:])
            ],
            no_default_updates=True,
            name=name or self.built["name"],
        )
        variables = list(compiled.inputs)  # (an input computed from others: its cut copy)
        return TheanoFunction(
            _sn_function(variables, **built),
            self.specs,
            self.allow_input_downcast,
            built,
            self.output_keys,
            mode=self.__dict__.get("mode"),
        )

    def __copy__(self):
        """``copy.copy(f)`` is ``f.copy()``, as in Theano: compiled again, reading and
        updating the same shared variables (``copy.deepcopy`` copies them too)."""
        return self.copy()

    def __getattr__(self, name):
        if name == "symnb_function":  # not set yet (a copy being built)
            raise AttributeError(name)
        return getattr(self.symnb_function, name)

    def __repr__(self):
        return f"<theano.function over {self.symnb_function!r}>"


_MISSING = object()


def _downcast(value, var: Variable, index: int):
    """``allow_input_downcast``: the value converted to the input's dtype, as Theano did
    (an array is cast as NumPy casts it), once read as a call without it reads it
    (``core/array_kinds.py``): a DataArray matched to the input's named dims by name, a torch
    tensor that requires grad detached (with an InputWarning), a torch view's negative or
    conjugate bit resolved, a masked array refused (Theano's filter dropped its mask). A
    value NumPy cannot convert (a Python int out of the dtype's range: NumPy 2 refuses it,
    where Theano's NumPy wrapped it; a string for a number) is an InputError naming the
    input, its dtype and the value."""
    label = f"input {index} '{var.name}'" if var.name else f"input {index}"
    try:
        array = array_kinds.host_value(value, label, var.type.shape)
    except InputError as exc:
        raise _at_user_line(exc) from None
    if isinstance(array, np.ndarray) and array.dtype == var.type.dtype:
        return array
    try:
        return np.asarray(array, dtype=var.type.dtype)
    except (OverflowError, ValueError, TypeError) as exc:
        text = repr(value)
        text = text if len(text) <= 60 else text[:57] + "..."
        raise _at_user_line(
            InputError(
                f"input {index} {var.describe()}: allow_input_downcast cannot convert {text} "
                f"to {var.type.dtype.name}: {exc}"
            )
        ) from None


#: ``theano.compile.SharedVariable`` (also ``theano.compile.sharedvalue.SharedVariable``)
SharedVariable = SharedVariable
