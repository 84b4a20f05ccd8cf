"""``theano.ifelse.ifelse``: symnb's lazy ``ifelse`` (only the branch taken runs), taking
any scalar condition as Theano's ``IfElse`` did: 0 is false, anything else true."""

from symnb.control.ifelse import ifelse as _ifelse
from symnb.core.variable import as_variable


def ifelse(condition, then_branch, else_branch, name=None):
    """``then_branch`` where the scalar ``condition`` is nonzero, else ``else_branch``;
    lists of the same length give lists. A float condition (``T.scalar()``) is compared with
    0, where ``sn.ifelse`` asks for the comparison to be written; a condition that is not a
    scalar is refused as ``sn.ifelse`` refuses it."""
    cond = as_variable(condition)
    if cond.type.ndim == 0 and cond.type.dtype.kind in "fc":
        cond = cond != 0
    return _ifelse(cond, then_branch, else_branch, name=name)
