"""``theano.scan`` (symnb's ``scan``, which is Theano's), its views ``map``, ``reduce``,
``foldl`` and ``foldr`` (Theano's ``scan_views``: thin wrappers over ``scan``) and
``theano.clone``."""

from __future__ import annotations

from symnb.compat.theano.strict import refuse_looser_replacements
from symnb.compat.theano.testvalues import missing_values_allowed
from symnb.compat.theano.upcasting import as_theano_tensor, is_python_number
from symnb.compat.theano.updates import OrderedUpdates
from symnb.compile.fit import check_givens, shape_checked_givens
from symnb.compile.update_pairs import as_given_pairs
from symnb.control.scan_build import scan as _scan
from symnb.control.scan_build import until  # noqa: F401 - theano.scan_module.until
from symnb.core.dims import is_int
from symnb.core.graph import (
    ancestors,
    ancestors_after,
    clone_graph,
    default_updates,
    leaves,
    leaves_after,
)
from symnb.core.op import _at_user_line
from symnb.core.variable import Constant, SharedVariable, Variable, as_variable, describe_value
from symnb.errors import ArgumentError


def scan(
    fn,
    sequences=None,
    outputs_info=None,
    non_sequences=None,
    n_steps=None,
    truncate_gradient=-1,
    go_backwards=False,
    mode=None,
    name=None,
    profile=False,
    allow_gc=None,
    strict=False,
    return_list=False,
):
    """``theano.scan``: ``(outputs, updates)``; pass ``updates`` (an ``OrderedUpdates``, which
    ``+`` merges with other updates) to ``theano.function``.
    ``outputs`` is None where the step returns only updates, as in Theano (``sn.scan``: []).
    ``mode``, ``name``, ``profile`` and ``allow_gc`` are accepted; the loop compiles with the
    function that uses it."""
    with missing_values_allowed():  # the step's placeholders have no test values
        outputs, updates = _scan(
            fn,
            _each(sequences, _default_taps),
            _each(
                outputs_info, lambda entry: _first_rows_of(_initial_tensor(_default_taps(entry)))
            ),
            non_sequences,
            n_steps,
            go_backwards,
            truncate_gradient,
            strict,
        )
    updates = OrderedUpdates(updates)
    if isinstance(outputs, list) and not outputs:
        return None, updates
    if return_list and not isinstance(outputs, list):
        outputs = [outputs]
    return outputs, updates


def _each(entries, change):
    """``change`` applied to each entry of ``sequences`` or ``outputs_info`` (a list, or one
    entry alone)."""
    if isinstance(entries, (list, tuple)):
        return [change(entry) for entry in entries]
    return change(entries)


def _default_taps(entry):
    """Theano's ``"taps": None`` is the default taps: ``[0]`` for a sequence, ``[-1]`` for an
    output with an initial value (Theano warned, then read it so), as without the key."""
    if isinstance(entry, dict) and "taps" in entry and entry["taps"] is None:
        return {key: value for key, value in entry.items() if key != "taps"}
    return entry


def _initial_tensor(entry):
    """Theano's ``scan`` made each initial value a tensor with ``as_tensor_variable``: a Python
    number is the layer's constant of it (``as_theano_tensor``), so ``outputs_info=0.`` (or
    ``{"initial": 0.}``) gives a floatX output, not float64."""
    if isinstance(entry, dict) and is_python_number(entry.get("initial")):
        return {**entry, "initial": as_theano_tensor(entry["initial"])}
    return as_theano_tensor(entry) if is_python_number(entry) else entry


def _first_rows_of(entry):
    """Theano reads the first ``-min(taps)`` rows of a multi-tap output's initial value
    (``initial[:mintap]``, tap k at row ``k + mintap``) where ``sn.scan`` reads the last ones:
    such an initial is cut to its first rows, so extra rows are ignored as Theano ignores
    them. An entry ``sn.scan`` would refuse is passed on as it is, for its message."""
    if not isinstance(entry, dict) or entry.get("initial") is None:
        return entry
    taps = entry.get("taps", [-1])
    taps = list(taps) if isinstance(taps, (list, tuple)) else [taps]
    if taps == [-1] or not taps or not all(is_int(t) and t < 0 for t in taps):
        return entry
    depth = -min(taps)
    initial = as_variable(entry["initial"])
    rows = initial.type.shape[0] if initial.type.ndim else None
    if initial.type.ndim == 0 or (is_int(rows) and rows <= depth):
        return entry
    first = initial[:depth]
    first.name = initial.name
    return {**entry, "initial": first}


def map(  # noqa: A001 - Theano's name
    fn,
    sequences,
    non_sequences=None,
    truncate_gradient=-1,
    go_backwards=False,
    mode=None,
    name=None,
):
    """``theano.map``: ``fn`` applied to each step of ``sequences``; ``(outputs, updates)``."""
    return scan(
        fn,
        sequences,
        [],
        non_sequences,
        truncate_gradient=truncate_gradient,
        go_backwards=go_backwards,
        mode=mode,
        name=name,
    )


def reduce(  # noqa: A001 - Theano's name
    fn,
    sequences,
    outputs_info,
    non_sequences=None,
    go_backwards=False,
    mode=None,
    name=None,
):
    """``theano.reduce``: scan, keeping only the last step of each output (a list of them
    when the scan has several); ``(outputs, updates)``."""
    outputs, updates = scan(
        fn,
        sequences,
        outputs_info,
        non_sequences,
        go_backwards=go_backwards,
        mode=mode,
        name=name,
    )
    if outputs is None:  # the step returns only updates
        return None, updates
    if isinstance(outputs, (list, tuple)):
        return [out[-1] for out in outputs], updates
    return outputs[-1], updates


def foldl(fn, sequences, outputs_info, non_sequences=None, mode=None, name=None):
    """``theano.foldl``: ``reduce`` from the first step to the last."""
    return reduce(fn, sequences, outputs_info, non_sequences, False, mode, name)


def foldr(fn, sequences, outputs_info, non_sequences=None, mode=None, name=None):
    """``theano.foldr``: ``reduce`` from the last step to the first."""
    return reduce(fn, sequences, outputs_info, non_sequences, True, mode, name)


def clone(output, replace=None, strict=True, share_inputs=True):
    """``theano.clone``: copies of ``output`` (a variable or a list) with ``replace``
    (``{old: new}`` or pairs) substituted. ``strict`` (Theano's default): each replacement
    is checked as ``givens`` are (a safe cast done, another dtype or rank refused), so the
    copies keep their types; ``strict=False``: a replacement of another dtype (not rank: ops
    keep their resolved axes) is taken, the nodes above it built again, types inferred.
    ``share_inputs=False``: the copies read new input variables (of the same types and
    names), of the replacements' graphs too, as in Theano; shared variables and constants
    are kept (Theano's copies of a shared variable shared its value)."""
    if output is None:  # (Theano's rebuild_collect_shared: no outputs, none cloned)
        return []
    single = not isinstance(output, (list, tuple))
    outputs = [output] if single else list(output)
    for i, var in enumerate(outputs):
        if not isinstance(var, Variable):
            which = "output" if single else f"output[{i}]"
            raise _at_user_line(
                ArgumentError(
                    f"theano.clone: {which} is {describe_value(var)}, not a symbolic variable: "
                    "outputs must be theano Variable instances (or a list of them), as in "
                    "Theano"
                )
            )
    argument = "theano.clone: replace"
    replace = as_given_pairs(replace, argument)
    if strict:  # (before check_givens casts a safe dtype)
        refuse_looser_replacements(replace, "clone: replace", "strict=False")
    pairs = check_givens(replace, "clone: replace", fit_types=strict, argument=argument)
    if strict:
        # the copies keep their keys' types: a size the replacement's type does not prove is
        # checked when the function runs, as theano.function's givens are
        sources = [v for v in leaves_after(outputs, pairs) if not isinstance(v, Constant)]
        pairs = shape_checked_givens(pairs, sources, "theano.clone: replace")
    given = list(pairs.values())  # (the user's graphs: not to be tagged)
    if not share_inputs:
        pairs = _with_new_inputs(outputs, pairs)
    copies = clone_graph(outputs, pairs, rebuild=not strict)
    _carry_default_updates(outputs, copies, pairs, given, rebuild=not strict)
    return copies[0] if single else copies


def _carry_default_updates(outputs: list, copies: list, pairs: dict, given: list, rebuild: bool):
    """Theano's clone (``rebuild_collect_shared``) cloned the default updates with the
    outputs, replacements applied. Shared variables are kept here, so a default update that
    reads a replaced variable (a draw's counter advancing by ``x.shape``'s size, ``x``
    replaced) goes with the copies instead: each copied node reading a shared variable with
    a default update notes in its ``tag["default_updates"]`` those the replacements change,
    each a copy reading the replacements, which a function compiling the copies writes
    (``node_default_updates``), and so do those an earlier copy carried. A loop's own
    (``Op.default_updates``) is its copy's already."""
    if not pairs:
        return
    keys = {id(key) for key in pairs}
    by_ops = {
        id(var)
        for node in ancestors_after(outputs, pairs)
        for var, _ in node.op.default_updates(node)
    }
    found = default_updates(outputs, [], replace=pairs)
    changed = [  # (one an earlier copy carried goes on: a node built again has no tag)
        (var, value)
        for var, value in found
        if id(var) not in by_ops
        and (_reads(value, keys) or value is not var.tag.get("default_update"))
    ]
    if not changed:
        return
    values = clone_graph([value for _, value in changed], pairs, rebuild=rebuild)
    carried = list(zip([var for var, _ in changed], values, strict=True))
    defaulted = {id(var) for var, _ in found}
    theirs = set(ancestors(outputs + given))  # (the originals, the user's replacements)
    for node in ancestors(copies):
        if node not in theirs and any(id(v) in defaulted for v in node.inputs):
            node.tag["default_updates"] = carried + [
                (var, value)
                for var, value in node.tag.get("default_updates", ())
                if not any(var is done for done, _ in carried)
            ]


def _reads(value: Variable, keys: set) -> bool:
    """Whether ``value`` is, or is computed from, a variable whose id is in ``keys``."""
    if id(value) in keys:
        return True
    return any(id(v) in keys for node in ancestors([value]) for v in node.inputs)


def _with_new_inputs(outputs: list, pairs: dict) -> dict:
    """``pairs`` with each input the copies would read (of the outputs or of a replacement)
    replaced by a new one, the same new one wherever it is read."""
    values = list(pairs.values())
    fresh = {
        var: var.clone()
        for var in leaves(outputs + values)
        if not isinstance(var, (SharedVariable, Constant))
    }
    replaced = clone_graph(values, fresh)
    return {**fresh, **dict(zip(pairs, replaced))}
