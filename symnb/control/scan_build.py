"""``sn.scan`` and ``sn.until``: trace a step function into a loop (Theano's ``scan``).

The step function is called once, on placeholders, and what it returns becomes the inner
graph; its shape rules run then, so a shape error points at the user's line inside it. The
builder then puts the loop in the canonical form of ``symnb/control/scan.py``:

- a sequence read at taps ``[-1, 0]`` becomes two shifted slices of the outer array;
- a recurrent output with taps ``[-1, -2]`` becomes two states, the second taking the first's
  previous value;
- a shared variable the step updates becomes a state whose last value is the update;
- values the step reads from outside (a weight, a shared variable), and any inner work that
  depends on no step's value, move out of the loop: computed once, passed in as
  non-sequences (loop-invariant code motion, done here once for every backend).
"""

from __future__ import annotations

import difflib
import inspect
import numbers
from collections import OrderedDict

import numpy as np

from symnb.control.loop_graph import LoopInputs, placeholder
from symnb.control.scan import INT, Scan
from symnb.core.dims import format_shape, is_int, shapes_unify
from symnb.core.graph import clone_graph, default_updates, leaves
from symnb.core.hooks import spelled
from symnb.core.op import _at_user_line
from symnb.core.types import TensorType
from symnb.core.variable import Constant, SharedVariable, Variable, as_variable
from symnb.errors import ArgumentError, DTypeError, GraphError, ShapeError
from symnb.grad.reverse import uid_mark
from symnb.ops.elemwise import cast
from symnb.ops.index import getitem
from symnb.ops.layout import flip


class until:  # noqa: N801 - Theano's spelling
    """``return h, sn.until(norm < tol)``: stop after the step where ``cond`` is true."""

    def __init__(self, cond):
        cond = as_variable(cond)
        if cond.type.dtype != np.bool_ or cond.type.ndim != 0:
            raise _at_user_line(
                DTypeError(
                    f"sn.until needs a boolean scalar, got {cond.describe()}; compare "
                    "(sn.until(err < tol)) and reduce (sn.any, sn.all) to one truth value"
                )
            )
        self.cond = cond


def scan(
    fn,
    sequences=None,
    outputs_info=None,
    non_sequences=None,
    n_steps=None,
    go_backwards=False,
    truncate_gradient=-1,
    strict=False,
):
    """Loop ``fn`` over the rows of ``sequences``; ``(outputs, updates)`` as in Theano.

    ``fn`` receives, in order, each sequence's value at each of its taps, each recurrent
    output's values at its taps, then the ``non_sequences``; it returns the step's outputs
    (one per ``outputs_info`` entry), optionally the updates (a ``{shared: new value}`` dict
    or a list of ``(shared, new value)`` pairs) and an ``sn.until(cond)``. ``outputs_info``
    entries: an initial value (fed back at tap -1), a dict ``{"initial": x, "taps": [-1,
    -2]}`` (``x`` then has one row per step reached back) or None (an output not fed back).
    ``truncate_gradient=k > 0`` backpropagates through the last ``k`` steps only. See
    docs/loops.md.
    """
    try:
        return _Builder(
            fn,
            sequences,
            outputs_info,
            non_sequences,
            n_steps,
            go_backwards,
            truncate_gradient,
            strict,
        ).build()
    except (ShapeError, DTypeError, GraphError, ArgumentError) as exc:
        if getattr(exc, "location", None) is not None:  # (raised at its line: the step's)
            raise _spelled(exc) from None
        raise _at_user_line(exc) from None


def _spelled(exc: Exception) -> Exception:
    """An error that names its line already (one the builder's checks raised, or one raised
    in the step), in the names of the API the user's code calls (``spelled``: the Theano
    layer's ``theano.scan ... T.cast`` for ``sn.scan ... sn.cast``), at the same line."""
    message = spelled(str(exc))
    if message == str(exc):
        return exc
    new = type(exc)(message)
    new.location = exc.location
    return new


def _check_keys(entry: dict, accepted: tuple, where: str) -> None:
    """A dict of ``sequences`` or ``outputs_info`` with a key scan does not know is refused: a
    misspelled ``"init"`` would silently make an output not fed back. Theano's deprecated
    ``return_steps`` is accepted when None, as Theano accepted it."""
    for key in entry:
        if key in accepted or (key == "return_steps" and entry[key] is None):
            continue
        known = ", ".join(repr(k) for k in accepted)
        close = difflib.get_close_matches(str(key), accepted, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        if key == "return_steps":
            hint = " (Theano's deprecated return_steps: select the steps you need by index)"
        raise GraphError(
            f"sn.scan: {where} has the key {key!r}, which scan does not know{hint}; its keys "
            f"are {known}"
        )


def _as_list(value) -> list:
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _taps(value, where: str) -> list[int]:
    """The taps of an entry: a non-empty list of ints (one int alone is a list of one)."""
    taps = _as_list(value)
    if not taps or not all(
        isinstance(t, numbers.Integral) and not isinstance(t, bool) for t in taps
    ):
        raise _at_user_line(
            ArgumentError(
                f"sn.scan: the taps of {where} are a non-empty list of ints, not {value!r}"
            )
        )
    return [int(t) for t in taps]


def _label(var: Variable, fallback: str) -> str:
    return f"'{var.name}'" if var.name else fallback


class _Sequence:
    """One sequence: the outer array and its taps (read flipped when going backwards)."""

    def __init__(self, entry, i: int, backwards: bool):
        if isinstance(entry, dict):
            _check_keys(entry, ("input", "taps"), f"sequences[{i}]")
            if entry.get("input") is None:
                raise GraphError(
                    f"sn.scan: sequences[{i}] is a dict without 'input': "
                    '{"input": x, "taps": [-1, 0]}'
                )
            taps = _taps(entry.get("taps", [0]), f"sequences[{i}]")
            entry = entry["input"]
        else:
            taps = [0]
        var = as_variable(entry)
        self.name = _label(var, f"sequences[{i}]")
        if var.type.ndim == 0:
            raise ShapeError(f"sn.scan: the sequence {self.name} is a scalar; it needs rows")
        self.var, self.backwards = var, backwards
        self.taps = taps
        # rows are cut as if tap 0 were there too (Theano's rule): step t reads row
        # t + tap - min(taps, 0), so taps [2] read x[2:] and [-1] x[:-1], as [-1, 0] does
        self.low, self.high = min(*taps, 0), max(*taps, 0)
        self.span = self.high - self.low
        length = var.type.shape[0]
        if isinstance(length, int) and length <= self.span:
            raise ShapeError(
                f"sn.scan: taps {taps} of the sequence {self.name} reach {self.span + 1} rows, "
                f"but it has only {length}"
            )
        step = TensorType(var.type.dtype, var.type.shape[1:])
        self.placeholders = [Variable(step, name=f"{var.name or 'seq'}[t{t:+d}]") for t in taps]
        # the loop reads shifted slices, which have no name: messages name the sequence
        self.label = self.name if taps == [0] else f"{self.name} at taps {taps}"

    def slices(self) -> list[Variable]:
        """The outer array shifted for each tap: row t of slice k is row t + tap_k - low.
        Going backwards, each shifted slice is read last row first (Theano cuts, then
        flips): at the first step, ``x[t - 1]`` is the second-to-last row, ``x[t]`` the last."""
        low, high = self.low, self.high
        out = []
        for tap in self.taps:
            stop = None if tap == high else tap - high
            cut = (
                self.var
                if (tap == low and stop is None)
                else getitem(self.var, slice(tap - low, stop))
            )
            out.append(flip(cut, 0) if self.backwards else cut)
        return out

    def length(self):
        length = self.var.type.shape[0]
        return length if self.span == 0 else None


class _Output:
    """One ``outputs_info`` entry: a state with taps (a chain of canonical states) or a plain
    output (None)."""

    def __init__(self, entry, i: int):
        self.i = i
        if entry is None:
            self.initial, self.taps = None, []
            return
        if isinstance(entry, dict):
            _check_keys(entry, ("initial", "taps"), f"outputs_info[{i}]")
            initial = entry.get("initial")
            if initial is None and entry.get("taps") is not None:
                raise GraphError(
                    f"sn.scan: outputs_info[{i}] has taps {entry['taps']} but no initial "
                    "value to read them from before the first step; give "
                    '{"initial": x0, "taps": [...]}, or None for an output not fed back'
                )
            taps = _taps(entry.get("taps", [-1]), f"outputs_info[{i}]")
            if initial is None:
                self.initial, self.taps = None, []
                return
        else:
            initial, taps = entry, [-1]
        self.initial = as_variable(initial)
        self.name = _label(self.initial, f"outputs_info[{i}]")
        if any(t >= 0 for t in taps):
            raise ShapeError(
                f"sn.scan: outputs_info[{i}] has taps {taps}; a recurrent output can only "
                "read earlier steps (negative taps such as -1, -2)"
            )
        self.taps = taps
        self.depth = -min(taps)
        self._check_rows()

    def _check_rows(self):
        """Tap -1 alone: the initial value is the state itself (Theano's rule); other taps
        need one row per step reached back."""
        init = self.initial
        if self.taps == [-1]:
            return
        rows = init.type.shape[0] if init.type.ndim else 0
        if init.type.ndim == 0 or (isinstance(rows, int) and rows < self.depth):
            raise ShapeError(
                f"sn.scan: taps {self.taps} of outputs_info[{self.i}] reach {self.depth} steps "
                f"before the start, but its initial value {init.describe()} has "
                f"{rows} rows; give one row per step reached back"
            )

    def label(self, depth: int) -> str:
        """The canonical state ``depth`` steps back in messages (a row of the initial value
        has no name of its own)."""
        return self.name if self.taps == [-1] else f"{self.name} at tap -{depth}"

    @property
    def is_state(self) -> bool:
        return self.initial is not None

    def states(self) -> list[tuple[Variable, Variable]]:
        """(inner placeholder, outer initial value) per canonical state, nearest first."""
        init = self.initial
        if self.taps == [-1]:
            return [(Variable(init.type, name=f"{init.name or 'h'}[t-1]"), init)]
        step = TensorType(init.type.dtype, init.type.shape[1:])
        return [
            (Variable(step, name=f"{init.name or 'h'}[t-{d}]"), getitem(init, -d))
            for d in range(1, self.depth + 1)
        ]


class _Builder:
    def __init__(
        self,
        fn,
        sequences,
        outputs_info,
        non_sequences,
        n_steps,
        go_backwards,
        truncate_gradient,
        strict,
    ):
        if not callable(fn):
            raise ArgumentError(f"sn.scan: fn is the step function, not {fn!r}")
        self.fn, self.strict = fn, strict
        if not is_int(truncate_gradient):  # (int() parsed "3" and truncated 2.5)
            raise ArgumentError(
                "sn.scan: truncate_gradient is an int (k > 0: the gradient flows back through "
                f"the last k steps; -1: through all), not {truncate_gradient!r}"
            )
        self.truncate = int(truncate_gradient)
        self.seqs = [_Sequence(s, i, go_backwards) for i, s in enumerate(_as_list(sequences))]
        self.outs = [_Output(o, i) for i, o in enumerate(_as_list(outputs_info))]
        self.nonseqs = [as_variable(v) for v in _as_list(non_sequences)]
        self.n_steps = self._n_steps(n_steps)
        self.counted = n_steps is not None

    def _n_steps(self, n_steps) -> Variable:
        if n_steps is None:
            if not self.seqs:
                raise ShapeError("sn.scan: give n_steps or at least one sequence")
            return Constant(-1, dtype=INT)
        if is_int(n_steps):  # (a bool is no count: refused below, as a bool variable is)
            if n_steps < 0:
                raise ShapeError(f"sn.scan: n_steps={n_steps} is negative")
            for seq in self.seqs:
                rows = seq.var.type.shape[0]
                if isinstance(rows, int) and rows - seq.span < n_steps:
                    raise ShapeError(
                        f"sn.scan: n_steps={n_steps}, but the sequence {seq.name} has only "
                        f"{rows - seq.span} steps"
                    )
            return Constant(int(n_steps), dtype=INT)
        var = as_variable(n_steps)
        if var.type.ndim != 0 or var.type.dtype.kind not in "iu":
            raise DTypeError(f"sn.scan: n_steps must be an integer scalar, got {var.describe()}")
        return cast(var, INT)

    # -- tracing --------------------------------------------------------------------------
    def build(self):
        nonseq_phs = [placeholder(v) for v in self.nonseqs]
        state_phs = {o.i: o.states() if o.is_state else [] for o in self.outs}
        args = [ph for s in self.seqs for ph in s.placeholders]
        for o in self.outs:
            phs = [ph for ph, _ in state_phs[o.i]]
            args += [phs[-t - 1] for t in o.taps]
        self._check_arity(len(args))
        traced = uid_mark()  # what fn makes from here on is the step's own
        returned = self.fn(*args, *self.nonseqs)
        outputs, updates, cond = _parse_return(returned)
        self._check_count(outputs)
        outputs, updates, cond = _over_placeholders(
            nonseq_phs, self.nonseqs, outputs, updates, cond
        )
        # a random draw in the step advances its stream every step, not once per call; a
        # draw made before (a dropout mask per sequence) is a value from outside
        reads = [as_variable(o) for o in outputs] + [as_variable(v) for v in updates.values()]
        reads += [cond.cond] if cond is not None else []
        for shared, default in default_updates(reads, list(updates), since=traced):
            updates[shared] = default
        loop_inputs = LoopInputs()
        for s in self.seqs:
            for ph, outer in zip(s.placeholders, s.slices()):
                loop_inputs.seq(ph, outer, s.label)
        new_states, plain, plain_names = [], [], []
        for o, out in zip(self._entries(outputs), outputs):
            out = as_variable(out)
            if not o.is_state:
                plain.append(out)
                plain_names.append(f"output {o.i} of the step")
                continue
            chain = state_phs[o.i]
            _check_state(o, chain[0][0], out)
            for k, (ph, init) in enumerate(chain):
                loop_inputs.state(ph, init, history=k == 0, label=o.label(k + 1))
                new_states.append(out if k == 0 else chain[k - 1][0])
        update_targets = self._updates(updates, loop_inputs, new_states)
        for ph, outer in zip(nonseq_phs, self.nonseqs):
            loop_inputs.given(ph, outer)
        inner_outs = new_states + plain + ([cond.cond] if cond is not None else [])
        check = _check_strict if self.strict else None
        loop, outer = loop_inputs.finish(
            inner_outs,
            cond is not None,
            self.truncate,
            check,
            counted=self.counted,
            plain_names=plain_names,
        )
        results = Scan(loop).make_node(self.n_steps, *outer).outputs
        return self._user_results(results, update_targets, len(plain))

    def _check_arity(self, n_taps: int) -> None:
        """fn must take what the loop passes: say what that is, not Python's bare count."""
        try:
            signature = inspect.signature(self.fn)
        except (TypeError, ValueError):  # a builtin or C callable: let the call speak
            return
        total = n_taps + len(self.nonseqs)
        try:
            signature.bind(*range(total))
        except TypeError:
            seq = sum(len(s.placeholders) for s in self.seqs)
            raise GraphError(
                f"sn.scan: fn{signature} is called with {total} argument(s): {seq} for the "
                f"sequences' taps, {n_taps - seq} for the fed-back outputs' taps and "
                f"{len(self.nonseqs)} non-sequence(s), in that order"
            ) from None

    def _entries(self, outputs) -> list[_Output]:
        if not self.outs:  # no outputs_info: every output is plain
            self.outs = [_Output(None, i) for i in range(len(outputs))]
        return self.outs

    def _check_count(self, outputs):
        if self.outs and len(outputs) != len(self.outs):
            raise ShapeError(
                f"sn.scan: fn returned {len(outputs)} output(s) but outputs_info has "
                f"{len(self.outs)} entries; return one output per entry (None marks an "
                "output that is not fed back)"
            )

    def _updates(self, updates: dict, loop_inputs, new_states) -> list:
        """Shared variables the step updates become states; their targets, in order."""
        targets = []
        for shared, value in updates.items():
            if not isinstance(shared, SharedVariable):
                raise DTypeError(
                    f"sn.scan: an update's key must be a shared variable, not {shared!r}"
                )
            value = as_variable(value)
            ph = placeholder(shared)
            _check_state_type(_label(shared, "a shared variable"), ph, value)
            loop_inputs.state(ph, shared, history=False, replaces=shared)
            new_states.append(value)
            targets.append(shared)
        return targets

    def _user_results(self, results, update_targets, n_plain):
        by_output, k, p = [], 0, len(results) - n_plain
        for o in self.outs:
            if o.is_state:
                by_output.append(results[k])
                k += o.depth
            else:
                by_output.append(results[p])
                p += 1
        updates = OrderedDict(zip(update_targets, results[k : k + len(update_targets)]))
        outputs = by_output[0] if len(by_output) == 1 else by_output
        return outputs, updates


def _parse_return(returned):
    """(outputs, updates, until) from what fn returned, by Theano's rule: outputs (a variable
    or one list of them), updates (a dict, or a list of ``(shared, new value)`` pairs) and an
    ``sn.until``, alone or together, in that order, each at most once. A list of pairs is
    updates, never two outputs each: read as outputs, the shared variables would silently
    never change. Outputs both inside and outside a list (``h, (W, W + 1)``: a pair without
    its list?), two sets of updates, two untils or another order are refused, not guessed:
    the one kept would silently drop the other."""
    if _is_update_pairs(returned):
        return [], _updates_from_pairs(returned), None
    items = list(returned) if isinstance(returned, (list, tuple)) else [returned]
    singles, lists, updates, cond = [], [], None, None
    for item in items:
        if isinstance(item, until):
            if cond is not None:
                raise GraphError(
                    f"sn.scan: fn returned {_short(returned)}, two sn.until conditions; the "
                    "loop stops on one: combine them, sn.until(a | b) to stop when either "
                    "holds, sn.until(a & b) when both do"
                )
            cond = item
            continue
        is_updates = isinstance(item, dict) or _is_update_pairs(item)
        if cond is not None or (updates is not None and not is_updates):
            what = "updates" if is_updates else "outputs"
            later = "an sn.until" if cond is not None else "the updates"
            raise GraphError(
                f"sn.scan: cannot read what fn returned, {_short(returned)}: it has {what} "
                f"after {later}; " + _FORMS
            )
        if is_updates:
            more = OrderedDict(item) if isinstance(item, dict) else _updates_from_pairs(item)
            if updates is not None:
                raise _two_sets_of_updates(returned, updates, more)
            updates = more
        elif isinstance(item, (list, tuple)):
            lists.append(item)
        else:
            singles.append(item)
    if len(lists) > 1 or (lists and singles):
        raise GraphError(
            f"sn.scan: cannot read what fn returned, {_short(returned)}: it holds outputs "
            "both inside and outside a list; " + _FORMS
        )
    outputs = [_check_output(v, returned) for v in lists[0]] if lists else singles
    return outputs, updates if updates is not None else OrderedDict(), cond


_FORMS = (
    "return the outputs (a variable or one flat list), then optionally the updates (one dict "
    "or one list of (shared, new value) pairs), then optionally an sn.until, in that order"
)


def _two_sets_of_updates(returned, first: dict, second: dict) -> GraphError:
    """Two dicts or lists of pairs: merged, the later update of a shared variable in both
    would silently replace the earlier."""
    both = [key for key in second if any(key is known for known in first)]
    if both:
        return _updated_twice(both[0])
    return GraphError(
        f"sn.scan: cannot read what fn returned, {_short(returned)}: it has two sets of "
        "updates; merge them into one; " + _FORMS
    )


def _updated_twice(shared) -> GraphError:
    """A shared variable the step updates twice, as ``sn.function(updates=...)`` says it."""
    what = shared.describe() if isinstance(shared, Variable) else repr(shared)
    return GraphError(
        f"sn.scan: the step's updates: {what} is updated twice; give one new value per "
        "shared variable"
    )


def _is_update_pairs(value) -> bool:
    """A non-empty list or tuple of 2-item lists or tuples (Theano's ``is_updates``)."""
    return (
        isinstance(value, (list, tuple))
        and len(value) > 0
        and all(isinstance(p, (list, tuple)) and len(p) == 2 for p in value)
    )


def _updates_from_pairs(pairs) -> OrderedDict:
    """Pairs read as updates: each key must be a shared variable, or the pairs were meant as
    something else (two outputs each?), which is refused rather than guessed; a shared
    variable updated twice is refused, as ``sn.function(updates=...)`` refuses it (the later
    update would silently replace the earlier)."""
    updates = OrderedDict()
    for key, value in pairs:
        if not isinstance(key, SharedVariable):
            raise GraphError(
                f"sn.scan: fn returned a list of pairs, {_short(pairs)}, which is read as "
                f"updates (shared variable, new value), but {_short(key)} is not a shared "
                "variable; return outputs as one flat list, updates as a dict or a list of "
                "(shared, new value) pairs"
            )
        if any(key is known for known in updates):
            raise _updated_twice(key)
        updates[key] = value
    return updates


def _check_output(value, returned):
    """One item of the list of outputs: a container there is a misplaced update or until."""
    if isinstance(value, (list, tuple, dict, until)):
        raise GraphError(
            f"sn.scan: cannot read what fn returned, {_short(returned)}: a list of outputs "
            f"holds {_short(value)}; " + _FORMS
        )
    return value


def _short(value) -> str:
    """What fn returned, for an error: variables described, containers spelled out."""
    if isinstance(value, Variable):
        return value.describe()
    if isinstance(value, (list, tuple)):
        inner = ", ".join(_short(v) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner})"
    if isinstance(value, until):
        return "sn.until(...)"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_short(k)}: {_short(v)}" for k, v in value.items()) + "}"
    return repr(value)[:60]


def _over_placeholders(phs, outers, outputs, updates: dict, cond):
    """The step's results with the non-sequences replaced by the loop's placeholders. The
    step is called with the outer non-sequences themselves, as Theano calls it, so that it may
    differentiate through them: ``T.grad(y[i], x)`` where y was computed from x outside. A
    shared variable the step updates stays as it is, listed or not: it becomes a state that
    changes from step to step (``_Builder._updates``), never a loop constant (Theano's rule)."""
    replace = {}
    for ph, outer in zip(phs, outers):
        if any(outer is known for known in [*replace, *updates]):  # updated, or repeated
            continue
        replace[outer] = ph
    if not replace:
        return outputs, updates, cond
    values = [as_variable(v) for v in [*outputs, *updates.values()]]
    values = clone_graph(values + ([cond.cond] if cond is not None else []), replace)
    n = len(outputs)
    updates = OrderedDict(zip(updates, values[n : n + len(updates)]))
    return values[:n], updates, (until(values[-1]) if cond is not None else None)


def _check_state(o: _Output, ph: Variable, out: Variable):
    _check_state_type(f"output {o.i} (initial value {o.name})", ph, out)


def _check_state_type(what: str, ph: Variable, out: Variable):
    """A recurrent output keeps its state's dtype and shape from step to step."""
    a, b = ph.type, out.type
    bad = a.dtype != b.dtype or not shapes_unify(a.shape, b.shape)
    if bad:
        raise ShapeError(
            f"sn.scan: {what} is {a.dtype.name}{format_shape(a.shape)} but the step returns "
            f"{b.dtype.name}{format_shape(b.shape)}; a recurrent output must keep its dtype "
            "and shape from step to step (cast the initial value or the output with sn.cast)"
        )


def _check_strict(nonseqs, given_ids):
    """``strict=True``: every value from outside must be passed as a non-sequence (one that
    is not is a missing input of the step, Theano's MissingInputError: a GraphError)."""
    for var, _, _ in nonseqs:
        for leaf in leaves([var]):
            if id(leaf) not in given_ids and not isinstance(leaf, Constant):
                raise GraphError(
                    f"sn.scan(strict=True): the step reads {leaf.describe()}, which is not "
                    "among non_sequences; pass it there"
                )
