"""What a call hands back: results copied where the caller could otherwise write into a value
it does not own (an argument, a shared or constant array, another result).

``sn.function`` asks ``may_share`` of the results a plan did not allocate itself and, where
any may, makes them the caller's own with ``owned`` (unless ``borrow``)."""

from __future__ import annotations

import numpy as np

from symnb.backends.device.runtime import DeviceArray
from symnb.backends.plan import may_alias


def repeated(outputs) -> frozenset[int]:
    """Indices of the outputs that are an earlier output's variable again."""
    return frozenset(i for i, v in enumerate(outputs) if any(v is w for w in outputs[:i]))


def may_share(results, i, leaf_values) -> bool:
    """Whether result ``i`` (one the plan did not allocate itself) may share memory with a
    leaf's value or another result: a view, a leaf's array, or another result's very array
    (a branch that hands over the side it took, a NumPy reference that returns its input)."""
    result = results[i]
    return may_alias(result, leaf_values) or any(
        result is other for j, other in enumerate(results) if j != i
    )


def owned(results, leaf_values, leaf_results, repeats) -> list:
    """The results, each copied that is a leaf's value (``leaf_results``), a repeat
    (``repeats``), or may share memory with a leaf's value (an argument, a shared or a
    constant array) or with another result, earlier or later: an output that is a view of a
    later output, or of an update's value, would let the caller write into it. Of two results
    sharing memory the earlier is copied where it is a view, else the later (so one copy, not
    two). A device array (an update kept on the device: ``{a: b}`` hands over ``b``'s) stays
    as it is: nothing writes a device array after its kernel, so holders cannot change it."""
    mine = list(results)
    for i, result in enumerate(results):
        if isinstance(result, DeviceArray):
            continue
        if i in leaf_results or i in repeats and isinstance(result, np.ndarray):
            mine[i] = np.array(result, copy=True)
            continue
        before = [*leaf_values, *mine[:i]]  # (only a view or an array met again can share)
        if may_alias(result, before) and _aliases(result, [*before, *results[i + 1 :]]):
            mine[i] = np.array(result, copy=True)
        elif isinstance(result, np.ndarray) and not result.flags.writeable:
            mine[i] = np.array(result, copy=True)  # a plan's read-only view of its storage
    return mine


def _aliases(array, leaf_values) -> bool:
    return any(isinstance(v, np.ndarray) and np.may_share_memory(array, v) for v in leaf_values)
