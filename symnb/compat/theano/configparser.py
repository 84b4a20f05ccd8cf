"""``theano.config``: Theano's flags that course material reads or sets.

``floatX`` is symnb's own setting (``sn.config.floatX``), so setting either sets both, and
``compiledir`` is ``sn.config.compiledir``. ``mode``, ``device`` (``cpu`` is backend "c",
``cuda*``/``gpu*`` backend "cuda", ``opencl*`` backend "opencl"), ``optimizer`` and
``on_unused_input`` are what ``theano.function`` uses when it is not told (``force_device``
whether a CUDA device that cannot run falls back to the CPU); ``cast_policy`` is the rule of
``theano.scalar.upcast`` and of the dtypes the layer derives from it (upcasting.py);
``compute_test_value`` whether nodes compute test values as they are built (testvalues.py);
``unittests.rseed`` the seed of ``theano.tests.unittest_tools``. The other flags,
and the ``warn.*`` group, keep Theano's defaults and change nothing. Setting a flag Theano did
not have is an error that names it (a typo would otherwise be ignored silently).
``THEANO_FLAGS`` and ``.theanorc`` set flags when the layer is imported (flags.py); the flags
they set that change nothing here get one warning.
"""

from __future__ import annotations

import contextlib
import difflib
import os
import re
import warnings

import numpy as np

from symnb.backends import compiledir
from symnb.backends.cuda.runtime import cuda_problem
from symnb.backends.opencl.runtime import opencl_problem
from symnb.compat.theano import flags as _flags
from symnb.compat.theano.configdefaults import CHOICES, DEFAULTS, NAMES, READ_ONLY
from symnb.config import config as _symnb_config
from symnb.core import locks
from symnb.core.op import _at_user_line
from symnb.core.source import pinned
from symnb.core.types import as_dtype
from symnb.errors import DTypeError

#: the flags that change what symnb does (the others are accepted and ignored; a test keeps
#: this every flag the layer reads)
EFFECTIVE = (
    "floatX",
    "mode",
    "device",
    "force_device",
    "optimizer",
    "compiledir",
    "on_unused_input",
    "cast_policy",
    "compute_test_value",
    "unittests.rseed",
)
ON_UNUSED = CHOICES["on_unused_input"]
OPTIMIZERS = CHOICES["optimizer"]
#: the values ``theano.config`` holds that are symnb's own settings
_SYMNB = ("floatX", "compiledir")


class FlagGroup:
    """Flags read and set as attributes: ``theano.config`` itself, and its dotted groups
    (``theano.config.warn.round = False``, ``theano.config.dnn.conv.algo_fwd``). A name
    Theano never had is an error naming it."""

    def __init__(self, root: TheanoConfig | None, prefix: str):
        object.__setattr__(self, "_root", self if root is None else root)
        object.__setattr__(self, "_prefix", prefix)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        full = self._prefix + name
        values = self._root._flags
        if full in values:
            return values[full]
        if any(key.startswith(full + ".") for key in values):
            return FlagGroup(self._root, full + ".")
        raise AttributeError(_unknown(full))

    def __setattr__(self, name, value):
        self._root.set_flag(self._prefix + name, value)

    def __dir__(self):
        keys = [k for k in self._root._flags if k.startswith(self._prefix)]
        names = {k[len(self._prefix) :].split(".")[0] for k in keys}
        return sorted(names | (set(_SYMNB) if not self._prefix else set()))

    def __repr__(self):
        items = {k: v for k, v in self._root._flags.items() if k.startswith(self._prefix)}
        return f"theano.config.{self._prefix[:-1]}({items})"


class TheanoConfig(FlagGroup):
    """``theano.config``: ``floatX`` and ``compiledir`` are symnb's settings; the rest are
    Theano's flags (configdefaults.py), the dotted ones read as groups
    (``theano.config.warn.round``, ``theano.config.blas.ldflags``)."""

    def __init__(self):
        object.__setattr__(self, "_flags", dict(DEFAULTS))
        object.__setattr__(self, "_importing", False)
        super().__init__(None, "")

    @property
    def floatX(self) -> str:  # noqa: N802 - Theano's spelling
        return _symnb_config.floatX

    @floatX.setter
    def floatX(self, value: str) -> None:  # noqa: N802
        """Theano's shorthands "16", "32" and "64" (its ``floatX_convert``) are float16,
        float32 and float64; symnb checks the value."""
        if isinstance(value, str) and value in ("16", "32", "64"):
            value = "float" + value
        _symnb_config.floatX = value

    @property
    def compiledir(self) -> str:
        """The compile directory in use, absolute, as Theano's flag always was (course code
        lists or removes it): ``sn.config.compiledir``, else ``$SYMNB_COMPILEDIR``, else
        ``~/.cache/symnb``; setting it sets ``sn.config.compiledir``."""
        return compiledir.requested()

    @compiledir.setter
    def compiledir(self, value: str) -> None:
        """A leading ``~`` is the home directory, as Theano's ``filter_compiledir`` had it;
        a value that is no path (None, a number) is refused as ``sn.config.compiledir``
        refuses it."""
        if isinstance(value, (str, os.PathLike)):
            value = os.path.expanduser(value)
        _symnb_config.compiledir = value

    def set_flag(self, name: str, value) -> None:
        """Set a flag by its full name (``"warn.round"``, ``"floatX"``), as the flags of
        ``THEANO_FLAGS`` name them."""
        if name in _SYMNB:
            object.__setattr__(self, name, value)
            return
        if name not in self._flags:
            if any(key.startswith(name + ".") for key in self._flags):
                raise AttributeError(
                    f"theano.config.{name} is a group of flags, not a flag: set one of "
                    + ", ".join(k for k in self._flags if k.startswith(name + "."))
                )
            raise AttributeError(_unknown(name))
        if name in READ_ONLY and not self._importing:
            raise AttributeError(
                f"theano.config.{name} cannot be changed once Theano is imported (as in "
                "Theano): set it in THEANO_FLAGS or .theanorc"
            )
        self._flags[name] = _checked(name, value, DEFAULTS[name])

    def __repr__(self):
        items = {"floatX": self.floatX, "compiledir": self.compiledir, **self._flags}
        return "theano.config(" + ", ".join(f"{k}={v!r}" for k, v in items.items()) + ")"


def _unknown(name: str) -> str:
    close = difflib.get_close_matches(name, NAMES, n=3, cutoff=0.6)
    hint = f"; did you mean {' or '.join(close)}?" if close else ""
    group, _, leaf = name.rpartition(".")
    if group and any(key.startswith(group + ".") for key in DEFAULTS):
        where = f"theano.config.{group} has no flag {leaf!r}"
    else:
        where = f"theano.config has no flag {name!r}"
    return (
        f"{where}: Theano never had a flag of that name{hint} "
        "(symnb's Theano layer accepts every flag of Theano 0.7 to 1.0; docs/theano.md)"
    )


def _checked(name: str, value, default):
    """A flag's value, converted to its default's type and checked as Theano did."""
    if isinstance(default, bool):
        return _flags.as_bool(value, name)
    try:
        if isinstance(default, int):
            return int(value)
        if isinstance(default, float):
            return float(value)
    except (TypeError, ValueError):
        kind = type(default).__name__
        raise ValueError(f"theano.config.{name} must be a {kind}, not {value!r}") from None
    if name == "device":
        use_device(value)  # checks it
    if name == "mode" and not isinstance(value, str):
        return value  # a Mode object
    text = str(value)
    if name in CHOICES and text not in CHOICES[name]:
        raise ValueError(
            f"theano.config.{name} must be one of {', '.join(CHOICES[name])}, not {value!r}"
        )
    return text


#: Theano's CUDA device names: ``cuda``, ``cuda1``, ``gpu``, ``gpu0``
_CUDA = re.compile(r"(cuda|gpu)(\d*)$")


def device_backend(device: str) -> str | None:
    """The symnb backend a Theano device means: None (symnb's default) for ``cpu``."""
    text = str(device).lower()
    if text == "cpu":
        return None
    if _CUDA.match(text):
        return "cuda"
    if text.startswith("opencl"):
        return "opencl"
    raise ValueError(
        f"theano.config.device: {device!r} is not a device (cpu, cuda, cuda0, gpu, opencl0:0)"
    )


#: symnb's settings the ``device`` flag points at its device: name -> (the value the flag
#: found there, the value it set). A setting goes back to the value found once the flag no
#: longer names a device of its kind (``cpu``, the other backend, the end of a
#: ``change_flags`` block), unless it was changed since the flag set it.
_POINTED: dict[str, tuple] = {}


def use_device(device: str) -> None:
    """Point symnb's backends at the device Theano names: ``cuda1``/``gpu1`` is CUDA device 1
    (``sn.config.cuda_device``), ``opencl0:1`` the OpenCL device "0:1"; a setting an earlier
    device pointed and this one does not goes back (``_POINTED``)."""
    text = str(device).lower()
    backend = device_backend(text)
    wanted = {}
    if backend == "cuda":
        number = _CUDA.match(text).group(2)
        wanted["cuda_device"] = int(number) if number else 0
    elif backend == "opencl" and text[len("opencl") :]:
        wanted["opencl_device"] = text[len("opencl") :]
    for name, value in wanted.items():
        current = getattr(_symnb_config, name)
        found, put = _POINTED.get(name, (current, current))
        setattr(_symnb_config, name, value)  # (checks it)
        _POINTED[name] = (found if current == put else current, getattr(_symnb_config, name))
    for name in [n for n in _POINTED if n not in wanted]:
        found, put = _POINTED.pop(name)
        if getattr(_symnb_config, name) == put:
            setattr(_symnb_config, name, found)


_FELL_BACK: dict[str, str | None] = {}


def function_backend() -> str | None:
    """The backend ``theano.function`` compiles for on ``config.device``. As Theano with
    ``force_device=False`` (its default), a GPU-array device that cannot run here (CUDA: no
    driver, no GPU; OpenCL: no pyopencl, no such device, or one that cannot build kernels)
    falls back to the CPU with one warning, as Theano's gpuarray ``use()`` did for ``cuda*``
    and ``opencl*`` alike; ``force_device=True`` keeps the device, so the first function
    says why it cannot run."""
    device = config._flags["device"]
    backend = device_backend(device)
    if backend not in ("cuda", "opencl") or config._flags["force_device"]:
        return backend
    if backend == "cuda":
        key, check = f"{device}:{_symnb_config.cuda_device}", cuda_problem
        setting = _symnb_config.cuda_device
    else:
        key, check = f"{device}:{_symnb_config.opencl_device}", opencl_problem
        setting = _symnb_config.opencl_device
    if key not in _FELL_BACK:
        why = check(setting)
        _FELL_BACK[key] = why
        if why is not None:
            warnings.warn(
                f"theano.config.device={device!r} cannot be used ({why.splitlines()[0]}); "
                "running on the CPU, as Theano did with force_device=False "
                "(THEANO_FLAGS=force_device=True makes it an error)",
                stacklevel=3,
            )
    return backend if _FELL_BACK[key] is None else None


config = TheanoConfig()


class _Override:
    """One entered ``change_flags`` block: the values it set and those it found."""

    def __init__(self, flags: dict, before: dict):
        self.flags, self.before = flags, before


#: the blocks entered and not yet exited, every thread's, in entry order: blocks of two
#: threads may exit out of order, and each must put back what it found only when no later
#: block still sets that flag (else that block, when it exits, puts it back)
_ACTIVE: list[_Override] = []
_ACTIVE_LOCK = locks.lock()  # unlocked in a forked child (core/locks.py)


class change_flags(contextlib.ContextDecorator):  # noqa: N801 - Theano's name
    """``theano.change_flags(floatX="float32", **{"warn.round": False})``: set flags for a
    ``with`` block or a decorated function, then put back the values they had. Each entry
    saves its own values (a stack), so a decorated function that recurses, or the same
    object nested, puts back the values from before the outermost entry; each call of a
    decorated function (another thread's too) enters a copy of its own, and blocks of
    several threads that exit out of order leave the flags as if they had exited in order.
    A flag that cannot be set puts back those set before it."""

    def __init__(self, args=(), **kwargs):
        self.flags = {**dict(args), **kwargs}
        for name in self.flags:
            if name not in NAMES:
                raise AttributeError(_unknown(name))
        self._saved: list[_Override] = []

    def _recreate_cm(self):
        return change_flags(self.flags)

    def __enter__(self):
        with _ACTIVE_LOCK:
            before = {name: _get(name) for name in self.flags}
            done = []
            try:
                for name, value in self.flags.items():
                    config.set_flag(name, value)
                    done.append(name)
            except BaseException:
                for name in reversed(done):
                    config.set_flag(name, before[name])
                raise
            entry = _Override(self.flags, before)
            _ACTIVE.append(entry)
        self._saved.append(entry)
        return self

    def __exit__(self, *exc):
        entry = self._saved.pop()
        with _ACTIVE_LOCK:
            later = _ACTIVE[_ACTIVE.index(entry) + 1 :]
            _ACTIVE.remove(entry)
            for name, value in entry.before.items():
                setter = next((e for e in later if name in e.flags), None)
                if setter is None:
                    config.set_flag(name, value)
                else:  # the later block found this block's value: it puts back ours
                    setter.before[name] = value
        return False


def _get(name: str):
    """A flag's value as ``change_flags`` puts it back: ``compiledir`` the setting itself
    ("" when unset), so that the default keeps following ``$SYMNB_COMPILEDIR``."""
    if name == "compiledir":
        return _symnb_config.compiledir
    return getattr(config, name) if name in _SYMNB else config._flags[name]


def resolve_dtype(dtype):
    """Theano's dtype spellings: ``"floatX"`` is the current ``config.floatX``."""
    return _symnb_config.floatX if dtype == "floatX" else dtype


def theano_dtype(dtype, what: str) -> np.dtype:
    """A dtype a user gave a function of the layer (``dtype=``, ``acc_dtype=``, an operand's
    dtype), in Theano's spellings (``"floatX"``), read as symnb reads dtypes (``as_dtype``):
    what is no dtype symnb supports is a DTypeError beginning with ``what`` at the user's
    line, never NumPy's bare "data type not understood". Every ``np.dtype`` of a user's
    value in the layer goes through here."""
    try:
        return as_dtype(resolve_dtype(dtype))
    except DTypeError as exc:
        raise _at_user_line(DTypeError(f"{what}: {exc.args[0]}")) from None


def apply_flags(flags: dict, where: str) -> list[str]:
    """Set each flag of ``flags`` (from ``where``); the names of those that change nothing
    here, after one warning that lists them."""
    ignored = []
    object.__setattr__(config, "_importing", True)
    try:
        # symnb's own refusals (floatX, compiledir) name no line: a flag is no line of the
        # user's (the first frame outside symnb would be the import machinery's)
        with pinned(None):
            for name, value in flags.items():
                try:
                    config.set_flag(name, value)
                except (AttributeError, ValueError) as exc:
                    raise ValueError(f"{where}: {exc}") from None
    finally:
        object.__setattr__(config, "_importing", False)
    for name in flags:
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
