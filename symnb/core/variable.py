"""Symbolic variables: inputs, constants, shared values and the outputs of applied ops."""

from __future__ import annotations

import copy
import heapq
import itertools
import numbers
import operator
import threading
import weakref

import numpy as np

from symnb.core import locks
from symnb.core.array_kinds import (
    host_value,
    inexact_integer,
    integer_leaves,
    lends_memory,
    rounded_integers,
)
from symnb.core.dim_sizes import SizeConflict, check_sizes
from symnb.core.dims import format_shape, matches_value, normalize_shape
from symnb.core.hooks import hook, provided, register
from symnb.core.source import SourceLoc, assigned_target, at_user_line, user_location, user_span
from symnb.core.sugar import TensorMethods
from symnb.core.types import MAX_RANK, TensorType, as_dtype
from symnb.errors import ArgumentError, DTypeError, InputError, InputShapeError, ShapeError

_ids = itertools.count()
#: ``Variable(source=FIND_SOURCE)``, the default: find the user's line by walking the stack
FIND_SOURCE = object()


class Tag(dict):
    """A variable's or node's notes: a dict whose keys are also attributes
    (``x.tag.test_value = v`` is ``x.tag["test_value"] = v``, as Theano's scratchpad)."""

    __slots__ = ()

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"tag has no {name!r}") from None

    def __setattr__(self, name, value):
        self[name] = value

    def __delattr__(self, name):
        try:
            del self[name]
        except KeyError:
            raise AttributeError(f"tag has no {name!r}") from None


class _MadeOnFirstUse:
    """An attribute whose value ``make()`` creates at the first read and stores on the
    instance, where later reads find it first (a non-data descriptor, as
    ``functools.cached_property`` without its lock). A dict per variable was a tenth of what
    building a node allocated; and a ``__getattr__`` on the class, the other way to make one
    late, would slow every attribute read of a variable (Python cannot specialise them)."""

    def __init__(self, make):
        self.make = make

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        value = obj.__dict__[self.name] = self.make()
        return value


#: how ``describe()`` names a variable with no name
_UNNAMED = "an unnamed variable"


class Variable(TensorMethods):
    """A symbolic tensor: a type, the node that computes it (``owner``) or none, and a name.

    Hashing is by identity; ``==`` builds a comparison, as in NumPy, so never test variables
    with ``in`` on a list (use identity or a dict).
    """

    __array_priority__ = 1000  # numpy arrays on the left defer to our operators

    def __init__(
        self,
        type: TensorType,
        owner=None,
        index: int = 0,
        name: str | None = None,
        source=FIND_SOURCE,
    ):
        self.type = type
        self.owner = owner
        self.index = index
        self.name = check_name(name, type)
        #: the user's file and line (``source``: already found by the caller, as ``Apply`` has);
        #: of an unnamed input, the span of the call that made it (``assigned_name``)
        if source is FIND_SOURCE:
            unnamed = name is None and owner is None and not isinstance(self, Constant)
            source = user_span(skip=1) if unnamed else user_location(skip=1)
        self.source: SourceLoc | None = source
        self.uid = next(_ids)
        if type.ndim > MAX_RANK:
            raise _too_many_dims(self)

    #: a dict of notes (keys also attributes), made on first use: most variables never get one
    tag = _MadeOnFirstUse(Tag)

    __hash__ = object.__hash__

    def __repr__(self):
        return f"{self.name or 'Variable'}:{self.type}"

    def __str__(self):
        return self.name or f"<{self.type}>"

    def __bool__(self):
        """``if x > 0:`` cannot branch on a value that exists only when the function runs
        (the Theano layer's variables are true, but for comparisons: its "truth_value" hook)."""
        truth = provided("truth_value")
        if truth is not None and truth(self):
            return True
        raise at_user_line(
            InputError(
                f"`if`, `while`, `and`, `or` and `not` need a truth value, but "
                f"{self.describe()} is symbolic: its value is unknown until the function runs"
                "\n  hint: to compute one branch or the other, write "
                "sn.ifelse(x > 0, then_value, else_value) (only the branch taken runs); to "
                "choose element by element, sn.where(cond, a, b) (also spelled sn.switch)"
            )
        )

    # -- pickle and copy: a loaded or copied variable is a new one, with a uid of this
    # process; a graph goes as one flat list of its leaves and nodes, whatever its depth --
    def __getstate__(self):
        """Everything but the uid: a loaded or copied variable takes a new one, so it is
        never taken for one made in this process (an unknown dim's private name, a loop's
        "made while its step was traced", the gradient's "made since")."""
        state = dict(self.__dict__)
        state.pop("uid", None)
        return state

    def __setstate__(self, state):
        state = dict(state)
        state.pop("uid", None)  # pickles of symnb 0.1 kept the pickling process's uid
        self.__dict__.update(state)
        if "uid" not in self.__dict__:  # (one loaded from such a pickle: in the order loaded)
            self.uid = next(_ids)

    def __reduce_ex__(self, protocol):
        """Pickled shallow, or as the flat graph before it then itself (``_reduced``)."""
        return _reduced(self)

    def __copy__(self):
        """``copy.copy``: of a leaf, a new leaf of its type, name and notes (a new uid); of a
        computed variable, the output of a copy of its node over the same inputs (the graph
        above is shared, as a shallow copy shares), so the copy computes what the original
        does, gradients included (it was a variable its node did not list among its outputs:
        a KeyError compiling it, a zero gradient through it)."""
        if self.owner is not None:
            return self.owner.clone_with(self.owner.inputs).outputs[self.index]
        new = type(self).__new__(type(self))
        new.__setstate__(self.__getstate__())
        return new

    def __deepcopy__(self, memo):
        return deep_copy(self, memo)

    def clone(self) -> Variable:
        """A fresh variable of the same type and name, with no owner."""
        new = type(self).__new__(type(self))
        new.__dict__.update(self.__dict__)
        new.owner, new.uid = None, next(_ids)
        if "tag" in self.__dict__:
            new.tag = Tag(self.tag)
        return new

    @property
    def label(self) -> str | None:
        """How messages name it: its name, or what its op says (``W.T`` for an unnamed
        transpose of ``W``), or None."""
        if self.name or self.owner is None:
            return self.name
        return self.owner.op.output_label(self.owner)

    def describe(self) -> str:
        """How errors name this variable: its name (or the Python name the user's line gave
        it), dtype and shape."""
        label = self.message_name()
        name = f"'{label}'" if label else _UNNAMED
        return f"{name} ({self.type.dtype.name}{format_shape(self.type.shape)})"

    def describe_as(self, word: str, unnamed: str | None = None) -> str:
        """This variable after a word that says what it is, for messages: ``word`` and its
        ``describe()`` ("shared 'W' (float32(3,))", "input 'x' (float64(?,))"); where it has
        no name, ``unnamed`` in place of "an unnamed variable" (by default "an unnamed
        ``word`` variable": "an unnamed shared variable (float32(3,))"), as "shared an
        unnamed variable" does not read."""
        described = self.describe()
        if not described.startswith(_UNNAMED):
            return f"{word} {described}"
        return (unnamed or f"an unnamed {word} variable") + described[len(_UNNAMED) :]

    def message_name(self) -> str | None:
        """The name messages and their hints call it by, as :meth:`describe` does: its
        ``label``, else the Python name its line assigned it (``assigned_name``); None for
        neither."""
        return self.label or self.assigned_name()

    def assigned_name(self) -> str | None:
        """The Python name of an unnamed input or shared variable: the one target of the
        assignment whose whole value is the call that made it (``W = sn.shared(np.zeros(3))``
        is W; the shared value of ``h = sn.tanh(sn.dot(x, sn.shared(w)))`` has none)."""
        if self.owner is not None or isinstance(self, Constant):
            return None
        return assigned_target(self.source)

    def eval(self, inputs: dict | None = None, backend: str = "py"):
        """Compute this variable with the given input values: ``(x + 1).eval({x: 2.0})``
        (keys may also be the inputs' names: ``{"x": 2.0}``)."""
        return hook("eval")(self, inputs or {}, backend)

    # -- rich display (Jupyter/IPython): drawn by symnb.viz, through the hooks it registers --
    def _repr_mimebundle_(self, include=None, exclude=None):
        return hook("variable_bundle")(self, include, exclude)

    def _repr_html_(self):
        return hook("variable_card")(self)

    def _repr_latex_(self):
        return f"${hook('to_latex')(self)}$"

    def _repr_pretty_(self, printer, cycle):
        printer.text(hook("variable_text")(self))


# -- pickle and copy of graphs -------------------------------------------------------------
# Pickle and copy.deepcopy recurse through what an object holds: a variable's owner, the
# owner's inputs, their owners... one Python level a few frames deep per node, so their
# defaults fail on a graph of a hundred or so nodes in a line. Here a variable that pickle
# meets anywhere but within its owner goes as the flat list of the leaves and nodes it is
# computed from (``in_making_order``), then as its owner's output; each node in the list is
# saved as its op, its inputs (all earlier in the list) and its outputs (shallow: their owner
# is in the pickle already), so no save goes deeper than one node. Pickle calls
# ``__reduce_ex__`` once per object per pickle, just before saving it: a node marks its
# outputs, which pickle saves right after within the node (``_shallow``). A mark chooses only
# how deep a save goes, never what is saved (one a failed pickle left costs the next a level).
# copy.deepcopy has its memo to look in: it copies the list in order itself (``deep_copy``).
# Loaded or copied in the list's order, the new variables' uids follow their originals'.

_saving = threading.local()  # .shallow: ids of the outputs of the nodes pickle is saving


def _shallow() -> set[int]:
    try:
        return _saving.shallow
    except AttributeError:
        _saving.shallow = set()
        return _saving.shallow


def saving_node(node) -> None:
    """Pickle is saving ``node`` (``Apply.__reduce_ex__``): its outputs, saved with it, go
    without the graph before them, which is in the pickle by then."""
    _shallow().update(id(out) for out in node.outputs)


def _reduced(var: Variable):
    """``var.__reduce_ex__``: itself, or the graph it is computed from, then itself."""
    owner, shallow = var.owner, _shallow()
    if id(var) in shallow:
        shallow.discard(id(var))
    elif owner is not None and _is_output(var):
        # the nodes first; pickle saves ``var`` with its owner, the list's last node, so
        # what ``_output_of`` returns is the variable already loaded (pickle's memo)
        return _output_of, (in_making_order([var]), var.index)
    return _new_variable, (type(var),), var.__getstate__()


def _is_output(var: Variable) -> bool:
    outputs = var.owner.outputs
    return 0 <= var.index < len(outputs) and outputs[var.index] is var


def _new_variable(cls) -> Variable:
    """A variable of class ``cls`` that has only a uid of this process, for pickle and copy to
    fill in (made before what it holds is filled in: the copies of a graph are made in the
    order the originals were)."""
    var = cls.__new__(cls)
    var.uid = next(_ids)
    return var


def _output_of(items: list, index: int) -> Variable:
    """Output ``index`` of the last node of a graph loaded flat (``in_making_order``)."""
    return items[-1].outputs[index]


def _after_graph(items: list, value):
    """``value``, loaded after the graph it holds (``graph_first``)."""
    return value


class _GraphFirst:
    __slots__ = ("value", "variables", "pinned", "__weakref__")  # (``pin_values``)

    def __init__(self, value, variables):
        self.value, self.variables, self.pinned = value, variables, {}

    def __reduce_ex__(self, protocol):
        # pickle takes the items of a list the reduction returns (none here) once it has
        # saved the arguments: the pin ends there, or when the pickle drops it (it failed)
        return _after_graph, (in_making_order(self.variables), self.value), None, _unpinned(self)

    def __deepcopy__(self, memo):
        try:
            items = copy.deepcopy(in_making_order(self.variables), memo)
            return _after_graph(items, copy.deepcopy(self.value, memo))
        finally:
            unpin(self)


def _unpinned(holder: _GraphFirst):
    """An iterator of no items that ends ``holder``'s pin when pickle takes its items, after
    the values it pinned are saved, or when it is dropped unread (started, so that closing
    it runs the ``finally``)."""

    def items():
        try:
            yield
        finally:
            unpin(holder)

    started = items()
    next(started)
    return started


def graph_first(value, variables: list[Variable]):
    """An object that pickles as ``value`` (which holds ``variables``), the graphs of
    ``variables`` saved first as one flat list: what a compiled function pickles as (its
    outputs and updates share most of their nodes, which one list saves once)."""
    return _GraphFirst(value, variables)


def _source(var: Variable):
    """What ``in_making_order`` lists for ``var``: its owner, or itself when it is a leaf."""
    return var if var.owner is None else var.owner


def _made(item) -> int:
    """When a leaf or node was made: its uid, or its first output's."""
    if isinstance(item, Variable):
        return item.uid
    return min((out.uid for out in item.outputs), default=-1)


def in_making_order(roots: list[Variable], done=None) -> list:
    """The leaves and nodes ``roots`` are computed from, each after those it reads and
    otherwise in the order they were made (a new variable's uid: copies made in this order
    keep their originals' order; Kahn's algorithm, by uid). The walk is iterative (any depth)
    and stops at the variables and nodes whose ids ``done`` holds (a deepcopy's memo)."""
    done = done if done is not None else ()
    items: dict[int, object] = {}
    reads: dict[int, set[int]] = {}  # node -> the items it reads
    stack = [v for v in roots if id(v) not in done]
    while stack:
        item = _source(stack.pop())
        key = id(item)
        if key in items or key in done:
            continue
        items[key] = item
        if isinstance(item, Variable):
            continue
        reads[key] = wanted = set()
        for var in item.inputs:
            source = _source(var)
            if id(var) not in done and id(source) not in done:
                wanted.add(id(source))
                stack.append(var)
    readers: dict[int, list[int]] = {}
    for key, wanted in reads.items():
        for source in wanted:
            readers.setdefault(source, []).append(key)
    waiting = {key: len(wanted) for key, wanted in reads.items()}
    ready = [(_made(item), key) for key, item in items.items() if not waiting.get(key)]
    heapq.heapify(ready)
    order = []
    while ready:
        key = heapq.heappop(ready)[1]
        order.append(items[key])
        for reader in readers.get(key, ()):
            waiting[reader] -= 1
            if not waiting[reader]:
                heapq.heappush(ready, (_made(items[reader]), reader))
    if len(order) < len(items):  # a cycle, which no op builds: the rest as found
        listed = {id(item) for item in order}
        order += [item for key, item in items.items() if key not in listed]
    return order


def deep_copy(obj, memo: dict):
    """``copy.deepcopy`` of a variable or a node: the leaves and nodes before it copied one
    by one in making order (no recursion along the graph), each variable a new one with a
    uid of this process, the copies made in the order their originals were."""
    keep = memo.setdefault(id(memo), [])  # (what copy's own _keep_alive does)
    roots = [obj] if isinstance(obj, Variable) else list(obj.outputs)
    for item in in_making_order(roots, memo):
        keep.append(item)
        _copy_item(item, memo)
    if id(obj) not in memo:  # a node with no outputs; a variable not among its owner's
        _copy_item(obj, memo)
    return memo[id(obj)]


def _copy_item(item, memo: dict) -> None:
    """A copy of a leaf variable or a node in ``memo``, over copies made already."""
    if isinstance(item, Variable):
        new = memo[id(item)] = _new_variable(type(item))
        new.__setstate__(copy.deepcopy(item.__getstate__(), memo))
    else:
        _copy_node(item, memo)


def _copy_node(node, memo: dict) -> None:
    """A copy of ``node`` in ``memo``, over the copies of its inputs (made already)."""
    new = memo[id(node)] = type(node).__new__(type(node))
    made = []
    for out in node.outputs:  # made first: the copies' uids in the originals' order
        if id(out) not in memo:
            memo[id(out)] = copied = _new_variable(type(out))
            made.append((out, copied))
    new.op = copy.deepcopy(node.op, memo)
    new.inputs = copy.deepcopy(node.inputs, memo)
    new.outputs = copy.deepcopy(node.outputs, memo)
    new.tag = copy.deepcopy(node.tag, memo)
    for out, copied in made:
        copied.__setstate__(copy.deepcopy(out.__getstate__(), memo))


def describe_value(value) -> str:
    """Anything an argument may be, as messages name it: a variable's ``describe()``, else
    its repr and kind (``5 (int)``)."""
    if isinstance(value, Variable):
        return value.describe()
    return f"{value!r} ({type(value).__name__})"


def check_name(name, of: TensorType | None = None) -> str | None:
    """``name`` when it is a str or None (Theano's rule: "name must be a string"); else an
    ArgumentError naming it. Checked where a variable is made and where a function names
    one later (``ifelse(..., name=)``): ``str(x)`` of a non-str name failed, and the C
    runner's table of keyword names refused it with an internal error at compile time."""
    if name is not None and not isinstance(name, str):
        raise _not_a_name(name, of)
    return name


def _not_a_name(name, of: TensorType | None) -> ArgumentError:
    """The error for a name that is not a str, of a variable of type ``of`` (if known)."""
    kind = type(name).__name__
    whose = "" if of is None else f"; the variable is {of.dtype.name}{format_shape(of.shape)}"
    return ArgumentError(f"name must be a string (or None), not {name!r} ({kind}){whose}")


def array_of(
    value, dtype, what: str, name=None, copy=None, shape=None, casting: str = "values"
) -> np.ndarray:
    """``value`` as an array of a dtype symnb computes with, for a constant or a shared
    variable, read as inputs are (``array_kinds.host_value``; ``shape``: the dims a DataArray
    is matched to by name); a value NumPy cannot make one of (a ragged list, a string, a
    2**70) is a ShapeError or DTypeError naming ``what`` and ``name``, not NumPy's own
    message, and so is one that ``dtype`` cannot hold (``_constant_array``; with
    ``casting="unsafe"``, NumPy's cast, as ``np.full`` casts its fill value)."""
    label = f"{what} {name!r}" if name is not None else what
    if dtype is None and type(value) is int and not -(2**63) <= value < 2**64:
        raise DTypeError(  # NumPy makes an object array of it, which no kernel computes
            f"{label}: the Python int {value} does not fit in 64 bits, the widest integers "
            f"symnb computes with; write it as a float ({float(value)!r}) for float math"
        )
    value = _host_value(value, label, shape)
    if dtype is None or casting == "unsafe":
        array = _numpy_array(value, dtype, label, copy)
    else:
        array = _constant_array(value, dtype, label, copy)
    if array.dtype.kind == "O":
        raise DTypeError(
            f"{label}: NumPy holds {_short(value)} only as Python objects (dtype object): an "
            "int wider than 64 bits, None, or values of mixed kinds; symnb computes with "
            "numbers and booleans"
        )
    try:
        native = as_dtype(array.dtype)
    except DTypeError as exc:
        raise DTypeError(f"{label}: {exc}") from None
    return array if array.dtype == native else array.astype(native)  # ('>f8': byte order)


def _numpy_dtype(dtype, label: str) -> np.dtype:
    """``as_dtype(dtype)``, its DTypeError starting with ``label``."""
    try:
        return as_dtype(dtype)
    except DTypeError as exc:
        raise DTypeError(f"{label}: {exc}") from None


def _numpy_array(value, dtype, label: str, copy=None) -> np.ndarray:
    """``np.array(value, dtype, copy=copy)``, a value NumPy cannot make an array of (a ragged
    list, a string for a number) a ShapeError or DTypeError that starts with ``label``."""
    try:
        wanted = None if dtype is None else as_dtype(dtype)
        return np.array(value, dtype=wanted, copy=copy)
    except DTypeError as exc:
        raise DTypeError(f"{label}: {exc}") from None
    except InputError:  # a symbolic variable in the value ([n, 0]): its own words, sn.stack
        raise
    except (ValueError, TypeError) as exc:  # (TypeError: a Python complex for a real dtype)
        if "inhomogeneous" in str(exc) or "with a sequence" in str(exc):
            raise ShapeError(
                f"{label}: {_short(value)} is not a rectangular array ({exc})"
            ) from None
        raise DTypeError(f"{label}: {_short(value)} cannot be {dtype} ({exc})") from None
    except OverflowError as exc:
        raise DTypeError(f"{label}: {exc}") from None


def _constant_array(value, dtype, label: str, copy=None) -> np.ndarray:
    """``value`` as an array of ``dtype`` by NumPy's conversion (a Python int read exactly,
    one out of the dtype's range refused), refused where a value does not survive the cast,
    by the rule of ``set_value`` (``values_kept``): a float rounds to a narrower float as an
    assignment rounds it, nothing else changes (no wrapped integer, truncated or NaN float, float
    overflowing to inf, dropped imaginary part, integer a float rounds, or bool of a 2)."""
    natural = _numpy_array(value, None, label)  # the values as given, by their own dtype
    wanted = _numpy_dtype(dtype, label)
    try:
        if isinstance(value, (list, tuple)) and natural.dtype.kind == "f":
            list_values(value, natural, wanted)  # (its ints, which NumPy read as floats)
        if natural.dtype == wanted:
            return _numpy_array(value, wanted, label, copy)
        if natural.dtype.kind == "c" and wanted.kind != "c":  # (NumPy refuses a Python complex)
            with np.errstate(all="ignore"):
                values_kept(natural, natural.real.astype(wanted))
            value = natural = natural.real
        with np.errstate(all="ignore"):  # (a value the cast changes is refused below)
            array = _numpy_array(value, wanted, label, copy)
        if natural.dtype.kind in "biufc":
            values_kept(natural, array)
        else:  # (ints wider than 64 bits, which NumPy holds as objects)
            leaves = integer_leaves(value, natural.shape, every=False) or []
            inexact = inexact_integer([v for v in leaves if v is not None], wanted)
            if inexact is not None:
                raise ValueChanged(inexact[0], _held(wanted, "int"), "int")
    except ValueChanged as exc:
        first, held, kind = exc.args
        raise DTypeError(
            f"{label}: {wanted.name} cannot hold the {kind} value {first!r} ({held}); give a "
            "value it holds, or convert it yourself "
            f"(np.asarray(value).astype('{wanted.name}')) if that change is what you want"
        ) from None
    return array


class ValueChanged(Exception):
    """A cast would change a value: its args are the first such value, what the dtype holds
    and the value's kind ("int", "float64"); each caller words its own error."""


def values_kept(array: np.ndarray, cast: np.ndarray) -> None:
    """Whether ``cast`` (``array`` converted to another dtype) kept every value: an int or
    bool compared exactly, a float that rounds to a narrower float kept (as NumPy's
    assignment rounds it) unless it overflows to inf; ValueChanged for the first one
    changed. The one check of ``set_value`` and of a constant given a dtype."""
    dtype = cast.dtype
    with np.errstate(all="ignore"):
        values = array
        changed = np.zeros(array.shape, dtype=bool)
        if array.dtype.kind == "c" and dtype.kind != "c":
            changed = array.imag != 0
            values = array.real
        back = cast.real if dtype.kind == "c" and values.dtype.kind != "c" else cast
        if dtype.kind in "biu" or values.dtype.kind in "biu":
            changed = changed | (back.astype(values.dtype) != values)
        else:
            changed = changed | (np.isinf(cast) & np.isfinite(values))
    if np.any(changed):
        first = array[changed].flat[0].item()
        if array.dtype.kind == "c" and dtype.kind != "c" and first.imag != 0:
            held = f"{dtype.name} is real: the imaginary part would be dropped"
        else:
            held = _held(dtype, values.dtype.kind, values[changed].flat[0].item())
        raise ValueChanged(first, held, array.dtype.name)


def _held(dtype: np.dtype, kind: str, value=None) -> str:
    """What ``dtype`` holds, said for a value of ``kind`` it does not hold."""
    if dtype.kind == "b":
        return "bool holds 0 and 1 alone"
    integer = kind in ("b", "i", "u", "int")
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        if integer or (np.isfinite(value) and float(value).is_integer()):
            return f"{dtype.name} holds {info.min} to {info.max}"
        return f"{dtype.name} holds whole numbers alone, from {info.min} to {info.max}"
    if integer:
        return f"{dtype.name} holds integers exactly only up to 2**{np.finfo(dtype).nmant + 1}"
    return f"{dtype.name} overflows to inf there"


def list_values(value, array: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """A list that NumPy read as floats (``array``) by the Python values it holds: a list
    of integers alone is taken by value into an integer dtype (``[2**64 - 1, 0]``, which
    NumPy reads as float64, into uint64), and a float dtype refuses an integer it cannot
    hold exactly that NumPy rounded on the way (``[2**53 + 1, 0.5]``): ValueChanged."""
    if dtype.kind in "iu":
        ints = integer_leaves(value, array.shape)
        if ints is None:
            return array  # (floats: checked as a float64 value)
        inexact = inexact_integer(ints, dtype)
        if inexact is not None:
            raise ValueChanged(inexact[0], _held(dtype, "int"), "int")
        return np.array(ints, dtype=dtype).reshape(array.shape)
    if dtype.kind not in "fc":
        return array
    limit = 2.0 ** (min(np.finfo(array.dtype).nmant, np.finfo(dtype).nmant) + 1)
    rounded = rounded_integers(value, array, limit)
    inexact = None if rounded is None else inexact_integer(rounded[1], dtype)
    if inexact is not None:
        raise ValueChanged(inexact[0], _held(dtype, "int"), "int")
    return array


def _host_value(value, label: str, shape):
    """``array_kinds.host_value``, its InputError (a masked array, a tensor on a GPU) at the
    user's line."""
    try:
        return host_value(value, label, shape)
    except InputError as exc:
        raise at_user_line(exc) from None


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _shape_of(what: str, name, shape):
    """``normalize_shape(shape)`` with an error that names the variable."""
    try:
        return normalize_shape(shape)
    except ShapeError as exc:
        label = f"{what} {name!r}" if name is not None else what
        raise type(exc)(f"{label}, shape {shape!r}: {exc.args[0]}") from None


def _too_many_dims(var) -> ShapeError:
    """Kernels, the C runner and NumPy address at most MAX_RANK dims: say so where the
    variable is built, not as a NumPy error when it runs."""
    name = f"'{var.name}'" if var.name else "a value"
    return ShapeError(
        f"{name} would have {var.type.ndim} dims; symnb supports at most {MAX_RANK} "
        "(symnb.core.types.MAX_RANK)"
    )


class Constant(Variable):
    """A fixed value. Python scalars are *weak* (NumPy 2's rule): ``x32 * 2.0`` stays float32."""

    def __init__(self, value, dtype=None, name=None, weak=False, *, casting="values"):
        # its own copy: the caller's array stays writable, and a later write to it (or to
        # the array it views) changes no compiled function (a device holds its own upload)
        # a dtype that changes a value is refused, unless casting="unsafe" (NumPy's cast:
        # what np.full does with its fill value, what sn.cast does with a constant)
        array = array_of(value, dtype, "constant", name, copy=True, casting=casting)
        Variable.__init__(self, TensorType.of(array.dtype, array.shape), None, 0, name)
        array.setflags(write=False)
        self.value = array
        self.weak = weak

    def __setstate__(self, state):
        """Loaded or deep-copied, the value is read-only again (NumPy makes its copy
        writable)."""
        Variable.__setstate__(self, state)
        self.value.setflags(write=False)

    @property
    def data(self):
        """What the NumPy reference receives: the Python scalar for weak constants."""
        return self.value.item() if self.weak else self.value

    def describe(self) -> str:
        """A weak constant is the Python number the user wrote (``x8 + 300``: "the Python int
        300", not an unnamed int64 variable); others as any variable."""
        if self.weak and not self.label:
            kind = {"b": "bool", "c": "complex", "f": "float"}.get(self.type.dtype.kind, "int")
            return f"the Python {kind} {self.value.item()!r}"
        return super().describe()

    def signature(self):
        """Content key, so equal constants can be merged."""
        return (self.type, self.weak, self.value.tobytes())

    # A constant's value is known: Python's conversions answer as NumPy's would for it
    # (a symbolic variable's raise, naming it: core/sugar.py)
    def __int__(self):
        return int(self.value)

    def __float__(self):
        return float(self.value)

    def __complex__(self):
        return complex(self.value)

    def __index__(self):
        return operator.index(self.value)

    def item(self, *args):
        """NumPy's ``x.item()``: the value as a Python scalar."""
        return self.value.item(*args)


# Guards every shared variable's (host value, device copy) pair: a call in one thread caches
# or downloads a copy while another thread's ``set_value`` replaces the value; the check and
# the store must be one step, or the stale copy is kept for good. (Held for assignments only.)
_VALUE_LOCK = locks.lock()  # unlocked in a forked child (core/locks.py)
#: .held: weak references to what this thread's pickles and copies are saving (``pin_values``)
_pinned = threading.local()


def pin_values(holder, shared, turns=None) -> None:
    """The values of ``shared`` now, read together while holding ``turns`` (a compiled
    function's entry point: ``enter``/``leave``, its calls' lock), are what this thread's
    pickle or copy of ``holder`` (a ``graph_first``) saves: until it has saved what
    ``holder`` holds (its reduction's end, or its ``__deepcopy__``'s), never longer, so a
    later pickle or copy saves the values then, whatever still holds ``holder`` (a
    ``pickle.Pickler`` kept for several dumps keeps it in its memo; a failed deepcopy's
    traceback). So a pickle of a training step taken while another thread calls it holds
    the values of one step, not some from the step before. ``enter`` is False in a call of
    the function in this thread (a hook pickling it), which has written no update yet."""
    entered = turns is not None and turns.enter()
    try:
        holder.pinned = {id(v): (v, v.host_value()) for v in shared}
    finally:
        if entered:
            turns.leave()
    held = [ref for ref in getattr(_pinned, "held", ()) if _pinning(ref())]
    _pinned.held = [*held, weakref.ref(holder)]


def unpin(holder) -> None:
    """The end of ``holder``'s pin (``pin_values``): its values are let go. (It may run in
    another thread, as the collector closes a dropped pickle's iterator: this thread's list
    forgets it at its next pin.)"""
    holder.pinned = {}


def _pinning(holder) -> bool:
    return holder is not None and bool(holder.pinned)


def _pinned_value(shared):
    """The value ``pin_values`` read for ``shared`` for the pickle or copy under way, or None."""
    for ref in reversed(getattr(_pinned, "held", ())):
        holder = ref()
        found = None if holder is None else holder.pinned.get(id(shared))
        if found is not None:
            return found[1]
    return None


class SharedVariable(Variable):
    """A value that lives between calls (weights); compiled functions read and update it."""

    _lent = None  # the host array the caller holds too (a weak reference; ``lent``)
    lends = False  # a function compiled with borrow=True reads or updates it (``lent``)

    def __init__(self, value, name=None, shape=None, borrow=False):
        loc = user_location(skip=1) if name is not None else user_span(skip=1)
        label = name if name is not None else assigned_target(loc)
        dims = None if shape is None else _shape_of("shared", label, shape)
        array = array_of(value, None, "shared", label, None if borrow else True, dims)
        if shape is None:  # the value's own shape: it fits, nothing to check
            type_ = TensorType.of(array.dtype, array.shape)
        else:
            type_ = TensorType(array.dtype, dims)
        Variable.__init__(self, type_, None, 0, name, loc)  # (no super())
        self._value = array
        #: a copy held by a device backend (``backend="opencl"``/``"cuda"``) between calls, so
        #: weights do not cross the bus every step; any object with shape, dtype, ``to_host()``
        self._device = None
        if borrow and lends_memory(value, array):  # (a torch tensor's, a memoryview's too)
            self._lend(array)
        if shape is not None:
            self._check(array, "the initial value")

    def get_value(self, borrow: bool = False) -> np.ndarray:
        """The value on the host (copied back from the device once when a device function
        updated it last). ``borrow=True`` gives the variable's own array, which the caller
        may write into: a device copy is dropped then, and none is kept while the caller
        holds the array (``lent``), so every backend reads what was written."""
        value = self.host_value()
        if borrow:
            # Marked lent first: a device copy cached from now on sees it (``cache_on_device``
            # checks ``lent`` under the lock); one cached before is dropped, under the lock,
            # only while ``value`` is still the value (else another thread set a new one, or
            # an update left it on the device alone). No copy, no lock (backend "c").
            self._lent = weakref.ref(value)
            if self._device is not None:
                with _VALUE_LOCK:
                    if self._value is value:
                        self._device = None
            return value
        return value.copy()

    def host_value(self) -> np.ndarray:
        """The host array, downloaded once where the value is only on a device, a device
        copy kept: what functions read (they never write into it)."""
        value = self._value  # (one read needs no lock: the pair matters for a download)
        if value is not None:
            return value
        with _VALUE_LOCK:
            value, device = self._value, self._device
        if value is not None:
            return value
        host = device.to_host()  # (unlocked: a download takes long)
        with _VALUE_LOCK:  # kept only if no other thread wrote a value meanwhile
            if self._device is device and self._value is None:
                self._value = host
        return host

    def current_value(self):
        """The device copy when there is one, else the host array: what a device function
        reads, so a value that lives on the device stays there."""
        with _VALUE_LOCK:  # (one pair: a write between two reads gives None)
            return self._device if self._device is not None else self._value

    def keep_on_device(self, value, what: str | None = None) -> None:
        """Take a new value that lives on a device (an update computed there); the host copy
        is made when ``get_value`` asks for it."""
        self.take_fitted(self.fitted_on_device(value, what), on_device=True)

    def fitted_on_device(self, value, what: str | None = None):
        """``value`` (on a device) checked as ``keep_on_device`` takes it, nothing stored."""
        self._check(value, what or "the new value")
        if value.dtype != self.type.dtype:
            raise DTypeError(f"{self.describe_as('shared')} cannot take a {value.dtype} value")
        return value

    def cache_on_device(self, value, source) -> None:
        """Remember ``value``, a device copy of the host array ``source`` (uploaded for a
        call), so the next call of a device function does not upload it again: only while
        ``source`` is still the value (another thread may have set a new one since the call
        read it) and not ``lent`` (the caller may write into it between calls)."""
        with _VALUE_LOCK:
            if self._value is source and not self.lent:
                self._device = value

    @property
    def lent(self) -> bool:
        """Whether the host value is also the caller's array (``borrow=True`` in
        ``sn.shared``, ``get_value``, ``set_value``, or a function compiled with it): a
        write into it must be what the next call reads, so no device copy is kept."""
        if self.lends:
            return True
        return self._lent is not None and self._value is not None and self._lent() is self._value

    def _lend(self, array) -> None:
        """Mark ``array`` (the host value) as the caller's too; a device copy is stale."""
        with _VALUE_LOCK:
            self._lent, self._device = weakref.ref(array), None

    def __getstate__(self):
        """Pickled with its host value; a device copy stays with its process."""
        state = Variable.__getstate__(self)
        value = _pinned_value(self)
        value = self.host_value() if value is None else value
        state["_value"], state["_device"], state["_lent"] = value, None, None
        return state

    def clone(self) -> SharedVariable:
        """A new variable (its own uid, name and notes) over the same value, as Theano's
        ``SharedVariable.clone()`` shared its container: ``set_value`` through either, or a
        function's update of either, is what both read (``_SharedView``)."""
        origin = self.__dict__.get("_origin", self)
        new = Variable.clone(self)
        for key in _STORAGE:
            new.__dict__.pop(key, None)
        new.__dict__["_origin"] = origin
        new.__class__ = _view_class(type(origin))
        return new

    def set_value(self, value, borrow: bool = False) -> None:
        """Replace the value; it must keep the dtype (or cast safely) and fit the shape (a
        device copy of the old value is dropped: it is stale). With ``borrow`` the array is
        kept as it is where it fits, and is ``lent``: the caller's writes are read next."""
        array = self.fitted(value, borrow)
        self.take_fitted(array)
        if borrow and lends_memory(value, array):  # (a torch tensor's, a memoryview's too)
            self._lend(array)

    def take_fitted(self, value, on_device: bool = False) -> None:
        """Keep a value that ``fitted`` (or ``fitted_on_device``) returned, unchecked: the
        second half of a write whose checks all passed."""
        with _VALUE_LOCK:
            if on_device:
                self._device, self._value = value, None
            else:
                self._value, self._device = value, None
            self._lent = None

    def fitted(self, value, borrow: bool = False, what: str | None = None) -> np.ndarray:
        """``value`` as ``set_value`` would keep it (checked, cast, copied unless ``borrow``),
        nothing stored: a function checks every update this way before it writes any
        (``what``: how a shape error names the value, "the new value" of ``set_value``; a
        function names its update and the line that built it)."""
        current = self.current_value()  # (its shape only)
        if (
            borrow
            and type(value) is np.ndarray
            and value.dtype == self.type.dtype
            and value.shape == current.shape
        ):  # as a training step writes it back
            return value  # the current value's shape was checked: this one fits too
        label = self.describe_as("shared")
        value = _host_value(value, label, self.type.shape)
        array = _numpy_array(value, None, label)
        try:
            if isinstance(value, (list, tuple)) and array.dtype.kind in "fc":
                array = list_values(value, array, self.type.dtype)
            if array.dtype != self.type.dtype:
                integers = array.dtype.kind in "iu" and self.type.dtype.kind in "iu"  # by value
                if not (integers or np.can_cast(array.dtype, self.type.dtype, "same_kind")):
                    raise DTypeError(
                        f"{self.describe_as('shared')} cannot take a {array.dtype.name} value"
                    )
                with np.errstate(all="ignore"):
                    cast = array.astype(self.type.dtype)
                values_kept(array, cast)  # (float64 into float32 rounds, as assignment does)
                array = cast
            elif not borrow:
                array = array.copy()
        except ValueChanged as exc:
            raise self._changed(*exc.args) from None
        self._check(array, what or "the new value")
        return array

    def _changed(self, value, held: str, kind: str = "int") -> DTypeError:
        """The error for a ``kind`` value a cast to the variable's dtype would change."""
        return DTypeError(
            f"{self.describe_as('shared')} cannot take the {kind} value {value!r}: "
            f"{held}, and a cast would change it; convert the values yourself if that is "
            "what you want"
        )

    def _check(self, array, what):
        """``array``'s shape fits the type's: each fixed dim, and the named dims one size
        (``(n, n)`` takes no (2, 3), ``(n, 2*n)`` no (3, 5)), as a call checks an input's."""
        shape = self.type.shape
        why = ""
        if array.ndim == len(shape) and all(map(matches_value, shape, array.shape)):
            if not self._names_checked:
                return
            try:
                check_sizes(shape, array.shape)
                return
            except SizeConflict as exc:
                why = f": {exc}"
        raise InputShapeError(
            f"{self.describe_as('shared')}: {what} has shape {array.shape}, "
            f"which does not fit {format_shape(shape)}{why}"
        )

    @property
    def _names_checked(self) -> bool:
        """Whether a value's named dims can disagree: a name twice, or a dim computed from
        names (``2*n``)."""
        names = [d for d in self.type.shape if d is not None and not isinstance(d, int)]
        return len(names) > 1 or any(not isinstance(d, str) for d in names)


#: what a shared variable's value is: its clones read and write the original's (``clone``)
_STORAGE = ("_value", "_device", "_lent", "lends")


def _forwarded(name: str) -> property:
    def get(self):
        return getattr(self._origin, name)

    def set_(self, value):
        setattr(self._origin, name, value)

    return property(get, set_, doc=f"the original's ``{name}``")


class _SharedView(SharedVariable):
    """What ``SharedVariable.clone()`` makes (mixed into the original's class, so a clone of
    a Theano layer's shared variable is one of its class too): its value is the original's,
    ``_origin``'s, which it reads and writes (the C runner's entry point too: it reads and
    writes ``_value`` and ``_device`` by name). Pickled and copied with its original."""

    _value, _device, _lent, lends = map(_forwarded, _STORAGE)

    def __getstate__(self):
        return Variable.__getstate__(self)  # ``_origin`` holds the value

    def __reduce_ex__(self, protocol):
        return _new_view, (type(self._origin),), self.__getstate__()


_VIEW_CLASSES: dict[type, type] = {}


def _view_class(cls: type) -> type:
    """The class of a clone of a shared variable of class ``cls`` (made once per class)."""
    if cls not in _VIEW_CLASSES:
        attrs = {"__module__": cls.__module__, "__qualname__": cls.__qualname__}
        _VIEW_CLASSES[cls] = type(cls)(cls.__name__, (_SharedView, cls), attrs)
    return _VIEW_CLASSES[cls]


def _new_view(cls: type) -> SharedVariable:
    """A clone of a shared variable of class ``cls``, for pickle to fill in."""
    return _new_variable(_view_class(cls))


def as_variable(x, name=None) -> Variable:
    """Wrap what users write (numbers, lists, arrays) as a Variable; pass variables through."""
    if isinstance(x, Variable):
        return x
    if isinstance(x, (bool, numbers.Number)) and not isinstance(x, np.generic):
        return Constant(x, None, name, True)  # (positional: no dict of keywords, each `* 0.9`)
    if isinstance(x, (np.ndarray, np.generic, list, tuple)):
        return Constant(x, None, name)
    raise DTypeError(f"cannot use {type(x).__name__} {x!r} in a symbolic expression")


def _variable_of_type(type_: TensorType, name: str | None = None) -> Variable:
    """``TensorType.__call__``: a new input variable of that type (types sit below
    variables, so they ask through this hook)."""
    return Variable(type_, name=name)


register("variable_of_type", _variable_of_type)
