"""What a backend is to the layers above it: the one interface ``compile/`` and ``viz/`` use.

A linker turns an optimised graph into something that runs. ``sn.function`` (compile/) and
the displays (viz/) ask it only what ``Linker`` declares here, never probe it for optional
attributes: a backend that has no plan, no kernels, no C runner or no per-step timing says so
through the defaults below.
"""

from __future__ import annotations

from typing import ClassVar


class Linker:
    """The base of every linker (NumPy, C, the device backends, check and debug modes).

    Subclasses set ``name`` and implement ``run``; the rest has a default meaning "this
    backend has none of it".
    """

    #: the backend's name, as ``sn.function(backend=...)`` spells it
    name: ClassVar[str] = ""
    #: shared values are kept where the linker computes (a device): ``sn.function`` passes
    #: them as they are (device arrays), not as host arrays
    resident: ClassVar[bool] = False
    #: ``run_profiled`` times each step; when False a profile times whole calls
    steps_timed: ClassVar[bool] = False
    #: where the steps run, for displays and profiles ("" means the backend's name)
    device: str = ""
    #: the frozen plan the executors run (symnb/backends/plan.py); None where there is none
    plan = None
    #: ``f.kernels``: what each step runs (a listing); None where nothing is compiled
    kernels = None
    #: ``(scan node, the linker of its inner graph)`` for each loop, for the stepper
    bodies: tuple | list = ()
    #: the rewrite history of a graph the linker rewrote itself (a loop's step), else None
    rewrites = None
    #: ``runner()`` leaves some dims unchecked (an expression dim, ``n+m``): each call passes
    #: the Python input checks before it reaches the runner
    runner_skips_dims: bool = False

    def __repr__(self) -> str:
        """``<CLinker: backend 'c', 700 steps (201 kernel, 299 blas, 200 view)>``."""
        parts = [f"backend {self.name!r}"]
        if self.device and self.device != self.name:
            parts.append(f"on {self.device}")
        if self.plan is not None:
            kinds: dict = {}
            for step in self.kernels or ():
                kinds[step.kind] = kinds.get(step.kind, 0) + 1
            each = ", ".join(f"{n} {kind}" for kind, n in kinds.items())
            count = len(self.plan.steps)
            parts.append(f"{count} step{'s' * (count != 1)}" + (f" ({each})" if each else ""))
        if self.bodies:
            parts.append(f"{len(self.bodies)} loop{'s' * (len(self.bodies) > 1)}")
        return f"<{type(self).__name__}: {', '.join(parts)}>"

    @property
    def where(self) -> str:
        """Where the steps run, in words: the device, else the backend's name."""
        return self.device or self.name

    def run(self, leaf_values: list) -> list:
        """The graph's outputs for these leaf values (arguments, then shared values)."""
        raise NotImplementedError

    def run_profiled(self, leaf_values: list) -> tuple[list, list]:
        """Like ``run``, timing each step: ``(outputs, records)``; only where
        ``steps_timed`` is True."""
        raise NotImplementedError(f"backend {self.name!r} does not time its steps")

    def runner(self):
        """A callable running whole calls natively (backend "c"'s C runner), or None."""
        return None

    def fix_dims(self, sizes: dict) -> None:
        """Named dims every call must give one size (``{name: size}``: an update ties them to
        its shared value's fixed shape), told before ``runner``: a native runner checks them
        as fixed dims and declines another size, which the Python input checks then name.
        Without a runner there is nothing to do (those checks know the sizes)."""

    def entry(self, fast, owner, call, declined, structure, names, **state):
        """``f(...)`` as one native callable, or None. ``owner`` is a weak reference to the
        function; ``call`` and ``declined`` take it as their first argument. A call runs
        ``fast(*args, *shared values)`` (the runner; None until set on the result's
        ``fast``), keywords put in their inputs' places by ``names`` (the inputs' names, None
        for one without; None for no keywords), writes the last results to ``state``'s
        ``updates`` (SharedVariables; ``labels``: how an error names each, passed to its
        ``fitted``), holding its ``turns`` (a lock, or None) from the read
        of ``state``'s ``shared`` to the last write, and gives its first result, or
        ``structure(outputs)`` where ``structure`` is not None; ``declined(function,
        *args)`` where ``fast`` returns None or a shared value is not on the host; every
        other call (keywords that do not bind) ``call(function, *args, **kwargs)``. Its
        ``enter()``/``leave()`` take and give back the turns for the Python path's calls
        (``enter()`` is False where this thread holds them already)."""
        return None

    def placement(self):
        """Where each node runs and which values cross to a device (a device backend's
        ``Placement``), or None on the host."""
        return None
