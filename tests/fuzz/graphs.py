"""Random well-typed graphs for differential fuzzing, and the oracle that judges them.

A *program* is drawn by hypothesis as data: its leaves (inputs with a dtype, a shape, a view
kind and values, ``arrays.py``; at most one shared variable) and a list of steps, each a kind
and small integers that pick an op and its operands by index (modulo what exists; the kinds
are in ``steps.py``). ``build`` turns a program into symnb variables, skipping any step the
op's rules refuse (a DTypeError, a ShapeError): so every graph built is well typed by
construction, and hypothesis shrinks a failure to the fewest steps. The NumPy reference
backend without rewrites is the oracle; a program whose reference raises is dropped
(``Outcome.refused``). The reference is itself held to NumPy where symnb computes an op its
own way (``check_numpy``) and to the shapes its types promised (``_late_refusal``); the
gradient mode is in ``gradients.py``.
"""

from __future__ import annotations

import functools
import warnings
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
from hypothesis import strategies as st

import symnb as sn
from symnb.core.graph import ancestors
from symnb.opt.registry import RULES
from symnb.viz.stepper import stepper_steps
from tests.fuzz.arrays import DTYPES, VALUES, VIEWS, view
from tests.fuzz.steps import KINDS, REFUSED, apply, cast_within_range
from tests.helpers import available_backends

SHAPES = [(3, 4), (4,), (1, 4), (3, 1), ()]
#: ``--big``: a long last axis, for kernels' blocks (512-element sums) and vector remainders
BIG_SHAPES = [(5, 1031), (1031,), (1, 1031), (5, 1), (), (2, 517)]
#: ``--empty`` adds these: NumPy's rules for arrays without elements
EMPTY_SHAPES = [(0, 4), (3, 0), (0,)]
#: what a declared dim is: its size, unknown, or a name (one name per size: "d3", "d4")
DIM_KINDS = ["fixed", "unknown", "named"]


@dataclass
class Leaf:
    """An input or shared variable: its declared type and the array passed for it."""

    dtype: str
    shape: tuple
    declared: tuple  # the shape the variable is declared with (None: unknown)
    value: np.ndarray
    shared: bool = False


@dataclass
class Program:
    leaves: list
    steps: list
    update: bool = False  # the shared leaf (if any) gets an update

    def describe(self) -> str:
        leaves = ", ".join(
            f"{leaf.dtype}{list(leaf.shape)}{'(shared)' * leaf.shared}" for leaf in self.leaves
        )
        return f"leaves [{leaves}], steps {self.steps}, update={self.update}"


def narrowest_float(output) -> int:
    """The itemsize of the narrowest float dtype among ``output`` and what it is computed
    from (8 where there is none)."""
    found = [output] + [v for node in ancestors([output]) for v in (*node.inputs, *node.outputs)]
    sizes = [v.type.dtype.itemsize for v in found if v.type.dtype.kind == "f"]
    return min(sizes, default=8)


@dataclass
class Built:
    """A program as symnb variables: inputs, the output, the shared variable's update."""

    inputs: list
    values: list
    output: object
    shared: list = field(default_factory=list)  # (SharedVariable, initial value)
    updates: dict = field(default_factory=dict)
    checks: list = field(default_factory=list)  # steps.Check of the steps NumPy judges too


# -- drawing ------------------------------------------------------------------------------------
@st.composite
def leaves(draw, shapes=SHAPES, shared: bool = False) -> Leaf:
    """An input of one of ``shapes``, or the shared variable, of the first."""
    shape = shapes[0] if shared else draw(st.sampled_from(shapes))
    dtype = draw(st.sampled_from(DTYPES))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    value = view(rng, shape, dtype, draw(st.sampled_from(VALUES)), draw(st.sampled_from(VIEWS)))
    declared = tuple(_declared(d, draw(st.sampled_from(DIM_KINDS))) for d in shape)
    return Leaf(dtype, shape, shape if shared else declared, value, shared)


def _declared(size: int, kind: str):
    """A dim as declared: its size, unknown (None), or named after its size (so every leaf
    that names a dim of that size names the same one)."""
    return {"fixed": size, "unknown": None, "named": f"d{size}"}[kind]


STEP = st.tuples(st.sampled_from(list(KINDS)), *[st.integers(0, 255)] * 4)


@st.composite
def programs(draw, max_steps: int = 6, shapes=SHAPES) -> Program:
    found = draw(st.lists(leaves(shapes), min_size=1, max_size=3))
    if draw(st.booleans()):
        found.append(draw(leaves(shapes, shared=True)))
    steps = draw(st.lists(STEP, min_size=1, max_size=max_steps))
    return Program(found, steps, update=found[-1].shared and draw(st.booleans()))


# -- building -----------------------------------------------------------------------------------
def build(program: Program) -> Built:
    """The program as a graph; steps the op rules refuse are skipped."""
    built = Built([], [], None)
    for i, leaf in enumerate(program.leaves):
        if leaf.shared:
            var = sn.shared(leaf.value.copy(), name=f"s{i}")
            built.shared.append((var, leaf.value.copy()))
        else:
            var = sn.tensor(f"x{i}", shape=leaf.declared, dtype=leaf.dtype)
            built.inputs.append(var)
        built.values.append(var)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for step in program.steps:
            try:
                value, check = apply(built.values, *step)
            except REFUSED:
                continue
            built.values.append(value)
            if check is not None:
                built.checks.append(check)
        built.output = built.values[-1]
        if program.update and built.shared:
            _add_update(built)
    return built


def _add_update(built: Built) -> None:
    shared = built.shared[0][0]
    try:
        built.updates = {shared: cast_within_range(shared + built.output, shared.type.dtype)}
    except REFUSED:
        built.updates = {}


# -- running and judging ------------------------------------------------------------------------
def quietly(fn, *args, **kwargs):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def call(function, built: list[Built], arrays: list) -> list:
    """One call from fresh shared values: the outputs, then each shared variable's value."""
    for b in built:
        for var, initial in b.shared:
            var.set_value(initial.copy())
    outputs = quietly(function, *arrays)
    shared = [np.array(var.get_value()) for b in built for var, _ in b.shared]
    return [np.asarray(o) for o in outputs] + shared


def compile_all(built: list[Built], backend: str, optimize: str):
    inputs = [v for b in built for v in b.inputs]
    updates = {k: v for b in built for k, v in b.updates.items()}
    outputs = [b.output for b in built]
    return quietly(
        sn.function, inputs, outputs, updates=updates, backend=backend, optimize=optimize
    )


def arrays_of(programs_: list[Program]) -> list:
    return [leaf.value for p in programs_ for leaf in p.leaves if not leaf.shared]


def agree(got, want, itemsize: int = 8) -> bool:
    """Same dtype and shape; integers and bools equal; floats close (NaN equals NaN, infinities
    of one sign equal), within a tolerance relative to the largest finite value: float32's
    where the value or anything it was computed from (``itemsize``: the narrowest float of
    the program) is float32 or float16 (``arctan2`` of float32 one ulp off NumPy's, then
    cast to float64, is not a disagreement)."""
    if got.dtype != want.dtype or got.shape != want.shape:
        return False
    if want.dtype.kind != "f":
        return bool(np.array_equal(got, want))
    tol = 1e-3 if min(want.dtype.itemsize, itemsize) <= 4 else 1e-9
    finite = np.abs(want[np.isfinite(want)])
    scale = max(1.0, float(finite.max())) if finite.size else 1.0
    return bool(np.allclose(got, want, rtol=tol, atol=tol * scale, equal_nan=True))


@dataclass
class Outcome:
    graphs: int = 0  # programs compared on every configuration
    refused: int = 0  # programs whose reference raised (dropped)
    compares: int = 0  # (graph, configuration) pairs compared
    reasons: Counter = field(default_factory=Counter)  # why the reference refused
    numpy_checks: int = 0  # steps compared with NumPy's function of their operands
    excused: int = 0  # disagreements of "fast" that its rules outside the domain explain
    grad_graphs: int = 0  # programs whose gradient was compared on every configuration
    grad_refused: int = 0  # programs whose forward graph ran and gradient did not (dropped)
    grad_reasons: Counter = field(default_factory=Counter)  # why their gradient did not run
    fd_checked: int = 0  # gradients spot-checked by a finite difference
    fd_mismatches: list = field(default_factory=list)  # for a person to read (gradients.py)


#: "stable" keeps IEEE semantics (no ``x - x -> 0``): it must agree with NumPy everywhere
CONFIGS = [("py", "fast"), ("c", "fast"), ("c", "none"), ("py", "stable")]
#: the device backends compared too where this machine runs them (PoCL for "opencl")
DEVICE_CONFIGS = [("opencl", "fast")]


def every_backend(configs=CONFIGS) -> list:
    """``configs`` and the device configurations this machine runs (tests/helpers.py)."""
    here = available_backends()
    return [*configs, *[(b, o) for b, o in DEVICE_CONFIGS if b in here]]


def judge(batch: list[Program], configs=CONFIGS, outcome: Outcome | None = None) -> list:
    """Compile the batch on each configuration and compare it with the reference; raises an
    AssertionError naming the program and configuration that disagree. Before that, each
    program's reference is checked too: a graph whose every shape is known when it is built
    must not fail on shapes when it runs (``_late_refusal``), and each step ``steps.py``
    gives a ``Check`` must agree with NumPy's function of its operands (``check_numpy``).

    Returns the programs compared, each as ``(program, built, reference values)``."""
    outcome = outcome if outcome is not None else Outcome()
    kept = []
    for program in batch:
        built = build(program)
        try:
            reference = compile_all([built], "py", "none")
        except REFUSED as exc:  # sn.function refused it: an update that does not fit
            _refused(outcome, exc)
            continue
        try:
            want = call(reference, [built], arrays_of([program]))
        except REFUSED as exc:
            _refused(outcome, exc)
            _late_refusal(program, built, exc)
            continue
        check_numpy(program, built, outcome)
        kept.append((program, built, want))
    if not kept:
        return kept
    built, arrays = [b for _, b, _ in kept], arrays_of([p for p, *_ in kept])

    def run(function):
        return call(function, built, arrays)

    compile_for, compare = functools.partial(compile_all, built), functools.partial(_compare, kept)
    for backend, optimize in configs:
        judge_config(compile_for, run, compare, backend, optimize, outcome)
        outcome.compares += len(kept)
    outcome.graphs += len(kept)
    return kept


def _refused(outcome: Outcome, exc: Exception) -> None:
    outcome.refused += 1
    outcome.reasons[type(exc).__name__ + ": " + str(exc).splitlines()[0][:80]] += 1


def _compare(kept: list, got: list, config: str) -> None:
    outputs, shared = got[: len(kept)], iter(got[len(kept) :])
    for (program, built, want), out in zip(kept, outputs):
        mine = [out] + [next(shared) for _ in built.shared]
        narrowest = narrowest_float(built.output)
        for g, w in zip(mine, want):
            assert agree(g, w, narrowest), (
                f"{config} disagrees with the reference on {program.describe()}\n"
                f"graph:\n{sn.format_expr(built.output)}\ngot  {g!r}\nwant {w!r}"
            )


#: the rules that assume values inside the ops' domain (``x - x -> 0`` for NaN x), registered
#: with ``ieee=False``: "fast" runs them, "stable" and "none" do not (docs/rewrites.md)
DOMAIN_RULES = frozenset(rule.name for rule in RULES.values() if not rule.ieee)


def judge_config(compile_for, run, compare, backend: str, optimize, outcome: Outcome) -> None:
    """``compare(run(compile_for(backend, optimize)), config)`` raises where a configuration
    disagrees with the reference. Where a rule of ``DOMAIN_RULES`` rewrote the function, a
    disagreement may be what docs/rewrites.md says that rule does (``x - x`` is 0 for NaN
    ``x``, so ``isnan(x - x)`` is False), and only that is excused: the same ``optimize``
    without the rules that fired must then agree with the reference everywhere
    (``Outcome.excused`` counts these)."""
    function = compile_for(backend, optimize)
    try:
        compare(run(function), f"backend={backend!r} optimize={optimize!r}")
    except AssertionError:
        fired = domain_rules_fired(function)
        if not fired:
            raise
        without = {"include": [optimize], "exclude": sorted(fired)}
        compare(run(compile_for(backend, without)), f"backend={backend!r} optimize={without!r}")
        outcome.excused += 1


def domain_rules_fired(function) -> set:
    """The rules of ``DOMAIN_RULES`` that rewrote the function (its loops' steps included)."""
    return {step.rule for step in stepper_steps(function) or []} & DOMAIN_RULES


# -- the reference's own checks -------------------------------------------------------------------
#: words of the errors a shape gives (a broadcast, a reshape, an axis or index out of range)
_SHAPE_WORDS = ("shape", "broadcast", "dims", "axis", "size", "align", "cannot reshape")


def _late_refusal(program: Program, built: Built, exc: Exception) -> None:
    """A graph whose every dim is known when it is built must not fail on shapes when it runs:
    the op's rule should have refused the step when it was built (a ShapeError at the user's
    line, as ``x[:, 0]`` of a known empty axis is). Errors of values (an integer to a
    negative power) are not a shape's."""
    if not all(_all_known(v) for v in built.values):
        return
    text = str(exc)
    if "Integers to negative" in text or not any(w in text.lower() for w in _SHAPE_WORDS):
        return
    raise AssertionError(
        f"late refusal: the build accepted, the run failed on shapes, on {program.describe()}\n"
        f"graph:\n{sn.format_expr(built.output)}\n{type(exc).__name__}: {text[:1500]}"
    )


def _all_known(var) -> bool:
    return all(isinstance(d, int) for d in var.type.shape)


def check_numpy(program: Program, built: Built, outcome: Outcome) -> None:
    """Each ``Check``'s value (on the reference) against NumPy's function of its operands'
    reference values. They are computed by one function of their own: a step need not be
    on the output's path. Where that function fails (a step off the path that fails at run
    time, which the output's reference never met) the program's checks are left out."""
    if not built.checks:
        return
    outputs = [v for check in built.checks for v in (check.var, *check.operands)]
    try:
        function = quietly(sn.function, built.inputs, outputs, backend="py", optimize="none")
        values = iter(call(function, [built], arrays_of([program])))
    except REFUSED:
        return
    for check in built.checks:
        got = next(values)
        operands = [next(values) for _ in check.operands]
        try:
            want = np.asarray(quietly(check.numpy, *operands))
        except REFUSED as exc:
            raise AssertionError(
                f"NumPy refuses step {check.label}, which symnb ran, on {program.describe()}\n"
                f"operands {[(o.dtype, o.shape) for o in operands]}: "
                f"{type(exc).__name__}: {exc}\nsymnb gave {got!r}"
            ) from None
        outcome.numpy_checks += 1
        assert agree(got, want), (
            f"step {check.label} disagrees with NumPy on {program.describe()}\n"
            f"operands: {operands!r}\nsymnb ({check.var.type}): {got!r}\nnumpy: {want!r}"
        )
