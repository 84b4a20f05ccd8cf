"""The canonical inner graph of a scan (:class:`Loop`) and the one loop runtime.

:func:`run_loop` runs a step function over the steps, writing the outputs into storage
allocated once; the NumPy reference (``Scan.perform``) passes :func:`reference_step`, a backend
the inner graph compiled to its own plan. See ``symnb/control/scan.py`` for the canonical form.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from symnb.core.graph import Graph
from symnb.core.source import SourceLoc
from symnb.errors import CheckedShapeError, ShapeIndexError, shown_as


@dataclass(frozen=True, eq=False)
class Loop:
    """The inner graph of one scan, in canonical form (see the module docstring).

    Compared by identity: two scans are the same op only when they run the same inner graph.
    ``names`` name the outer inputs in messages (sequences, states, non-sequences)."""

    graph: Graph
    n_seqs: int
    n_states: int
    history: tuple[bool, ...]
    until: bool
    names: tuple[str, ...]
    #: backpropagate through the last ``truncate`` steps only (-1: all)
    truncate: int = -1
    #: run from the sequences' last row to their first, storing each step's results at the
    #: row it read (the backward loop of a gradient: no reversed copies of its inputs)
    backwards: bool = False
    #: the states that stand for shared variables the step updates (their last value is the
    #: update ``sn.scan`` returns)
    updated: tuple[int, ...] = ()
    #: the step count is given (``n_steps``): a negative one is an error, where without it
    #: the -1 that stands in for it means "the rows the sequences have"
    counted: bool = False
    #: the user's line of the ``sn.scan`` (or ``sn.grad``) that built it, where the loop's
    #: run-time errors point
    source: SourceLoc | None = None
    #: the plain outputs in messages, each by its place in what the step returns ("output 1
    #: of the step", where output 0 is fed back); empty: by its place among the plain ones
    plain_names: tuple[str, ...] = ()
    #: the states whose values a rewrite stopped keeping because only the last one was read
    #: (``hs[-1]``; ``symnb/opt/rules/loops.py``), each with the line of that read: a loop of
    #: no steps has no last value, so it refuses to run none (``hs[-1]`` of its empty rows
    #: was an IndexError), never passing the initial value off as the last
    last_read: tuple[tuple[int, SourceLoc | None], ...] = ()

    @property
    def n_plain(self) -> int:
        return len(self.graph.outputs) - self.n_states - int(self.until)

    @property
    def n_nonseqs(self) -> int:
        return len(self.graph.inputs) - self.n_seqs - self.n_states

    def plain_name(self, i: int) -> str:
        """Plain output ``i`` in messages."""
        return self.plain_names[i] if self.plain_names else f"output {i} of the step"

    def with_history(self) -> Loop:
        """The same loop keeping every state's values (what its gradient reads)."""
        return replace(self, history=(True,) * self.n_states)

    def order(self) -> list:
        """The inner nodes, inputs before users (computed once)."""
        cached = self.__dict__.get("_order")
        if cached is None:
            cached = self.graph.toposort()
            object.__setattr__(self, "_order", cached)
        return cached


# -- the loop runtime ---------------------------------------------------------------------------
def reference_step(loop: Loop):
    """One step by the inner nodes' NumPy references (the meaning every backend matches)."""
    order, inputs, outputs = loop.order(), loop.graph.inputs, loop.graph.outputs

    def step(values: list) -> list:
        env = {id(v): x for v, x in zip(inputs, values)}
        for node in order:
            args = [env[id(i)] if id(i) in env else i.data for i in node.inputs]
            result = node.op.perform(*args)
            results = (result,) if len(node.outputs) == 1 else result
            for var, value in zip(node.outputs, results):
                env[id(var)] = np.asarray(value).astype(var.type.dtype, copy=False)
        return [env[id(v)] if id(v) in env else np.asarray(v.data) for v in outputs]

    return step


@shown_as("ShapeError")
class LoopShapeError(CheckedShapeError):
    """A loop's own run-time check failed (its step count, a step's result against what it
    replaces): a ShapeError at the line of the scan."""


@shown_as("ShapeIndexError")
class LoopIndexError(LoopShapeError, ShapeIndexError):
    """A loop of no steps whose states' last values are read (``hs[-1]``): an index out of
    range of their empty rows, a ShapeIndexError at the line of the scan (which ``except
    IndexError`` catches, as it caught NumPy's)."""


def steps_to_run(loop: Loop, n_steps: int, seqs) -> int:
    """``n_steps`` checked against the sequences, or the rows they all have; none is an
    error where a state's last value is read (``Loop.last_read``)."""
    n = _steps(loop, n_steps, seqs)
    if n == 0 and loop.last_read:
        j, where = loop.last_read[0]
        name = loop.names[loop.n_seqs + j]
        why = f"n_steps={n_steps}" if n_steps >= 0 else "its sequences have no rows"
        read = f" (read at {where})" if where is not None else ""
        raise LoopIndexError(
            f"scan: the last value of the state {name} is read ([-1] of its values){read}, "
            f"but the loop runs no step ({why}): a loop of no steps has no last value",
            loop.source,
        )
    return n


def _steps(loop: Loop, n_steps: int, seqs) -> int:
    names = loop.names
    lengths = [np.shape(seq)[0] for seq in seqs]  # (a device array's too: its shape)
    if n_steps < 0 and loop.counted:
        raise LoopShapeError(f"scan: n_steps must be >= 0, got {n_steps}", loop.source)
    if n_steps >= 0:
        for i, length in enumerate(lengths):
            if length < n_steps:
                raise LoopShapeError(
                    f"scan: n_steps={n_steps}, but the sequence {names[i]} has only {length} steps",
                    loop.source,
                )
        return n_steps
    if not seqs:
        raise LoopShapeError("scan: give n_steps or at least one sequence", loop.source)
    return min(lengths)


class Memory:
    """Where a loop's arrays live, and the few things ``run_loop`` and ``Storage`` do with
    them: here NumPy arrays on the host. A device executor passes its own
    (``symnb/backends/device/loop.py``: rows copied between device buffers), so every
    backend runs the one loop, with its checks and messages."""

    def sequence(self, seq):
        """A sequence as the loop reads its rows (a device makes a strided one dense)."""
        return seq

    def row(self, seq, t: int):
        return seq[t]

    def value(self, value):
        """A step's result (or an initial state) as storage takes it."""
        return np.asarray(value)

    def empty(self, shape: tuple, dtype):
        return np.empty(shape, dtype)

    def put(self, rows, t: int, value):
        """``rows[t] = value``; what the next step reads as this state (the stored row)."""
        rows[t] = value
        return rows[t]

    def cast(self, value, dtype):
        """A state kept without history, as the next step reads it (in its dtype: no copy
        where it has it already)."""
        return np.asarray(value, dtype=dtype)

    def part(self, rows, start: int, stop: int):
        """Rows ``start:stop`` (a loop that stopped early keeps the rows it wrote)."""
        return rows[start:stop]

    def truth(self, value) -> bool:
        """An ``until`` condition's truth."""
        return bool(value)


HOST = Memory()


def run_loop(loop: Loop, step, n_steps: int, arrays, memory: Memory = HOST) -> list:
    """Run ``step(values) -> outputs`` over the steps; the op's outputs, in order.
    ``memory``: where the arrays live (``Memory``; NumPy's by default)."""
    k, m = loop.n_seqs, loop.n_states
    seqs, nonseqs = arrays[:k], list(arrays[k + m :])
    n = steps_to_run(loop, n_steps, seqs)
    seqs = [memory.sequence(s) for s in seqs]
    states = [memory.value(v) for v in arrays[k : k + m]]
    store = Storage(loop, states, n, memory)
    if n == 0 and store.plain_dims_unknown():
        zero_rows = [memory.value(np.zeros(np.shape(s)[1:], s.dtype)) for s in seqs]
        store.probe_plain(step, zero_rows + states + nonseqs)
    done = n
    for t in range(n):
        rows = [memory.row(s, np.shape(s)[0] - 1 - t if loop.backwards else t) for s in seqs]
        outs = step(rows + states + nonseqs)
        states = store.write(n - 1 - t if loop.backwards else t, outs)
        if loop.until and memory.truth(outs[-1]):
            done = t + 1
            break
    return store.results(done, states)


class Storage:
    """The loop's outputs, allocated once: each state's values (or only its last one) and
    each plain output's rows; every step's result is checked against what it replaces.
    ``memory``: where they live (``Memory``)."""

    def __init__(self, loop: Loop, states: list, n: int, memory: Memory = HOST):
        self.loop, self.n, self.memory = loop, n, memory
        self.history = [
            memory.empty((n,) + s.shape, s.dtype) if keep else None
            for s, keep in zip(states, loop.history)
        ]
        self.plain: list = [None] * loop.n_plain
        self.shapes = [s.shape for s in states]
        self.probed: list | None = None  # per-step shapes found by ``probe_plain``

    def write(self, t: int, outs) -> list:
        """Store step ``t``'s results; the states the next step reads."""
        loop, m, memory = self.loop, self.loop.n_states, self.memory
        states = []
        for j in range(m):
            value = memory.value(outs[j])
            self._check_state(j, t, value)
            if self.history[j] is not None:
                states.append(memory.put(self.history[j], t, value))
            else:  # no copy: steps never write into their inputs (nor runner.c into a
                # buffer someone else holds), so the value stays as it is until replaced
                states.append(memory.cast(value, loop.graph.outputs[j].type.dtype))
        for i in range(loop.n_plain):
            self._write_plain(i, t, memory.value(outs[m + i]))
        return states

    def _check_state(self, j: int, t: int, value):
        if value.shape != self.shapes[j]:
            name = self.loop.names[self.loop.n_seqs + j]
            raise LoopShapeError(
                f"scan: the state {name} has shape {self.shapes[j]} before step {t} but the "
                f"step returned shape {value.shape}; a recurrent output must keep its shape",
                self.loop.source,
            )

    def _write_plain(self, i: int, t: int, value):
        rows = self.plain[i]
        if rows is None:
            dtype = self._plain_var(i).type.dtype
            rows = self.plain[i] = self.memory.empty((self.n,) + value.shape, dtype)
        if value.shape != rows.shape[1:]:
            raise LoopShapeError(
                f"scan: {self.loop.plain_name(i)} has shape {value.shape} at step {t}, but "
                f"{rows.shape[1:]} before; every step must return the same shape",
                self.loop.source,
            )
        self.memory.put(rows, t, value)

    def results(self, done: int, states: list) -> list:
        start, stop = (self.n - done, self.n) if self.loop.backwards else (0, done)
        part = self.memory.part
        out = [part(h, start, stop) if h is not None else s for h, s in zip(self.history, states)]
        for i, rows in enumerate(self.plain):
            out.append(part(rows, start, stop) if rows is not None else self._empty_plain(i))
        return out

    def _plain_var(self, i: int):
        return self.loop.graph.outputs[self.loop.n_states + i]

    def plain_dims_unknown(self) -> bool:
        """Whether some plain output's per-step shape is only known when a step runs."""
        return any(
            not all(isinstance(d, int) for d in self._plain_var(i).type.shape)
            for i in range(self.loop.n_plain)
        )

    def probe_plain(self, step, values) -> None:
        """A loop of no steps still returns each plain output with its per-step shape
        ((0, 3) for rows of 3, not (0, 0)): one step run on rows of zeros, its results
        dropped, gives the shapes; a step that fails on zeros leaves the shapes the types
        fix (unknown dims 0)."""
        try:
            with np.errstate(all="ignore"):
                outs = step(values)
        except Exception:  # (zeros outside the step's domain: cholesky, an index)
            return
        m = self.loop.n_states
        self.probed = [np.shape(outs[m + i]) for i in range(self.loop.n_plain)]

    def _empty_plain(self, i: int):
        var = self._plain_var(i)
        if self.probed is not None:
            shape = self.probed[i]
        else:
            shape = tuple(d if isinstance(d, int) else 0 for d in var.type.shape)
        return self.memory.empty((0,) + shape, var.type.dtype)
