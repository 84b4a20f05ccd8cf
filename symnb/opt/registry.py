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

from symnb.errors import ArgumentError
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

#: what ``optimize="..."`` names: the phases each mode runs (``symnb/opt/select.py``)
MODES = {
    "fast": PHASES,
    "stable": ("merge", "constant_folding", "canonicalize", "stabilize"),
    "none": (),
}


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

    @property
    def builtin(self) -> bool:
        """One of symnb's own rules, which the engine trusts with what a replacement reads
        and its dims (a user's rule gets them checked: ``symnb/opt/replacements.py``)."""
        return str(getattr(self.fn, "__module__", None) or "").startswith("symnb.")


RULES: dict[str, Rule] = {}


def _phases(name: str, phase) -> tuple[str, ...]:
    phases = (phase,) if isinstance(phase, str) else tuple(phase or ())
    if not phases:
        raise ArgumentError(f"rule {name}: give its phase, one of {', '.join(PHASES)}")
    for p in phases:
        if p not in PHASES:
            raise ArgumentError(
                f"rule {name}: unknown rewrite phase {p!r}; the phases are {', '.join(PHASES)}"
            )
    return phases


def _check_name(name) -> str:
    """A name ``optimize={"include": [...]}`` can pick: not a phase's or a mode's, which
    that name would mean instead."""
    if not isinstance(name, str) or not name:
        raise ArgumentError(f"a rewrite rule's name is a non-empty string, not {name!r}")
    if name in PHASES or name in MODES:
        kind = "phase" if name in PHASES else "mode"
        raise ArgumentError(
            f"a rewrite rule cannot be named {name!r}: that is a {kind}'s name, which "
            f"optimize= would read as the {kind}; choose another name"
        )
    return name


def _check_pattern(name: str, pattern) -> None:
    if isinstance(pattern, Pattern):
        return
    shown = getattr(pattern, "__name__", None) or repr(pattern)
    hint = f"Pattern({shown}, 'x')" if isinstance(pattern, type) else "Pattern(Sin, 'x')"
    raise ArgumentError(
        f"rule {name}: its pattern is a symnb.opt.Pattern, not {shown} "
        f"({type(pattern).__name__}); write {hint} (the op class and a name for each input)"
    )


def _source_of(fn) -> str:
    try:
        return f"{inspect.getsourcefile(fn)}:{inspect.getsourcelines(fn)[1]}"
    except (OSError, TypeError):
        return ""


def make_rule(
    fn, phase, pattern=None, graph_level=False, name=None, default=True, ieee=True
) -> Rule:
    """A Rule for ``fn`` (not registered)."""
    name = _check_name(name or getattr(fn, "__name__", None))
    if not callable(fn):
        raise ArgumentError(f"rule {name}: a rule is a function, not {fn!r}")
    if pattern is None and not graph_level:
        raise ArgumentError(f"rule {name}: give a pattern, or make it a graph rule")
    if not graph_level:
        _check_pattern(name, pattern)
    return Rule(
        name=name,
        phases=_phases(name, phase),
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
        raise ArgumentError(
            f"a rewrite rule named {rule.name!r} exists ({RULES[rule.name].source}); "
            "pass replace=True to replace it"
        )
    RULES[rule.name] = rule
    return rule


def unregister(name: str) -> Rule:
    """Remove a rule from the registry and return it."""
    if name not in RULES:
        raise ArgumentError(f"no rewrite rule is named {name!r} (see sn.opt.RULES)")
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
