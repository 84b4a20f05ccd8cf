"""``theano.updates.OrderedUpdates``: the updates ``theano.scan`` returns.

An ordered ``{shared variable: new value}`` dict that ``+`` merges with another dict or a
list of ``(shared, new value)`` pairs, either side (``scan_updates + [(W, W - lr * gW)]``,
``[(W, ...)] + scan_updates``), as Theano's did. A shared variable given two different new
values is refused (Theano's ``KeyError('Collision', key)``); the same value twice is kept once.
``sn.scan`` returns a plain ``OrderedDict``.
"""

from __future__ import annotations

from collections import OrderedDict

from symnb.compile.update_pairs import as_update_pairs
from symnb.core.op import _at_user_line
from symnb.core.variable import SharedVariable, Variable
from symnb.errors import ArgumentError, GraphError


class UpdateCollisionError(GraphError, KeyError):
    """One shared variable given two different new values by merged updates: a GraphError
    that ``except KeyError`` catches, as Theano's ``KeyError('Collision', key)``."""

    __str__ = Exception.__str__  # (not KeyError's quoted repr)


class OrderedUpdates(OrderedDict):
    """``theano.OrderedUpdates``: updates in order, keyed by shared variables, that ``+``
    merges with a dict or a list of pairs into a new ``OrderedUpdates``."""

    def __init__(self, *args, **kwargs):
        super().__init__()
        self.update(*args, **kwargs)

    def __setitem__(self, key, value):
        if not isinstance(key, SharedVariable):
            what = key.describe() if isinstance(key, Variable) else repr(key)
            raise _at_user_line(
                ArgumentError(
                    f"OrderedUpdates: the key {what} is not a shared variable (theano.shared); "
                    "updates map each shared variable to its new value"
                )
            )
        super().__setitem__(key, value)

    def update(self, other=(), **kwargs):
        """Add the pairs of ``other`` (a dict or ``(shared, new value)`` pairs); a shared
        variable already here with another new value is an ``UpdateCollisionError``."""
        if kwargs:
            raise _at_user_line(
                ArgumentError(f"OrderedUpdates: keywords {sorted(kwargs)}: keys are variables")
            )
        for key, value in as_update_pairs(other):  # (its errors for the usual slips)
            if key in self:
                if self[key] is value:
                    continue
                raise _at_user_line(
                    UpdateCollisionError(
                        f"OrderedUpdates: Collision: {key.describe()} is given two new values, "
                        f"{_named(self[key])} and {_named(value)}; a function updates each "
                        "shared variable once (combine them into one expression)"
                    )
                )
            self[key] = value

    def __add__(self, other):
        merged = OrderedUpdates(self)
        merged.update(other)
        return merged

    def __radd__(self, other):
        merged = OrderedUpdates(other)
        merged.update(self)
        return merged

    def __repr__(self):
        return f"OrderedUpdates({list(self.items())!r})"


def _named(value) -> str:
    return value.describe() if isinstance(value, Variable) else repr(value)
