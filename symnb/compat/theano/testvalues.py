"""Theano's test values: ``x.tag.test_value = array`` and ``theano.config.compute_test_value``.

With ``compute_test_value`` "raise", "warn" or "ignore", every node built computes its
outputs' test values from its inputs' (the op's NumPy reference, ``op.perform``), as Theano
did, so a mistake shows at the line that built the node (an error, under "ignore" too; a
warning under "warn"): the output's ``tag.test_value`` holds the result. An input with no
test value is an error ("raise"), a warning ("warn") or skipped ("ignore"), as in Theano;
constants and shared variables give their values. With "off" (the default) nothing is
computed. The layer watches nodes through core's "node_built" hook.
"""

from __future__ import annotations

import contextlib

import numpy as np

from symnb.compat.theano.configparser import config
from symnb.core.hooks import register
from symnb.core.op import _at_user_line
from symnb.core.source import warn_at_user
from symnb.core.variable import Constant, SharedVariable

_quiet = [0]


@contextlib.contextmanager
def missing_values_allowed():
    """While ``theano.scan`` traces the step function, whose placeholders (``x[t]``,
    ``h[t-1]``) have no test values here: they are skipped, not complained about."""
    _quiet[0] += 1
    try:
        yield
    finally:
        _quiet[0] -= 1


class TestValueError(ValueError):
    """A node's test value could not be computed (Theano raised at the line as well)."""

    __test__ = False  # not a pytest test class


def _value_of(var):
    """The test value of ``var``, or None."""
    if isinstance(var, Constant):
        return var.data
    if isinstance(var, SharedVariable):
        try:
            return var.host_value()  # (read only: a device copy stays)
        except Exception:  # noqa: BLE001 - a random state and the like: no test value
            return None
    if "tag" in var.__dict__ and "test_value" in var.tag:
        return np.asarray(var.tag["test_value"], dtype=var.type.dtype)
    return None


def _complain(mode: str, message: str) -> None:
    """Raise or warn at the user's line, as symnb's own shape errors do."""
    if mode == "raise" or mode == "pdb":
        raise _at_user_line(TestValueError(message))
    if mode == "warn":
        warn_at_user(message, UserWarning)


def compute_test_values(node) -> None:
    """Give the outputs of ``node`` their test values (``compute_test_value`` not "off")."""
    mode = config._flags["compute_test_value"]
    if mode == "off":
        return
    values = []
    for var in node.inputs:
        value = _value_of(var)
        if value is None:
            # a computed input whose op gave none (no reference of its own) is skipped,
            # as are scan's placeholders; an input of the graph without one is the user's
            if mode != "ignore" and var.owner is None and not _quiet[0]:
                name = var.name or var.describe()
                _complain(
                    mode,
                    f"{name} has no test value: set {var.name or 'x'}.tag.test_value = ... "
                    "(theano.config.compute_test_value is " + repr(mode) + ")",
                )
            return
        values.append(value)
    op = node.op
    try:
        results = op.perform(*values)
    except NotImplementedError:
        return  # an op with no reference on its own (a loop, a draw): nothing to check
    except Exception as exc:  # noqa: BLE001 - the user's shape or value mistake
        shapes = ", ".join(str(np.shape(v)) for v in values)
        # "ignore" skips only an input without a test value: a failing perform raises, as
        # Theano's ran it unguarded
        _complain(
            "raise" if mode == "ignore" else mode,
            f"computing the test value of {op.op_name()} on inputs of shapes {shapes}: "
            f"{type(exc).__name__}: {exc}",
        )
        return
    if len(node.outputs) == 1:
        results = (results,)
    for out, value in zip(node.outputs, results, strict=False):
        out.tag["test_value"] = np.asarray(value)


register("node_built", compute_test_values)
