"""The exceptions and warnings users see.

Every error symnb raises on bad input is a :class:`SymnbError`, so a notebook can catch them
all at once, and each also derives from the builtin a Python user would expect (``ValueError``
for shapes, ``TypeError`` for dtypes and for a dim or axis of the wrong kind, ``IndexError``
for an index or axis out of range, both ``TypeError`` and ``ValueError`` for an argument a
function does not take).
"""

from __future__ import annotations

from symnb.core.source import user_location


class SymnbError(Exception):
    """Base of every error symnb raises about the user's program."""


#: (module, own name) -> a class ``shown_as`` another's name, for pickle to find it again
_SHOWN_AS: dict[tuple[str, str], type] = {}


def shown_as(name: str):
    """Class decorator: tracebacks and reports name the exception class ``name`` (the public
    class whose error it is: ``InputError`` for a wrong shape passed to a call), while a
    pickle names it by its own name, so a worker process's error reaches the caller as the
    same class (pickle finds a class by its ``__qualname__``, which now names another)."""

    def rename(cls: type) -> type:
        _SHOWN_AS[cls.__module__, cls.__qualname__] = cls
        cls._own_name = (cls.__module__, cls.__qualname__)
        cls.__name__ = cls.__qualname__ = name
        cls.__reduce__ = _reduce_shown
        return cls

    return rename


def _reduce_shown(self):
    """``__reduce__`` of a class ``shown_as`` another name (and of its subclasses)."""
    own = type(self).__dict__.get("_own_name")
    if own is None:  # a subclass under its own name: pickled by it
        return Exception.__reduce__(self)
    return _shown_again, (*own, self.args), self.__dict__ or None


def _shown_again(module: str, name: str, args: tuple):
    """An error of the class ``shown_as`` another name (importing symnb.errors imported
    symnb, so every such class is known)."""
    return _SHOWN_AS[module, name](*args)


class _Located(SymnbError):
    """An error that records the user's line where it is raised (``.location``) and whose
    message ends with it, also when raised outside an op's rule (an axis or a dtype checked
    by a public function, a value checked by a constructor)."""

    def __init__(self, *args):
        super().__init__(*args)
        self.location = user_location()

    def __str__(self):
        message = super().__str__()
        if self.location is None or "\n  at " in message:
            return message
        return f"{message}\n  at {self.location}"


class ShapeError(_Located, ValueError):
    """Shapes that provably cannot match, found when the node is built."""


@shown_as("ShapeError")
class CheckedShapeError(ShapeError):
    """A graph's own check failed when the function ran (a scan's step count, an eval
    point's shape): a ShapeError that every executor raises as it is (not wrapped naming
    the node, so every backend raises one type), at ``source`` or the caller's line."""

    def __init__(self, message: str, source=None):
        super().__init__(message)  # (one argument, as a pickled copy is made again)
        if source is not None:
            self.location = source


class ShapeTypeError(ShapeError, TypeError):
    """A dim, axis or size of the wrong kind (a float, a bool or a tuple where an int is
    meant): a ShapeError that ``except TypeError`` still catches, as the TypeError it was."""


class ShapeIndexError(ShapeError, IndexError):
    """An index or an axis out of range of a tensor whose shape says so (``x[5]``,
    ``x[0, 0, 0]`` or ``x.sum(axis=5)`` of a (3, 4) x), or an index NumPy refuses as an
    IndexError (two ellipses, a mask or index arrays that do not fit): a ShapeError that
    ``except IndexError`` catches, as it catches NumPy's IndexError and AxisError for the
    same mistake."""


class DTypeError(_Located, TypeError):
    """A dtype an op cannot take (a float index, a bool matmul, a lossy update)."""


class OpDefinitionError(_Located, NotImplementedError):
    """An ``Op`` subclass applied without a rule symnb needs to build its node (its
    ``infer_types``): the message names the op class and the method to define, at the line
    that applied it. A NotImplementedError, the error Python's abstract methods raise."""


class UpdateError(SymnbError, TypeError):
    """An update of a symbolic tensor symnb cannot build as written: ``x[0] = v`` (a variable
    is immutable) or ``x.at.set(v)`` with no index; ``x = x.at[0].set(v)`` builds the copy."""


class InputError(SymnbError, TypeError, ValueError):
    """A value passed to a compiled function does not fit the input it was given for; also
    an argument a symbolic variable cannot take (``int(x)``, NumPy's ``out=``)."""


@shown_as("InputError")
class InputShapeError(InputError, ShapeError):
    """A value passed to a compiled function has the wrong shape: ``except sn.ShapeError``
    catches it as well as ``except sn.InputError``. Tracebacks and ``symnb check`` reports
    call it an ``InputError``, the name the docs and programs use for call-time errors; it
    records the call's line (``.location``) without adding it to the message, which the
    traceback already shows."""

    __str__ = InputError.__str__


class SymbolicValueError(SymnbError, ValueError):
    """A Python int asked of a symbolic integer scalar (``range(n)``, ``np.zeros(n)``, a
    list index), or Python ints of an integer vector (``np.zeros(x.shape)``): its type fits,
    but it has no value until the function runs. A ValueError,
    not a TypeError, because NumPy replaces a TypeError raised by ``__index__`` with its own
    message, which names neither the variable nor the fix."""


class GraphError(SymnbError, ValueError):
    """A graph that cannot be compiled as asked (an input that is computed, a missing input)."""


class ArgumentError(_Located, TypeError, ValueError):
    """An argument a function does not take: an unknown option (``backend="cpu"``), a value
    outside its domain (``p=1.5``), a seed that is no integer, a number where a variable is
    meant. Both a TypeError and a ValueError, as the builtin errors these once were."""


class ReentrantCallError(SymnbError, RuntimeError):
    """A compiled function with updates called from inside one of its own calls, in the same
    thread (a print hook, a Python op or an input's ``__array__`` that calls it): its calls
    take turns, so the inner call would wait for the outer one forever."""


class CompileError(SymnbError, RuntimeError):
    """A compiler (the system C compiler, NVRTC, an OpenCL driver) rejected a kernel: the
    message has its output and the numbered source."""


class DeviceError(SymnbError, RuntimeError):
    """A device could not do what a step asked (no driver, out of memory, a kernel that does
    not build); the message names the device and the op."""


class DeviceOutOfMemory(DeviceError):
    """A device refused an allocation (its memory is full, or one buffer past its limit): a
    DeviceError of its own, so a program can catch it and try smaller batches. ``nbytes``:
    the bytes the step asked for; ``block``: what the pool asked the driver for (its block
    size, ``bucket_of``); ``node``: the op whose step asked, once the executor named it."""

    def __init__(self, device: str, nbytes: int, reason: str, hint: str, block: int = 0):
        super().__init__(device, nbytes, reason, hint, block)  # (a pickled copy is made again)
        self.device, self.nbytes, self.reason, self.hint = device, nbytes, reason, hint
        self.block = block or nbytes
        self.node, self.named = None, ""

    def asked(self, nbytes: int) -> DeviceOutOfMemory:
        """This refusal of a pool block, as one of the ``nbytes`` a step asked for."""
        return DeviceOutOfMemory(self.device, nbytes, self.reason, self.hint, self.block)

    def at(self, node, message: str) -> DeviceOutOfMemory:
        """This refusal with ``message`` naming the ``node`` that asked (and the user's line)."""
        named = DeviceOutOfMemory(*self.args)
        named.node, named.named = node, message
        return named

    def __str__(self):
        if self.named:
            return self.named
        block = f"its pool's block: {self.block:,}; " if self.block != self.nbytes else ""
        return (
            f"{self.device} could not allocate {self.nbytes:,} bytes ({block}{self.reason}); "
            + self.hint
        )


class CompileDirError(SymnbError, PermissionError):
    """The compile directory is not safe to load code from (its owner or mode, a link, an
    ancestor another user may rename), or cannot be written: the message names the
    directory and the fix. Defined here, not with the compile directory, so that programs
    catch it by a public name (``sn.errors.CompileDirError``)."""


def numbered(source: str) -> str:
    """``source`` with line numbers, as compile errors show it."""
    return "\n".join(f"{i:4d}  {line}" for i, line in enumerate(source.splitlines(), 1))


class ShapeWarning(UserWarning):
    """A legal shape pattern that is usually a bug; each pattern has its own subclass."""


class GraphWarning(UserWarning):
    """A graph compiled as asked, with a part that has no effect (a ``givens`` key that the
    outputs and updates do not read)."""


class InputWarning(UserWarning):
    """A value passed to a compiled function was taken with a change worth knowing (a torch
    tensor that requires grad is detached)."""
