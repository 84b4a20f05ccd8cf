"""Graph rewrites with a recorded history (``sn.opt``).

Rules are small named functions with declared patterns, grouped in phases that run in order,
each to a fixed point: merge, constant_folding, canonicalize, stabilize, specialize, fuse,
inplace. ``sn.function(..., optimize=...)`` picks them; ``f.rewrites`` lists every firing.
See docs/rewrites.md.
"""

from symnb.opt import rules as _builtin_rules  # noqa: F401 - registers the built-in rules
from symnb.opt.engine import RewriteLoopWarning, optimize
from symnb.opt.history import History, Step
from symnb.opt.pattern import Const, Match, Pattern
from symnb.opt.registry import PHASES, RULES, Rule, graph_rule, register, rule, unregister
from symnb.opt.select import MODES, plan
from symnb.opt.verify import RewriteError, verify

__all__ = [
    "MODES",
    "PHASES",
    "RULES",
    "Const",
    "History",
    "Match",
    "Pattern",
    "RewriteError",
    "RewriteLoopWarning",
    "Rule",
    "Step",
    "graph_rule",
    "optimize",
    "plan",
    "register",
    "rule",
    "unregister",
    "verify",
]
