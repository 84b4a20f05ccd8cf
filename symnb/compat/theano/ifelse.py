"""``theano.ifelse.ifelse``: symnb's lazy ``ifelse`` (only the branch taken runs), taking
any scalar condition as Theano's ``IfElse`` did: 0 is false, anything else true."""

from symnb.compat.theano.upcasting import as_theano_tensor, numbers_alone
from symnb.control.ifelse import ifelse as _ifelse


def ifelse(condition, then_branch, else_branch, name=None):
    """``then_branch`` where the scalar ``condition`` is nonzero, else ``else_branch``;
    lists of the same length give lists. A float condition (``T.scalar()``) is compared with
    0, where ``sn.ifelse`` asks for the comparison to be written; a condition that is not a
    scalar is refused as ``sn.ifelse`` refuses it. Two Python numbers as a pair of branches
    are Theano's constants (``ifelse(c, 1., 0.)`` is floatX); a number beside a tensor takes
    the tensor's dtype, as ``sn.ifelse`` gives it."""
    cond = as_theano_tensor(condition)
    if cond.type.ndim == 0 and cond.type.dtype.kind in "fc":
        cond = cond != 0
    if isinstance(then_branch, (list, tuple)) and isinstance(else_branch, (list, tuple)):
        if len(then_branch) == len(else_branch):  # (else sn.ifelse's error says so)
            pairs = [numbers_alone(a, b) for a, b in zip(then_branch, else_branch)]
            then_branch, else_branch = [a for a, _ in pairs], [b for _, b in pairs]
    else:
        then_branch, else_branch = numbers_alone(then_branch, else_branch)
    return _ifelse(cond, then_branch, else_branch, name=name)
