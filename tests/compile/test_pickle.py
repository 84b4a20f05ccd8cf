"""Pickling (issue #17): variables, graphs and shared variables round-trip; a compiled
function pickles as what it was built from and loads in a new process from the kernel cache.
copy.deepcopy of variables and graphs shares pickle's rules (core/variable.py): a loaded or
copied variable is a new one, and a graph of any depth goes as a flat list."""

import contextlib
import copy
import copyreg
import io
import itertools
import json
import multiprocessing
import os
import pickle
import subprocess
import sys
import textwrap
import threading
import traceback

import numpy as np
import pytest

import symnb as sn
from symnb.backends.c import cache, forbid_compile
from symnb.core import variable
from symnb.core.op import Apply
from symnb.grad.reverse import uid_mark
from tests.helpers import named_backends, needs_c


def model():
    x = sn.tensor("x", shape=("batch", 3))
    w = sn.shared(np.arange(3.0), name="w")
    loss = sn.sum(sn.exp(x) * w, axis=1) + sn.sigmoid(w).mean()
    return x, w, loss


def test_variables_graphs_and_shared_round_trip():
    x, w, loss = model()
    x2, w2, loss2 = pickle.loads(pickle.dumps((x, w, loss)))
    assert x2.type == x.type and str(x2.type) == "f64[batch,3]" and x2.name == "x"
    np.testing.assert_array_equal(w2.get_value(), w.get_value())
    assert sn.format_expr(loss2) == sn.format_expr(loss)
    xv = np.ones((2, 3))
    f, f2 = (sn.function([a], b, backend="py") for a, b in ((x, loss), (x2, loss2)))
    np.testing.assert_allclose(f2(xv), f(xv))
    assert pickle.loads(pickle.dumps(sn.shared(np.ones(3)))).get_value().tolist() == [1, 1, 1]
    t = pickle.loads(pickle.dumps(sn.tensor("t", shape=(sn.dim("n") + 1, None))))
    assert str(t.type) == str(sn.tensor("t", shape=(sn.dim("n") + 1, None)).type)


def test_function_round_trips_without_compiling(backend):
    x, w, loss = model()
    f = sn.function([x], {"loss": loss}, updates={w: w * 2}, backend=backend)
    xv = np.linspace(0, 1, 6).reshape(2, 3)
    first = f(xv)["loss"]
    with forbid_compile():
        g = pickle.loads(pickle.dumps(f))
    np.testing.assert_array_equal(g.updates[0][0].get_value(), w.get_value())
    np.testing.assert_allclose(g(xv)["loss"], f(xv)["loss"])
    assert not np.allclose(first, f(xv)["loss"])  # the update ran: values moved on


@pytest.mark.parametrize("backend", named_backends("py", "c"))
def test_updates_and_givens_given_as_iterators_survive_pickling(backend):
    """``updates=zip(params, steps)`` (the course idiom), a generator of pairs and
    ``givens=zip(...)`` are consumed when the function is built: the pickle keeps the
    checked pairs, so the loaded function still trains and still reads the given value."""
    W = sn.shared(np.array([1.0, 2.0]), name="W")
    b = sn.shared(np.array([0.5]), name="b")
    x = sn.tensor("x", shape=(2,), dtype="float64")
    params = [W, b]
    loss = sn.sum((W * x) ** 2) + sn.sum(b**2)
    steps = [p - 0.1 * g for p, g in zip(params, sn.grad(loss, params))]
    for updates in (zip(params, steps), ((p, s) for p, s in zip(params, steps))):
        W.set_value(np.array([1.0, 2.0]))
        b.set_value(np.array([0.5]))
        step = sn.function([x], loss, updates=updates, backend=backend)
        loaded = pickle.loads(pickle.dumps(step))
        assert [u.name for u, _ in loaded.updates] == ["W", "b"]
        losses = [loaded(np.ones(2)) for _ in range(2)]
        np.testing.assert_allclose(losses, [5.25, 5.25 * 0.64])  # each step scales by 0.8
        W2 = loaded.updates[0][0]
        np.testing.assert_allclose(W2.get_value(), [0.64, 1.28])
    W2 = sn.shared(np.array([10.0, 20.0]), name="W2")
    f = sn.function([x], sn.sum(W * x), givens=zip([W], [W2]), backend=backend)
    assert f(np.ones(2)) == 30.0
    assert pickle.loads(pickle.dumps(f))(np.ones(2)) == 30.0  # W2's values, not W's


WORKER = textwrap.dedent(
    """
    import json, pickle, sys
    import numpy as np
    import symnb as sn
    from symnb.backends.c import cache, forbid_compile
    sn.config.compiledir = sys.argv[1]
    with open(sys.argv[2], "rb") as f, forbid_compile():
        g = pickle.load(f)
    out = g(np.linspace(0, 1, 6).reshape(2, 3))
    shared = g.updates[0][0].get_value()
    print(json.dumps([out.tolist(), shared.tolist(), cache.stats.compiles]))
    """
)


@needs_c
def test_compiled_function_loads_in_a_new_process_from_the_cache(tmp_path):
    x, w, loss = model()
    f = sn.function([x], loss, updates={w: w + 1}, backend="c")
    xv = np.linspace(0, 1, 6).reshape(2, 3)
    f(xv)  # w moves to [1, 2, 3]; the pickle keeps that value
    (tmp_path / "f.pkl").write_bytes(pickle.dumps(f))
    want = f(xv)  # what the loaded function's first call gives too (then w is [2, 3, 4])
    env = dict(os.environ, PYTHONPATH=os.getcwd())
    done = subprocess.run(
        [sys.executable, "-c", WORKER, sn.config.compiledir, str(tmp_path / "f.pkl")],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    out, shared, compiles = json.loads(done.stdout)
    np.testing.assert_allclose(out, want)
    assert shared == [2.0, 3.0, 4.0] and compiles == 0  # loaded from the cache, not compiled


@needs_c
@pytest.mark.parametrize("refused", ["no compiler", "open compile directory"])
def test_a_function_that_cannot_be_built_where_it_loads_raises_at_its_first_call(
    refused, tmp_path, monkeypatch
):
    """Loading a "c" function where no C compiler runs, or the compile directory is refused,
    raised while the pickle loaded (only a DeviceError waited for the first call): a pool
    worker unpickling its task died of it and the task was lost. The load gives a function
    whose first use raises that error."""
    x = sn.vector("x")
    data = pickle.dumps(sn.function([x], sn.exp(x) * 3 + 1, backend="c"))
    monkeypatch.setattr(cache, "_loaded", {})
    monkeypatch.setattr(cache, "_verified", {})
    if refused == "no compiler":
        monkeypatch.setattr(sn.config, "cc", str(tmp_path / "no-cc"))
        error, message = sn.errors.CompileError, r"sn.config.cc = .*no-cc' is not an executable"
    else:
        (tmp_path / "open").mkdir(mode=0o777)
        (tmp_path / "open").chmod(0o777)
        monkeypatch.setattr(sn.config, "compiledir", str(tmp_path / "open"))
        error, message = sn.errors.CompileDirError, "chmod 700"
    loaded = pickle.loads(data)
    assert "could not be loaded here" in repr(loaded)
    for use in (lambda: loaded(np.zeros(2)), lambda: loaded.updates, lambda: loaded(np.ones(2))):
        with pytest.raises(error, match=message) as raised:
            use()
        assert len(list(traceback.walk_tb(raised.value.__traceback__))) < 40  # (not piled up)


@needs_c
def test_a_pool_worker_that_cannot_compile_a_function_it_is_sent_answers_the_caller(
    monkeypatch,
):
    """The pool's ``get`` waited forever: the worker (no usable C compiler) died unpickling
    its task. Now the task's call raises the CompileError, which reaches the caller."""
    x = sn.vector("x")
    f = sn.function([x], sn.exp(x) * 3, backend="c")
    monkeypatch.setenv("CC", "/nonexistent/cc")  # what the spawned worker sees
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        with pytest.raises(sn.errors.CompileError, match="/nonexistent/cc' is not an executable"):
            pool.apply_async(f, (np.zeros(2),)).get(timeout=120)


def test_a_function_built_in_check_mode_loads_in_check_mode():
    """``symnb check`` runs programs that send functions to other processes (Dask workers):
    there the function is a check-mode one too (zeros, nothing compiled, no update written)."""
    from symnb.compile.checkmode import CHECK, check_mode

    x, w, loss = model()
    with check_mode():
        f = sn.function([x], loss, updates={w: w * 2}, name="checked")
    g = pickle.loads(pickle.dumps(f))  # outside check mode now
    assert g.backend == CHECK and g.name == "checked"
    np.testing.assert_array_equal(g(np.ones((4, 3))), np.zeros(4))
    g(np.ones((4, 3)))
    assert [v for v in g._shared][0].get_value().tolist() == [0.0, 1.0, 2.0]  # not updated


def test_copy_copy_of_a_function_shares_its_shared_variables(backend):
    """``copy.copy(f)`` is the function built again from what it was built from, reading and
    updating the same shared variables (Theano's ``copy.copy(f)`` is ``f.copy()``); it was an
    internal TypeError ("argument after * must be an iterable, not _GraphFirst").
    ``copy.deepcopy`` copies the shared variables with it, as a pickle does."""
    w = sn.shared(np.zeros(3), name="w")
    f = sn.function([], w * 2, updates={w: w + 1}, backend=backend, name="step")
    assert f().tolist() == [0.0, 0.0, 0.0]
    g = copy.copy(f)
    assert g is not f and g.backend == f.backend and g.name == "step"
    assert g.updates[0][0] is w
    assert g().tolist() == [2.0, 2.0, 2.0]
    assert f().tolist() == [4.0, 4.0, 4.0]
    assert w.get_value().tolist() == [3.0, 3.0, 3.0]  # both wrote w
    deep = copy.deepcopy(f)
    assert deep.updates[0][0] is not w
    assert deep().tolist() == [6.0, 6.0, 6.0]
    assert w.get_value().tolist() == [3.0, 3.0, 3.0]


def test_copy_copy_of_a_check_mode_function_is_one_too():
    from symnb.compile.checkmode import CHECK, check_mode

    x, w, loss = model()
    with check_mode():
        f = sn.function([x], loss, updates={w: w * 2})
    g = copy.copy(f)  # outside check mode now
    assert g.backend == CHECK
    np.testing.assert_array_equal(g(np.ones((4, 3))), np.zeros(4))
    assert w.get_value().tolist() == [0.0, 1.0, 2.0]  # not updated


@pytest.mark.parametrize("how", ["pickle", "copy", "deepcopy"])
def test_a_loaded_or_copied_function_keeps_its_own_outputs_and_options(how):
    """It kept the caller's outputs list/dict/array, ``no_default_updates`` list and
    ``optimize`` dict: edited after compiling, they changed what a copy computed."""
    trips = {"pickle": lambda f: pickle.loads(pickle.dumps(f)), "copy": copy.copy}
    again = trips.get(how, copy.deepcopy)
    x, xv = sn.tensor("x", shape=(3,)), np.ones(3)
    outs = [x * 2]
    f = sn.function([x], outs, backend="py")
    outs[0] = x + 100
    outs.append(x * 3)
    got = again(f)(xv)
    assert isinstance(got, list) and len(got) == 1 and got[0].tolist() == [2.0, 2.0, 2.0]
    named = {"a": x * 2}
    g = sn.function([x], named, backend="py")
    named["a"] = x - 5
    assert again(g)(xv)["a"].tolist() == [2.0, 2.0, 2.0]
    arr = np.ones(3)
    h = sn.function([x], (x + 0, arr), backend="py")
    arr[:] = 7
    got = again(h)(xv)
    assert isinstance(got, tuple) and got[1].tolist() == [1.0, 1.0, 1.0]
    rng = sn.RandomStream(seed=1)
    u = rng.uniform((3,))
    skip = [rng.states[0][1]]  # the draw's counter: its function repeats its numbers
    include = {"include": ["canonicalize"]}
    r = sn.function([], u, no_default_updates=skip, optimize=include, backend="py")
    skip.clear()
    include["include"].append("fuse")
    c = again(r)
    assert np.array_equal(c(), c())  # its draw is still not advanced
    assert c._built_from[6] == {"include": ["canonicalize"]}


@pytest.mark.parametrize("how", ["pickle", "copy", "deepcopy"])
def test_a_function_loaded_or_copied_in_check_mode_is_a_check_mode_one(how):
    """``symnb check`` of a program that loads a trained model: the loaded function was a
    real one (the C compiler ran, values were computed, updates written)."""
    from symnb.compile.checkmode import CHECK, check_mode

    x, w, loss = model()
    f = sn.function([x], loss, updates={w: w + 1}, backend="py")
    data = pickle.dumps(f)
    with check_mode():
        g = {"pickle": lambda: pickle.loads(data), "copy": lambda: copy.copy(f)}.get(
            how, lambda: copy.deepcopy(f)
        )()
        assert g.backend == CHECK
        np.testing.assert_array_equal(g(np.ones((4, 3))), np.zeros(4))
        assert g.updates[0][0].get_value().tolist() == [0.0, 1.0, 2.0]  # not updated
    assert f.backend == "py"


OLD_PATHS = {  # where the loop and branch ops lived before symnb.control
    b"symnb.control.scan\n": b"symnb.ops.scan\n",
    b"symnb.control.loop\n": b"symnb.ops.loop\n",
    b"symnb.control.ifelse\n": b"symnb.ops.ifelse\n",
}


def test_a_function_pickled_when_scan_and_ifelse_were_in_ops_still_loads(tmp_path):
    """Pickles record each op's class by module path; ``symnb.ops.scan.Scan`` (and
    ``symnb.ops.loop.Loop``, ``symnb.ops.ifelse.IfElse``) load in a fresh process as the ops
    of symnb.control."""
    x, c = sn.vector("x"), sn.scalar("c", dtype="int64")
    running, _ = sn.scan(lambda v, total: total + v, sequences=x, outputs_info=sn.zeros(()))
    f = sn.function([x, c], [running, sn.ifelse(c, x.sum(), x.max())], backend="py")
    data = pickle.dumps(f, protocol=2)  # protocol 2 names classes as "module\nname\n"
    for new, old in OLD_PATHS.items():
        assert new in data
        data = data.replace(new, old)
    path = tmp_path / "old.pkl"
    path.write_bytes(data)
    script = (
        "import pickle, sys; import numpy as np\n"
        "g = pickle.load(open(sys.argv[1], 'rb'))\n"
        "print([v.tolist() for v in g(np.array([1.0, 4.0, 2.0]), 0)])\n"
        "from symnb.control.scan import Scan\n"
        "print(any(isinstance(n.op, Scan) for n in g.graph.toposort()))\n"
    )
    env = dict(os.environ, PYTHONPATH=os.getcwd())
    run = [sys.executable, "-c", script, str(path)]
    done = subprocess.run(run, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["[[1.0, 5.0, 7.0], 4.0]", "True"]


def deep_chain(n: int):
    x = sn.vector("x")
    y = x
    for _ in range(n):
        y = y + 1.0
    return x, y


def chain_below(y):
    """The nodes from ``y`` up to its leaf (first inputs), and that leaf."""
    nodes = []
    while y.owner is not None:
        nodes.append(y.owner)
        y = y.owner.inputs[0]
    return nodes, y


ROUND_TRIPS = {
    "pickle": lambda obj: pickle.loads(pickle.dumps(obj)),
    "deepcopy": copy.deepcopy,
}


@pytest.mark.parametrize("how", sorted(ROUND_TRIPS))
def test_a_5000_deep_graph_pickles_and_copies(how):
    """Pickle and deepcopy recursed along owner -> inputs -> owner: a RecursionError at about
    150 (pickle) and 100 (deepcopy) nodes in a line. A graph goes as one flat list now."""
    x, y = deep_chain(5000)
    x2, y2 = ROUND_TRIPS[how]((x, y))
    nodes, leaf = chain_below(y2)
    assert len(nodes) == 5000 and leaf is x2 and x2 is not x and x2.name == "x"
    assert all(n.op == nodes[0].op and n.outputs[0].owner is n for n in nodes)
    assert str(y2.type) == str(y.type)
    x3, y3 = ROUND_TRIPS[how](deep_chain(3))  # the values: of a short chain, the same way
    assert sn.function([x3], y3, backend="py")(np.zeros(2)).tolist() == [3.0, 3.0]


def test_a_function_of_a_deep_graph_pickles_with_its_graph_listed_once():
    """Each output (and update) listed the nodes before it: 20 outputs over one 1,000-deep
    graph pickled 2.3 times the graph's size; its variables' graphs go as one list now."""
    x, y = deep_chain(1000)
    f = sn.function([x], [y * float(i) for i in range(20)], backend="py")
    g = pickle.loads(pickle.dumps(f))
    assert [v.tolist() for v in g(np.ones(2))][:3] == [[0.0] * 2, [1001.0] * 2, [2002.0] * 2]
    assert len(pickle.dumps(f)) < 1.1 * len(pickle.dumps(y))


class Unpicklable:
    def __reduce__(self):
        raise TypeError("this note does not pickle")


def test_a_graph_pickles_after_a_pickle_of_it_failed():
    """A pickle that fails within a node (its first output's tag) leaves the other outputs
    marked as being saved with it: the next pickle of one saves it with its node, as deep."""
    m = sn.matrix("m")
    a = m
    for _ in range(2000):
        a = a + 1.0
    u, s, vt = sn.svd(a)
    u.tag.note = Unpicklable()
    with pytest.raises(TypeError, match="this note does not pickle"):
        pickle.dumps(s)
    del u.tag.note
    s2 = pickle.loads(pickle.dumps(s))
    nodes, leaf = chain_below(s2)
    assert len(nodes) == 2001 and leaf.name == "m" and s2.owner.outputs[1] is s2


@pytest.mark.parametrize("how", sorted(ROUND_TRIPS))
def test_outputs_of_one_node_stay_one_node(how):
    a = sn.matrix("a")
    u, s, vt = sn.svd(a)
    outputs, u2, lst = ROUND_TRIPS[how]((u.owner.outputs, u, [vt, s, u]))
    assert outputs[0] is u2 and lst[2] is u2 and u2.owner.outputs == [u2, lst[1], lst[0]]
    assert isinstance(u2.owner, Apply) and all(v.owner is u2.owner for v in outputs)


@pytest.mark.parametrize("how", sorted(ROUND_TRIPS) + ["copy"])
def test_a_loaded_or_copied_variable_is_a_new_one(how):
    """It kept its uid: in another process (or beside the original) it shared an unknown
    dim's private name with a variable made there, so ``b.reshape((a.shape[0], -1))`` was
    typed (?, 1) and ``@ W`` a false ShapeError."""
    trips = dict(ROUND_TRIPS, copy=copy.copy)
    b = sn.vector("b")
    a = trips[how](b)
    assert a.uid != b.uid
    r = b.reshape((a.shape[0], -1))
    assert str(r.type) == "f64[?,?]"
    W = sn.tensor("W", shape=(2, 5))
    f = sn.function([a, b, W], r @ W, backend="py")
    assert f(np.arange(3.0), np.arange(6.0), np.ones((2, 5))).shape == (3, 5)


@pytest.mark.parametrize("how", sorted(ROUND_TRIPS))
def test_a_loaded_graph_has_new_uids_in_the_order_it_was_made(how):
    """Uids say what was made since a mark (scan's step, sn.grad's nodes) and, among a cell's
    inputs, which came first (%%symcompile): a graph loaded or copied together keeps the
    order its variables were made in, after everything made before it here."""
    b, a = sn.vector("b"), sn.vector("a")  # b first, though a + b reads a first
    z = sn.exp(a + b) * a
    before = uid_mark()
    z2 = ROUND_TRIPS[how](z)
    plus = z2.owner.inputs[0].owner.inputs[0].owner
    a2, b2 = plus.inputs
    assert before < b2.uid < a2.uid < plus.outputs[0].uid < z2.uid
    assert z2.owner.inputs[1] is a2


def test_a_random_draw_pickled_before_scan_is_the_same_at_every_step(monkeypatch):
    """docs/loops.md: a draw made before sn.scan is a value from outside, one mask at every
    step. Loaded where the uid counter is lower than where it was pickled, the draw kept its
    uid, above scan's mark: taken for a draw of the step's own, it was drawn anew each step."""
    monkeypatch.setattr(variable, "_ids", itertools.count(10**9))  # a process that made more
    data = pickle.dumps(sn.RandomStream(seed=1).uniform((4,)))
    monkeypatch.undo()
    mask = pickle.loads(data)
    seq = sn.matrix("seq")
    out, upd = sn.scan(lambda s: s * mask, sequences=seq)
    steps = sn.function([seq], out, updates=upd, backend="py")(np.ones((3, 4)))
    np.testing.assert_array_equal(steps[1], steps[0])
    np.testing.assert_array_equal(steps[2], steps[0])


class OldFormat(pickle.Pickler):
    """Writes variables and nodes as symnb 0.1 did (Python's defaults: the uid kept)."""

    def reducer_override(self, obj):
        if isinstance(obj, sn.Variable):
            state = obj.__getstate__()
            state["uid"] = obj.uid
            return copyreg.__newobj__, (type(obj),), state
        if isinstance(obj, Apply):
            slots = {k: getattr(obj, k) for k in ("op", "inputs", "outputs", "tag")}
            return copyreg.__newobj__, (Apply,), (None, slots)
        return NotImplemented


def test_a_pickle_of_the_previous_format_loads_with_new_uids():
    x = sn.vector("x")
    c = sn.constant(np.arange(2.0), name="c")
    y = sn.exp(x) + c
    out = io.BytesIO()
    OldFormat(out, protocol=4).dump((x, y))
    x2, y2 = pickle.loads(out.getvalue())
    assert y2.owner.inputs[0].owner.inputs[0] is x2 and x2.uid not in (x.uid, y.uid)
    assert not y2.owner.inputs[1].value.flags.writeable
    f = sn.function([x2], y2, backend="py")
    np.testing.assert_allclose(f(np.zeros(2)), [1.0, 2.0])


@pytest.mark.parametrize("how", sorted(ROUND_TRIPS))
def test_a_loaded_or_copied_constant_stays_read_only(how):
    """A constant's value is read-only (a function compiled with borrow=True hands it out);
    NumPy loads and deep-copies arrays writable, and a write then changed the constant for
    every later call."""
    c = ROUND_TRIPS[how](sn.constant(np.arange(3.0), name="c"))
    assert not c.value.flags.writeable
    f = sn.function([], c, borrow=True, backend="py")
    with pytest.raises(ValueError, match="read-only"):
        f()[0] = 100.0
    assert f().tolist() == [0.0, 1.0, 2.0]


@pytest.mark.parametrize("backend", ["py", "c"])
def test_a_shallow_copy_of_a_computed_variable_computes_what_it_does(backend):
    """``copy.copy(y)`` was a variable that y's node did not list among its outputs: a bare
    KeyError in the planner, and a zero gradient (DisconnectedInputError) through it."""
    x = sn.tensor("x", (2,), dtype="float64")
    y = sn.exp(x) * 2 + 1
    yc = copy.copy(y)
    assert yc is not y and yc.owner is not y.owner and yc.owner.outputs[yc.index] is yc
    assert all(a is b for a, b in zip(yc.owner.inputs, y.owner.inputs, strict=True))
    assert str(yc.type) == str(y.type)
    X = np.array([0.0, 1.0])
    np.testing.assert_allclose(sn.function([x], yc, backend=backend)(X), np.exp(X) * 2 + 1)
    g = sn.function([x], sn.grad(yc.sum(), x), backend=backend)
    np.testing.assert_allclose(g(X), 2 * np.exp(X))
    a, b = sn.split(x, 2)
    bc = copy.copy(b)
    assert bc.index == 1 and bc.owner.outputs[1] is bc
    np.testing.assert_array_equal(sn.function([x], bc, backend=backend)(X), [1.0])


@pytest.mark.parametrize("how", sorted(ROUND_TRIPS))
@pytest.mark.parametrize("backend", named_backends("py", "c"))
def test_a_pickle_taken_while_another_thread_calls_holds_the_values_of_one_step(
    backend, how, monkeypatch
):
    """A training step pickled (or deep-copied) while another thread calls it: the shared
    values are read together in a turn of its calls, so the copy holds the values one step
    left (they were read one by one as pickle met them: here the first before a whole step
    that another thread ran meanwhile, the others after it)."""
    params = [sn.shared(np.zeros(2), name=f"p{i}") for i in range(3)]
    step = sn.function([], params[0].sum(), updates={p: p + 1 for p in params}, backend=backend)
    step()
    worker = []
    read = variable.SharedVariable.host_value

    def host_value(shared):
        value = read(shared)
        if not worker:  # the first value read: another thread calls the step (waits its turn)
            worker.append(threading.Thread(target=step))
            worker[0].start()
            worker[0].join(timeout=1)
        return value

    monkeypatch.setattr(variable.SharedVariable, "host_value", host_value)
    saved = ROUND_TRIPS[how](step)
    worker[0].join(timeout=20)
    monkeypatch.undo()
    assert [p.get_value().tolist() for p, _ in saved.updates] == [[1.0, 1.0]] * 3
    assert [p.get_value().tolist() for p in params] == [[2.0, 2.0]] * 3
    assert ROUND_TRIPS[how](params[1]).get_value().tolist() == [2.0, 2.0]  # (none kept since)
    assert not [ref for ref in variable._pinned.held if ref() is not None]  # (nor the values)


def _kept_pickler(step):
    """A ``pickle.Pickler`` kept after its dump of ``step`` (a checkpointer's, the Theano
    layer's StripPickler): its memo holds what the dump saved."""
    kept = pickle.Pickler(io.BytesIO())
    kept.dump(step)
    return kept


def _failed_deepcopy(step, monkeypatch):
    """The traceback of a deepcopy of ``step`` that failed while copying a shared value."""
    read = variable.SharedVariable.__getstate__

    def fail_once(shared):
        monkeypatch.setattr(variable.SharedVariable, "__getstate__", read)
        raise RuntimeError("cannot copy this one")

    monkeypatch.setattr(variable.SharedVariable, "__getstate__", fail_once)
    with pytest.raises(RuntimeError, match="cannot copy this one") as failed:
        copy.deepcopy(step)
    return failed


@pytest.mark.parametrize("keep", ["kept pickler", "failed deepcopy"])
def test_a_pickle_or_copy_taken_after_one_of_a_function_holds_the_values_then(
    backend, keep, monkeypatch
):
    """The values a function's pickle pinned were saved by every later pickle and deepcopy in
    the thread for as long as anything held the pickle's record (a Pickler kept for several
    dumps, in its memo; a failed deepcopy's traceback): ``pickle.dumps(w)`` after five more
    steps held w as it was, and a function without updates reading w loaded with the old w."""
    x = sn.vector("x", shape=(3,), dtype="float64")
    w = sn.shared(np.zeros(3), name="w")
    train = sn.function([x], w.sum(), updates={w: w + x}, backend=backend)
    predict = sn.function([x], x @ w, backend=backend)
    train(np.ones(3))
    kept = _kept_pickler(train) if keep == "kept pickler" else _failed_deepcopy(train, monkeypatch)
    for _ in range(5):
        train(np.ones(3))
    assert w.get_value().tolist() == [6.0, 6.0, 6.0]
    for how, round_trip in ROUND_TRIPS.items():
        assert round_trip(w).get_value().tolist() == [6.0, 6.0, 6.0], how
        assert round_trip(predict)(np.ones(3)) == 18.0, how
        assert round_trip(train).updates[0][0].get_value().tolist() == [6.0, 6.0, 6.0], how
    assert kept is not None  # (held until here)


def test_a_function_pickled_from_inside_its_own_call_holds_the_values_before_it(backend):
    """A print hook pickling the function while its call holds the turns: no wait for the
    turns (it would wait for itself), and the values are those the call read."""
    x = sn.vector("x", shape=(2,), dtype="float64")
    s = sn.shared(np.zeros(2), name="s")
    f = sn.function([x], sn.print_value(x * 2, "twice") * 3, updates={s: s + x}, backend=backend)
    saved: dict[int, set] = {}  # call -> the values its pickles hold

    class Hook(io.StringIO):
        def write(self, text):
            copied = pickle.loads(pickle.dumps(f)).updates[0][0].get_value()
            saved.setdefault(len(calls_made), set()).add(tuple(copied))
            return len(text)

    calls_made: list[int] = []

    def calls():
        with contextlib.redirect_stdout(Hook()):
            for _ in range(2):
                f(np.ones(2))
                calls_made.append(1)

    worker = threading.Thread(target=calls, daemon=True)
    worker.start()
    worker.join(timeout=60)
    assert not worker.is_alive(), "the pickle waited for the call it was made in"
    assert saved == {0: {(0.0, 0.0)}, 1: {(1.0, 1.0)}}
    assert s.get_value().tolist() == [2.0, 2.0]
