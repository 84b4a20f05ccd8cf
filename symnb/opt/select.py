"""What ``optimize=`` selects: a mode name or ``{"include": [...], "exclude": [...]}``.

Names in include/exclude are phases (all the rules of that phase) or single rules. Without
``include`` the selection starts from ``"fast"``. A rule registered with ``default=False``
runs only when named in an include. ``"stable"`` also leaves out the rules that change
IEEE results for values outside the ops' domain (``ieee=False``: ``x - x -> 0`` is NaN for NaN
and inf in NumPy), so it computes what NumPy computes, only more accurately; such a rule
named in ``include`` next to ``"stable"`` runs all the same.
"""

from __future__ import annotations

from symnb.errors import ArgumentError
from symnb.opt.registry import MODES, PHASES, RULES, Rule


def plan(optimize) -> list[tuple[str, list[Rule]]]:
    """The phases to run, in order, each with its rules in registration order."""
    include, exclude = _parse(optimize)
    phases = {p for p in include if p in PHASES}
    named = {r for r in include if r in RULES}
    chosen = [
        rule
        for rule in RULES.values()
        if (rule.name in named or (rule.default and phases.intersection(rule.phases)))
        and rule.name not in exclude
    ]
    steps = []
    for phase in PHASES:
        if phase in exclude:
            continue
        rules = [r for r in chosen if phase in r.phases and (phase in phases or r.name in named)]
        if rules:
            steps.append((phase, rules))
    return steps


def _parse(optimize) -> tuple[list[str], set[str]]:
    if optimize is None or optimize is False:
        optimize = "none"
    if optimize is True:
        optimize = "fast"
    if isinstance(optimize, str):
        return list(_mode(optimize)), _not_ieee([optimize])
    if isinstance(optimize, dict):
        unknown = set(optimize) - {"include", "exclude"}
        if unknown:
            raise ArgumentError(f"optimize: unknown keys {sorted(unknown)}; use include/exclude")
        named = optimize.get("include", ["fast"])
        named = [named] if isinstance(named, str) else list(named)
        include = _expand(named)
        exclude = set(_expand(optimize.get("exclude", [])))
        return include, exclude | (_not_ieee(named) - set(named))
    raise ArgumentError(f"optimize is a mode name {sorted(MODES)} or a dict, not {optimize!r}")


def _not_ieee(names) -> set[str]:
    """The rules ``"stable"`` leaves out: those that change IEEE results (``Rule.ieee``).
    A caller drops from these the rules an include names: naming one asks for it."""
    if "stable" not in names:
        return set()
    return {rule.name for rule in RULES.values() if not rule.ieee}


def _mode(name: str):
    if name not in MODES:
        raise ArgumentError(f"optimize: unknown mode {name!r}; choose one of {sorted(MODES)}")
    return MODES[name]


def _expand(names) -> list[str]:
    """Mode names become their phases; every other name must be a phase or a rule."""
    names = [names] if isinstance(names, str) else list(names)
    out: list[str] = []
    for name in names:
        if not isinstance(name, str):
            raise ArgumentError(
                f"optimize: include and exclude list names (phases, rules, modes), each a "
                f"string, not {name!r}"
            )
        if name in MODES:
            out += MODES[name]
        elif name in PHASES or name in RULES:
            out.append(name)
        else:
            raise ArgumentError(
                f"optimize: {name!r} is neither a phase ({', '.join(PHASES)}) nor a "
                f"registered rule (see sn.opt.RULES)"
            )
    return out
