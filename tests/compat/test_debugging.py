"""Theano's debugging and testing APIs: verify_grad, unittest_tools, DebugMode, MonitorMode,
f.maker, pkl_utils, change_flags, theano.gof, module names."""

import io
import pickle
import threading
import zipfile

import numpy as np
import pytest

import symnb as sn
import symnb.compat.theano as theano
import symnb.compat.theano.tensor as T
from symnb.compat.theano.compile.debugmode import DebugMode
from symnb.compat.theano.misc import pkl_utils
from symnb.compat.theano.tests import unittest_tools as utt
from symnb.core.op import Op
from symnb.core.types import TensorType


def test_verify_grad_theano_signature_and_unittest_tools():
    rng = np.random.RandomState(3)
    pt = [rng.rand(3, 4), rng.rand(4)]
    theano.gradient.verify_grad(lambda a, b: T.tanh(T.dot(a, b)), pt, n_tests=3, rng=rng)
    T.verify_grad(lambda a: T.nnet.sigmoid(a).sum(), [rng.rand(5)], rng=rng, abs_tol=1e-6)
    utt.seed_rng()
    utt.verify_grad(lambda a: a**2, [np.array([1.0, 2.0])])
    assert utt.fetch_seed() == 666
    with pytest.raises(theano.gradient.verify_grad.E_grad):
        wrong = theano.gradient.grad_scale  # a gradient that lies: twice the true one
        T.verify_grad(lambda a: wrong(a, 2.0) ** 2, [np.array([1.0, 2.0])], rng=rng)


class _Rand:
    """An rng as Theano read one: only ``rand(*shape)``."""

    def __init__(self):
        self.shapes = []

    def rand(self, *shape):
        self.shapes.append(shape)
        return np.full(shape, 0.25)


def test_verify_grad_takes_any_rng_with_rand_as_theano_did():
    """Theano's docstring example passes ``rng=numpy.random``: an ArgumentError before."""
    x = np.asarray([[2, 3, 4], [-1, 3.3, 9.9]])
    theano.gradient.verify_grad(theano.tensor.tanh, (x,), rng=np.random)
    T.verify_grad(T.nnet.sigmoid, [np.asarray([0.5, -1.0, 2.0])], rng=np.random)
    rng = _Rand()
    T.verify_grad(lambda a: a**2, [np.array([1.0, 2.0])], n_tests=3, rng=rng)
    assert rng.shapes == [(2,)] * 3
    T.verify_grad(lambda a: a**2, [np.array([1.0, 2.0])], rng=np.random.default_rng(0))
    with pytest.raises(sn.ArgumentError, match=r"rng is a numpy RandomState.*not 'r'"):
        T.verify_grad(lambda a: a**2, [np.array([1.0, 2.0])], rng="r")


def test_verify_grad_gives_fun_theano_variables_with_theanos_methods():
    """Theano's verify_grad hands ``fun`` ``TensorType(dtype, broadcastable)()`` variables,
    and its tests call their methods: ``x.exp()``, ``x.norm(2)``, ``x.sum(acc_dtype=)``;
    ``x.round()`` there is Theano's, half away from zero."""
    pt = [np.random.RandomState(0).rand(3, 4) + 0.5, np.ones((1, 4))]
    seen = []

    def fun(a, b):
        seen.append((a.broadcastable, b.broadcastable, a.name))
        return (a.exp() + a.sum(axis=0, acc_dtype="float64") * b).norm(2) + a.nonzero_values()
        # (a.nonzero_values(): every element, the values being > 0.5)

    utt.verify_grad(fun, pt)
    T.verify_grad(fun, pt, rng=np.random.RandomState(1))
    theano.gradient.verify_grad(fun, pt, n_tests=1, rng=3)
    assert seen[0] == ((False, False), (True, False), "x0")
    halves = [np.array([0.5, 2.5, -1.5, 0.2])]
    rounded = []
    utt.verify_grad(lambda a: rounded.append((a, a.round())) or a * 2, halves)
    got = theano.function([rounded[0][0]], rounded[0][1])(halves[0])
    np.testing.assert_array_equal(got, [1.0, 3.0, -2.0, 0.0])  # NumPy's: [0, 2, -2, 0]


def test_verify_grad_of_an_integer_output_passes_with_a_zero_gradient():
    """Theano's test_basic.py T_max_and_argmax.test_grad verifies the argmax output: its
    float random projection made the cost float and the (zero) gradients agree."""
    data = np.array([[0.1, 0.9, 0.4], [0.7, 0.2, 0.3]])
    utt.verify_grad(lambda v: T.max_and_argmax(v, axis=1)[1], [data], eps=1e-7)
    utt.verify_grad(lambda v: T.argmax(v, axis=0), [data])
    utt.verify_grad(lambda v: v > 0.5, [data])  # a boolean output too
    utt.verify_grad(lambda v: T.max_and_argmax(v, axis=1)[0], [data])
    with pytest.raises(theano.gradient.verify_grad.E_grad):  # the float part still checked
        utt.verify_grad(lambda v: T.argmax(v, axis=0) + theano.gradient.grad_scale(v, 2.0), [data])


def test_verify_grad_uses_theanos_tolerances_and_rule():
    """Theano's verify_grad fails an element only where both its absolute and its relative
    error exceed abs_tol and rel_tol (1e-4 each for float64): it was sn.check_grad's
    ``atol + rtol * |numeric|`` (1e-7, 1e-5), a spurious GradientError on this correct
    gradient for seeds 1, 2 and 4 (a large cost, a small gradient element)."""
    w = np.array([1e4, 1e-2])
    for seed in range(5):
        theano.gradient.verify_grad(
            lambda x: x**2 * w, [np.array([1.3, 0.7])], rng=np.random.RandomState(seed)
        )
    wrong = theano.gradient.grad_scale  # a gradient 1.001 times the true one
    with pytest.raises(theano.gradient.verify_grad.E_grad) as info:
        T.verify_grad(lambda a: wrong(a, 1.001) ** 2, [np.array([1.0, 2.0])], rng=0)
    message = str(info.value)
    assert message.startswith("verify_grad: gradient of input 0 'x0' (float64(?,))"), message
    assert "> abs_tol=0.0001" in message and "> rel_tol=0.0001" in message, message
    T.verify_grad(lambda a: wrong(a, 1.001) ** 2, [np.array([1.0, 2.0])], rng=0, rel_tol=1e-2)
    with pytest.raises(NotImplementedError, match="verify_grad: fun returned a list of 2"):
        T.verify_grad(lambda a: [a * 2, a * 3], [np.array([1.0, 2.0])], rng=0)


def test_verify_grad_refuses_integer_inputs_as_theano():
    """An integer array in pt was held fixed and the check passed; Theano raised TypeError."""
    with pytest.raises(TypeError) as info:
        theano.gradient.verify_grad(
            lambda x, n: x * n, [np.array([0.5, 1.5]), np.array([1, 2])], rng=0
        )
    message = str(info.value)
    assert isinstance(info.value, sn.DTypeError), message
    assert message.startswith(
        'verify_grad can work only with floating point inputs, but input 1 has dtype "int64"'
    ), message
    assert "test_debugging.py" in message, message


def test_verify_grad_refuses_a_fun_or_pt_of_the_wrong_kind_naming_it():
    """fun=3 failed calling it ("'int' object is not callable"), and a lone array for pt was
    a plain TypeError without the argument it got; each is an sn.ArgumentError (a
    TypeError, as Theano's) naming the argument, at the user's line."""
    for fun, pt, refused in [
        (
            3,
            [np.ones(3)],
            "verify_grad: fun is the function to check (it takes one symbolic "
            "variable per array of pt and returns a variable), not 3 (int)",
        ),
        (
            T.sum,
            np.ones(3),
            "verify_grad: pt must be a list or tuple of arrays, one per "
            "argument of fun, not an array float64(3,); for one input write [array]",
        ),
    ]:
        with pytest.raises(sn.ArgumentError) as info:
            T.verify_grad(fun, pt, rng=0)
        assert str(info.value).startswith(refused), str(info.value)
        assert "test_debugging.py" in str(info.value)


def test_debug_and_monitor_modes_and_maker():
    x = T.dvector("x")
    for mode in (DebugMode(), theano.compile.DebugMode(), "DebugMode"):
        f = theano.function([x], T.exp(x) * 2, mode=mode)
        np.testing.assert_allclose(f([0.0]), [2.0])
        assert f.maker.mode.mode == "debug" and f.built["mode"] == "debug"
    with pytest.raises(NotImplementedError, match="MonitorMode: symnb runs no Python"):
        theano.compile.MonitorMode(post_func=print)
    f = theano.function([x], T.exp(x) * 2)
    nodes = f.maker.fgraph.apply_nodes
    assert isinstance(nodes, set) and nodes == set(f.maker.fgraph.toposort())
    assert x in f.maker.fgraph.variables and f.maker.mode is theano.compile.MODES["Mode"]
    assert all(isinstance(n.op, theano.gof.Op) for n in nodes)


def test_debugmode_prints_a_print_once_per_call(capsys):
    """Theano's DebugMode ran an op with no C code (``Print``) by its perform alone, once: the
    message appeared once per call (symnb printed it twice)."""
    x = T.dvector("x")
    f = theano.function([x], theano.printing.Print("P")(x * 2) + 1, mode="DebugMode")
    np.testing.assert_allclose(f([0.0, 1.0]), [1.0, 3.0])
    assert capsys.readouterr().out == "P __str__ = [0. 2.]\n"


def test_strip_pickler_takes_theanos_arguments_and_leaves_tags_out():
    """``StripPickler(file, protocol=0, extra_tag_to_remove=None)`` was ``pickle.Pickler``:
    Theano's keyword was a TypeError, and no tag was left out."""
    x = T.dvector("x")
    x.tag.test_value, x.tag.note, x.tag.kept = np.ones(3), "drop me", 7
    W = theano.shared(np.ones(3), name="W")
    for protocol, extra in ((-1, ["note"]), (0, None)):
        buf = io.BytesIO()
        pkl_utils.StripPickler(buf, protocol=protocol, extra_tag_to_remove=extra).dump(
            {"inputs": [x], "outputs": x * W}
        )
        buf.seek(0)
        loaded = pickle.load(buf)
        x2 = loaded["inputs"][0]
        want = {"kept": 7} if extra else {"kept": 7, "note": "drop me"}
        assert dict(x2.tag) == want
        f = theano.function(loaded["inputs"], loaded["outputs"])
        np.testing.assert_array_equal(f(np.full(3, 2.0)), [2.0, 2.0, 2.0])
    assert "test_value" in x.tag and x.tag.note == "drop me"  # the graph itself keeps them


def test_pkl_utils_load_of_a_theano_zip_says_what_it_is():
    """Theano's ``pkl_utils.dump`` wrote a zip archive; loading one gave pickle's "A load
    persistent id instruction was encountered" message."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:  # the layout of Theano 1.0's pkl_utils.dump
        z.writestr("pkl", pickle.dumps({"W": "persistent id"}, protocol=2))
        z.writestr("b2fa0d8c6d2e4b1e9c1a2c3d4e5f6a7b", b"\x93NUMPY\x01\x00")
    for f in (io.BytesIO(buf.getvalue()), io.BufferedReader(_Unseekable(buf.getvalue()))):
        with pytest.raises(sn.InputError, match="is a zip archive, as Theano's pkl_utils.dump"):
            pkl_utils.load(f)
    f = io.BufferedReader(_Unseekable(pickle.dumps([1, 2])))
    assert pkl_utils.load(f) == [1, 2]  # a pickle read from a stream that cannot go back


class _Unseekable(io.RawIOBase):
    def __init__(self, data: bytes):
        self._data = io.BytesIO(data)

    def readable(self):
        return True

    def readinto(self, b):
        chunk = self._data.read(len(b))
        b[: len(chunk)] = chunk
        return len(chunk)


def test_pickle_version_flags_and_module_names(tmp_path):
    W = theano.shared(np.arange(3.0), name="W")
    buf = io.BytesIO()
    pkl_utils.dump(W, buf)
    buf.seek(0)
    np.testing.assert_allclose(pkl_utils.load(buf).get_value(), np.arange(3.0))
    assert theano.__version__ >= "0.9" and theano.Variable is sn.Variable
    assert isinstance(W, theano.compile.sharedvalue.SharedVariable)
    assert isinstance(W, T.sharedvar.TensorSharedVariable)
    assert isinstance(W, theano.compile.SharedVariable)
    with theano.change_flags(floatX="float32", **{"warn.round": True}):
        assert T.matrix().dtype == "float32" and theano.config.warn.round is True
    assert theano.config.floatX == "float64" and theano.config.warn.round is False

    @theano.configparser.change_flags(compute_test_value="warn")
    def inside():
        return theano.config.compute_test_value

    assert inside() == "warn" and theano.config.compute_test_value == "off"
    with pytest.raises(AttributeError, match="no flag 'flotX'"):
        theano.change_flags(flotX="float32")
    assert theano.gof.graph.inputs([W * 2])[0] is W
    with pytest.raises(NotImplementedError, match=r"class Double\(theano.Op\)"):

        class Double(theano.gof.Op):
            pass

    with pytest.raises(AttributeError, match="Theano's graph rewrites are not in symnb"):
        T.opt.local_useless_elemwise  # noqa: B018


def test_change_flags_puts_back_the_values_when_reentered_or_failing():
    seen = []

    @theano.change_flags(floatX="float32")
    def recurse(n):
        seen.append(theano.config.floatX)
        if n:
            recurse(n - 1)

    recurse(2)
    assert seen == ["float32"] * 3 and theano.config.floatX == "float64"
    same = theano.change_flags(floatX="float32", **{"warn.round": True})
    with same:
        with same:  # the same object nested
            assert theano.config.floatX == "float32"
        assert theano.config.floatX == "float32" and theano.config.warn.round is True
    assert theano.config.floatX == "float64" and theano.config.warn.round is False
    with pytest.raises(ValueError, match="bogus"):  # set after floatX: floatX is put back
        with theano.change_flags(floatX="float32", device="bogus"):
            pass
    assert theano.config.floatX == "float64" and sn.config.floatX == "float64"


def test_change_flags_blocks_of_two_threads_that_exit_out_of_order():
    """Thread A enters, thread B enters, A exits, B exits: each block put back what it had
    found, so B "put back" A's float32 for good (and B saw float64 after A exited)."""
    a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()
    seen = {}

    def a():
        with theano.change_flags(floatX="float32", **{"warn.round": True}):
            a_in.set()
            b_in.wait()
        seen["after A"] = (theano.config.floatX, theano.config.warn.round)
        a_out.set()

    def b():
        a_in.wait()
        with theano.change_flags(floatX="float16"):
            b_in.set()
            a_out.wait()
            seen["in B"] = theano.config.floatX

    threads = [threading.Thread(target=a), threading.Thread(target=b)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert seen == {"after A": ("float16", False), "in B": "float16"}
    assert theano.config.floatX == "float64" and sn.config.floatX == "float64"
    assert T.matrix("x").dtype == "float64" and theano.config.warn.round is False


def test_gof_apply_takes_theanos_output_variables():
    """``theano.gof.Apply(op, inputs, [x.type()])`` (Theano's signature, the tutorial's
    make_node) makes the given variables the node's outputs; it built a node whose output's
    "type" was a Variable, failing far away ("equal: cannot broadcast ... float64(0,)")."""
    x = T.dmatrix("x")
    op = (x * 2).owner.op
    out = x.type("twice")
    node = theano.gof.Apply(op, [x, T.constant(2.0)], [out])
    assert node.outputs == [out] and out.owner is node and out.index == 0
    assert out.type == x.type and out.name == "twice"
    assert theano.gof.graph.Apply is theano.gof.Apply
    assert isinstance(node, theano.gof.Apply) and isinstance((x + 1).owner, theano.gof.Apply)
    f = theano.function([x], out + 1)
    np.testing.assert_allclose(f(np.ones((2, 2))), np.full((2, 2), 3.0))
    typed = theano.gof.Apply(op, [x, T.constant(2.0)], [x.type])  # a type, as symnb's Apply
    np.testing.assert_allclose(theano.function([x], typed.outputs[0])(np.ones((1, 2))), [[2, 2]])
    for outputs, said in [
        ([x * 3], r"got 'x' \* 3 \(float64\(\?, \?\)\), already the output of mul|got an unnamed"),
        ([T.constant(1.0)], "got"),
        ([2], r"got 2 \(int\)"),
    ]:
        with pytest.raises(
            sn.ArgumentError,
            match=r"^theano.gof.Apply\(op, inputs, outputs\): "
            r"its outputs are new Variables \(x.type\(\), with no owner yet\) or "
            r"types, " + f"({said})",
        ) as caught:
            theano.gof.Apply(op, [x, T.constant(2.0)], outputs)
        assert isinstance(caught.value, TypeError)
        assert "test_debugging.py" in str(caught.value).splitlines()[-1]
    with pytest.raises(sn.ArgumentError, match=r"its inputs are Variables, got 2.0 \(float\)"):
        theano.gof.Apply(op, [x, 2.0], [x.type()])


def test_theano_op_apply_type_at_the_top_level():
    """Theano 1.0 exported Op, Apply, Type and Constant from gof at the top level (the
    Extending-Theano tutorial's ``class DoubleOp(theano.Op)``): each was a bare
    AttributeError. ``theano.Op`` refuses subclassing as ``theano.gof.Op`` does, naming
    symnb's way; ``theano.Type`` is true of symnb's types and refuses subclassing too."""
    assert theano.Op is theano.gof.Op and theano.Apply is theano.gof.Apply
    assert theano.Type is theano.gof.Type and theano.Constant is theano.gof.Constant
    with pytest.raises(
        NotImplementedError, match=r"class DoubleOp\(theano.Op\): .*write a symnb Op"
    ):

        class DoubleOp(theano.Op):
            __props__ = ()

    x = T.dmatrix("x")
    assert isinstance(x.type, theano.Type) and isinstance(x.type, theano.gof.Type)
    assert not isinstance(x, theano.Type) and isinstance(T.constant(1.0), theano.Constant)
    with pytest.raises(NotImplementedError, match=r"class Mine\(theano.Type\): .*T.TensorType"):

        class Mine(theano.Type):
            pass

    node = theano.Apply((x * 2).owner.op, [x, T.constant(2.0)], [x.type()])
    assert isinstance(node, theano.Apply)


class ScaleBy(Op):
    """x * k, an Extending-Theano op whose grad uses Theano's markers: undefined for k, no
    gradient for mask (module level: the suite's kernels are pickled with the ops they read)."""

    def infer_types(self, x, k, mask):
        return [TensorType(x.type.dtype, x.type.shape)]

    def perform(self, x, k, mask):
        return x * k

    def grad(self, inputs, outputs, output_grads):
        x, k, mask = inputs
        (g,) = output_grads
        gradient = theano.gradient
        return [
            g * k,
            gradient.grad_undefined(self, 1, k, "k is a step size"),
            gradient.DisconnectedType()(),
        ]


def test_extending_theano_names_exist_or_say_what_to_write():
    """The names an Extending-Theano op's code reads were bare AttributeErrors: the grad
    markers work in a symnb Op's grad (an undefined gradient is a NotDifferentiableError
    naming the op where one must flow; a disconnected one is None: no gradient), PureOp is
    gof.Op, and local_optimizer/COp say what to write instead (also when imported)."""
    gradient = theano.gradient
    x, k, mask = T.dvector("x"), T.dscalar("k"), T.dvector("mask")
    y = ScaleBy()(x, k, mask).sum()
    f = theano.function([x, k, mask], [T.grad(y, x), T.grad(y, mask)])
    got = f(np.ones(3), 2.0, np.ones(3))
    np.testing.assert_allclose(got[0], [2.0, 2.0, 2.0])
    np.testing.assert_allclose(got[1], [0.0, 0.0, 0.0])  # disconnected: no gradient flows
    with pytest.raises(
        sn.NotDifferentiableError, match=r"with respect to input 1 is undefined: k is a step size"
    ):
        T.grad(y, k)
    assert gradient.DisconnectedType()() is None
    marker = gradient.grad_not_implemented(None, 0, x)
    assert "input 0 is not implemented" in str(marker)
    assert theano.gof.PureOp is theano.gof.Op
    for name, said in [
        ("local_optimizer", r"@sn\.opt\.rule\(phase"),
        ("COp", r"a symnb Op \(infer_types, perform, grad\)"),
    ]:
        with pytest.raises(AttributeError, match=rf"theano\.gof\.{name} is not in .*{said}"):
            getattr(theano.gof, name)
        with pytest.raises(ImportError, match=rf"theano\.gof\.{name} is not in .*{said}"):
            exec(f"from symnb.compat.theano.gof import {name}", {})
        assert not hasattr(theano.gof, name)


def test_graph_inputs_and_ancestors_stop_at_blockers_as_in_theano():
    """``blockers=`` was accepted and ignored: the walk went through h to x and W."""
    x = T.vector("x")
    w = theano.shared(np.ones((2, 2)), name="W")
    h = T.dot(x, w)
    y = T.tanh(h)
    graph = theano.gof.graph
    found = graph.ancestors([y], blockers=[h])
    assert len(found) == 2 and found[0] is y and found[1] is h
    assert graph.inputs([y], blockers=[h]) == []
    assert [v.name for v in graph.inputs([y], blockers=[x])] == ["x", "W"]
    assert [v.name for v in graph.inputs([y])] == ["x", "W"]
    assert any(v is x for v in graph.ancestors([y]))


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda x: theano.clone(5), r"theano.clone: output is 5 \(int\), not a symbolic variable"),
        (lambda x: theano.clone([x, 5]), r"theano.clone: output\[1\] is 5 \(int\), not a symbolic"),
        (lambda x: theano.clone(np.ones(2)), r"theano.clone: output is array\(\[1., 1.\]\)"),
        (lambda x: theano.gof.graph.inputs([5]), r"graph.inputs: variable_list\[0\] is 5 \(int\)"),
        (lambda x: theano.gof.graph.ancestors([x, 5]), r"variable_list\[1\] is 5 \(int\)"),
        (lambda x: theano.gof.graph.inputs(x), r"variable_list is 'x' .* takes a list"),
        (lambda x: theano.gof.graph.ancestors([x], blockers=[3]), r"blockers\[0\] is 3 \(int\)"),
    ],
)
def test_graph_tools_given_no_variable_name_the_argument_and_the_line(call, message):
    """A number, an array or a list holding one crashed inside the walk with a bare
    AttributeError ('int' object has no attribute 'owner')."""
    x = T.vector("x")
    with pytest.raises(TypeError, match=message) as info:
        call(x)
    assert "test_debugging.py, line" in str(info.value)  # the user's line (the lambda's)


def test_theano_clone_of_none_is_an_empty_list_and_a_bad_replace_is_named_so():
    """Theano's ``rebuild_collect_shared`` cloned no outputs for None; a malformed
    ``replace=`` was reported as "givens=5 is neither a dict nor pairs"."""
    x = T.vector("x")
    assert theano.clone(None) == []
    with pytest.raises(sn.GraphError, match=r"^theano.clone: replace=5 is neither a dict nor"):
        theano.clone(x * 2, replace=5)
    with pytest.raises(sn.GraphError, match=r"^theano.clone: replace\[0\] is 3, not a pair"):
        theano.clone(x * 2, replace=[3])


def test_null_gradients_return_zero_gives_zeros_where_a_gradient_is_undefined():
    """Theano's ``null_gradients="return_zero"`` replaced each NullType gradient (one with a
    path through ``grad_undefined``) by zeros; the other ``wrt`` keep theirs. It raised as
    "raise" does."""
    x, k, mask = T.dvector("x"), T.dscalar("k"), T.dvector("mask")
    y = (ScaleBy()(x, k, mask) * x).sum() + k**2  # k: undefined through ScaleBy, 2k beside
    gx, gk = T.grad(y, [x, k], null_gradients="return_zero")
    f = theano.function([x, k, mask], [gx, gk])
    xv = np.array([0.5, -1.5, 2.0])
    got = f(xv, 3.0, np.ones(3))
    np.testing.assert_allclose(got[0], 2 * 3.0 * xv)
    assert got[1].shape == () and float(got[1]) == 0.0
    with pytest.raises(sn.NotDifferentiableError, match="k is a step size"):
        T.grad(y, [x, k])
