"""The gradient of a scan: backpropagation through time as a second scan, run backwards.

For a step ``h_t, y_t = F(x_t, h_{t-1}, w)`` the backward loop carries ``a = dL/dh`` and
a running sum of ``dL/dw``; at each step (last first) it reads ``x_t``, ``h_{t-1}`` and the
gradients arriving at ``h_t`` and ``y_t``, and applies the vector-Jacobian product of ``F``
(the inner graph differentiated with ``sn.Lop``: symnb.control sits above symnb.grad). Being
an ordinary scan, it is compiled like one, and is differentiable again (``sn.Rop``,
``sn.hessian``).

Only the gradients asked for are built (``Scan.grad_wrt``): the backward loop takes the
derivative of the step with respect to the inputs whose gradients are needed and the states
whose values depend on them (a needed input's gradient at step ``t`` reads the gradient of
every state it reaches), and carries nothing for the others (a non-sequence ``p`` of
``h ** p`` gets no ``h ** p * log(h)`` when only the weights' gradients are asked for).

``truncate_gradient=k``: the backward loop runs the last ``k`` steps only; earlier steps and
the initial states get no gradient (Theano's rule).

A non-sequence's gradient that is a sum over the steps of ``s_t.T @ d_t`` (``W`` in
``h @ W``: ``s_t`` a row the loop reads, ``d_t`` a value of the step) is not summed in the
loop: the loop returns the rows of ``d``, and one product of the stacked rows follows it,
``reshape(s, (-1, k)).T @ reshape(d, (-1, n))``: one large product instead of one small
one per step, and no accumulator copied at every step (measured in docs/benchmarks.md,
"Measurements behind the code").
"""

from __future__ import annotations

from dataclasses import replace

from symnb.control.loop_graph import LoopInputs, placeholder
from symnb.core.graph import ancestors, clone_graph, leaves
from symnb.core.variable import Constant, Variable
from symnb.grad.reverse import Lop
from symnb.ops.broadcast import is_filled, zeros_like
from symnb.ops.elemwise import add, cast, greater_equal, minimum
from symnb.ops.index import IncSubtensor, getitem, set_subtensor
from symnb.ops.join import concatenate
from symnb.ops.layout import flip
from symnb.ops.linalg import Matmul, matmul
from symnb.ops.shape import DimShuffle, expand_dims, reshape, shape, transpose

INT = "int64"


def backward(op, inputs, outputs, output_grads, needed=None) -> list:
    """One gradient per outer input of the scan node (None for ints and n_steps, and for the
    inputs not at a position of ``needed``, the outer positions asked for; None: all)."""
    loop = op.loop
    if loop.backwards:
        return _backward_of_reversed(op, inputs, outputs, output_grads, needed)
    n_steps, *outer = inputs
    k, m = loop.n_seqs, loop.n_states
    seqs, inits, nonseqs = outer[:k], outer[k : k + m], outer[k + m :]
    histories = _histories(op, inputs, outputs)
    n = getitem(shape(_any_rows(histories, outputs, loop)), 0)
    steps = n if loop.truncate < 0 else minimum(n, Constant(loop.truncate, dtype=INT))
    plain_rows = outputs[loop.n_states :]
    inner = range(len(loop.graph.inputs))
    wanted = set(inner) if needed is None else {i - 1 for i in needed if i > 0}
    plan = _Backward(loop, seqs, inits, nonseqs, histories + plain_rows, output_grads, n, wanted)
    results = plan.build(op, cast(steps, INT))
    return [None] + plan.outer_grads(results, seqs, inits, nonseqs, n, steps)


def _backward_of_reversed(op, inputs, outputs, output_grads, needed) -> list:
    """A loop run backwards is the same loop run forwards over the reversed sequences, its
    rows reversed: differentiated as that (a gradient of a gradient, for ``sn.Rop``)."""
    loop = replace(op.loop, backwards=False)
    k = loop.n_seqs
    n_steps, *outer = inputs
    flipped = [flip(s, 0) for s in outer[:k]] + list(outer[k:])
    rows = [j >= loop.n_states or loop.history[j] for j in range(len(outputs))]
    outs = [flip(o, 0) if r else o for o, r in zip(outputs, rows)]
    grads_in = [flip(g, 0) if r and g is not None else g for g, r in zip(output_grads, rows)]
    grads = backward(type(op)(loop), [n_steps, *flipped], outs, grads_in, needed)
    seq_grads = [None if g is None else flip(g, 0) for g in grads[1 : k + 1]]
    return [grads[0], *seq_grads, *grads[k + 1 :]]


def _histories(op, inputs, outputs) -> list:
    """Every state's values (n rows): the node's own outputs, or a scan keeping them."""
    loop = op.loop
    if all(loop.history):
        return outputs[: loop.n_states]
    full = type(op)(loop.with_history()).make_node(*inputs).outputs
    return full[: loop.n_states]


def _any_rows(histories, outputs, loop):
    """An output with one row per step taken."""
    return histories[0] if histories else outputs[loop.n_states]


def _float(var: Variable) -> bool:
    return var.type.is_float


class _Backward:
    """The backward loop's inputs, inner graph and how its results map to gradients."""

    def __init__(self, loop, seqs, inits, nonseqs, rows, output_grads, n, wanted):
        """``rows``: the forward's values at every step, per state then per plain output;
        ``wanted``: the inner inputs (positions) whose gradients are asked for."""
        self.loop, self.forward_rows = loop, rows
        histories = rows[: loop.n_states]
        self.m = loop.n_states
        self.inner = loop.graph.inputs
        self.seq_phs = self.inner[: loop.n_seqs]
        self.state_phs = self.inner[loop.n_seqs : loop.n_seqs + self.m]
        self.nonseq_phs = self.inner[loop.n_seqs + self.m :]
        self.io = LoopInputs()
        steps_dim = rows[0].type.shape[0] if rows else None
        self.rows = [
            s if _same_dim(s.type.shape[0], steps_dim) else getitem(s, slice(None, n)) for s in seqs
        ]  # the first n rows (no copy where the types show n)
        self.prev = [
            concatenate([expand_dims(i, 0), getitem(h, slice(None, -1))])
            for i, h in zip(inits, histories)
        ]
        self.output_grads = output_grads
        self.inits, self.nonseqs = inits, nonseqs
        self.n = n
        self.wanted = wanted
        self.reads = [{id(v) for v in leaves([out])} for out in loop.graph.outputs]
        self.active = self._active(wanted)

    def _active(self, wanted) -> set[int]:
        """The inner inputs (by identity) the backward step differentiates: the float ones
        asked for, and each float state whose next value reads one of those or (the loop
        feeds it back) another such state: the gradient of a needed input at a step reads
        the gradients of the states it reaches, and those alone."""
        active = {id(ph) for i, ph in enumerate(self.inner) if i in wanted and _float(ph)}
        grown = True
        while grown:
            grown = False
            for ph, reads in zip(self.state_phs, self.reads):
                if id(ph) not in active and _float(ph) and reads & active:
                    active.add(id(ph))
                    grown = True
        return active

    def _differentiated(self, ph) -> bool:
        return id(ph) in self.active

    def build(self, op, steps):
        """The backward scan's outputs: carries, sums, then each sequence's rows."""
        loop, io = self.loop, self.io
        replace = {}
        for ph, rows in zip(self.seq_phs, self.rows):
            replace[ph] = _placeholder(ph)
            io.seq(replace[ph], rows)
        for ph, prev in zip(self.state_phs, self.prev):
            replace[ph] = _placeholder(ph)
            io.seq(replace[ph], prev)
        cotangents = self._arriving(replace)
        for ph, w in zip(self.nonseq_phs, self.nonseqs):
            replace[ph] = _placeholder(ph)
            io.given(replace[ph], w)
        forward = _clone(loop, replace)
        points = [(out, ct) for out, ct in zip(forward, cotangents) if ct is not None]
        wrt_phs = [ph for ph in self.inner if self._differentiated(ph)]
        wrt = [replace[ph] for ph in wrt_phs]
        if points:
            grads = Lop([o for o, _ in points], wrt, [c for _, c in points], "ignore", "zero")
        else:  # (no output that reads them has a gradient arriving)
            grads = [zeros_like(w) for w in wrt]
        grads = self._reuse_forward(forward, grads)
        by_ph = {id(ph): g for ph, g in zip(wrt_phs, grads)}
        new_carries = [by_ph[id(ph)] for ph in self.state_phs if self._differentiated(ph)]
        sums = [
            self._sum(ph, w, by_ph[id(ph)])
            for ph, w in zip(self.nonseq_phs, self.nonseqs)
            if self._differentiated(ph)
        ]
        in_loop = [v for kind, v in sums if kind == "loop"]
        rows = _unique([v[1] for kind, v in sums if kind == "rows"])  # e.g. dW, dU share dz
        per_step = [by_ph[id(ph)] for ph in self.seq_phs if self._differentiated(ph)]
        backward, outer = io.finish(
            new_carries + in_loop + per_step + rows, until=False, backwards=True
        )
        outs = iter(type(op)(backward).make_node(steps, *outer).outputs)
        carries = [next(outs) for _ in new_carries]
        summed = iter([next(outs) for _ in in_loop])
        per_step_rows = [next(outs) for _ in per_step]
        stacked = {id(d): next(outs) for d in rows}
        totals = [
            next(summed) if kind == "loop" else self._summed_product(v[0], stacked[id(v[1])], steps)
            for kind, v in sums
        ]
        return carries + totals + per_step_rows

    def _sum(self, ph, outer, g):
        """A non-sequence's gradient over the steps: ``("loop", acc + g)``, summed in the loop
        (a state), or ``("rows", (outer rows of s, d))`` where ``g`` is ``s_t.T @ d_t``."""
        split = self._outer_product(g)
        if split is not None:
            return "rows", split
        acc = _placeholder(ph, "sum")
        self.io.state(acc, zeros_like(outer), history=False)
        return "loop", add(acc, g)

    def _outer_product(self, g):
        """(the outer rows of s, d) when ``g = matmul(s.T, d)`` with s a sequence's row (2-d)."""
        owner = g.owner
        if owner is None or not isinstance(owner.op, Matmul) or g.type.ndim != 2:
            return None
        left, d = owner.inputs
        lo = left.owner
        if lo is None or not isinstance(lo.op, DimShuffle) or tuple(lo.op.order) != (1, 0):
            return None
        s = lo.inputs[0]
        outer = next((o for ph, o in self.io.seqs if ph is s), None)
        if outer is None or d.type.ndim != 2 or d.type.dtype != g.type.dtype:
            return None
        return outer, d

    def _summed_product(self, s_rows, d_rows, steps):
        """``sum_t s_t.T @ d_t`` over the steps the loop ran: the last ``steps`` rows of s."""
        if self.loop.truncate >= 0:
            s_rows = getitem(s_rows, slice(self.n - steps, None))
        flat_s = reshape(s_rows, (-1, _last(s_rows)))
        flat_d = reshape(d_rows, (-1, _last(d_rows)))
        return matmul(transpose(flat_s), flat_d)

    def _reuse_forward(self, forward, grads) -> list:
        """The step's results the gradient reads (tanh's output, in ``1 - y**2``) taken from
        the forward loop's stored values instead of computed again."""
        used = {id(v) for node in ancestors(grads) for v in node.inputs}
        used.update(id(g) for g in grads)
        replace = {}
        for var, rows in zip(forward, self.forward_rows):
            if var.owner is None or id(var) not in used:
                continue  # a state that passes a placeholder on, or a value not needed
            replace[var] = Variable(var.type, name="stored")
            self.io.seq(replace[var], rows)
        return clone_graph(grads, replace) if replace else grads

    def _arriving(self, replace) -> list:
        """Per forward output (states, then plain), the gradient arriving at it at step t
        inside the backward loop (None: none, or the output reads no input differentiated),
        adding the carries as states."""
        loop, io, m = self.loop, self.io, self.m
        arriving = []
        for j, ph in enumerate(self.state_phs):
            g = self.output_grads[j]
            if not self._differentiated(ph):
                arriving.append(None)
                continue
            carry = _placeholder(ph, "carry")
            last = _at_last_step_only(g, ph) if loop.truncate != 0 else None
            if loop.history[j] and last is not None:  # (hs[-1] differentiated): it starts
                start, carry_total = last, carry  # the carry, no (T, ...) zeros read per step
            elif loop.history[j]:
                start = zeros_like(self.inits[j])
                if g is not None:
                    step_g = _placeholder(ph, "grad")
                    io.seq(step_g, g)
                    carry_total = add(carry, step_g)
                else:
                    carry_total = carry
            else:
                start = zeros_like(self.inits[j]) if g is None else g
                carry_total = carry
            io.state(carry, start, history=False)
            arriving.append(carry_total)
        plain = loop.graph.outputs[m : m + loop.n_plain]
        for r, var in enumerate(plain):
            g = self.output_grads[m + r]
            if g is None or not var.type.is_float or not self.reads[m + r] & self.active:
                arriving.append(None)
                continue
            step_g = Variable(var.type, name="grad")
            io.seq(step_g, g)
            arriving.append(step_g)
        return arriving

    def outer_grads(self, results, seqs, inits, nonseqs, n, steps) -> list:
        """Gradients of the sequences, initial states and non-sequences (None for those not
        asked for)."""
        it = iter(results)
        truncated = self.loop.truncate >= 0
        reached = (
            cast(greater_equal(steps, n), self.inits[0].type.dtype)
            if (truncated and self.inits)
            else None
        )
        k = self.loop.n_seqs
        init_grads = []
        for j, (ph, init) in enumerate(zip(self.state_phs, inits)):
            g = next(it) if self._differentiated(ph) else None
            if k + j not in self.wanted:
                g = None  # (a carry the needed gradients read)
            if g is not None and reached is not None:
                g = g * cast(reached, init.type.dtype)
            init_grads.append(g)
        nonseq_grads = [next(it) if self._differentiated(ph) else None for ph in self.nonseq_phs]
        seq_grads = []
        for ph, seq, read in zip(self.seq_phs, seqs, self.rows):
            if not self._differentiated(ph):
                seq_grads.append(None)
                continue
            rows = next(it)
            if read is seq and not truncated:  # a row per step, each of them: no zeros
                seq_grads.append(rows)
                continue
            start = n - steps if truncated else None
            seq_grads.append(set_subtensor(zeros_like(seq), (slice(start, n),), rows))
        return seq_grads + init_grads + nonseq_grads


def _at_last_step_only(g, ph):
    """The gradient arriving at a state's last value, where ``g``, the gradient of all its
    values, is zeros but there (``inc_subtensor(zeros, v, [-1])``: what ``sn.grad`` builds
    for ``hs[-1]``); else None."""
    owner = g.owner if g is not None else None
    if owner is None or type(owner.op) is not IncSubtensor or owner.op.set_instead:
        return None
    zeros, v = owner.inputs[:2]
    if owner.op.spec != (("int", -1),) or not is_filled(zeros, 0) or not _same_type(v, ph):
        return None
    return v


def _same_type(v, ph) -> bool:
    """``v`` surely has ``ph``'s dtype and shape (it does not broadcast into it)."""
    a, b = v.type, ph.type
    return a.dtype == b.dtype and a.ndim == b.ndim and all(map(_same_dim, a.shape, b.shape))


def _same_dim(a, b) -> bool:
    """Equal for sure: both fixed and equal, or the same named dim."""
    return a is not None and a == b and isinstance(a, (int, str))


def _unique(variables: list) -> list:
    """The variables in order, each once (by identity)."""
    seen: dict = {}
    for var in variables:
        seen.setdefault(id(var), var)
    return list(seen.values())


def _last(var: Variable):
    """The length of var's last axis, for a reshape target: fixed, named, or read at run time."""
    dim = var.type.shape[-1]
    return dim if isinstance(dim, (int, str)) else getitem(shape(var), -1)


def _placeholder(ph: Variable, role: str | None = None) -> Variable:
    return placeholder(ph, ph.name if role is None else f"{role}({ph.name or 'h'})")


def _clone(loop, replace) -> list:
    """The forward step's state and plain outputs on the backward loop's placeholders."""
    outs = loop.graph.outputs[: loop.n_states + loop.n_plain]
    return clone_graph(list(outs), replace)
