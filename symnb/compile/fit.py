"""What replaces a variable in a compiled function: ``updates=`` (and the default updates of
random streams) and ``givens=``, checked, each value made to fit the type of the variable it
replaces (a safe cast done, a lossy one refused naming the leaves that widen it)."""

from __future__ import annotations

import time
import warnings

import numpy as np

from symnb.compile.update_pairs import as_given_pairs, as_update_pairs
from symnb.core.dims import format_shape, is_symbolic, names_in, shapes_unify
from symnb.core.graph import (
    Graph,
    ancestors,
    clone_graph,
    default_updates,
    leaves,
    leaves_after,
)
from symnb.core.hooks import spelled
from symnb.core.op import _at_user_line
from symnb.core.source import user_location, warn_at_user
from symnb.core.variable import Constant, SharedVariable, Variable, as_variable
from symnb.errors import DTypeError, GraphError, GraphWarning, ShapeError
from symnb.ops._dtypes import wrapped_int
from symnb.ops.checks import HasShape, has_shape
from symnb.ops.elemwise import cast


def check_updates(updates) -> list[tuple[SharedVariable, Variable]]:
    """``updates`` (a dict or pairs) as checked pairs: each a shared variable, none twice;
    the errors name the user's line (the magic checks a cell's before compiling it)."""
    pairs = as_update_pairs(updates)
    checked = []
    for shared, value in pairs:
        if not isinstance(shared, SharedVariable):
            what = shared.describe() if isinstance(shared, Variable) else repr(shared)
            raise _at_user_line(
                GraphError(
                    f"updates: {what} is not a shared variable (sn.shared); each pair is "
                    "(shared variable, new value)"
                )
            )
        if any(shared is s for s, _ in checked):
            raise _at_user_line(GraphError(f"updates: {shared.describe()} is updated twice"))
        checked.append((shared, fit(shared, as_variable(value), "update")))
    return checked


def tied_dims(updates: list) -> dict:
    """``{name: (size, label)}``: each named dim of an update's value that meets a fixed dim
    of its shared variable (``updates={w: x * 2}``, x of ``("n",)``, w of ``(2,)``). A call
    giving that name another size could only fail writing the update, after computing, so the
    input checks start from these sizes and refuse it first, naming the update. Two updates
    tying one name to two sizes admit no call: a ShapeError at the user's line."""
    ties: dict = {}
    tied_by: dict = {}  # name -> the update that tied it, for that error
    for shared, value in updates:
        what = f"the update of {shared.describe_as('shared')}"
        for dim, size in zip(value.type.shape, shared.type.shape):
            if not (isinstance(dim, str) and isinstance(size, int)):
                continue
            if dim in ties and ties[dim][0] != size:
                raise _at_user_line(
                    ShapeError(
                        f"updates: dim '{dim}' is {ties[dim][0]} in {tied_by[dim]} but {size} "
                        f"in {what}; no call can write both"
                    )
                )
            if dim not in ties:
                loc = value.source if value.owner is not None and value.source else None
                loc = loc or user_location()
                ties[dim] = (size, what + ("" if loc is None else f" (at {loc})"))
                tied_by[dim] = what
    return ties


def retied_shared(updates: list, named: list) -> tuple:
    """The shared values with named dims that a call reads (``named``) or updates, when an
    update's value may give one of its variable's named dims another size (its type does not
    prove it: ``updates={A: x}``, A of ``("n",)``, x of ``(?,)``) and another of them has
    that name; () where no update can, so that a call checks nothing more
    (compile/inputs.py ``check_updated_sizes`` checks them before any update is written)."""
    updated = [s for s, _ in updates if any(map(is_symbolic, s.type.shape))]
    shared = list(named) + [s for s in updated if not any(s is v for v in named)]
    for var, value in updates:
        loose = set().union(
            *(names_in(d) for d, got in zip(var.type.shape, value.type.shape) if d != got)
        )
        for other in shared:
            if other is not var and loose & set().union(*map(names_in, other.type.shape)):
                return tuple(shared)
    return ()


def with_default_updates(updates: list, outputs: list, skipped=False, givens=None) -> list:
    """The updates, plus the ``default_update`` of each shared variable the outputs or the
    updates read once ``givens`` are applied that has one, is not updated already (a random
    stream's state) and is not ``skipped`` (True: every one). A draw only a given's key reads
    does not advance; one its replacement reads does (as in Theano)."""
    if skipped is True:
        return list(updates)
    reads = outputs + [value for _, value in updates]
    skip = [s for s, _ in updates] + _skipped_list(skipped)
    found = default_updates(reads, skip, replace=givens)
    return list(updates) + [(var, fit(var, default, "default update")) for var, default in found]


def _skipped_list(skipped) -> list:
    """``no_default_updates`` as a list of shared variables (False: none)."""
    if skipped is False or skipped is None:
        return []
    listed = list(skipped) if isinstance(skipped, (list, tuple, set)) else [skipped]
    for var in listed:
        if not isinstance(var, SharedVariable):
            raise GraphError(
                f"no_default_updates takes True, False or a list of shared variables, not {var!r}"
            )
    return listed


def check_givens(
    givens, what: str = "givens", fit_types: bool = True, argument: str = "givens"
) -> dict:
    """``givens`` (a dict or pairs) as ``{variable: replacement}``: each key a variable, none
    twice, each replacement made to fit its key's type; the errors name the user's line and
    begin with ``what`` (``theano.clone`` checks its ``replace`` the same way; without
    ``fit_types``, for a clone that infers dtypes anew, only the shapes are checked: ops keep
    their resolved axes, so a node rebuilt over another rank would mean something else).
    ``argument``: how a message about the form names the argument (``replace``)."""
    checked: dict = {}
    for old, new in as_given_pairs(givens, argument):
        if not isinstance(old, Variable):
            named = isinstance(old, str)
            hint = f" (a name: pass the variable itself, not {old!r})" if named else ""
            raise _at_user_line(
                GraphError(
                    f"{what}: the key {_short_repr(old)} ({type(old).__name__}) is not a "
                    f"symbolic variable{hint}; each key is the variable to replace"
                )
            )
        if any(old is k for k in checked):
            raise _at_user_line(GraphError(f"{what}: {old.describe()} is given twice"))
        try:
            value = as_variable(new)
        except DTypeError as exc:
            raise _at_user_line(
                DTypeError(f"{what}: the replacement for {old.describe()}: {exc}")
            ) from None
        if fit_types:
            value = fit(old, value, what)
        else:
            check_shape_fits(old, value, what)
        checked[old] = value
    return checked


def shape_checked_givens(givens: dict, sources: list, what: str = "givens") -> dict:
    """``givens`` with each replacement whose dims its type does not prove to be its key's
    (an unknown dim for a fixed one: ``x`` of ``(1, 2)`` given ``y`` of ``(?, 2)``) checked
    when the function runs, on every backend: a ShapeError naming the key, the replacement,
    both shapes and the line that compiled it, where a result of another size than its type
    says came out silently. A named dim is checked where ``sources`` (the function's inputs
    and the shared values it reads: ``read_sources``) give its size, by a plain dim or an
    expression dim (``n+1`` gives n, as the call's input checks solve it); an unknown dim of
    the key is not checked (docs/shapes.md: an unknown dim is checked only when the function
    runs, so it unifies with any when the graph is built). ``what`` begins the message
    (``theano.clone`` checks its ``replace`` the same way)."""
    sources = [v for v in sources if any(map(is_symbolic, v.type.shape))]
    given = set().union(*(names_in(d) for v in sources for d in v.type.shape))

    def checkable(want, got) -> bool:
        return want is not None and want != got and names_in(want) <= given

    checked = {}
    for key, value in givens.items():
        pairs = zip(key.type.shape, value.type.shape, strict=True)
        if any(checkable(want, got) for want, got in pairs):
            loc = user_location()
            at = "" if loc is None else f" (at {loc})"
            said = f"{what}{at}: {key.describe()} was given {value.describe()} of another shape"
            value = has_shape(value, key.type.shape, sources, said)
        checked[key] = value
    return checked


def read_sources(inputs: list, reads: list, givens: dict) -> list:
    """What a function's givens' checks read sizes off (``shape_checked_givens``): its
    ``inputs``, then the shared values that ``reads`` (its outputs and updates' values) read
    once ``givens`` are applied, whose sizes a call checks with the inputs'."""
    shared = [v for v in leaves_after(reads, givens) if isinstance(v, SharedVariable)]
    return list(inputs) + shared


def keep_checks(graph: Graph, givens: dict, inputs: list, history=None) -> int:
    """Add to ``graph`` (rewritten) as outputs the givens' shape checks (``HasShape``, from
    ``shape_checked_givens``) that it no longer runs: where the outputs read only the key's
    shape, which its type fixes, the rewrites fold that shape and drop the check, or it was
    never read (``sn.ones_like(x)`` of a fixed ``x``). A check that reads values the call
    does not give (a given for another function) is left out. How many were added; recorded
    in ``history`` (the rewrites') as a last step, ``checks/keep_givens_checks``, so that
    its last step's graph is ``graph``."""
    start = time.perf_counter()
    ran = {node.op for node in graph.nodes if isinstance(node.op, HasShape)}
    given = {id(v) for v in inputs}
    kept = []
    for value in givens.values():
        if value.owner is None or not isinstance(value.owner.op, HasShape):
            continue
        if value.owner.op in ran:
            continue
        if not all(
            id(leaf) in given or isinstance(leaf, (Constant, SharedVariable))
            for leaf in leaves([value])
        ):
            continue
        check = clone_graph([value])[0]
        kept.append((check, graph.add_output(check)))
        ran.add(value.owner.op)
    if kept and history is not None:
        seconds = time.perf_counter() - start
        history.record_outputs("keep_givens_checks", "checks", seconds, kept)
    return len(kept)


def refuse_given_inputs(givens: dict, inputs: list) -> None:
    """An input that is also a ``givens`` key is refused: the given replaces it wherever the
    outputs and updates read it, so the value passed for it would be silently ignored (Theano
    refused it too, "Replacing inputs is currently forbidden because it has no effect")."""
    for i, var in enumerate(inputs):
        if not any(var is key for key in givens):
            continue
        raise _at_user_line(
            GraphError(
                f"givens: input {i} {var.describe()} is also a key of givens, which replaces it "
                "wherever the outputs and updates read it, so the value passed for it would be "
                "ignored; to compute it from another input y, make y the input and write "
                f"givens={{{var.message_name() or 'x'}: g(y)}}, or leave it out of givens"
            )
        )


def warn_unread_givens(givens: dict, targets: list) -> None:
    """A given whose key the outputs and updates never read replaces nothing: usually a
    variable made again (a cell run twice) or a given for another function. Theano ignored
    it silently; here it compiles, with a warning at the user's line."""
    if not givens:
        return
    read = {id(v): v for v in targets}
    for node in ancestors(targets):
        read.update((id(v), v) for v in node.inputs)
    for old in givens:
        if id(old) in read:
            continue
        twin = old.name and any(v.name == old.name for v in read.values())
        why = (
            f"; they read another variable named '{old.name}' (made again, as a cell run "
            "twice makes it): key the given by that one"
            if twin
            else ""
        )
        warn_at_user(
            f"givens: {old.describe()} is not read by the outputs or updates, so its given "
            f"replaces nothing{why}",
            GraphWarning,
        )


def _short_repr(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def fit(target: Variable, value: Variable, what: str) -> Variable:
    """``value`` made to fit ``target``'s type: a safe cast is done, a lossy one refused."""
    t, v = target.type, value.type
    if v.dtype != t.dtype:
        if _is_weak(value):  # a Python number takes the dtype if its value survives
            _check_weak_value(target, value, what)
        elif not np.can_cast(v.dtype, t.dtype, "safe"):
            raise _lossy_value(target, value, what)
        value = cast(value, t.dtype)
    check_shape_fits(target, value, what)
    return value


def check_shape_fits(target: Variable, value: Variable, what: str) -> None:
    """A ShapeError naming both when ``value``'s shape cannot be ``target``'s."""
    t, v = target.type, value.type
    if v.ndim != t.ndim or not _dims_fit(t.shape, v.shape):
        raise ShapeError(
            f"{what}: {target.describe()} cannot take {value.describe()}: shape "
            f"{format_shape(v.shape)} does not fit {format_shape(t.shape)}"
        )


def _check_weak_value(target: Variable, value: Constant, what: str) -> None:
    """A DTypeError at the user's line where the Python number ``value`` does not survive the
    cast to ``target``'s dtype, as NumPy 2 refuses it beside an array of that dtype
    (``x8 + 300``; ``set_value(300)`` too): an int out of the dtype's range would wrap, a
    float into an integer dtype (NumPy 2 promotes the pair to float64) would lose its
    fraction, a float beyond a narrow float's range would become inf."""
    dtype = target.type.dtype
    data = value.data
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (ComplexWarning)
        casted = np.array(data).astype(dtype).item()
    why = wrapped_int(value, dtype)
    if why is not None:
        example = f"x + {data}" if data >= 0 else f"x - {-data}"
        why = (
            f"it is {why}, and a cast would wrap it to {casted!r} (NumPy 2 refuses it beside "
            f"{dtype.name} values, as in {example})"
        )
    elif np.result_type(data, dtype) != dtype:
        kind = type(data).__name__
        why = (
            f"{dtype.name} holds no Python {kind} (NumPy 2 makes the pair "
            f"{np.result_type(data, dtype).name}), and a cast would make it {casted!r}"
        )
    elif dtype.kind in "fc" and np.isinf(casted) and np.isfinite(data):
        why = (
            f"it is beyond {dtype.name}'s largest finite value ({np.finfo(dtype).max!s}) "
            "and would become inf"
        )
    else:
        return
    raise _at_user_line(
        DTypeError(
            f"{what}: {target.describe()} cannot take {value.describe()}: {why}; write a value "
            f"{dtype.name} holds, or cast it yourself (sn.cast(value, '{dtype.name}'))"
        )
    )


def _lossy_value(target: Variable, value: Variable, what: str) -> DTypeError:
    """A lossy update or given, naming the leaves that widen it (a float64 ``lr`` in the update
    of a float32 weight) and the line that built it."""
    dtype = target.type.dtype
    wide = _widening_leaves(value, dtype)
    culprits = ", ".join(_culprit(v) for v in wide[:3])
    because = (
        f": {culprits} make{'s' if len(wide) == 1 else ''} it {value.type.dtype}" if wide else ""
    )
    fixes = list(dict.fromkeys(_narrowing_fix(v, dtype) for v in wide[:3]))  # each once
    fixes.append(f"cast the new value with .astype('{dtype}')")
    loc = value.source if value.owner is not None and value.source else user_location()
    message = spelled(  # (theano.shared where the user's code is Theano code)
        f"{what}: {target.describe()} cannot take {value.describe()} without losing precision"
        f"{because}; {', or '.join(fixes)}"
    )
    error = DTypeError(message + ("" if loc is None else f"\n  at {loc}"))
    error.location = loc
    return error


def _widening_leaves(value: Variable, dtype) -> list[Variable]:
    """The leaves that make ``value`` wider than ``dtype``, found from the value down through
    the wide nodes only, and at each into the inputs its dtype comes from: an int64 shape
    vector under ``sn.ones((2, 3), dtype="float32")`` (a float32 node) or beside a float64
    operand of reshape is no culprit; an int64 operand that promotes float32 to float64 is."""
    found, seen, stack = [], set(), [value]
    while stack:
        var = stack.pop()
        if id(var) in seen or not _widens(var, dtype):
            continue
        seen.add(id(var))
        if var.owner is None:
            if var is not value:
                found.append(var)
            continue
        stack.extend(reversed(_dtype_sources(var.owner.inputs, var.type.dtype)))
    return found


def _dtype_sources(inputs: list, out_dtype) -> list:
    """The inputs a node's ``out_dtype`` comes from: those of that dtype (weak constants
    aside), else all of them when it is NumPy's promotion of theirs, else none (a dtype the
    op chose: ``ones``'s default, the float64 mean of integers)."""
    same = [i for i in inputs if i.type.dtype == out_dtype and not _is_weak(i)]
    if same:
        return same
    if inputs and np.result_type(*[i.type.dtype for i in inputs]) == out_dtype:
        return list(inputs)
    return []


def _is_weak(var: Variable) -> bool:
    return isinstance(var, Constant) and var.weak


def _culprit(leaf: Variable) -> str:
    """How the message names a widening leaf: ``'lr' (float64())`` or ``the constant 0.1
    (float64, e.g. np.float64(0.1))``."""
    if isinstance(leaf, Constant) and leaf.label is None and leaf.value.size == 1:
        dtype = leaf.type.dtype.name
        return f"the {dtype} constant {leaf.value.item()!r} (np.{dtype}(...) or a {dtype} array)"
    return leaf.describe()


def _widens(var: Variable, dtype) -> bool:
    return not _is_weak(var) and not np.can_cast(var.type.dtype, dtype, "safe")


def _narrowing_fix(leaf: Variable, dtype) -> str:
    name = leaf.message_name() or "it"
    if isinstance(leaf, SharedVariable):
        return f"make {name} {dtype} (sn.shared(np.asarray(value, '{dtype}')))"
    if isinstance(leaf, Constant) and leaf.value.size == 1:
        return f"write the constant as a Python number, which takes {dtype}"
    if isinstance(leaf, Constant):
        return f"make the constant a {dtype} array (np.asarray(value, '{dtype}'))"
    return f"declare {name} with dtype='{dtype}'"


def _dims_fit(a, b) -> bool:
    return shapes_unify(tuple(a), tuple(b))
