"""Rules and the registry the engine reads them from.

A *node rule* is a named function with a declared :class:`~symnb.opt.pattern.Pattern`; the
engine calls it with a :class:`~symnb.opt.pattern.Match` wherever the pattern matches and the
function returns the replacement of the node's output (a variable), several replacements
(a list of ``(old, new)`` pairs), or None to decline. A *graph rule* looks at the whole
graph (merging constants, grouping nodes to fuse) and yields lists of ``(old, new)`` pairs,
one list per firing. Every rule keeps the file and line it was defined at.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field

from symnb.opt.pattern import Pattern

PHASES = (
    "merge",
    "constant_folding",
    "canonicalize",
    "stabilize",
    "specialize",
    "fuse",
    "inplace",
)


@dataclass
class Rule:
    """A named rewrite: its phases, its pattern (None for graph rules) and its function."""

    name: str
    phases: tuple[str, ...]
    fn: object
    pattern: Pattern | None = None
    graph_level: bool = False
    default: bool = True
    #: False for a rule that changes IEEE results outside the ops' domain (``x - x -> 0`` is
    #: NaN for NaN and inf); ``optimize="stable"`` leaves those out (docs/rewrites.md)
    ieee: bool = True
    source: str = ""
    doc: str = field(default="", repr=False)

    def __call__(self, *args):
        return self.fn(*args)


RULES: dict[str, Rule] = {}


def _phases(phase) -> tuple[str, ...]:
    phases = (phase,) if isinstance(phase, str) else tuple(phase)
    for p in phases:
        if p not in PHASES:
            raise ValueError(f"unknown rewrite phase {p!r}; the phases are {', '.join(PHASES)}")
    return phases


def _source_of(fn) -> str:
    try:
        return f"{inspect.getsourcefile(fn)}:{inspect.getsourcelines(fn)[1]}"
    except (OSError, TypeError):
        return ""


def make_rule(
    fn, phase, pattern=None, graph_level=False, name=None, default=True, ieee=True
) -> Rule:
    """A Rule for ``fn`` (not registered)."""
    if pattern is None and not graph_level:
        raise ValueError(f"rule {fn.__name__}: give a pattern, or make it a graph rule")
    return Rule(
        name=name or fn.__name__,
        phases=_phases(phase),
        fn=fn,
        pattern=pattern,
        graph_level=graph_level,
        default=default,
        ieee=ieee,
        source=_source_of(fn),
        doc=inspect.getdoc(fn) or "",
    )


def register(
    fn_or_rule,
    phase=None,
    pattern=None,
    *,
    graph_level=False,
    name=None,
    default=True,
    replace=False,
    ieee=True,
) -> Rule:
    """Add a rule to the registry (``sn.opt.register``); names are unique unless ``replace``.

    ``default=False`` registers a rule that runs only when an ``include`` names it.
    """
    rule = fn_or_rule
    if not isinstance(rule, Rule):
        rule = make_rule(fn_or_rule, phase, pattern, graph_level, name, default, ieee)
    if rule.name in RULES and not replace and RULES[rule.name].fn is not rule.fn:
        raise ValueError(f"a rewrite rule named {rule.name!r} exists ({RULES[rule.name].source})")
    RULES[rule.name] = rule
    return rule


def unregister(name: str) -> Rule:
    """Remove a rule from the registry and return it."""
    return RULES.pop(name)


def rule(phase, pattern: Pattern | None = None, *, name=None, default=True, ieee=True):
    """Decorator: register a node rule with its pattern (the function keeps working as is)."""

    def decorate(fn):
        register(fn, phase, pattern, name=name, default=default, ieee=ieee)
        return fn

    return decorate


def graph_rule(phase, *, name=None, default=True):
    """Decorator: register a graph rule, a generator of ``(old, new)`` pair lists."""

    def decorate(fn):
        register(fn, phase, graph_level=True, name=name, default=default)
        return fn

    return decorate
