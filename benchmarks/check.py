"""Correctness before timing: a result is compared with the float64 NumPy reference first."""

from __future__ import annotations

import numpy as np

# Allowed error, relative to the largest magnitude of the reference output (normwise): loose
# enough for float32 accumulation over a few thousand terms, tight enough that a wrong
# formula or a missing gradient term is far outside it.
RTOL = {"float32": 1e-3, "float64": 1e-8}


class Skip(Exception):
    """A peer cannot run a workload (op missing, not applicable); the message says why."""


def relative_error(got, want) -> float:
    """max |got - want| / max |want|, in float64; inf when shapes differ or values are NaN."""
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    if got.shape != want.shape:
        return float("inf")
    if got.size == 0:
        return 0.0
    err = float(np.max(np.abs(got - want)))
    if np.isnan(err):
        return float("inf")
    return err / max(float(np.max(np.abs(want))), np.finfo(np.float64).tiny)


def problem_with(outputs: list, compared: list, references: list, dtype: str) -> str | None:
    """None when the raw ``outputs`` have the workload's dtype and their comparable form
    (``compared``) matches the references; else what is wrong."""
    return wrong_dtype(outputs, dtype) or compare(compared, references, dtype)


def wrong_dtype(outputs: list, dtype: str) -> str | None:
    """Every output must have the workload's dtype (the reference's, before widening)."""
    for i, got in enumerate(outputs):
        found = np.asarray(got).dtype
        if found != np.dtype(dtype):
            return f"output {i} has dtype {found}, the reference's is {dtype}"
    return None


def compare(outputs: list, references: list, dtype: str) -> str | None:
    """None when every output matches its reference, else a sentence saying which and how far."""
    if len(outputs) != len(references):
        return f"returned {len(outputs)} outputs, expected {len(references)}"
    tol = RTOL[dtype]
    for i, (got, want) in enumerate(zip(outputs, references)):
        err = relative_error(got, want)
        if not err <= tol:
            shape = np.shape(got)
            return (
                f"output {i} (shape {shape}) is off by {err:.3g} relative to the float64 "
                f"reference (allowed {tol:g})"
            )
    return None
