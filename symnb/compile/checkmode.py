"""Check mode: graphs are built and shape-checked, nothing is compiled.

Inside ``with check_mode():`` (what ``symnb check`` runs a program in), ``sn.function`` builds
an ordinary :class:`~symnb.compile.function.Function` with no rewrites and a
:class:`CheckLinker` in place of a backend's: the call checks the values against the inputs as
always (dtype, rank, fixed and named dims, dims computed from names), and the linker returns
zeros shaped like the outputs, so a whole training loop runs in seconds. The output shapes
come from the ops' own shape rules applied to the call's concrete shapes, so a clash that only
shows with real sizes (an unknown dim that turns out wrong) is still a ShapeError, raised at
the call; a pattern the ShapeWarnings catch (``(n,) - (n, 1)``) that only shows with real
sizes is warned about at the line that built the node. Shared variables are not updated (an
update's value is checked against its variable as a call checks it, and not written), and
``f.kernels`` is an empty list that says why.
"""

from __future__ import annotations

import contextlib
import contextvars
import warnings

import numpy as np

from symnb.backends.linker import Linker
from symnb.backends.listing import KernelList
from symnb.core import locks
from symnb.core.dim_sizes import SizeConflict, sizes_of
from symnb.core.dims import evaluate, is_symbolic
from symnb.core.graph import Graph
from symnb.core.shapes.warnings import BroadcastOuterWarning, LossTrailingOneWarning
from symnb.core.source import user_location, warn_at_user
from symnb.core.types import TensorType
from symnb.core.variable import Constant, SharedVariable, Variable
from symnb.errors import ShapeError
from symnb.ops.checks import _ShapeCheck
from symnb.ops.shape import Reshape, Shape

#: the backend name ``sn.function`` gives a function built in check mode
CHECK = "check"

#: warnings that real sizes can reveal and that do not depend on how a size was spelled (a
#: pinned name would be noise: the unknown dim it met only got its size from this call)
_CALL_TIME_WARNINGS = (BroadcastOuterWarning, LossTrailingOneWarning)

_depth: contextvars.ContextVar[int] = contextvars.ContextVar("symnb_check_mode", default=0)

# ``check_mode(all_threads=True)``s open now: a checked program's threads (a thread pool, a
# data loader) start with a fresh context, where ``_depth`` is 0, and must be checked too
_process_depth = 0
_process_lock = locks.lock()  # unlocked in a forked child (core/locks.py)


@contextlib.contextmanager
def check_mode(all_threads: bool = False):
    """Within it, ``sn.function`` builds and checks but does not compile: in this thread's
    context, or with ``all_threads`` in every thread of the process (``symnb check`` runs
    the program in a process of its own)."""
    global _process_depth
    token = _depth.set(_depth.get() + 1)
    if all_threads:
        with _process_lock:
            _process_depth += 1
    try:
        yield
    finally:
        if all_threads:
            with _process_lock:
                _process_depth -= 1
        _depth.reset(token)


def active() -> bool:
    """Is check mode on? (``sn.function`` asks.)"""
    return _depth.get() > 0 or _process_depth > 0


class CheckKernels(KernelList):
    """``f.kernels`` in check mode: nothing is compiled, so there is no step to list."""

    def __repr__(self):
        return "(check mode: nothing is compiled, so there are no kernels to list)"


class CheckLinker(Linker):
    """A linker that runs no op: ``run`` returns zeros of the shapes the ops' rules give for
    the call's concrete shapes (computed once per set of leaf shapes)."""

    name = CHECK
    device = "none"

    def __init__(self, graph: Graph, leaves: list):
        self.graph = graph
        self.leaves = leaves
        #: the outputs the function returns; the rest are its updates' values, which
        #: ``Function`` checks against their shared variables and writes nowhere
        self.n_results = len(graph.outputs)
        self._updated: list = []
        self._shapes_seen: dict = {}
        self.kernels = CheckKernels()

    def updates_of(self, shared: list) -> None:
        """The last ``len(shared)`` outputs are the values of updates of ``shared``: ``run``
        returns them for ``Function`` to check, and where the rules leave a dim of one unknown
        (a boolean mask's length) its variable's own size stands in (the run checks it)."""
        self.n_results = len(self.graph.outputs) - len(shared)
        self._updated = list(shared)

    def run(self, leaf_values: list) -> list:
        """Zeros of the outputs' shapes (a value the shapes decide as it is); an update's
        value is one zero broadcast to its shape (no memory: it is checked, not written)."""
        key = tuple(np.shape(v) for v in leaf_values)
        if key not in self._shapes_seen:
            self._shapes_seen[key] = self._output_shapes(leaf_values)
        results = []
        for i, (v, shape) in enumerate(zip(self.graph.outputs, self._shapes_seen[key])):
            if isinstance(shape, np.ndarray):
                results.append(shape.copy())
            elif i < self.n_results:
                results.append(placeholder(shape, v.type.dtype))
            else:
                results.append(np.broadcast_to(np.zeros((), v.type.dtype), shape))
        return results

    def _output_shapes(self, leaf_values) -> list:
        """Run the shape rules on this call's shapes: every dim the call's sizes give is that
        size (a named dim too, so ``T*batch`` and an unknown dim filled with the same size
        compare equal), what only a reshape target needs as a name is named for its rule
        (``_for_rule``). An output the shapes alone decide (``x.shape``, ``x.shape[0] - 1``)
        is its value, not a shape."""
        given = list(zip(self.leaves, (np.shape(v) for v in leaf_values)))
        names = _call_sizes(given)
        concrete = {id(v): _sized(_filled(v, shape), names) for v, shape in given}
        call = user_location()
        for node in self.graph.toposort():
            _propagate(node, concrete, call, names)
        stubs = [_stub(v, concrete) for v in self.graph.outputs]
        own = [None] * self.n_results + [v.current_value().shape for v in self._updated]
        return [
            s.value if _decided(s) else _placeholder_shape(s.type, names, like)
            for s, like in zip(stubs, own)
        ]


#: the most bytes a placeholder is an array of its own (writable, as a real result is); a
#: larger one is a read-only view of a single zero, so that checking a program does not
#: depend on the sizes of its arrays
PLACEHOLDER_BYTES = 1 << 26


def placeholder(shape: tuple, dtype) -> np.ndarray:
    """Zeros of ``shape``: a fresh array, or past PLACEHOLDER_BYTES one zero broadcast to the
    shape (every stride 0: no memory), which is read-only."""
    dtype = np.dtype(dtype)
    if dtype.itemsize * int(np.prod(shape, dtype=object)) <= PLACEHOLDER_BYTES:
        return np.zeros(shape, dtype)
    return np.broadcast_to(np.zeros((), dtype), shape)


def has_unknown_dims(graph: Graph) -> bool:
    """Some node reads a variable with an unknown dim: real sizes may show it more."""
    return any(d is None for node in graph.toposort() for v in node.inputs for d in v.type.shape)


def warn_for_call_shapes(graph: Graph, shapes: list[tuple]) -> None:
    """Run the shape rules of the user's graph on a call's input shapes and warn, at the line
    that built each node, about what they reveal (``(n,) - (n, 1)`` giving ``(n, n)`` where n
    was unknown): what a plain function does on its first call. A clash is left to the run,
    which reports it."""
    if any(len(s) != v.type.ndim for v, s in zip(graph.inputs, shapes, strict=True)):
        return
    shared = dict.fromkeys(
        v for node in graph.toposort() for v in node.inputs if isinstance(v, SharedVariable)
    )
    given = [*zip(graph.inputs, shapes), *((v, v.current_value().shape) for v in shared)]
    sizes = _call_sizes(given)
    concrete = {id(v): _sized(_filled(v, s), sizes) for v, s in given}
    call = user_location()
    try:
        for node in graph.toposort():
            _propagate(node, concrete, call, sizes)
    except Warning:
        raise  # a warning turned into an error by the user's filters
    except Exception:  # noqa: BLE001 - a clash (or an op the rules cannot stub) is the run's
        return


def _call_sizes(given: list) -> dict:
    """``{name: size}`` that the call's values (``(variable, shape)`` pairs) give, a name only
    a dim computed from names gives solved as the call's checks solve it (``2*n`` of 6 makes
    n 3). Where a shared value's computed dim does not fit, the inputs' alone (the call reads
    no such dim of a shared value); none where the inputs disagree (the call says which)."""
    for kept in (given, [(v, s) for v, s in given if not isinstance(v, SharedVariable)]):
        try:
            return sizes_of([(v.type.shape, shape) for v, shape in kept])
        except SizeConflict:
            continue
    return {}


def _filled(var, actual) -> TensorType:
    """var's type with its unknown and fixed dims taken from an actual shape (names stay)."""
    shape = tuple(d if is_symbolic(d) else n for d, n in zip(var.type.shape, actual))
    return TensorType(var.type.dtype, shape)


def _stub(var, concrete) -> Variable:
    """var itself when its type is already concrete (constants), its value when the call's
    shapes decided it (``_decided_values``), else a stand-in of the call's type, at var's
    source: an unnamed input or shared stand-in is named as var is, not after the assignment
    the user's call ``out = f(...)`` is the value of (``Variable.assigned_name``)."""
    if isinstance(var, Constant):
        return var
    found = concrete.get(id(var))
    if isinstance(found, Constant):
        return found
    if isinstance(var, SharedVariable) and found is None:
        shape = var.current_value().shape  # a device copy: its shape, not a download
        return Variable(_filled(var, shape), name=var.name, source=var.source)
    return Variable(concrete.get(id(var), var.type), name=var.label, source=var.source)  # "W.T"


def _propagate(node, concrete, call, sizes: dict) -> None:
    """The node's output types from its inputs', with every name the call gives a size at
    that size, and the call-time warnings its rule gives on those sizes: an unknown dim that
    turned out 4 against ``batch`` of 4 may count the same examples (labels ``(batch,)`` minus
    predictions of ``(?, ?)`` that are ``(4, 1)``), which the names alone do not show."""
    stubs = [_stub(v, concrete) for v in node.inputs]
    try:
        types, found = _warnings_of(node.op.infer_types, _for_rule(node, stubs))
    except ShapeError as exc:
        built = node.outputs[0].source
        raise ShapeError(
            f"with the shapes of this call: {exc.args[0] if exc.args else exc}"
            + (f"\n  (the node was built at {built})" if built else "")
        ) from None
    if isinstance(node.op, _ShapeCheck):
        _run_check(node.op, stubs)
    values = _decided_values(node, stubs, sizes)
    for var, t, value in zip(node.outputs, types, values or [None] * len(types)):
        t = _sized(t, sizes)
        concrete[id(var)] = t if value is None else _Decided(value, t.dtype, name=var.name)
    if found:
        _warn_new(node, found, call)


def _for_rule(node, stubs: list) -> list:
    """The stubs the node's rule reads: a reshape's target may name dims of its input
    (``("batch", -1)``), which its rule looks up in the input's type, so those axes
    (``name_axes``: where the names were when the node was built) get their names back; the
    result's names are then sized again."""
    if not isinstance(node.op, Reshape) or not node.op.name_axes:
        return stubs
    x, *rest = stubs
    dims = list(x.type.shape)
    for name, axis in node.op.name_axes:
        dims[axis] = name
    named = Variable(TensorType(x.type.dtype, tuple(dims)), name=x.name, source=x.source)
    return [named, *rest]


def _run_check(op: _ShapeCheck, stubs: list) -> None:
    """A graph's own check of shapes (a ``givens`` replacement's against its key's dims,
    ``has_shape``, ``same_shape``) run on the call's shapes, on zeros that take no memory:
    what it raises is what the run raises, as it is. Not where a value it reads (a length
    the graph computes) is not one the call's shapes decide, nor where a shape is unknown."""
    read = set(op.value_inputs())
    arrays = []
    for i, stub in enumerate(stubs):
        if isinstance(stub, Constant):
            arrays.append(stub.data)
        elif i in read or not all(isinstance(d, int) for d in stub.type.shape):
            return
        else:
            arrays.append(np.broadcast_to(np.zeros((), stub.type.dtype), stub.type.shape))
    op.check(*arrays)


#: the most elements a value the call's shapes decide may have (a length, a slice bound, a
#: shape vector: shape arithmetic, never data)
DECIDED_SIZE = 64


class _Decided(Constant):
    """A value the call's shapes decided while checking (``x.shape[0]``): a constant to the
    shape rules of the nodes reading it (``c[x.shape[0]:]`` is 7 long for a c of 10 and an x
    of 3, not a placeholder 1), and the result itself where it is an output."""


def _decided(stub) -> bool:
    return isinstance(stub, _Decided)


def _decided_values(node, stubs, sizes: dict) -> list | None:
    """The values of the node's outputs where the call's shapes decide them: the shape of an
    input whose dims are all known (names at the call's sizes), or a pure op's integer result
    computed from such values and constants by its NumPy reference; None otherwise (a value
    read from the data stays unknown: check mode reads no data)."""
    if isinstance(node.op, Shape):
        dims = [d if isinstance(d, int) else evaluate(d, sizes) for d in stubs[0].type.shape]
        return None if None in dims else [np.array(dims, dtype=np.int64)]
    if not node.op.pure or not all(isinstance(s, Constant) for s in stubs):
        return None
    if any(out.type.dtype.kind not in "biu" for out in node.outputs):
        return None
    if all(not isinstance(s, _Decided) for s in stubs):
        return None  # (constants alone: the types already know what they can)
    try:
        with np.errstate(all="ignore"):
            result = node.op.perform(*(s.data for s in stubs))
    except Exception:  # noqa: BLE001 - the run raises it, naming the node
        return None
    results = list(result) if len(node.outputs) > 1 else [result]
    arrays = [np.asarray(r) for r in results]
    if any(
        a.size > DECIDED_SIZE or a.shape != _filled_shape(out.type, a.shape)
        for a, out in zip(arrays, node.outputs)
    ):
        return None
    return [a.astype(out.type.dtype, copy=False) for a, out in zip(arrays, node.outputs)]


def _filled_shape(t: TensorType, actual: tuple) -> tuple:
    """``actual`` where it fits t's rank and fixed dims, else t's own shape (a mismatch)."""
    if len(actual) != t.ndim or any(isinstance(d, int) and d != n for d, n in zip(t.shape, actual)):
        return t.shape
    return actual


def _sized(t: TensorType, sizes: dict) -> TensorType:
    """t with its names (and dims computed from them) at this call's sizes; a dim of a name
    the call does not give stays as it is."""
    if not any(is_symbolic(d) for d in t.shape):
        return t
    return TensorType(
        t.dtype, tuple(d if evaluate(d, sizes) is None else evaluate(d, sizes) for d in t.shape)
    )


def _warnings_of(infer, stubs) -> tuple:
    """infer(*stubs), and the call-time ShapeWarnings it raised (recorded, not shown)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        types = infer(*stubs)
    return types, [w for w in caught if issubclass(w.category, _CALL_TIME_WARNINGS)]


def _warn_new(node, found: list, call) -> None:
    """Warn at the line that built the node about what its build-time types did not show:
    only a node with an unknown dim can show more with real sizes (its known dims warned
    when it was built)."""
    if all(d is not None for v in node.inputs for d in v.type.shape):
        return
    _, at_build = _warnings_of(node.op.infer_types, node.inputs)
    known = {w.category for w in at_build}
    built = node.outputs[0].source
    for w in found:
        if w.category in known:
            continue
        text = f"with the shapes of this call: {w.message}"
        text += f"\n  (the function was called at {call})" if call else ""
        warn_at_user(text, w.category, built)  # (a node built by symnb alone: at the call)


def _placeholder_shape(t: TensorType, names: dict, like: tuple | None = None) -> tuple:
    """A concrete shape: names evaluated with the call's sizes; what is still unknown is 1,
    or ``like``'s size there (an updated variable's own shape: the value is checked against
    it, and what the rules cannot tell must not fail)."""
    dims = [d if isinstance(d, int) else evaluate(d, names) for d in t.shape]
    if like is not None and len(like) == len(dims):
        return tuple(n if d is None else d for d, n in zip(dims, like))
    return tuple(1 if d is None else d for d in dims)
