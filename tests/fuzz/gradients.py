"""The fuzzer's gradient mode: the gradient of each float program on every configuration.

For a program whose output is float, ``sn.grad(sum(output * W), wrt)`` with fixed random
weights ``W`` and ``wrt`` its float inputs and shared variable is compiled on each
configuration and compared with the same gradient on the reference ("py" without rewrites),
as ``graphs.judge`` compares the outputs. A gradient graph holds ops the forward graphs do
not (the ops' gradient ops, scatter-adds into zeros, broadcasts summed back), which the
rewrites and kernels would otherwise meet only in the hand-written tests.

The reference's gradient itself is spot-checked against a central finite difference in one
random direction, where that can be trusted (float64 inputs of moderate size, no shared
variable); a mismatch is recorded for a person to read, not raised, since a program's
non-smooth ops (abs, floor, sort, max, where) have gradients a finite difference does not
see.
"""

from __future__ import annotations

import functools
import zlib
from dataclasses import dataclass

import numpy as np

import symnb as sn
from tests.fuzz.graphs import REFUSED, Outcome, agree, arrays_of, call, judge_config, quietly


@dataclass
class Gradient:
    """One program's gradients: the cost and ``sn.grad`` of it with respect to ``wrt``."""

    program: object
    built: object
    cost: object
    wrt: list
    grads: list


def judge_gradients(kept: list, configs, outcome: Outcome, finite_differences=True) -> None:
    """The gradients of ``graphs.judge``'s programs (its return value) on each configuration
    against the reference's; raises an AssertionError naming the first that disagrees."""
    found = [g for g in (_gradient(program, built, want) for program, built, want in kept) if g]
    found, want = _on_reference(found, outcome)
    if not found:
        return
    built = [g.built for g in found]
    inputs = [v for b in built for v in b.inputs]
    outputs = [grad for g in found for grad in g.grads]
    arrays = arrays_of([g.program for g in found])

    def compile_for(backend, optimize):
        return quietly(sn.function, inputs, outputs, backend=backend, optimize=optimize)

    def run(function):
        return call(function, built, arrays)[: len(outputs)]

    compare = functools.partial(_compare, found, want)
    for backend, optimize in configs:
        judge_config(compile_for, run, compare, backend, optimize, outcome)
    outcome.grad_graphs += len(found)
    if finite_differences:
        for gradient in found:
            _finite_difference(gradient, outcome)


def _gradient(program, built, want) -> Gradient | None:
    """The program's gradients; None where its output is not float, no input is, or
    ``sn.grad`` refuses (an op without a gradient)."""
    out = built.output
    wrt = [v for v in built.inputs if v.type.dtype.kind == "f"]
    wrt += [v for v, _ in built.shared if v.type.dtype.kind == "f"]
    if out.type.dtype.kind != "f" or not wrt:
        return None
    # the same weights for a program wherever it is drawn (Python's hash() is salted)
    rng = np.random.default_rng(zlib.crc32(program.describe().encode()))
    weights = sn.constant(rng.normal(size=want[0].shape).astype(out.type.dtype))
    try:
        cost = quietly(lambda: sn.sum(out * weights))
        grads = quietly(sn.grad, cost, wrt, disconnected="ignore")
    except REFUSED:
        return None
    return Gradient(program, built, cost, wrt, grads)


def _on_reference(found: list, outcome: Outcome) -> tuple[list, list]:
    """The gradients the reference computes, and their values. A program whose forward graph
    ran but whose gradient does not is dropped and counted, with why (``grad_reasons``)."""
    kept, values = [], []
    for gradient in found:
        try:
            function = quietly(
                sn.function, gradient.built.inputs, gradient.grads, backend="py", optimize="none"
            )
            got = call(function, [gradient.built], arrays_of([gradient.program]))
        except REFUSED as exc:
            outcome.grad_refused += 1
            outcome.grad_reasons[f"{type(exc).__name__}: {str(exc).splitlines()[0][:80]}"] += 1
            continue
        kept.append(gradient)
        values += got[: len(gradient.grads)]
    return kept, values


def _compare(found: list, want: list, got: list, config: str) -> None:
    labels = [(g, var) for g in found for var in g.wrt]
    for (gradient, var), g, w in zip(labels, got, want):
        assert agree(g, w), (
            f"gradient {config} disagrees with the reference's, with respect to {var}, on "
            f"{gradient.program.describe()}\ngraph:\n{sn.format_expr(gradient.built.output)}\n"
            f"got  {g!r}\nwant {w!r}"
        )


def _finite_difference(gradient: Gradient, outcome: Outcome) -> None:
    """The reference's gradient in one random direction against a central difference of the
    cost; only for float64 inputs below 100 in size, no shared variable, finite cost. Inputs
    with tiny nonzero values (the specials' -1e-30) are left out too: a step of 1e-6 crosses
    the kinks and poles near zero (``mod(a, x)`` by such an x), where no difference is the
    derivative."""
    built = gradient.built
    if built.shared or any(v.type.dtype != np.float64 for v in built.inputs):
        return
    arrays = [np.array(a, dtype=np.float64) for a in arrays_of([gradient.program])]
    if not all(_moderate(a) for a in arrays):
        return
    try:
        function = quietly(
            sn.function,
            built.inputs,
            [gradient.cost, *gradient.grads],
            backend="py",
            optimize="none",
        )
        cost, *grads = quietly(function, *arrays)
    except REFUSED:
        return
    if not np.isfinite(cost) or not all(np.all(np.isfinite(g)) for g in grads):
        return
    rng = np.random.default_rng(12345)
    direction = [rng.normal(size=a.shape) for a in arrays]
    eps = 1e-6
    plus = quietly(function, *[a + eps * v for a, v in zip(arrays, direction)])[0]
    minus = quietly(function, *[a - eps * v for a, v in zip(arrays, direction)])[0]
    numeric = (plus - minus) / (2 * eps)
    analytic = sum(float(np.sum(np.asarray(g) * v)) for g, v in zip(grads, direction))
    outcome.fd_checked += 1
    if not np.isclose(numeric, analytic, rtol=1e-4, atol=1e-5 * max(1.0, abs(float(cost)))):
        outcome.fd_mismatches.append(
            f"finite difference {numeric!r} != gradient {analytic!r} on "
            f"{gradient.program.describe()}\ngraph:\n{sn.format_expr(built.output)}"
        )


def _moderate(a: np.ndarray) -> bool:
    """Finite, below 100 in size, and each either 0 or at least 1e-3 in size."""
    size = np.abs(a)
    return bool(np.all(np.isfinite(a)) and np.all((size < 100) & ((size == 0) | (size >= 1e-3))))
