"""``theano.config``: Theano's flags that course material reads or sets.

``floatX`` is symnb's own setting (``sn.config.floatX``), so setting either sets both, and
``compiledir`` is ``sn.config.compiledir``. ``mode``, ``device`` (``cpu`` is backend "c",
``cuda*``/``gpu*`` backend "cuda", ``opencl*`` backend "opencl"), ``optimizer`` and
``on_unused_input`` are what ``theano.function`` uses when it is not told. The other flags,
and the ``warn.*`` group, keep Theano's defaults and change nothing. Setting a flag Theano did
not have is an error that names it (a typo would otherwise be ignored silently).
``THEANO_FLAGS`` and ``.theanorc`` set flags when the layer is imported (flags.py); the flags
they set that change nothing here get one warning.
"""

from __future__ import annotations

import warnings

from symnb.compat.theano import flags as _flags
from symnb.config import config as _symnb_config

#: Theano's flags and their defaults (see the module's docstring for those that matter)
FLAGS = {
    "mode": "FAST_RUN",
    "on_unused_input": "raise",
    "device": "cpu",
    "optimizer": "fast_run",
    "cast_policy": "custom",
    "int_division": "floatX",
    "exception_verbosity": "low",
    "compute_test_value": "off",
    "warn_float64": "ignore",
    "allow_gc": True,
    "openmp": False,
    "profile": False,
    "print_active_device": True,
    "force_device": False,
    "init_gpu_device": "",
    "base_compiledir": "",
    "cxx": "",
    "blas.ldflags": "",
    "nvcc.fastmath": False,
    "lib.cnmem": 0.0,
    "gpuarray.preallocate": 0.0,
    "dnn.enabled": "auto",
    "floatX_is_default": True,
}
#: the flags that change what symnb does (the others are accepted and ignored)
EFFECTIVE = ("floatX", "mode", "device", "optimizer", "compiledir", "on_unused_input")
ON_UNUSED = ("raise", "warn", "ignore")
OPTIMIZERS = ("fast_run", "fast_compile", "merge", "None", "o4", "o3", "o2", "o1", "unsafe")
#: Theano's ``config.warn.*`` flags: warnings about bugs of old Theano versions
WARN_FLAGS = {
    "ignore_bug_before": "0.8",
    "argmax_pushdown_bug": True,
    "gpusum_01_011_0111_bug": True,
    "sum_sum_bug": True,
    "sum_div_dimshuffle_bug": True,
    "subtensor_merge_bug": True,
    "gpu_set_subtensor1": True,
    "vm_gc_bug": False,
    "signal_conv2d_interface": True,
    "reduce_join": True,
    "inc_set_subtensor1": True,
    "round": False,
    "identify_1pexp_bug": True,
}


class FlagGroup:
    """A group of flags read and set as attributes (``theano.config.warn.round = False``);
    a name the group does not have is an error naming it."""

    def __init__(self, name: str, defaults: dict):
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_values", dict(defaults))

    def __getattr__(self, name):
        values = object.__getattribute__(self, "_values")
        if name in values:
            return values[name]
        raise AttributeError(self._unknown(name))

    def __setattr__(self, name, value):
        if name not in self._values:
            raise AttributeError(self._unknown(name))
        default = self._values[name]
        self._values[name] = _flags.as_bool(value) if isinstance(default, bool) else value

    def _unknown(self, name) -> str:
        return (
            f"theano.config.{self._name} has no flag {name!r} (known: "
            + ", ".join(self._values)
            + ")"
        )

    def __repr__(self):
        return f"theano.config.{self._name}({self._values})"


class TheanoConfig:
    """``theano.config``: ``floatX`` and ``compiledir`` are symnb's settings; the rest are
    Theano's flags, and ``warn`` Theano's group of ``warn.*`` flags."""

    def __init__(self):
        object.__setattr__(self, "_flags", dict(FLAGS))
        object.__setattr__(self, "warn", FlagGroup("warn", WARN_FLAGS))

    @property
    def floatX(self) -> str:  # noqa: N802 - Theano's spelling
        return _symnb_config.floatX

    @floatX.setter
    def floatX(self, value: str) -> None:  # noqa: N802
        _symnb_config.floatX = value  # symnb checks the value

    @property
    def compiledir(self) -> str:
        return _symnb_config.compiledir

    @compiledir.setter
    def compiledir(self, value: str) -> None:
        _symnb_config.compiledir = str(value)

    def __getattr__(self, name):
        flags = object.__getattribute__(self, "_flags")
        if name in flags:
            return flags[name]
        raise AttributeError(f"theano.config has no flag {name!r} ({_known()})")

    def __setattr__(self, name, value):
        if name in ("floatX", "compiledir"):
            object.__setattr__(self, name, value)
            return
        if name not in self._flags:
            raise AttributeError(f"theano.config has no flag {name!r} ({_known()})")
        self._flags[name] = _checked(name, value, self._flags[name])

    def set_flag(self, name: str, value) -> None:
        """Set a flag by its full name (``"warn.round"``, ``"floatX"``), as the flags of
        ``THEANO_FLAGS`` name them."""
        group, dot, flag = name.partition(".")
        if dot and group == "warn":
            setattr(self.warn, flag, value)
        else:
            setattr(self, name, value)

    def __repr__(self):
        items = {"floatX": self.floatX, "compiledir": self.compiledir, **self._flags}
        return "theano.config(" + ", ".join(f"{k}={v!r}" for k, v in items.items()) + ")"


def _checked(name: str, value, default):
    """A flag's value, converted to its default's type and checked where it matters."""
    if isinstance(default, bool):
        return _flags.as_bool(value)
    if isinstance(default, float):
        return float(value)
    if name == "on_unused_input" and value not in ON_UNUSED:
        raise ValueError(f"theano.config.on_unused_input must be one of {ON_UNUSED}")
    if name == "device":
        device_backend(value)  # checks it
    if name == "optimizer" and str(value) not in OPTIMIZERS:
        raise ValueError(f"theano.config.optimizer must be one of {OPTIMIZERS}, not {value!r}")
    return str(value) if name == "optimizer" else value


def device_backend(device: str) -> str | None:
    """The symnb backend a Theano device means: None (symnb's default) for ``cpu``."""
    text = str(device).lower()
    if text == "cpu":
        return None
    if text.startswith(("cuda", "gpu")):
        return "cuda"
    if text.startswith("opencl"):
        return "opencl"
    raise ValueError(
        f"theano.config.device: {device!r} is not a device (cpu, cuda, cuda0, gpu, opencl0:0)"
    )


def _known() -> str:
    return "known flags: " + ", ".join(["floatX", "compiledir", *FLAGS, "warn.*"])


config = TheanoConfig()


def resolve_dtype(dtype):
    """Theano's dtype spellings: ``"floatX"`` is the current ``config.floatX``."""
    return _symnb_config.floatX if dtype == "floatX" else dtype


def apply_flags(flags: dict, where: str) -> list[str]:
    """Set each flag of ``flags`` (from ``where``); the names of those that change nothing
    here, after one warning that lists them."""
    ignored = []
    for name, value in flags.items():
        try:
            config.set_flag(name, value)
        except (AttributeError, ValueError) as exc:
            raise ValueError(f"{where}: {exc}") from None
        if name not in EFFECTIVE:
            ignored.append(name)
    if ignored:
        warnings.warn(
            f"{where}: symnb's Theano layer accepts but ignores "
            + ", ".join(f"{n}={flags[n]}" for n in ignored)
            + f" (it uses {', '.join(EFFECTIVE)}; docs/theano.md)",
            stacklevel=2,
        )
    return ignored


apply_flags(_flags.from_environment(), "THEANO_FLAGS/.theanorc")
