"""Bad input to a public entry point is a SymnbError subclass (errors.py's promise), still the
builtin it used to be (so ``except TypeError``/``except ValueError`` keep working), naming the
variable and the bad value, at the user's line. Each case was a plain TypeError or ValueError,
most without the variable or the line (``symnb check`` then filed them as failures)."""

from __future__ import annotations

import copy
import importlib
import pickle
import pkgutil
import sys
import traceback

import numpy as np
import pytest

import symnb as sn
from symnb.backends.c.compiler import CompilerUnusable
from symnb.core.dims import DimMismatch
from symnb.core.source import SourceLoc
from symnb.errors import DeviceOutOfMemory

X = sn.tensor("x", shape=("n", 3))
LABELS = sn.tensor("labels", shape=(3,), dtype="int64")
STEP = {"initial": sn.vector("h"), "taps": ["a"]}
M = sn.tensor("m", shape=(3, 3))

CASES = [
    # (the call, its error class, the builtin it was, what the message says)
    (
        lambda: sn.tensor("z", shape=(-2,)),
        sn.ShapeError,
        ValueError,
        r"tensor 'z', shape \(-2,\): a dim cannot be negative, got -2",
    ),
    (
        lambda: sn.tensor("z", shape=(3.5,)),
        sn.ShapeTypeError,
        TypeError,
        r"tensor 'z', shape \(3\.5,\): a dim is an int.*not 3\.5",
    ),
    (lambda: sn.tensor("z", shape=(True,)), sn.ShapeTypeError, TypeError, "tensor 'z'.*not True"),
    (
        lambda: sn.tensor("z", shape=3.5),
        sn.ShapeTypeError,
        TypeError,
        "tensor 'z'.*a shape is a tuple of dims, not 3.5",
    ),
    (lambda: sn.tensor("z", shape=("n m",)), sn.ShapeError, ValueError, "tensor 'z'.*not 'n m'"),
    # a size past int64 (NumPy: "Maximum allowed dimension exceeded"): accepted, then an
    # OverflowError from the C runner or from NumPy's int64 array of the shape
    (
        lambda: sn.tensor("z", shape=(2**63,)),
        sn.ShapeError,
        ValueError,
        r"tensor 'z', shape \(9223372036854775808,\): a dim 9223372036854775808 does not fit in "
        r"int64 \(a size is at most 2\*\*63-1",
    ),
    (
        lambda: X.reshape(2**70),
        sn.ShapeError,
        ValueError,
        r"reshape of 'x' \(float64\(n, 3\)\): the size 1180591620717411303424 does not fit",
    ),
    (lambda: sn.zeros(2**70), sn.ShapeError, ValueError, "zeros: the size 1180.* does not fit"),
    (lambda: sn.full((2, 2**63), 1.0), sn.ShapeError, ValueError, "full: the size 9223.* does not"),
    (lambda: sn.alloc(1.0, 2**70), sn.ShapeError, ValueError, "alloc: the size 1180.* does not"),
    (
        lambda: sn.broadcast_to(X, (2**70, 4, 3)),
        sn.ShapeError,
        ValueError,
        "broadcast_to: the size 1180.* does not fit in int64",
    ),
    (
        lambda: sn.one_hot(LABELS, 2**70),
        sn.ShapeError,
        ValueError,
        r"one_hot of 'labels' \(int64\(3,\)\): depth 1180591620717411303424 does not fit in int64",
    ),
    (lambda: sn.eye(2**64), sn.ShapeError, ValueError, "eye: n=18446744073709551616 does not fit"),
    (
        lambda: sn.tensor("z", shape=(3,), dtype="float33"),
        sn.DTypeError,
        TypeError,
        "tensor 'z': 'float33' is not a dtype",
    ),
    # a name that is not a str (Theano: "name must be a string"): backend "c" failed compiling
    (
        lambda: sn.vector(7),
        sn.ArgumentError,
        TypeError,
        r"name must be a string \(or None\), not 7 \(int\); the variable is float64\(\?,\)",
    ),
    (lambda: sn.tensor(3.5, shape=(2,)), sn.ArgumentError, TypeError, r"not 3\.5 \(float\)"),
    (
        lambda: sn.shared(np.zeros(2), name=("W",)),
        sn.ArgumentError,
        TypeError,
        r"name must be a string \(or None\), not \('W',\) \(tuple\)",
    ),
    (
        lambda: sn.ifelse(LABELS[0] > 0, X, X, name=1),
        sn.ArgumentError,
        TypeError,
        r"name must be a string \(or None\), not 1 \(int\)",
    ),
    (
        lambda: sn.vector("v", shape=(3, 3)),
        sn.ShapeError,
        ValueError,
        r"vector 'v' has 1 dim; shape \(3, 3\) has 2",
    ),
    (
        lambda: sn.shared(2**70),
        sn.DTypeError,
        TypeError,
        "shared: the Python int 1180591620717411303424 does not fit in 64 bits",
    ),
    (
        lambda: sn.shared([[1, 2], [3]], name="W"),
        sn.ShapeError,
        ValueError,
        r"shared 'W': \[\[1, 2\], \[3\]\] is not a rectangular array",
    ),
    (  # set_value's list too (it was NumPy's bare ValueError)
        lambda: sn.shared(np.zeros((2, 2)), name="W", shape=(None, None)).set_value([[1], [2, 3]]),
        sn.ShapeError,
        ValueError,
        r"shared 'W' \(float64\(\?, \?\)\): \[\[1\], \[2, 3\]\] is not a rectangular array",
    ),
    (
        lambda: sn.shared(np.zeros(3), shape=(-1,), name="W"),
        sn.ShapeError,
        ValueError,
        "shared 'W', shape.*cannot be negative",
    ),
    (  # the Python number is named as written (it was "an unnamed variable (int64())")
        lambda: sn.tensor("x8", shape=(3,), dtype="int8") + 300,
        sn.DTypeError,
        TypeError,
        r"add: NumPy refuses these dtypes \('x8' \(int8\(3,\)\), the Python int 300\)",
    ),
    (
        lambda: sn.constant(300, dtype="int8"),
        sn.DTypeError,
        TypeError,
        "constant: Python integer 300 out of bounds for int8",
    ),
    (
        lambda: X + np.array([1, None], dtype=object),
        sn.DTypeError,
        TypeError,
        r"constant: NumPy holds array\(\[1, None\], dtype=object\) only as Python objects",
    ),
    (lambda: X + [[1, 2], [3]], sn.ShapeError, ValueError, "is not a rectangular array"),
    (
        lambda: sn.sum(X, axis=1.0),
        sn.ShapeTypeError,
        TypeError,
        r"sum: axis is an int, a tuple of ints or None, not 1\.0 \(for 'x' \(float64\(n, 3\)\)\)",
    ),
    (
        lambda: sn.argmax(X, axis=(0, 1)),
        sn.ShapeTypeError,
        TypeError,
        r"argmax: axis is one int or None, not \(0, 1\) \(for 'x'",
    ),
    (
        lambda: sn.softmax(X, axis=(0, 1)),
        sn.ShapeTypeError,
        TypeError,
        r"softmax: axis is one int, not \(0, 1\) \(for 'x'",
    ),
    (
        lambda: sn.trace(X, axis1=1.0),
        sn.ShapeTypeError,
        TypeError,
        "trace: axis1 is one int, not 1.0",
    ),
    (
        lambda: sn.concatenate([X, X], axis=True),
        sn.ShapeTypeError,
        TypeError,
        "concatenate: axis is one int, not True",
    ),
    (lambda: sn.split(X, 2.5), sn.ShapeTypeError, TypeError, "split of 'x'.*not 2.5"),
    # Python's own "'NoneType' object is not iterable", "'float' object is not iterable",
    # "'int' object is not iterable"; a bool axis was taken as 0 or 1; ord=1j made a complex
    # "norm" (NumPy refuses each)
    (
        lambda: X.reshape(None, ndim=1),
        sn.ShapeTypeError,
        TypeError,
        r"reshape of 'x' \(float64\(n, 3\)\): the target shape is a tuple of sizes.*not None",
    ),
    (
        lambda: sn.transpose(X, [[0, 1], [2]]),
        sn.ShapeTypeError,
        TypeError,
        r"transpose: an axis is an int, not \[0, 1\] \(for 'x'",
    ),
    (
        lambda: sn.transpose(X, (True, False)),
        sn.ShapeTypeError,
        TypeError,
        "transpose: an axis is an int, not True",
    ),
    (  # Python's "'float' object is not iterable", from the tuple made of the axes
        lambda: sn.transpose(X, 1.5),
        sn.ShapeTypeError,
        TypeError,
        r"transpose: axes is a tuple of ints \(a permutation\) or None, not 1\.5 \(for 'x'",
    ),
    # one axis given as several: Python's "too many values to unpack (expected 1)" (or "not
    # enough values" for ()), with no op, no variable and no line; NumPy's dispatch too
    (
        lambda: sn.repeat(X, 2, axis=(0, 1)),
        sn.ShapeTypeError,
        TypeError,
        r"repeat: axis is one int, not \(0, 1\) \(for 'x'",
    ),
    (
        lambda: sn.repeat(X, 2, axis=[0, 1]),
        sn.ShapeTypeError,
        TypeError,
        r"repeat: axis is one int, not \[0, 1\] \(for 'x'",
    ),
    (lambda: sn.repeat(X, 2, axis=()), sn.ShapeTypeError, TypeError, r"repeat: .* not \(\)"),
    (
        lambda: np.repeat(X, 2, axis=(0, 1)),
        sn.ShapeTypeError,
        TypeError,
        r"repeat: axis is one int, not \(0, 1\)",
    ),
    (
        lambda: sn.roll(X, 1, axis=((0, 1),)),
        sn.ShapeTypeError,
        TypeError,
        r"roll: axis is one int, not \(0, 1\) \(for 'x'",
    ),
    (
        lambda: sn.expand_dims(X, 1.0),
        sn.ShapeTypeError,
        TypeError,
        r"expand_dims: an axis is an int, not 1\.0 \(for 'x'",
    ),
    (
        lambda: sn.concatenate(5),
        sn.ArgumentError,
        TypeError,
        r"concatenate: the arrays to join are a list or tuple of arrays, not 5 \(int\)",
    ),
    (lambda: sn.stack(X), sn.ArgumentError, TypeError, "stack: the arrays to join .* not 'x'"),
    (
        lambda: sn.norm(sn.vector("v"), ord=1j),
        sn.ArgumentError,
        ValueError,
        r"norm: ord=1j is not a vector norm \('v'.*a real p",
    ),
    (
        lambda: sn.flatten(X, ndim=True),
        sn.ShapeTypeError,
        TypeError,
        "flatten: ndim must be an int, not True",
    ),
    (
        lambda: sn.one_hot(LABELS, -3),
        sn.ShapeError,
        ValueError,
        r"one_hot of 'labels' \(int64\(3,\)\): depth must be >= 0, not -3",
    ),
    (
        lambda: sn.one_hot(LABELS, True),
        sn.ShapeTypeError,
        TypeError,
        "one_hot of 'labels'.*depth is an int or an integer scalar variable, not True",
    ),
    (lambda: sn.eye(-3), sn.ShapeError, ValueError, "eye: n=-3 is negative"),
    (
        lambda: sn.zeros(2.5),
        sn.ShapeTypeError,
        TypeError,
        "a shape is an int, a tuple or an int vector, not 2.5",
    ),
    (lambda: sn.cast(X, "foo"), sn.DTypeError, TypeError, "cast of 'x' .*: 'foo' is not a dtype"),
    (
        lambda: sn.norm(sn.vector("v"), ord="fro"),
        sn.ArgumentError,
        ValueError,
        r"norm: ord='fro' is not a vector norm \('v'",
    ),
    (
        lambda: sn.function([X], sn.sum(X), backend="cpu"),
        sn.ArgumentError,
        ValueError,
        "unknown backend 'cpu'",
    ),
    (
        lambda: sn.function([X], sn.sum(X), optimize="fastest"),
        sn.ArgumentError,
        ValueError,
        "optimize: unknown mode 'fastest'",
    ),
    (
        lambda: sn.function([X], sn.sum(X), mode="debugg"),
        sn.ArgumentError,
        ValueError,
        "unknown mode 'debugg'",
    ),
    (
        lambda: sn.grad(sn.sum(X), [X, 3]),
        sn.ArgumentError,
        TypeError,
        "sn.grad: wrt must be symbolic variables, not int 3",
    ),
    (
        lambda: sn.RandomStream(0).binomial((3,), n=1, p=1.5),
        sn.ArgumentError,
        ValueError,
        r"binomial: p must lie in \[0, 1\], got 1.5",
    ),
    (
        lambda: sn.RandomStream(seed="abc"),
        sn.ArgumentError,
        ValueError,
        "a seed is a non-negative int .*not 'abc'",
    ),
    (
        lambda: sn.scan(lambda h: h, outputs_info=STEP, n_steps=2),
        sn.ArgumentError,
        ValueError,
        r"taps of outputs_info\[0\] are a non-empty list of ints, not \['a'\]",
    ),
    (
        lambda: sn.scan(3, n_steps=2),
        sn.ArgumentError,
        TypeError,
        "sn.scan: fn is the step function, not 3",
    ),
    (
        lambda: sn.dim("n") / 2,
        sn.ShapeTypeError,
        TypeError,
        "a dim has no true division: n / 2 .* write n // 2",
    ),
    (
        lambda: sn.tensor("z", shape=("n//0",)),
        sn.ShapeError,
        ValueError,
        "a dim cannot be divided by 0",
    ),
    (
        lambda: sn.tensor("z", shape=("-n",)),
        sn.ShapeError,
        ValueError,
        "a dim cannot be negative, got -n",
    ),
    (
        lambda: sn.tensor("z", shape=("n/2",)),
        sn.ShapeError,
        ValueError,
        "a size is an integer: use // for division",
    ),
    # an op given the wrong number of operands: Python's message about infer_types leaked
    # ("Matmul.infer_types() takes 3 positional arguments but 4 were given")
    (lambda: sn.matmul(M, M, M), sn.ArgumentError, TypeError, "^matmul takes 2 inputs, got 3\n"),
    (lambda: sn.matmul(M), sn.ArgumentError, TypeError, "^matmul takes 2 inputs, got 1\n"),
    (lambda: sn.inv(), sn.ArgumentError, TypeError, "^inv takes 1 input, got 0\n"),
    (lambda: sn.inv(M, M), sn.ArgumentError, TypeError, "^inv takes 1 input, got 2\n"),
    (lambda: sn.solve(M), sn.ArgumentError, TypeError, "^solve takes 2 inputs, got 1\n"),
    (lambda: sn.det(M, M), sn.ArgumentError, TypeError, "^det takes 1 input, got 2\n"),
    (lambda: sn.cholesky(M, M), sn.ArgumentError, TypeError, "^cholesky takes 1 input, got 2"),
    (
        lambda: sn.sigmoid_binary_crossentropy(M),
        sn.ArgumentError,
        TypeError,
        "^sigmoid_binary_crossentropy takes 2 inputs, got 1\n",
    ),
    (lambda: sn.add(M, M, M), sn.ArgumentError, TypeError, "^add takes 2 inputs, got 3\n"),
    # a count, a shift or an axis of the wrong kind, a matrix norm's ord out of its domain:
    # plain TypeErrors and ValueErrors (with the line), filed by `symnb check` as failures
    (
        lambda: sn.tile(X, 1.5),
        sn.ShapeTypeError,
        TypeError,
        r"^tile: reps must be an int, integers or an integer variable \(scalar or vector\), "
        r"not 1\.5\n",
    ),
    (lambda: sn.repeat(X, 1.5), sn.ShapeTypeError, TypeError, "^repeat: repeats must be an int"),
    (lambda: sn.repeat(X, True), sn.ShapeTypeError, TypeError, "^repeat: repeats .*, not True"),
    (lambda: sn.roll(X, None), sn.ShapeTypeError, TypeError, "^roll: shift must be .*, not None"),
    (lambda: sn.tile(X, (2, 0.5)), sn.ShapeTypeError, TypeError, "^tile: an entry of reps is an"),
    (lambda: sn.swapaxes(X, 0, 1.0), sn.ShapeTypeError, TypeError, "^swapaxes: an axis is an int"),
    (
        lambda: sn.norm(M, ord="bogus"),
        sn.ArgumentError,
        ValueError,
        r"^norm: matrix ord='bogus' is not a matrix norm \(None, 'fro', 'nuc', ±1, ±2, ±inf\)",
    ),
    (lambda: sn.norm(M, ord=3), sn.ArgumentError, ValueError, "^norm: matrix ord=3 is not a"),
    (
        lambda: sn.set_subtensor(X, 1.0),
        sn.ArgumentError,
        TypeError,
        r"^set_subtensor\(x\[index\], v\) takes an indexed variable first, got 'x'",
    ),
]


@pytest.mark.parametrize("call, error, builtin, message", CASES)
def test_bad_input_is_a_symnb_error_at_the_users_line(call, error, builtin, message):
    with pytest.raises(error, match=message) as caught:
        call()
    assert isinstance(caught.value, sn.SymnbError) and isinstance(caught.value, builtin)
    where = f"test_bad_input_errors.py, line {call.__code__.co_firstlineno}"
    assert where in str(caught.value), str(caught.value)


def test_an_empty_list_index_selects_nothing_as_in_numpy():
    """``v[[]]`` was "an index must have an integer dtype, not float64(0,)"."""
    m = sn.tensor("m", shape=(2, 3))
    value = np.arange(6.0).reshape(2, 3)
    for index in [[], [[]], (slice(None), [])]:
        got = sn.function([m], m[index], backend="py")(value)
        assert got.shape == value[index].shape and m[index].type.shape == value[index].shape


def test_every_op_checks_its_number_of_inputs_from_its_rule():
    """One check for every op (``core/op.py``): ``nin``, or the parameters of infer_types."""
    from symnb.core.op import Op

    class _Optional(Op):
        def infer_types(self, x, y=None):
            return [x.type]

    class _Many(Op):
        def infer_types(self, x, y, *rest):
            return [x.type]

    x = sn.vector("x")
    assert _Optional()(x).type == x.type and _Optional()(x, x).type == x.type
    with pytest.raises(sn.ArgumentError, match=r"^optional takes 1 to 2 inputs, got 3\n  at "):
        _Optional()(x, x, x)
    assert _Many()(x, x, x, x).type == x.type
    with pytest.raises(sn.ArgumentError, match=r"^many takes at least 2 inputs, got 1\n  at "):
        _Many().make_node(x)


def test_an_op_class_without_infer_types_is_named_at_the_users_line():
    """An Op subclass written from Theano's tutorial (make_node/perform, no infer_types) was a
    bare, empty NotImplementedError from core/op.py; it names the class, its op name and the
    method to define, at the line that applied it (still a NotImplementedError)."""
    from symnb.core.op import Op
    from symnb.errors import OpDefinitionError

    class DoubleOp(Op):
        def make_node(self, x):
            raise AssertionError("not called")

        def perform(self, x):
            return x * 2

    x = sn.vector("x")
    for apply in (lambda: DoubleOp()(x), lambda: DoubleOp()(x, x)):
        with pytest.raises(OpDefinitionError) as caught:
            apply()
        message = str(caught.value)
        assert isinstance(caught.value, (NotImplementedError, sn.SymnbError))
        assert message.startswith(
            "DoubleOp (op 'double_op') defines no infer_types: an Op subclass defines "
            "infer_types(self, *inputs), returning a list of its outputs' types"
        ), message
        assert "(a make_node of its own is not called)" in message
        assert "test_bad_input_errors.py" in message.splitlines()[-1]


def test_an_op_class_without_perform_is_named_when_it_runs():
    """Its perform's default names the class and the method (it was an empty message)."""
    from symnb.backends.execute import RuntimeFailure
    from symnb.core.op import Op

    class Halve(Op):
        def infer_types(self, x):
            return [x.type]

    x = sn.vector("x")
    with pytest.raises(RuntimeFailure, match=r"NotImplementedError: Halve defines no perform"):
        sn.function([x], Halve()(x), backend="py")(np.ones(2))


def _exception_classes() -> list[type]:
    """Every exception and warning class defined in symnb (each module imported)."""
    found: dict[int, type] = {}
    for info in pkgutil.walk_packages(sn.__path__, "symnb."):
        if info.name.endswith("__main__"):  # (runs the command line)
            continue
        for value in vars(importlib.import_module(info.name)).values():
            if (
                isinstance(value, type)
                and issubclass(value, BaseException)
                and value.__module__.startswith("symnb.")
            ):
                found[id(value)] = value
    return sorted(found.values(), key=lambda cls: (cls.__module__, cls.__name__, id(cls)))


#: the arguments of the classes made of more than a message
ARGUMENTS = {
    DeviceOutOfMemory: ("gpu0", 4096, "its memory is full", "try smaller batches", 8192),
    CompilerUnusable: ("cc cannot build a library: ...", "cc: no stdio.h"),
    DimMismatch: (3, "n"),
}


def test_every_symnb_exception_pickles_to_the_same_class_and_message():
    """A worker process's error reaches the caller (``ProcessPoolExecutor``, ``Pool``, Dask
    pickle it): the classes tracebacks show under a public name (a wrong-shaped argument's
    InputError, a scan's ShapeError and ShapeIndexError) were a PicklingError ("it's not
    the same object as symnb.errors.InputError"), and those made of more than a message
    (CompilerUnusable, DimMismatch) a TypeError when loaded."""
    classes = _exception_classes()
    shown = [
        cls
        for cls in classes
        if getattr(sys.modules[cls.__module__], cls.__name__, None) is not cls
    ]
    assert {cls.__name__ for cls in shown} == {"InputError", "ShapeError", "ShapeIndexError"}
    assert len(shown) == 4 and len(classes) > 50
    for cls in classes:
        error = cls(*ARGUMENTS.get(cls, ("what went wrong",)))
        error.location = SourceLoc("lesson.py", 12)
        back = pickle.loads(pickle.dumps(error))
        assert type(back) is cls, cls
        assert (str(back), back.args, vars(back)) == (str(error), error.args, vars(error)), cls
        assert type(copy.deepcopy(error)) is cls


def test_a_calls_and_a_scans_errors_pickle_as_the_errors_they_are():
    """The errors themselves: an InputError naming the input (``except sn.InputError`` and
    ``except sn.ShapeError`` catch the loaded one), a scan's n_steps < 0 and ``hs[-1]`` of
    no steps; tracebacks still name the public classes."""
    x, n = sn.vector("x"), sn.scalar("n", dtype="int64")
    hs, _ = sn.scan(lambda h: h * 2, outputs_info=[x], n_steps=n)
    f = sn.function([x], x * 2, backend="py")
    last = sn.function([x, n], hs[-1], backend="py")
    calls = [
        (lambda: f(np.ones((2, 2))), sn.InputError, "symnb.errors.InputError: input 0 'x'"),
        (lambda: last(np.ones(2), -1), sn.ShapeError, "symnb.control.loop.ShapeError: scan: "),
        (lambda: last(np.ones(2), 0), sn.ShapeIndexError, "symnb.control.loop.ShapeIndexError"),
    ]
    for call, public, shown in calls:
        with pytest.raises(public) as caught:
            call()
        assert traceback.format_exception_only(caught.value)[0].startswith(shown)
        back = pickle.loads(pickle.dumps(caught.value))
        assert type(back) is type(caught.value) and str(back) == str(caught.value)
        assert back.location == caught.value.location is not None
        with pytest.raises(public):
            raise back
    assert isinstance(back, IndexError) and isinstance(back, sn.ShapeError)
