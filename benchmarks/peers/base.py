"""What every peer shares: builder lookup by workload, conversion of results to NumPy."""

from __future__ import annotations

import numpy as np

from benchmarks.check import Skip


class BasePeer:
    """A peer builds, per workload, a no-argument callable that returns the outputs as a list.

    The callable is what gets timed, so it must finish its work before returning (JAX blocks).
    Builders are methods named ``build_<workload builder>``, e.g. ``build_w7_tanh``.
    """

    name = "?"

    def version(self) -> str:
        return "?"

    def build(self, builder: str, inputs: dict):
        method = getattr(self, "build_" + builder.lower().replace("-", "_"), None)
        if method is None:
            raise Skip(f"no {self.name} version of this workload")
        return method(inputs)

    def to_numpy(self, outputs) -> list:
        return [np.asarray(o) for o in outputs]

    def configure_cache(self, directory: str) -> None:
        """In-process settings for the compile cache, applied before building (W5)."""

    def start_runtime(self) -> None:
        """Start what a process starts once, whatever it compiles (W5 does not time it)."""


def returning_list(fn, *args):
    """A callable computing ``[fn(*args)]``."""

    def run():
        return [fn(*args)]

    return run
