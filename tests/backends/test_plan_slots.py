"""Each slot of a plan holds one value: the plan builder numbers slots by ``id(variable)``,
and a temporary an op is planned as (``Steps.temp``: im2col's columns, window gradients)
dies with its node's planning, so a later temporary made at its address took its slot. On
backend "opencl" the value's copy on the host, made once per slot (``device/transfers.py``),
was then read in place of the later value: a sum of conv2d input gradients was wrong in
about a third of compiles. ``ReusedIds`` below makes that reuse certain."""

from __future__ import annotations

import collections
import weakref

import numpy as np
import pytest

import symnb as sn
from symnb.backends import planner
from symnb.backends.plan import step_outputs
from tests.helpers import available_backends, check, opencl_problem

needs_opencl = pytest.mark.skipif(opencl_problem() is not None, reason=str(opencl_problem()))


class ReusedIds:
    """``id()`` as CPython promises it, and no more: unique among live objects only. CPython
    hands a new object the address of one just freed, often one of the same size (the
    allocator's free lists); here that reuse is certain: a new object gets the id of the last
    dead object of the same name and type, so a test sees every time what a plan looks like
    when ids are reused."""

    def __init__(self):
        self.fake: dict[int, int] = {}  # id of a live object -> the id handed out for it
        self.free: dict[tuple, list[int]] = {}  # (name, type) -> ids of dead objects
        self.count = 0

    def __call__(self, obj) -> int:
        key = id(obj)
        if key in self.fake:
            return self.fake[key]
        role = (getattr(obj, "name", None), str(getattr(obj, "type", None)))
        try:
            weakref.finalize(obj, self._died, key, role)
        except TypeError:  # (not an object a weak reference can follow: its own id)
            return key
        if self.free.get(role):
            self.fake[key] = self.free[role].pop()
        else:
            self.count += 1
            self.fake[key] = -self.count  # (never an address)
        return self.fake[key]

    def _died(self, key: int, role: tuple) -> None:
        self.free.setdefault(role, []).append(self.fake.pop(key))


@pytest.fixture
def reused_ids(monkeypatch) -> ReusedIds:
    """The plan builder's ``id`` replaced by ``ReusedIds`` for the test."""
    ids = ReusedIds()
    monkeypatch.setattr(planner, "id", ids, raising=False)
    return ids


def summed_input_gradients(stride=1, padding=0):
    """Four conv2d input gradients (``Lop``s) added: four nodes planned alike, one after
    another, each with its temporaries."""
    x = sn.tensor("xx", shape=(1, 2, 5, 5), dtype="float64")
    w = sn.tensor("w", shape=(3, 2, 2, 2), dtype="float64")
    y = sn.conv2d(x, w, stride=stride, padding=padding)
    gs = [sn.tensor(f"g{k}", shape=y.type.shape, dtype="float64") for k in range(4)]
    total = sn.Lop(y, x, gs[0])
    for g in gs[1:]:
        total = total + sn.Lop(y, x, g)
    rng = np.random.default_rng(7)
    values = [rng.standard_normal(v.type.shape) for v in (x, w, *gs)]
    return [x, w, *gs], total, values


def jacobian_of_strided_conv():
    x = sn.tensor("x", shape=(1, 1, 4, 4), dtype="float64")
    w = sn.tensor("w", shape=(2, 1, 3, 3), dtype="float64")
    rng = np.random.default_rng(8)
    values = [rng.standard_normal(v.type.shape) for v in (x, w)]
    return [x, w], sn.jacobian(sn.conv2d(x, w, stride=2, padding=1), x), values


GRAPHS = {
    "summed input gradients": summed_input_gradients,
    "summed input gradients, stride 2": lambda: summed_input_gradients(2, 1),
    "jacobian of a strided conv2d": jacobian_of_strided_conv,
}


def written_twice(plan) -> dict:
    """Slots that more than one step of ``plan`` writes: {slot: [step indices]}."""
    writers = collections.defaultdict(list)
    for i, step in enumerate(plan.steps):
        for slot in step_outputs(step):
            writers[slot].append(i)
    return {slot: steps for slot, steps in writers.items() if len(steps) > 1}


@pytest.mark.parametrize("backend", available_backends())
@pytest.mark.parametrize("graph", GRAPHS)
def test_each_slot_is_written_once_when_ids_are_reused(backend, graph, reused_ids):
    inputs, output, values = GRAPHS[graph]()
    f = sn.function(inputs, output, backend=backend)
    assert reused_ids.count, "the planner no longer numbers slots by id: drop reused_ids"
    assert not written_twice(f.linker.plan), f.linker.plan
    check(f(*values), sn.function(inputs, output, backend="py")(*values))


@needs_opencl
def test_summed_conv2d_input_gradients_on_opencl_equal_numpy(reused_ids):
    """The reported case: each of ten compiles equals backend "py" (before, ids reused as
    ``reused_ids`` reuses them made every compile wrong; CPython's own reuse, 3 in 10)."""
    inputs, output, values = summed_input_gradients()
    want = sn.function(inputs, output, backend="py")(*values)
    for _ in range(10):
        check(sn.function(inputs, output, backend="opencl")(*values), want)
