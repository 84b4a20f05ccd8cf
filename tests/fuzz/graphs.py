"""Random well-typed graphs for differential fuzzing, and the oracle that judges them.

A *program* is drawn by hypothesis as data: its leaves (inputs with a dtype, a shape, a view
kind and values; at most one shared variable; constants) and a list of steps, each a tuple of
small integers that picks an op and its operands by index (modulo what exists). ``build``
turns a program into symnb variables, skipping any step the op's rules refuse (a DTypeError,
a ShapeError): so every graph built is well typed by construction, and hypothesis shrinks a
failure to the fewest steps. The NumPy reference backend without rewrites is the oracle; a
program whose reference raises is dropped (``Outcome.refused``).
"""

from __future__ import annotations

import warnings
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
from hypothesis import strategies as st

import symnb as sn
from symnb.errors import SymnbError
from tests.helpers import KERNEL_DTYPES, available_backends

DTYPES = KERNEL_DTYPES
SHAPES = [(3, 4), (4,), (1, 4), (3, 1), ()]
VIEWS = ["plain", "strided", "reversed", "transposed"]
VALUES = ["small", "wide", "special", "ranges"]
#: what a declared dim is: its size, unknown, or a name (one name per size: "d3", "d4")
DIM_KINDS = ["fixed", "unknown", "named"]

UNARY = [
    sn.neg,
    sn.abs,
    sn.sign,
    sn.exp,
    sn.log,
    sn.sqrt,
    sn.tanh,
    sn.sigmoid,
    sn.sin,
    sn.cos,
    sn.floor,
    sn.ceil,
    sn.trunc,
    sn.round,
    sn.square,
    sn.reciprocal,
    sn.expm1,
    sn.log1p,
    sn.softplus,
    sn.isnan,
    sn.isinf,
    sn.isfinite,
    sn.invert,
    sn.relu,
    sn.arctan,
    sn.log2,
    sn.cosh,
]
BINARY = [
    sn.add,
    sn.sub,
    sn.mul,
    sn.true_div,
    sn.floor_div,
    sn.mod,
    sn.maximum,
    sn.minimum,
    sn.less,
    sn.greater,
    sn.equal,
    sn.not_equal,
    sn.less_equal,
    sn.bitwise_and,
    sn.bitwise_or,
    sn.bitwise_xor,
    sn.logaddexp,
    sn.arctan2,
    sn.pow,
]
REDUCTIONS = [sn.sum, sn.prod, sn.max, sn.min, sn.mean, sn.any, sn.all]
SCALARS = [2, -1, 0.5, 3, 1e-3, True]
KINDS = ["unary", "binary", "where", "clip", "reduce", "index", "cast", "scalar", "constant"]
#: what an op's rule may refuse while a program is built (the step is then skipped)
REFUSED = (SymnbError, TypeError, ValueError, IndexError, NotImplementedError)


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


@dataclass
class Built:
    """A program as symnb variables: inputs, the output, the shared variable's update."""

    inputs: list
    values: list
    output: object
    shared: list = field(default_factory=list)  # (SharedVariable, initial value)
    updates: dict = field(default_factory=dict)


# -- drawing ------------------------------------------------------------------------------------
def _range_landmarks(dt) -> np.ndarray:
    """Floats of ``dt`` at the ends of every integer type's range and just inside them (with
    fractions, which casts truncate): 2**63 and 2**64 - 2048 for uint64, -128.5 for int8."""
    marks = []
    for name in DTYPES:
        if np.dtype(name).kind in "iu":
            info = np.iinfo(name)
            marks += [float(info.min), float(info.max), float(info.max) / 2 + 0.5, 0.75]
    marks += [2.0**63, 2.0**64 - 2048, -(2.0**63), 2.0**32 - 1, -128.5, 255.5, 65535.25]
    return np.array(marks, dtype=np.float64).astype(dt)


def _array(rng, shape, dtype, values: str) -> np.ndarray:
    """Values of ``dtype``: small numbers, the dtype's whole range, specials (NaN, inf,
    -0.0, huge and tiny floats; extremes of integers), or for floats the ends of every
    integer type's range (what casts meet)."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(shape) > 0.5
    if dt.kind in "iu":
        info = np.iinfo(dt)
        if values == "small":
            lo = 0 if dt.kind == "u" else -5
            return rng.integers(lo, 6, size=shape).astype(dt)
        if values == "special":
            picks = np.array([info.min, info.max, 0, 1, info.max // 2], dtype=dt)
            return rng.choice(picks, size=shape)
        return rng.integers(info.min, info.max, size=shape, dtype=dt, endpoint=True)
    if values == "special":
        picks = np.array([np.nan, np.inf, -np.inf, -0.0, 1e30, -1e-30, 0.5, -2.0], dtype=dt)
        return rng.choice(picks, size=shape)
    if values == "ranges":
        return rng.choice(_range_landmarks(dt), size=shape)
    scale = 3.0 if values == "small" else 1e4
    return rng.uniform(-scale, scale, size=shape).astype(dt)


def _view(rng, shape, dtype, values: str, kind: str) -> np.ndarray:
    """An array of ``shape``: contiguous, strided, reversed or a transposed view."""
    if kind == "transposed" and len(shape) == 2:
        return _array(rng, shape[::-1], dtype, values).T
    base = np.asarray(_array(rng, tuple(2 * d for d in shape), dtype, values))
    first = tuple(slice(0, d) for d in shape)
    if kind == "strided":
        return base[tuple(slice(None, None, 2) for _ in shape)][first]
    if kind == "reversed":
        return base[tuple(slice(None, None, -1) for _ in shape)][first]
    return base[first].copy()


@st.composite
def leaves(draw, shared: bool = False) -> Leaf:
    shape = (3, 4) if shared else draw(st.sampled_from(SHAPES))
    dtype = draw(st.sampled_from(DTYPES))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    value = _view(rng, shape, dtype, draw(st.sampled_from(VALUES)), draw(st.sampled_from(VIEWS)))
    declared = tuple(_declared(d, draw(st.sampled_from(DIM_KINDS))) for d in shape)
    return Leaf(dtype, shape, shape if shared else declared, value, shared)


def _declared(size: int, kind: str):
    """A dim as declared: its size, unknown (None), or named after its size (so every leaf
    that names a dim of that size names the same one)."""
    return {"fixed": size, "unknown": None, "named": f"d{size}"}[kind]


STEP = st.tuples(st.sampled_from(KINDS), *[st.integers(0, 255)] * 4)


@st.composite
def programs(draw, max_steps: int = 6) -> Program:
    found = draw(st.lists(leaves(), min_size=1, max_size=3))
    if draw(st.booleans()):
        found.append(draw(leaves(shared=True)))
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
                built.values.append(_apply(built.values, *step))
            except REFUSED:
                continue
        built.output = built.values[-1]
        if program.update and built.shared:
            _add_update(built)
    return built


def _add_update(built: Built) -> None:
    shared = built.shared[0][0]
    try:
        built.updates = {shared: _cast(shared + built.output, shared.type.dtype)}
    except REFUSED:
        built.updates = {}


def _pick(values, i):
    return values[i % len(values)]


def _apply(values, kind, a, b, c, d):
    x, y, z = _pick(values, a), _pick(values, b), _pick(values, c)
    if kind == "unary":
        return UNARY[d % len(UNARY)](x)
    if kind == "binary":
        op = BINARY[d % len(BINARY)]
        if op is sn.pow and y.type.dtype.kind in "iub":
            y = sn.clip(y, 0, 3) if y.type.dtype.kind != "b" else y  # int ** negative raises
        return op(x, y)
    if kind == "where":
        return sn.where(x, y, z)
    if kind == "clip":
        return sn.clip(x, y, z)
    if kind == "reduce":
        return _reduce(x, d)
    if kind == "index":
        return _index(x, d)
    if kind == "cast":
        return _cast(x, DTYPES[d % len(DTYPES)])
    if kind == "scalar":
        scalar = SCALARS[c % len(SCALARS)]
        op = BINARY[d % len(BINARY)]
        return op(x, scalar) if b % 2 else op(scalar, x)
    return BINARY[d % len(BINARY)](x, _constant(b, c))


def _cast(x, dtype):
    """x.astype(dtype); a float going to an integer is first limited to where NumPy's casts
    agree with each other: NaN, infinities and values beyond the target's range give results
    that differ between NumPy's own loops (contiguous or strided; see docs/c_backend.md), so
    no backend can be held to one of them. The whole range is kept: up to 2**64 for uint64
    and 2**32 for uint32; negative values into the unsigned types go through int64 as in
    NumPy on x86 (from -2**31, -2**63 for uint64)."""
    target = np.dtype(dtype)
    if x.type.dtype.kind == "f" and target.kind in "iu":
        low, high = _cast_bounds(target)
        x = sn.where(sn.bitwise_and(x > low, x < high), x, 0)
    return sn.cast(x, dtype)


def _cast_bounds(target: np.dtype) -> tuple[float, float]:
    """(low, high): floats strictly between them truncate to a value NumPy's loops agree on
    (the target's range, wider below for unsigned targets; powers of two, exact in float32)."""
    bits = 8 * target.itemsize
    if target.kind == "i":
        return -(2.0 ** (bits - 1)) - 1, 2.0 ** (bits - 1)
    return -(2.0 ** (63 if bits == 64 else 31)), 2.0**bits


def _reduce(x, d):
    op = REDUCTIONS[d % len(REDUCTIONS)]
    ndim = x.type.ndim
    axis = None if ndim == 0 or (d // 8) % 3 == 0 else (d // 24) % ndim
    return op(x, axis=axis, keepdims=bool((d // 4) % 2))


def _index(x, d):
    if x.type.ndim == 0:
        raise TypeError("a 0-d value has nothing to index")
    choice = d % 8
    if choice == 0:
        return x[::-1]
    if choice == 1:
        return x[..., ::-1]
    if choice == 2:
        return x[0]
    if choice == 3:
        return x[-1:]
    # bounds computed from a shape (run-time values where the dims are unknown): the
    # executors' basic views, and the rule that slices an elementwise op's input
    if choice == 4:
        return x[x.shape[0] // 2 :]
    if choice == 5:
        return x[..., (x.shape[-1] - 1) // 2 :: -1]
    if choice == 6:
        return x[x.shape[0] - 1, None]
    return x.T


def _constant(b, c):
    """A constant of any dtype with values of any kind (specials too: NaN, inf, -0.0)."""
    dtype = DTYPES[b % len(DTYPES)]
    rng = np.random.default_rng(c)
    values = VALUES[(b // len(DTYPES)) % len(VALUES)]
    return sn.constant(_array(rng, (4,) if c % 2 else (), dtype, values))


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


def agree(got, want) -> bool:
    """Same dtype and shape; integers and bools equal; floats close (NaN equals NaN, infinities
    of one sign equal), within a tolerance relative to the largest finite value."""
    if got.dtype != want.dtype or got.shape != want.shape:
        return False
    if want.dtype.kind != "f":
        return bool(np.array_equal(got, want))
    tol = 1e-3 if want.dtype.itemsize <= 4 else 1e-9
    finite = np.abs(want[np.isfinite(want)])
    scale = max(1.0, float(finite.max())) if finite.size else 1.0
    return bool(np.allclose(got, want, rtol=tol, atol=tol * scale, equal_nan=True))


@dataclass
class Outcome:
    graphs: int = 0  # programs compared on every configuration
    refused: int = 0  # programs whose reference raised (dropped)
    compares: int = 0  # (graph, configuration) pairs compared
    reasons: Counter = field(default_factory=Counter)  # why the reference refused


#: "stable" keeps IEEE semantics (no ``x - x -> 0``): it must agree with NumPy everywhere
CONFIGS = [("py", "fast"), ("c", "fast"), ("c", "none"), ("py", "stable")]
#: the device backends compared too where this machine runs them (PoCL for "opencl")
DEVICE_CONFIGS = [("opencl", "fast")]


def every_backend(configs=CONFIGS) -> list:
    """``configs`` and the device configurations this machine runs (tests/helpers.py)."""
    here = available_backends()
    return [*configs, *[(b, o) for b, o in DEVICE_CONFIGS if b in here]]


def judge(batch: list[Program], configs=CONFIGS, outcome: Outcome | None = None) -> None:
    """Compile the batch on each configuration and compare it with the reference; raises an
    AssertionError naming the program and configuration that disagree."""
    outcome = outcome if outcome is not None else Outcome()
    kept, wants = [], []
    for program in batch:
        built = build(program)
        try:
            reference = compile_all([built], "py", "none")
            wants.append(call(reference, [built], arrays_of([program])))
        except REFUSED as exc:
            outcome.refused += 1
            outcome.reasons[type(exc).__name__ + ": " + str(exc).splitlines()[0][:80]] += 1
            continue
        kept.append((program, built))
    if not kept:
        return
    programs_, built = [p for p, _ in kept], [b for _, b in kept]
    for backend, optimize in configs:
        got = call(compile_all(built, backend, optimize), built, arrays_of(programs_))
        _compare(got, wants, kept, f"backend={backend!r} optimize={optimize!r}")
        outcome.compares += len(kept)
    outcome.graphs += len(kept)


def _compare(got: list, wants: list, kept: list, config: str) -> None:
    outputs, shared = got[: len(kept)], iter(got[len(kept) :])
    for (program, built), out, want in zip(kept, outputs, wants):
        mine = [out] + [next(shared) for _ in built.shared]
        for g, w in zip(mine, want):
            assert agree(g, w), (
                f"{config} disagrees with the reference on {program.describe()}\n"
                f"graph:\n{sn.format_expr(built.output)}\ngot  {g!r}\nwant {w!r}"
            )
