"""``sn.function(inputs, outputs, updates=..., givens=..., backend=...)``."""

from __future__ import annotations

import inspect
import keyword
import logging
import operator
import threading
import time
import weakref
from collections import Counter

import numpy as np

from symnb.backends import default_backend, fall_back, phases
from symnb.backends.c.compiler import CompilerUnusable
from symnb.backends.device.runtime import DeviceArray
from symnb.backends.loop import bodies_rewritten
from symnb.backends.plan import fresh_outputs
from symnb.compile.arguments import (
    ambiguous_keyword,
    check_inputs,
    flatten_outputs,
    single_output,
)
from symnb.compile.built_from import own_option, own_outputs, variables_in
from symnb.compile.checkmode import CHECK, check_mode, has_unknown_dims, warn_for_call_shapes
from symnb.compile.checkmode import active as check_mode_active
from symnb.compile.fit import (
    check_givens,
    check_updates,
    keep_checks,
    read_sources,
    refuse_given_inputs,
    retied_shared,
    shape_checked_givens,
    tied_dims,
    warn_unread_givens,
    with_default_updates,
)
from symnb.compile.inputs import InputSpec, call_arrays, check_updated_sizes, shared_sizes
from symnb.compile.linkers import check_choices, get_linker
from symnb.compile.results import may_share, owned, repeated
from symnb.config import config
from symnb.core import locks
from symnb.core.dims import is_symbolic
from symnb.core.graph import Graph, clone_graph, leaves
from symnb.core.hooks import hook
from symnb.core.source import user_location
from symnb.core.variable import Constant, SharedVariable, Variable, graph_first, pin_values
from symnb.core.words import counted
from symnb.errors import InputError, ReentrantCallError
from symnb.opt import optimize as rewrite

log = logging.getLogger(__name__)


def function(
    inputs,
    outputs=None,
    updates=None,
    givens=None,
    backend=None,
    name=None,
    optimize=None,
    borrow=False,
    mode=None,
    no_default_updates=False,
):
    """Compile ``outputs`` as a function of ``inputs``.

    ``inputs``: a variable, or a list or tuple of them, in the order the call takes their
    values (a set, whose order is arbitrary, or anything else is an ArgumentError).
    ``outputs``: a variable, a list/tuple of them, or a dict name -> variable; the call
    returns the same structure. ``updates``: shared variable -> new value, all computed before
    any is written. ``givens``: variable -> variable or value (a dict or pairs), substituted
    before compiling; a key the outputs and updates do not read warns (``GraphWarning``), a
    key that is also an input is refused (the value passed for it would be ignored).
    ``optimize``: "fast", "stable", "none" or ``{"include": [...], "exclude": [...]}`` (names
    of rewrite phases or rules; see docs/rewrites.md); None is ``sn.config.optimize``.
    ``backend``: "c", "py", "opencl" or "cuda"; None is ``sn.config.backend``, else "c" when a
    C compiler is present, else "py".
    ``borrow``: False (the default) copies at the borders: an output that is (a view of) an
    input, a shared value or a constant is returned as a copy, and an update that is (a view
    of) an input or another shared value is stored as a copy, so later writes to either side
    never reach the other. True returns and stores such arrays as they are (no copy).
    ``mode``: None, "debug" (every node checked against its NumPy reference) or "nanguard"
    (stop at the first node giving NaN or Inf); see docs/reliability.md.
    Calls of one function that has updates take turns (each call reads, computes and writes
    its updates as one step), so threads sharing it lose no update.
    ``no_default_updates``: a shared variable with a default update (a random stream's state)
    is written by every function that reads it, so each call draws new numbers; True skips
    every such update, a list of shared variables skips theirs (Theano's argument).
    """
    if check_mode_active():  # no rewrites; a linker that returns zeros of the checked shapes
        check_choices(backend, optimize, mode)  # refused as outside check mode
        checked = Function(
            inputs,
            outputs,
            updates,
            givens,
            CHECK,
            name,
            "none",
            no_default_updates=no_default_updates,
        )
        # the updates' values are checked against their shared variables; none is written
        checked.linker.updates_of([shared for shared, _ in checked.updates])
        return checked
    return Function(
        inputs, outputs, updates, givens, backend, name, optimize, borrow, mode, no_default_updates
    )


class Function:
    """A compiled graph: call it with values for its inputs."""

    def __init__(
        self,
        inputs,
        outputs,
        updates,
        givens,
        backend,
        name,
        optimize=None,
        borrow=False,
        mode=None,
        no_default_updates=False,
    ):
        start = time.perf_counter()
        #: seconds per phase of this compile (symnb/backends/phases.py); the log reports them
        with phases.recording() as self.compile_phases, phases.timed("graph"):
            self._build(
                inputs,
                outputs,
                updates,
                givens,
                backend,
                name,
                optimize,
                borrow,
                mode,
                no_default_updates,
            )
        self.compile_time = time.perf_counter() - start
        if log.isEnabledFor(logging.INFO):
            log.info(
                "compiled %s in %.3f s: %s; phases: %s",
                self._signature(),
                self.compile_time,
                self._contents(),
                self.compile_phases,
            )

    def _build(
        self,
        inputs,
        outputs,
        updates,
        givens,
        backend,
        name,
        optimize,
        borrow,
        mode,
        no_default_updates,
    ):
        """The compile, in phases: "graph" (the checks, the graph's copy and what no other
        phase covers), "rewrites", "planning" (lowering, rendering, the plan's steps), the
        backend's own ("probe", "compile", "loading": symnb/backends/c/cache.py) and
        "runner"."""
        # the defaults are resolved here, so a pickled function is rebuilt the same elsewhere
        chosen = backend or config.backend  # the user's choice: never a silent fallback
        backend = chosen or default_backend()
        optimize = config.optimize if optimize is None else optimize
        linker_class = get_linker(backend, mode)  # an unknown one is refused before any work
        self.name, self.borrow, self.mode = name, borrow, mode
        self.inputs = check_inputs(inputs)
        self._structure, out_vars = flatten_outputs(outputs)
        checked_updates = check_updates(updates)
        givens = check_givens(givens)
        refuse_given_inputs(givens, self.inputs)
        reads = out_vars + [value for _, value in checked_updates]
        givens = shape_checked_givens(givens, read_sources(self.inputs, reads, givens))
        # collected from the graph after the givens (a draw only a key reads does not advance)
        self.updates = with_default_updates(checked_updates, out_vars, no_default_updates, givens)
        #: named dims an update ties to its shared value's fixed size: checked with the inputs
        self._ties = tied_dims(self.updates)
        #: the updates whose write could fail (a value not of its variable's fixed type)
        self._unsure = tuple(i for i, pair in enumerate(self.updates) if not _always_fits(*pair))
        #: how a call's shape error names each of those updates (None: the others)
        self._update_labels = _update_labels(self.updates, self._unsure)
        targets = out_vars + [value for _, value in self.updates]
        #: what a pickle rebuilds it from: the inputs, updates and givens as the checked lists
        #: (the user's may be iterators, ``zip(params, steps)``, that the checks consumed), the
        #: outputs and options as copies (the caller may edit its list or dict afterwards)
        self._built_from = (
            self.inputs,
            own_outputs(self._structure, out_vars),
            checked_updates,
            list(givens.items()),
            backend,
            name,
            own_option(optimize),
            borrow,
            mode,
            own_option(no_default_updates),
        )
        warn_unread_givens(givens, targets)
        targets = clone_graph(targets, givens)
        self.graph_before = Graph(self.inputs, targets)
        self.graph = Graph(self.inputs, targets)
        with phases.timed("rewrites"):
            self.rewrites = rewrite(self.graph, optimize)
        #: the givens' shape checks that nothing read once the rewrites ran (the outputs read
        #: only the key's fixed shape, ``x.shape[0]``), kept as outputs after the updates:
        #: run by every call, never returned (docs/shapes.md)
        if backend == CHECK:
            self._n_checks = 0
        else:
            self._n_checks = keep_checks(self.graph, givens, self.inputs, self.rewrites)
        self.backend = backend
        rest = [v for v in leaves(self.graph.outputs) if not _is_input(v, self.inputs)]
        # the call passes inputs then shared values (those with named or expression dims
        # first: the C runner checks them with the inputs'); constants' slots come after them
        shared = [v for v in rest if isinstance(v, SharedVariable)]
        shared.sort(key=lambda v: not any(map(is_symbolic, v.type.shape)))
        self._leaves = self.inputs + shared + [v for v in rest if not isinstance(v, SharedVariable)]
        self._shared = shared
        if borrow:  # its results and updates may be the caller's arrays (``lent``)
            for v in [*shared, *(u for u, _ in self.updates)]:
                v.lends = True
        #: shared values whose named dims a call checks against the inputs' (docs/shapes.md)
        self._named_shared = [v for v in shared if any(map(is_symbolic, v.type.shape))]
        #: the shared values an update may leave disagreeing about a named dim (then checked
        #: in Python before any update is written, not by the C entry point)
        self._retied = retied_shared(self.updates, self._named_shared)
        self._specs = [InputSpec(v, i) for i, v in enumerate(self.inputs)]
        named = Counter(v.name for v in self.inputs if v.name)
        #: the inputs a keyword names: only a name one input has (two inputs named "x": f(x=...)
        #: is an error naming both, where it took the last)
        self._by_name = {v.name: i for i, v in enumerate(self.inputs) if named[v.name] == 1}
        self._n_out = len(out_vars)
        #: the results' names as the user gave them: every display of the function (the
        #: pictures before and after the rewrites, the stepper, ``f.text()``) names its results
        #: so, whatever a rewrite put in their place (an unnamed fused node, an input)
        self.result_names = [v.name for v in out_vars]
        #: results that are leaves themselves (an input, shared value or constant returned)
        self._leaf_results = {i for i, v in enumerate(self.graph.outputs) if v.owner is None}
        self._turns = locks.lock() if self.updates else None  # unlocked in a forked child
        # a loop's step is rewritten with the same rules as the graph around it
        with phases.timed("planning"), bodies_rewritten(optimize):
            try:
                self.linker = _make_linker(linker_class, self.graph, self._leaves, self._n_out)
            except CompilerUnusable as exc:
                if chosen:
                    raise
                # the compiler runs but its first probe built nothing that loads: "py",
                # warned once (docs/install.md), as when there is no compiler at all
                self.backend = fall_back(exc.reason)
                self._built_from = (*self._built_from[:4], self.backend, *self._built_from[5:])
                self.linker = _make_linker(
                    get_linker(self.backend, mode), self.graph, self._leaves, self._n_out
                )
        if self._ties:
            self.linker.fix_dims({name: size for name, (size, _) in self._ties.items()})
        #: a device linker reads shared values where they are (kept on the device)
        self._resident = self.linker.resident
        with phases.timed("runner"):
            self._runner = None if mode is not None else self._make_runner()
        #: the runner checks not every dim (``n+m``): the Python input checks come first
        self._prechecked = self._runner is not None and self.linker.runner_skips_dims
        #: the runner when a call is its arguments alone (nothing shared to read or write)
        alone = not (self._shared or self.updates or self._prechecked)
        self._direct = self._runner if alone else None
        #: results that may share memory with an argument (the rest are the plan's own storage)
        self._alias_check = self._maybe_aliased()
        if self._n_checks and self._alias_check is not None:  # (the checks are not returned)
            kept = len(self.graph.outputs) - self._n_checks
            self._alias_check = tuple(i for i in self._alias_check if i < kept)
        #: the constants' arrays (read-only): a result that is a view of one is copied too
        self._constants = tuple(
            v.value for v in self._leaves if isinstance(v, Constant) and not v.weak
        )
        #: results that are an earlier result again (an output listed twice, merged with
        #: another, or also an update's value): copied so that each is the caller's own
        self._repeated = repeated(self.graph.outputs)
        #: the first call warns about what its shapes reveal where dims were unknown
        self._first_call = self.backend != CHECK and has_unknown_dims(self.graph_before)
        #: the runner when its results are the caller's as they come (nothing to copy: no
        #: result can alias an argument, or ``borrow``), for the entry point to call, reading
        #: the shared values and writing the updates itself; set once the first call has
        #: warned (docs/c_backend.md, "Calls")
        copies = not self.borrow and (
            self._leaf_results or self._repeated or self._alias_check != ()
        )
        # (the entry point returns every result but the updates: not the checks)
        slow = copies or self._resident or self._n_checks or self._retied or self._prechecked
        self._plain = None if slow else self._runner
        self._entry = self._make_entry(None if self._first_call else self._plain)

    def _signature(self) -> str:
        ins = ", ".join(v.name or "?" for v in self.inputs)
        updates = f" and {len(self.updates)} update(s)" if self.updates else ""
        return f"{self._label()}({ins}) -> {self._n_out} output(s){updates}"

    def _contents(self) -> str:
        """What the log says a compile made: backend, rewrites, steps by kind."""
        plan, optimize = self.linker.plan, self._built_from[6]
        parts = [
            f"backend {self.backend!r}",
            f"optimize {optimize!r}",
            f"{len(self.rewrites)} rewrites",
        ]
        if plan is not None:
            kinds = sorted(Counter(step.kind for step in plan.steps).items())
            listed = ", ".join(f"{n} {kind}" for kind, n in kinds)
            parts.append(f"{len(plan.steps)} steps ({listed})")
        runner = "the C runner" if self._runner is not None else "the Python executor"
        return ", ".join(parts) + f"; calls run in {runner}"

    def _maybe_aliased(self) -> tuple[int, ...] | None:
        plan = self.linker.plan
        if plan is None:
            return None  # every result is looked at
        fresh = fresh_outputs(plan)
        return tuple(i for i, slot in enumerate(plan.outputs) if slot not in fresh)

    def _make_runner(self):
        """The linker's C runner for whole calls (backend "c"), or None."""
        return self.linker.runner()

    #: ``f(...)``: a property, so that a call reaches the linker's native entry point (the C
    #: runner's ``Entry``) with no Python frame in between; ``_PythonEntry`` where there is none
    __call__ = property(operator.attrgetter("_entry"), doc="Call the compiled function.")

    @property
    def __signature__(self) -> inspect.Signature:
        """``f(x, W, b)`` for help(), Jupyter and ``inspect``: the inputs by name (the name a
        keyword argument takes), or ``input0``... where a name is not an identifier."""
        names = [v.name for v in self.inputs]
        usable = all(n and n.isidentifier() and not keyword.iskeyword(n) for n in names)
        kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
        if not usable or len(set(names)) != len(names):
            names = [f"input{i}" for i in range(len(names))]
            kind = inspect.Parameter.POSITIONAL_ONLY
        return inspect.Signature([inspect.Parameter(n, kind) for n in names])

    def _make_entry(self, fast):
        """What ``f(...)`` calls: the linker's native entry point where it has one (no Python
        frame per call), else ``_PythonEntry``. Either holds this function weakly, so that a
        function nothing else holds goes at once (its buffers, a device's memory with it)."""
        structure = None if self._structure is single_output else self._structure
        owner = weakref.ref(self)
        names = tuple(v.name if v.name in self._by_name else None for v in self.inputs)  # (a
        # name two inputs have is None: a keyword naming them goes to _bind, which says so)
        entry = self.linker.entry(
            fast,
            owner,
            Function._python_call,
            Function._declined_call,
            structure,
            names,
            shared=tuple(self._shared),
            updates=tuple(shared for shared, _ in self.updates),
            turns=self._turns,
            labels=self._update_labels,
        )
        return _PythonEntry(owner, self._turns) if entry is None else entry

    def _python_call(self, *args, **kwargs):
        """A call in Python: the first call's shape warnings, copies of results that may alias
        an argument, keywords that do not bind (and every call without a runner). A call
        whose runner results are the caller's as they come never gets here: the entry point
        (runner_entry.h) makes it, shared values and updates too. Keywords are put in their
        inputs' places first."""
        if kwargs:
            args = tuple(self._bind(args, kwargs))
        if self._first_call:
            self._warn_for_first_call(args)
        if self._direct is not None:  # no shared values, no updates
            results = self._direct(*args)  # None: an argument not as planned, no step ran
            if results is not None:
                return self._finish(results, args)
            return self._declined(args)
        if self._turns is None:
            return self._call(args)
        return self._in_turn(args)

    def _declined_call(self, *args):
        """The entry point's call the runner declined (no keywords), or that it could not
        make (a shared value only on a device, a call from inside a call of this function);
        nothing ran, and it has let go of the turns."""
        if self._turns is None:
            return self._declined(args)
        if log.isEnabledFor(logging.DEBUG):
            self._log_declined(args)
        return self._in_turn(args, declined=True)

    def _declined(self, args):
        """The call the runner declined (an argument not as planned), run and checked in
        Python: it converts what it can and raises the error naming the input."""
        if log.isEnabledFor(logging.DEBUG):
            self._log_declined(args)
        return self._call(args, declined=True)

    def _in_turn(self, args, declined=False):
        """The call holding the function's turns (read, compute, write as one). Arguments
        other than arrays and numbers are converted first: that may run the caller's code (an
        object's ``__array__``) that calls this function too, which must find the turns free.
        A call from inside a call of this function in this thread (a print hook, a Python
        op) would wait for itself forever: a ReentrantCallError. The entry point takes the
        turns (``enter``): it knows the thread holding them, whichever path took them."""
        converted = False
        for arg in args:
            if type(arg) not in _RUN_NO_CODE and not isinstance(arg, np.generic):
                args, converted = tuple(self._convert(self._bind(args, {}))), True
                break
        entry = self._entry
        if not entry.enter():
            raise ReentrantCallError(
                f"{self._label()} was called from inside one of its own calls, in the same "
                "thread (a print hook, a Python op or an input's __array__ calling it): its "
                "calls take turns (each reads, computes and writes its updates as one), so "
                "this one would wait for itself forever; compute what it needs before or "
                "after the call"
            )
        try:
            return self._call(args, declined, converted)
        finally:
            entry.leave()

    def _warn_for_first_call(self, args) -> None:
        """Once: the ShapeWarnings the call's shapes reveal in the graph as written."""
        self._first_call = False
        if not isinstance(self._entry, _PythonEntry):  # from now on the entry calls the runner
            self._entry.fast = self._plain
        try:
            shapes = [np.shape(v) for v in self._bind(args, {})]
        except (InputError, ValueError, TypeError, RuntimeError):
            return  # the call itself reports it (a missing input, a ragged list, torch's
            # refusal of a list of tensors that require grad)
        warn_for_call_shapes(self.graph_before, shapes)

    def _call(self, args, declined=False, converted=False):
        """A positional call (keywords bound already): the runner, else the input checks and
        conversions, then the runner or the linker's Python run. ``converted``: the
        arguments were converted already (the runner may take them now)."""
        if self._runner is not None and not (declined or self._prechecked):
            leaf_values = [*args, *[v.host_value() for v in self._shared]] if self._shared else args
            results = self._runner(*leaf_values)
            if results is not None:  # None: an argument not as planned, no step ran
                return self._finish(results, leaf_values)
            if log.isEnabledFor(logging.DEBUG):
                self._log_declined(args)
        arrays = None
        if len(args) == len(self._specs):  # fast path: arrays that fit as given
            arrays = [spec.quick(v) for spec, v in zip(self._specs, args)]
            arrays = None if any(a is None for a in arrays) else arrays
            if arrays is not None and self._named_shared:  # (inputs of fixed dims only)
                shared_sizes(self._named_shared, self._ties)
        if arrays is None:  # the input checks raise the error naming the input
            arrays = self._convert(self._bind(args, {}))
        converted = converted or any(a is not v for a, v in zip(arrays, args))
        arrays = self._with_shared(arrays)
        if self._runner is not None and (converted or declined or self._prechecked):
            # Python scalars or lists the runner declined (it takes them as arrays), a call
            # the entry point handed over (a shared value only on a device, read above), or
            # one whose expression dims only the checks above check
            results = self._runner(*arrays)
            if results is not None:
                return self._finish(results, arrays)
        # no runner (none could be built, or it is off), or arguments it still declines
        return self._finish(self.linker.run(arrays), arrays)

    def leaf_values(self, *args, **kwargs) -> list:
        """What a call with these arguments hands its linker: the inputs checked and converted
        as the call does, then the shared values (where they are: on a device backend's
        device). ``f.profile()`` runs the linker on these."""
        return self._with_shared(self._convert(self._bind(args, kwargs)))

    def shared_dim_sizes(self) -> dict:
        """``{name: size}`` for the named dims the shared values fix (``W`` of ``("f", 10)``
        holding (5, 10) makes f 5), and those an update ties to its shared variable's fixed
        size: a call's inputs must give those names the same sizes (``f.profile()`` draws its
        random inputs so)."""
        if not (self._named_shared or self._ties):
            return {}
        sizes = shared_sizes(self._named_shared, self._ties)
        return {name: size for name, (size, _) in sizes.items()}

    def _with_shared(self, arrays: list) -> list:
        if self._resident:
            return arrays + [v.current_value() for v in self._shared]
        return arrays + [v.host_value() for v in self._shared]

    @property
    def results(self) -> list:
        """The variables the function returns (the graph's outputs less the updates)."""
        return self.graph.outputs[: self._n_out]

    def _log_declined(self, args) -> None:
        given = ", ".join(_kind(a) for a in args)
        log.debug(
            "the C runner declined the arguments of a call of %s (arguments: %s); the input "
            "checks convert them and the runner runs the call",
            self._label(),
            given or "none",
        )

    def _finish(self, results, leaf_values):
        """Write the updates, return the outputs in the user's structure (copying what
        aliases a leaf's value or another result unless ``borrow``)."""
        if self._n_checks:  # the givens' checks ran; they are not results
            results = results[: len(results) - self._n_checks]
        if self._constants:
            leaf_values = [*leaf_values, *self._constants]
        check = range(len(results)) if self._alias_check is None else self._alias_check
        if (
            self.backend != CHECK
            and not self.borrow
            and (
                self._leaf_results
                or self._repeated
                or any(may_share(results, i, leaf_values) for i in check)
            )
        ):
            results = owned(results, leaf_values, self._leaf_results, self._repeated)
        if self.updates and self.backend == CHECK:  # (check mode writes no shared value)
            self._check_updates(results[self._n_out :])
            return self._structure(results[: self._n_out])
        if self.updates:
            self._write_updates(results[self._n_out :])
            return self._structure(results[: self._n_out])
        return self._structure(results)

    def _write_updates(self, values) -> None:
        """Every update's value checked against its shared variable before any is written:
        a call whose update does not fit raises with no shared value changed."""
        self._check_updates(values, writing=True)
        for (shared, _), value, label in zip(self.updates, values, self._update_labels):
            if isinstance(value, DeviceArray):
                shared.keep_on_device(value, label)
            else:  # (the function's own array: not lent, unlike set_value(borrow=True))
                shared.take_fitted(shared.fitted(value, True, label))

    def _check_updates(self, values, writing: bool = False) -> None:
        """The updates' values checked against their shared variables, nothing written (check
        mode writes none: its values are zeros of the shapes the rules give). An update of
        its variable's own fixed type cannot fail, so only the others (``_unsure``) are
        checked; ``writing``: where one update alone is written, its write checks it."""
        if self._retied:  # (sizes that later calls could not read together)
            check_updated_sizes(self._retied, self.updates, values, self._update_labels)
        if self._unsure and (len(values) > 1 or not writing):
            for i in self._unsure:
                shared, value = self.updates[i][0], values[i]
                if isinstance(value, DeviceArray):
                    shared.fitted_on_device(value, self._update_labels[i])
                else:
                    shared.fitted(value, True, self._update_labels[i])

    def _convert(self, values) -> list:
        return call_arrays(self._specs, values, self._named_shared, self._ties)

    def _bind(self, args, kwargs) -> list:
        if len(args) > len(self.inputs):
            raise InputError(
                f"{self._label()} takes {counted(len(self.inputs), 'input')}, got {len(args)}"
            )
        values = list(args) + [_MISSING] * (len(self.inputs) - len(args))
        for key, value in kwargs.items():
            if key not in self._by_name:
                raise InputError(self._unbound_keyword(key))
            if values[self._by_name[key]] is not _MISSING:
                raise InputError(f"{self._label()}: input {key!r} given twice")
            values[self._by_name[key]] = value
        missing = [self._specs[i].label for i, v in enumerate(values) if v is _MISSING]
        if missing:
            raise InputError(f"{self._label()} is missing {', '.join(missing)}")
        return values

    def _unbound_keyword(self, key) -> str:
        shared = ambiguous_keyword(key, [v.name for v in self.inputs])
        if shared:
            return f"{self._label()}: {shared}"
        return f"{self._label()} has no input named {key!r}"

    def _label(self) -> str:
        return f"function '{self.name}'" if self.name else "the function"

    @property
    def runner(self):
        """The C runner's schedule (backend "c"): ``.runs`` counts the calls it ran,
        ``.declined`` the calls whose arguments it declined (converted, then run) and the
        steps it handed to Python; None where there is none."""
        return self._runner

    @property
    def kernels(self):
        """What each step runs: generated kernels with their C source, BLAS or library calls
        (backend "c"); None for backends without kernels."""
        return self.linker.kernels

    def text(self) -> str:
        """The optimised graph in symnb's text form (a result the user named whose value a
        rewrite replaced is written ``name=value`` on the ``outputs:`` line)."""
        return hook("format_graph")(self)

    def profile(self, *args, repeat: int = 10, **kwargs):
        """Time each node over ``repeat`` calls (random inputs when none are given): a sorted
        table and a bar chart in Jupyter. Updates are not written."""
        return hook("profile_function")(self, args, kwargs, repeat)  # viz sits above compile

    def _repr_mimebundle_(self, include=None, exclude=None):
        """Jupyter's summary card (symnb.viz); plain text for terminals."""
        return hook("function_bundle")(self, include, exclude)

    def __reduce__(self):
        """Pickled as what it was built from: its variables (the graph, the shared variables
        with their current values) and options; loading compiles it again, which the kernel
        cache turns into loads of the same kernels (no plan or kernel pointer is pickled).
        One built in check mode loads as one in check mode (zeros, no updates written), so a
        program sending functions to other processes (Dask workers) can be checked. The
        graphs of all its variables go first, as one flat list (core/variable.py): any
        depth pickles, and the nodes the outputs and updates share are listed once."""
        variables = variables_in(self._built_from)
        if self.backend == CHECK:
            inputs, *rest = self._built_from
            return _checked, (graph_first(inputs, variables), *rest)
        saved = graph_first(self._built_from, variables)
        if self._turns is not None:  # the shared values of one step (read in a turn)
            pin_values(saved, [*self._shared, *(s for s, _ in self.updates)], self._entry)
        return _unpickled, (saved,)

    def __copy__(self):
        """``copy.copy(f)``: the function built again from what it was built from, so it reads
        and updates the same shared variables (as Theano's ``copy.copy(f)``, its ``f.copy()``);
        ``copy.deepcopy(f)`` and a pickle copy the shared variables with it. Its kernels come
        from the cache. Made in check mode (``symnb check``), the copy is a check-mode one."""
        if self.backend == CHECK or check_mode_active():
            return _checked(*self._built_from)
        return Function(*self._built_from)

    def __repr__(self):
        ins = ", ".join(repr(v) for v in self.inputs)
        # a device backend's device (started when compiled: naming it starts nothing)
        on = f" device={self.linker.device!r}" if self._resident else ""
        return f"<symnb.Function {self.name or ''}({ins}) backend={self.backend}{on}>"


_MISSING = object()
#: argument types whose conversion runs none of the caller's code (``_in_turn``)
_RUN_NO_CODE = frozenset({np.ndarray, float, int, bool, complex})


class _PythonEntry:
    """``f(...)`` where the linker has no native entry point: the Python path, reached
    through a weak reference (the function holds its entry, not the other way round).
    ``enter``/``leave`` take and give back the function's ``turns`` as runner_entry.h's."""

    __slots__ = ("_owner", "_turns", "_holder")

    def __init__(self, owner: weakref.ref, turns):
        self._owner, self._turns, self._holder = owner, turns, 0

    def enter(self) -> bool:
        """The turns taken for this thread: True; False where it holds them already."""
        me = threading.get_ident()
        if self._holder == me:  # (only the holder writes its id here)
            return False
        self._turns.acquire()
        self._holder = me
        return True

    def leave(self) -> None:
        self._holder = 0
        self._turns.release()

    def __call__(self, *args, **kwargs):
        function = self._owner()
        if function is None:
            raise ReferenceError("this compiled function was deleted")
        return function._python_call(*args, **kwargs)


def _unpickled(built_from):
    """A function loaded from a pickle. Where it cannot be built here, what stops it waits
    for the first call: its device cannot be opened (a worker forked from a process that
    used OpenCL: a DeviceError), there is no usable C compiler (a CompileError), the compile
    directory is refused (a CompileDirError), or anything else the process it was built in
    did not raise. Raised while a pool's worker unpickles its task, it would lose the task
    (``Pool.get`` waits forever, ``ProcessPoolExecutor`` says only that a worker died)
    instead of reaching the caller. Loaded in check mode (``symnb check`` of a program
    loading a model), a check-mode one."""
    try:
        if check_mode_active():
            return _checked(*built_from)
        return Function(*built_from)
    except Exception as exc:  # noqa: BLE001 (each is raised by the first use: _Unusable)
        return _Unusable(exc)


class _Unusable:
    """Stands for a function that could not be loaded: every use raises why."""

    def __init__(self, error: Exception):
        self._error, self._where = error, error.__traceback__  # (each use raises from there)

    def __call__(self, *args, **kwargs):
        raise self._error.with_traceback(self._where)

    def __getattr__(self, name):
        if name.startswith("__"):  # protocols probed with hasattr (copy, pickle, NumPy)
            raise AttributeError(name)
        raise self.__dict__["_error"].with_traceback(self.__dict__["_where"])

    def __repr__(self):
        return f"<symnb.Function that could not be loaded here: {self.__dict__['_error']}>"


def _checked(inputs, outputs, updates, givens, *options):
    """A check-mode function loaded from a pickle: built in check mode here too."""
    with check_mode():
        return function(
            inputs, outputs, updates, givens, name=options[1], no_default_updates=options[-1]
        )


def _make_linker(cls, graph, leaves, n_results: int):
    """A device linker also learns how many outputs are results (copied to the host) rather
    than updates (kept on the device)."""
    if cls.resident:
        return cls(graph, leaves, n_results)
    return cls(graph, leaves)


def _always_fits(shared: SharedVariable, value: Variable) -> bool:
    """Whether every value of ``value`` fits ``shared``: both of one dtype and one shape of
    fixed dims (then the write cannot fail)."""
    shape = shared.type.shape
    return (
        value.type.dtype == shared.type.dtype
        and value.type.shape == shape
        and all(isinstance(d, int) for d in shape)
    )


def _update_labels(updates: list, unsure: tuple) -> tuple:
    """How a call's error names each update in ``unsure`` (those whose value may not fit its
    shared variable): "the value of its update in this call, 'x' (float64(?,)) (at <the line
    that built it, or the sn.function line>),"; None for the others, which always fit."""
    if not unsure:
        return (None,) * len(updates)
    here = user_location()
    labels = []
    for i, (_, value) in enumerate(updates):
        if i not in unsure:
            labels.append(None)
            continue
        loc = value.source if value.owner is not None and value.source else here
        at = "" if loc is None else f" (at {loc})"
        labels.append(f"the value of its update in this call, {value.describe()}{at},")
    return tuple(labels)


def _kind(value) -> str:
    """An argument as the declined-call log names it: ``ndarray float32(2, 3)``, ``list``."""
    if isinstance(value, np.ndarray):
        return f"ndarray {value.dtype}{value.shape}"
    return type(value).__name__


def _is_input(var, inputs) -> bool:
    return any(var is i for i in inputs)
