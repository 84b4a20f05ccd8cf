"""What every peer shares: builder lookup by workload, conversion of results to NumPy."""

from __future__ import annotations

import numpy as np

from benchmarks.check import Skip
from benchmarks.peers import into


class BasePeer:
    """A peer builds, per workload, a no-argument callable that returns the outputs as a list.

    The callable is what gets timed, so it must finish its work before returning (JAX blocks).
    Builders are methods named ``build_<workload builder>``, e.g. ``build_w7_tanh``.
    """

    name = "?"
    into_ops = None  # set on the "(out=)" variant of a peer: see benchmarks/peers/into.py

    def version(self) -> str:
        return "?"

    def build(self, builder: str, inputs: dict):
        if self.into_ops is not None:
            return into.build(self.into_ops, builder, inputs, self.to_lib)
        method = getattr(self, "build_" + builder.lower().replace("-", "_"), None)
        if method is None:
            raise Skip(f"no {self.name} version of this workload")
        return method(inputs)

    def to_lib(self, value):
        """An input as the library's own array type (for the ``out=`` variants)."""
        return value

    def to_numpy(self, outputs) -> list:
        return [np.asarray(o) for o in outputs]

    def setup_note(self) -> str:
        """What the table should say about the last build (e.g. torch.compile's graphs)."""
        return ""

    def configure_cache(self, directory: str) -> None:
        """In-process settings for the compile cache, applied before building (W5)."""

    def cold_note(self) -> str:
        """After a W5 probe's build: what it paid that a user pays once per machine, not per
        compile (symnb's C runner built in the probe), to show beside the row; "" if nothing."""
        return ""

    def start_runtime(self) -> None:
        """Start what a process starts once, whatever it compiles (W5's "runtime start"
        column, part of W5's time)."""


def returning_list(fn, *args):
    """A callable computing ``[fn(*args)]``."""

    def run():
        return [fn(*args)]

    return run
