"""``theano.compile.mode``: ``Mode`` (a linker and an optimizer) and the modes Theano
predefined by name (``FAST_RUN``, ``FAST_COMPILE``, ``DebugMode``, ``NanGuardMode``), each
read as the ``sn.function`` keywords it means (``Mode.options``)."""

from __future__ import annotations

from symnb.compat.theano.configparser import config, function_backend
from symnb.core.op import _at_user_line
from symnb.errors import ArgumentError


class Mode:
    """``theano.compile.mode.Mode(linker, optimizer)``: which backend and rewrites compile
    a function. ``linker="py"`` is symnb's NumPy reference backend; Theano's C and VM linkers
    are symnb's default backend ("c" when a compiler is present)."""

    OPTIMIZERS = {
        None: "none",
        "None": "none",
        "fast_run": "fast",
        "default": "fast",
        "fast_compile": "stable",
        "merge": "stable",
        "o4": "fast",
        "o3": "fast",
        "o2": "stable",
        "o1": "stable",
        "unsafe": "fast",
    }
    LINKERS = ("py", "c", "c|py", "c|py_nogc", "vm", "cvm", "vm_nogc", "cvm_nogc", None)

    def __init__(self, linker=None, optimizer="default", mode=None, include=(), exclude=()):
        if linker not in self.LINKERS:
            raise ValueError(f"Mode: linker must be one of {self.LINKERS}, not {linker!r}")
        if optimizer not in self.OPTIMIZERS:
            raise ValueError(f"Mode: optimizer must be one of {list(self.OPTIMIZERS)}")
        self.linker, self.optimizer, self.mode = linker, optimizer, mode
        self.include, self.exclude = tuple(include), tuple(exclude)

    def including(self, *tags) -> Mode:
        return Mode(self.linker, self.optimizer, self.mode, self.include + tags, self.exclude)

    def excluding(self, *tags) -> Mode:
        return Mode(self.linker, self.optimizer, self.mode, self.include, self.exclude + tags)

    def options(self) -> dict:
        """The keywords of ``sn.function`` this mode means (the optimizer "default" is
        ``theano.config.optimizer``, and a linker other than "py" runs on
        ``theano.config.device``)."""
        name = config.optimizer if self.optimizer == "default" else self.optimizer
        optimize = self.OPTIMIZERS.get(name, "fast")
        if self.include or self.exclude:
            base = [] if optimize == "none" else [optimize]
            optimize = {"include": base + list(self.include), "exclude": list(self.exclude)}
        backend = "py" if self.linker == "py" else function_backend()
        return {"backend": backend, "optimize": optimize, "mode": self.mode}

    def __repr__(self):
        return f"Mode(linker={self.linker!r}, optimizer={self.optimizer!r})"


class NanGuardMode(Mode):
    """``theano.compile.nanguardmode.NanGuardMode``: symnb's ``mode="nanguard"``, which stops
    at the first node whose result holds NaN or an infinity (both always: turning one check
    off is refused). ``big_is_error`` is accepted and not checked (docs/theano.md)."""

    def __init__(
        self,
        nan_is_error=None,
        inf_is_error=None,
        big_is_error=None,
        optimizer="default",
        linker=None,
    ):
        for name, flag in (("nan_is_error", nan_is_error), ("inf_is_error", inf_is_error)):
            if flag is not None and not flag:
                raise _at_user_line(
                    NotImplementedError(
                        f"NanGuardMode: {name}={flag!r}: symnb's nanguard checks NaN and "
                        "infinities together; leave it True or use another mode"
                    )
                )
        super().__init__(linker, optimizer, mode="nanguard")


class DebugMode(Mode):
    """``theano.compile.DebugMode`` (``theano.compile.debugmode.DebugMode``): symnb's
    ``mode="debug"``, which checks each node's results against the NumPy reference. Theano's
    checking options are accepted and not read."""

    def __init__(
        self,
        optimizer="fast_run",
        stability_patience=None,
        check_c_code=None,
        check_py_code=None,
        check_isfinite=None,
        check_preallocated_output=None,
        require_matching_strides=None,
        linker=None,
    ):
        super().__init__(linker, optimizer, mode="debug")


class MonitorMode(Mode):
    """``theano.compile.MonitorMode(pre_func, post_func)``: Theano called them around every
    node; symnb's compiled plans have no per-node Python callback, so it is refused."""

    def __init__(self, pre_func=None, post_func=None, optimizer="default", linker=None):
        raise _at_user_line(
            NotImplementedError(
                "MonitorMode: symnb runs no Python callback per node. Use "
                "mode=theano.compile.DebugMode() (each node checked against NumPy), "
                "NanGuardMode (stops at the first NaN/inf with the node), "
                "theano.printing.Print(...)(x) to print a value, or f.profile()"
            )
        )


#: Theano's predefined mode names
MODES = {
    "FAST_RUN": Mode(None, "default"),  # theano.config.optimizer, fast_run by default
    "Mode": Mode(None, "default"),
    "FAST_COMPILE": Mode("py", "fast_compile"),
    "DebugMode": DebugMode(),
    "DEBUG_MODE": DebugMode(),
    "NanGuardMode": NanGuardMode(optimizer="fast_run"),
}


def get_mode(mode) -> Mode:
    """A Mode from a Mode, a predefined name, or None (``theano.config.mode``)."""
    mode = config.mode if mode is None else mode
    if isinstance(mode, Mode):
        return mode
    if mode in MODES:
        return MODES[mode]
    raise _at_user_line(ArgumentError(f"unknown mode {mode!r}; use one of {sorted(MODES)}"))
