"""What the deeplearning.net tutorials use of Theano beyond its tutorial: MRG's multinomial
of a matrix, truth values of computed tensors, ``theano.scalar``, ``config.warn``,
``T.xlogx``, and ``THEANO_FLAGS``/``.theanorc``."""

import ast
import os
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.special

import symnb as sn
import symnb.compat.theano as theano
import symnb.compat.theano.tensor as T
from symnb.compat.theano.configdefaults import DEFAULTS
from symnb.compat.theano.configparser import EFFECTIVE
from symnb.compat.theano.flags import parse_pairs, read_rc
from symnb.compat.theano.sandbox.rng_mrg import MRG_RandomStreams
from tests.helpers import named_backends, run_python

PVALS = np.array([[0.1, 0.2, 0.3, 0.4], [1, 0, 0, 0], [0, 0, 0, 1], [0.5, 0, 0.5, 0]], "float32")


def _row_draws(backend, n=1, seed=5):
    rng = sn.RandomStream(seed)
    p = sn.tensor("p", shape=("rows", 4), dtype="float32")
    return sn.function([p], rng.multinomial(n=n, pvals=p), backend=backend)


@pytest.mark.parametrize("backend", named_backends("py", "c"))
def test_multinomial_per_row_same_numbers_on_every_backend(backend):
    draw, reference = _row_draws(backend), _row_draws("py")
    got = [draw(PVALS) for _ in range(3)]
    want = [reference(PVALS) for _ in range(3)]
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)
        assert g.shape == (4, 4) and g.dtype == np.int64
        np.testing.assert_array_equal(g.sum(axis=1), 1)
        assert g[1, 0] == 1 and g[2, 3] == 1 and g[3, 1] == 0 and g[3, 3] == 0
    assert not all(np.array_equal(got[0], g) for g in got[1:])  # the stream advances


def test_multinomial_per_row_follows_each_rows_probabilities():
    counts = _row_draws("py", n=20000)(PVALS)
    np.testing.assert_array_equal(counts.sum(axis=1), 20000)
    np.testing.assert_allclose(counts / 20000, PVALS, atol=0.015)


def test_multinomial_per_row_refuses_rows_that_are_not_distributions():
    rng = sn.RandomStream(0)
    p = sn.tensor("p", shape=(2, 3), dtype="float64")
    f = sn.function([p], rng.multinomial(pvals=p), backend="py")
    with pytest.raises(Exception, match="row 1 sums to 0.5"):
        f(np.array([[0.2, 0.3, 0.5], [0.25, 0.25, 0.0]]))
    with pytest.raises(sn.ShapeError, match="2-d .one per row. with size=()"):
        rng.multinomial(size=(3,), pvals=p)


def test_mrg_multinomial_of_a_softmax_samples_words():
    """Theano samplers draw from a softmax: ``trng.multinomial(pvals=probs).argmax(1)``."""
    trng = MRG_RandomStreams(1234)
    x = T.matrix("x")
    probs = T.nnet.softmax(x * 50)
    words = trng.multinomial(pvals=probs).argmax(1)
    f = theano.function([x], words)
    logits = np.eye(5)[[3, 1, 4]]
    np.testing.assert_array_equal(f(logits), [3, 1, 4])


def test_computed_theano_tensors_are_true_and_comparisons_refuse():
    """The deep belief network hands its second RBM a sigmoid output: ``if not input:``."""
    x = T.matrix("x")
    W = theano.shared(np.ones((2, 2)))
    hidden = T.nnet.sigmoid(T.dot(x, W) + 1)
    assert hidden and (hidden * 2).sum() and not (not T.mean(hidden))
    for comparison in (hidden > 0, T.eq(hidden, 1), (hidden > 0) & (hidden < 1)):
        with pytest.raises(TypeError, match="truth value"):
            bool(comparison)
    y = sn.tensor("y", shape=(2, 2))
    with pytest.raises(TypeError, match="truth value"):
        bool(sn.exp(y))  # symnb's own graphs keep refusing


def test_theano_scalar_upcast_and_constructors():
    assert theano.scalar.upcast("float32", "int64") == "float64"
    assert theano.scalar.upcast("int8", "int16", "uint8") == "int16"
    assert theano.scalar.upcast("float32", "float32") == "float32"
    s = theano.scalar.float32("s")
    assert (s.name, s.type.ndim, s.dtype) == ("s", 0, "float32")
    assert theano.scalar.Scalar("int64")("k").dtype == "int64"
    assert theano.scalar.constant(2.5).type.dtype == np.dtype(theano.config.floatX)


def test_config_warn_group():
    assert theano.config.warn.subtensor_merge_bug is True
    theano.config.warn.subtensor_merge_bug = False  # rnnrbm.py's first line
    assert theano.config.warn.subtensor_merge_bug is False
    theano.config.warn.subtensor_merge_bug = True
    with pytest.raises(AttributeError, match="warn has no flag 'rond'"):
        theano.config.warn.rond = False


def test_xlogx_and_xlogy0_are_zero_where_x_is_zero():
    x, y = T.dvectors("x", "y")
    f = theano.function(
        [x, y], [T.xlogx.xlogx(x), T.xlogx.xlogy0(x, y), T.grad(T.xlogx.xlogx(x).sum(), x)]
    )
    xs, ys = np.array([0.0, 0.5, 2.0]), np.array([0.0, 2.0, 3.0])
    xlogx, xlogy, grad = f(xs, ys)
    np.testing.assert_allclose(xlogx, [0, 0.5 * np.log(0.5), 2 * np.log(2)])
    np.testing.assert_allclose(xlogy, [0, 0.5 * np.log(2), 2 * np.log(3)])
    np.testing.assert_allclose(grad[1:], 1 + np.log(xs[1:]))
    assert np.isfinite(grad).all()


def test_flag_strings_and_theanorc(tmp_path):
    assert parse_pairs("floatX=float32, device=cpu,,mode=FAST_COMPILE") == {
        "floatX": "float32",
        "device": "cpu",
        "mode": "FAST_COMPILE",
    }
    with pytest.raises(ValueError, match="'float32' is not name=value"):
        parse_pairs("floatX=float64,float32")
    rc = tmp_path / "rc"
    rc.write_text("[global]\nfloatX = float32\noptimizer = None\n[warn]\nround = False\n")
    assert read_rc([str(rc), str(tmp_path / "absent")]) == {
        "floatX": "float32",
        "optimizer": "None",
        "warn.round": "False",
    }


PROGRAM = """
import warnings
warnings.simplefilter("always")
import symnb.compat.theano as theano
import symnb.compat.theano.tensor as T
import numpy as np
x = T.matrix("x")
f = theano.function([x], x * 2)
print(theano.config.floatX, x.dtype, f(np.ones((1, 1), x.dtype)).dtype, f.built["backend"] or "c",
      f.built["optimize"], theano.config.compiledir)
"""


def _run(tmp_path, flags=None, rc=None):
    env = {k: v for k, v in os.environ.items() if k not in ("THEANO_FLAGS", "THEANORC")}
    env["THEANORC"] = str(tmp_path / "theanorc")
    if rc is not None:
        (tmp_path / "theanorc").write_text(rc)
    if flags is not None:
        env["THEANO_FLAGS"] = flags
    return run_python(PROGRAM, env=env)


def test_theano_flags_floatx_float32_gives_float32(tmp_path):
    out = _run(tmp_path, "floatX=float32")
    assert out.split()[:3] == ["float32", "float32", "float32"]


def test_floatx_takes_theanos_shorthands(tmp_path, monkeypatch):
    """Theano's ``floatX_convert`` read "32" as float32 ("64", "16" likewise);
    THEANO_FLAGS=floatX=32 stopped the import and the setter refused them."""
    assert _run(tmp_path, "floatX=32").split()[:3] == ["float32"] * 3
    monkeypatch.setattr(sn.config, "floatX", sn.config.floatX)
    for short in ("16", "32", "64"):
        theano.config.floatX = short
        assert theano.config.floatX == sn.config.floatX == f"float{short}"
    with theano.change_flags(floatX="32"):
        assert T.matrix().dtype == "float32"
    with pytest.raises(sn.ArgumentError, match="config.floatX must be float16, float32 or"):
        theano.config.floatX = 32  # Theano's shorthands were text


def test_a_refused_theano_flag_names_no_bogus_line(tmp_path):
    """symnb's refusal of a THEANO_FLAGS value ended "at <frozen importlib._bootstrap>"."""
    done = _subprocess(
        "import symnb.compat.theano",
        {**os.environ, "THEANO_FLAGS": "floatX=float128", "THEANORC": str(tmp_path / "none")},
    )
    assert done.returncode != 0
    assert done.stderr.strip().splitlines()[-1] == (
        "ValueError: THEANO_FLAGS/.theanorc: config.floatX must be float16, float32 or "
        "float64, not 'float128'"
    )


def test_theanorc_sets_flags_and_theano_flags_win(tmp_path):
    cache = tmp_path / "cache"
    rc = f"[global]\nfloatX = float32\ndevice = cpu\noptimizer = None\ncompiledir = {cache}\n"
    assert _run(tmp_path, rc=rc).split() == ["float32"] * 3 + ["c", "none", str(cache)]
    out = _run(tmp_path, "floatX=float64,mode=FAST_COMPILE", rc=rc).split()
    assert out[:5] == ["float64", "float64", "float64", "py", "stable"]


def test_ignored_flags_warn_once_and_unknown_flags_are_errors(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "THEANO_FLAGS"}
    env["THEANORC"] = str(tmp_path / "none")
    code = PROGRAM.replace('warnings.simplefilter("always")', "")
    env["THEANO_FLAGS"] = "floatX=float32,allow_gc=False,warn.round=False"
    done = _subprocess(code, env)
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("UserWarning") == 1
    assert "ignores allow_gc=False, warn.round=False" in done.stderr
    env["THEANO_FLAGS"] = "floatx=float32"
    done = _subprocess(code, env)
    assert done.returncode != 0 and "theano.config has no flag 'floatx'" in done.stderr
    env["THEANO_FLAGS"] = "floatX=float32,allow_gc=maybe,warn.round=False"
    done = _subprocess(code, env)
    assert done.returncode != 0
    assert "theano.config.allow_gc must be True or False (1/0, yes/no, on/off), not 'maybe'" in (
        done.stderr
    )


def test_flags_the_layer_honours_are_not_warned_ignored(tmp_path):
    """``compute_test_value=raise`` and ``force_device=True`` take effect, yet the import
    warned that the layer "accepts but ignores" them."""
    env = {k: v for k, v in os.environ.items() if k != "THEANO_FLAGS"}
    env["THEANORC"] = str(tmp_path / "none")
    env["THEANO_FLAGS"] = "compute_test_value=raise,force_device=True,unittests.rseed=7,nocleanup=1"
    code = (
        "import numpy as np\n"
        "import symnb.compat.theano.tensor as T\n"
        "from symnb.compat.theano.tests import unittest_tools\n"
        "x, y = T.matrix('x'), T.vector('y')\n"
        "x.tag.test_value, y.tag.test_value = np.ones((2, 3)), np.ones(4)\n"
        "try:\n    x + y\nexcept ValueError as e:\n    print(type(e).__name__)\n"
        "print(unittest_tools.fetch_seed())\n"
    )
    done = _subprocess(code, env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["TestValueError", "7"]
    assert done.stderr.count("UserWarning") == 1
    assert "accepts but ignores nocleanup=1 (it uses" in done.stderr


def _theano_flags_read(tree, module: str) -> set[str]:
    """The flags of ``theano.config`` that a module of the layer reads in its code:
    ``config.a.b`` where ``config`` is the layer's (or ``configparser.config.a``), and
    ``config._flags["a"]``."""
    ours = module.endswith("configparser.py") or any(
        isinstance(node, ast.ImportFrom)
        and node.module == "symnb.compat.theano.configparser"
        and any(alias.name == "config" and alias.asname is None for alias in node.names)
        for node in ast.walk(tree)
    )
    read = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Attribute)
            and node.value.attr == "_flags"
            and isinstance(node.slice, ast.Constant)
        ):
            read.add(node.slice.value)
        if not isinstance(node, ast.Attribute):
            continue
        names, root = [], node
        while isinstance(root, ast.Attribute):
            names.insert(0, root.attr)
            root = root.value
        if isinstance(root, ast.Name) and root.id == "configparser" and names[:1] == ["config"]:
            names = names[1:]
        elif not (ours and isinstance(root, ast.Name) and root.id == "config"):
            continue
        flag = ".".join(names)  # (``config.warn`` alone is a group: no flag)
        if flag in DEFAULTS or flag in ("floatX", "compiledir"):
            read.add(flag)
    return read


def test_every_flag_the_layer_reads_is_one_it_does_not_warn_of():
    """The import's warning lists the flags outside ``EFFECTIVE`` as changing nothing: a
    flag read anywhere in the layer must be in it (compute_test_value, force_device were
    not)."""
    root = Path(theano.__file__).parent
    read = {}
    for path in root.rglob("*.py"):
        for name in _theano_flags_read(ast.parse(path.read_text()), str(path)):
            read.setdefault(name, path.name)
    assert {"compute_test_value", "force_device", "mode", "cast_policy"} <= set(read)
    missing = {name: where for name, where in read.items() if name not in EFFECTIVE}
    assert not missing, f"read by the layer yet warned as ignored: {missing}"


def _subprocess(code, env):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)


def test_device_flag_picks_the_backend():
    before = theano.config.device
    try:
        theano.config.device = "opencl0:0"
        assert theano.compile.get_mode(None).options()["backend"] == "opencl"
        theano.config.device = "cuda0"
        theano.config.force_device = True  # (without a GPU, the CPU otherwise: below)
        assert theano.compile.get_mode(None).options()["backend"] == "cuda"
        theano.config.force_device = False
        with pytest.raises(ValueError, match="'tpu' is not a device"):
            theano.config.device = "tpu"
    finally:
        theano.config.device = before
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert theano.compile.get_mode(None).options()["backend"] is None


def test_the_device_flag_puts_back_the_symnb_settings_it_pointed(monkeypatch):
    """``change_flags(device="opencl0:1")`` left ``sn.config.opencl_device = "0:1"`` after
    the block (``cuda1``: ``cuda_device = 1``), and ``device = "cpu"`` too: a later plain
    function ran on the block's device. What the user set meanwhile stays."""
    monkeypatch.setattr(sn.config, "opencl_device", "")
    monkeypatch.setattr(sn.config, "cuda_device", 0)
    assert theano.config.device == "cpu"
    with theano.change_flags(device="opencl0:1"):
        assert sn.config.opencl_device == "0:1"
        with theano.change_flags(device="cuda1"):
            assert (sn.config.opencl_device, sn.config.cuda_device) == ("", 1)
        assert (sn.config.opencl_device, sn.config.cuda_device) == ("0:1", 0)
    assert (theano.config.device, sn.config.opencl_device, sn.config.cuda_device) == ("cpu", "", 0)
    sn.config.opencl_device = "pthread"
    try:
        theano.config.device = "opencl0:1"
        theano.config.device = "opencl0:0"
        assert sn.config.opencl_device == "0:0"
        theano.config.device = "cpu"
        assert sn.config.opencl_device == "pthread"
        theano.config.device = "gpu2"
        sn.config.cuda_device = 3  # the user's own choice since: kept
    finally:
        theano.config.device = "cpu"
    assert (sn.config.opencl_device, sn.config.cuda_device) == ("pthread", 3)


def test_compiledir_with_a_tilde_is_under_the_home_directory(monkeypatch, tmp_path):
    """Theano's ``filter_compiledir`` expanded ``~``; the layer kept it, and symnb made a
    folder named "~" in the working directory."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(sn.config, "compiledir", sn.config.compiledir)
    with theano.change_flags(compiledir="~/theano-cache"):
        assert theano.config.compiledir == str(tmp_path / "theano-cache")
        assert sn.config.compiledir == str(tmp_path / "theano-cache")


def test_compiledir_reads_the_directory_in_use(monkeypatch, tmp_path):
    """Theano's flag was always the absolute directory in use (course code lists or removes
    it); it read "" unless set. A change_flags block puts back the setting, so the default
    keeps following $SYMNB_COMPILEDIR."""
    monkeypatch.setattr(sn.config, "compiledir", "")
    monkeypatch.setenv("SYMNB_COMPILEDIR", str(tmp_path / "env-dir"))
    assert theano.config.compiledir == str(tmp_path / "env-dir")
    with theano.change_flags(compiledir=str(tmp_path / "block")):
        assert theano.config.compiledir == str(tmp_path / "block")
    assert sn.config.compiledir == ""
    monkeypatch.setenv("SYMNB_COMPILEDIR", str(tmp_path / "later"))
    assert theano.config.compiledir == str(tmp_path / "later")
    monkeypatch.chdir(tmp_path)
    theano.config.compiledir = "relative"
    assert theano.config.compiledir == str(tmp_path / "relative")


@pytest.mark.parametrize("value", [None, 5])
def test_compiledir_that_is_no_path_is_refused(monkeypatch, value):
    """The setter made None a folder named "None" in the working directory; it is refused
    as sn.config.compiledir refuses it (Theano's expanduser raised too)."""
    monkeypatch.setattr(sn.config, "compiledir", "")
    with pytest.raises(sn.ArgumentError, match="config.compiledir must be a path") as e:
        theano.config.compiledir = value
    assert e.value.location.filename == __file__
    assert sn.config.compiledir == ""
    theano.config.compiledir = Path("~/cache")
    assert sn.config.compiledir == os.path.expanduser("~/cache")


THEANO_1_FLAGS = (
    "nvcc.flags=-use_fast_math,linker=cvm,gcc.cxxflags=-O3 -march=native,"
    "optimizer_including=cudnn,optimizer_excluding=inplace,scan.allow_gc=True,nocleanup=True,"
    "traceback.limit=20,dnn.conv.algo_fwd=time_once,dnn.conv.algo_bwd_filter=deterministic,"
    "dnn.conv.algo_bwd_data=deterministic,deterministic=more,optimizer_verbose=True,"
    "unpickle_function=False,numpy.seterr_all=raise,cuda.root=/usr/local/cuda,"
    "lib.amdlibm=True,assert_no_cpu_op=raise,DebugMode.check_py=False,"
    "NanGuardMode.nan_is_error=True"
)


def test_theano_1_flags_are_accepted_and_ignored_at_import(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("THEANO_FLAGS", "THEANORC")}
    rc = tmp_path / "theanorc"
    rc.write_text(
        "[global]\noptimizer_including = local_ultra_fast_sigmoid\n"
        "[nvcc]\nflags = -D_FORCE_INLINES\n[gcc]\ncxxflags = -O2\n"
    )
    env["THEANORC"] = str(rc)
    env["THEANO_FLAGS"] = THEANO_1_FLAGS
    code = PROGRAM + (
        "c = theano.config\n"
        "print(c.nvcc.flags, c.traceback.limit, c.scan.allow_gc, c.gcc.cxxflags, "
        "c.optimizer_including, c.dnn.conv.algo_fwd)\n"
    )
    done = _subprocess(code.replace('warnings.simplefilter("always")', ""), env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[1].split() == [
        "-use_fast_math",
        "20",
        "True",
        "-O3",
        "-march=native",
        "cudnn",
        "time_once",
    ]
    assert done.stderr.count("UserWarning") == 1 and "nvcc.flags=-use_fast_math" in done.stderr
    env["THEANO_FLAGS"] = "nvcc.flag=-O3"
    done = _subprocess(code, env)
    assert done.returncode != 0
    assert "theano.config.nvcc has no flag 'flag'" in done.stderr
    assert "Theano never had a flag of that name; did you mean nvcc.flags" in done.stderr
    env["THEANO_FLAGS"] = "mode=FAST_RUNN"
    done = _subprocess(code, env)
    assert done.returncode != 0 and "config.mode must be one of FAST_RUN" in done.stderr


def test_the_default_mode_is_theanos_mode_and_compiles_as_fast_run(tmp_path):
    """Theano 0.7-1.0's default ``config.mode`` was "Mode" (the first of its EnumStr); the
    layer's was "FAST_RUN". Both compile with the default optimizer on the default linker."""
    env = {k: v for k, v in os.environ.items() if k != "THEANO_FLAGS"}
    env["THEANORC"] = str(tmp_path / "none")
    assert run_python("import symnb.compat.theano as t; print(t.config.mode)", env) == "Mode\n"
    x = T.dvector("x")
    with theano.change_flags(mode="Mode"):
        f = theano.function([x], T.exp(x) * 2)
    assert f.maker.mode.options() == theano.compile.get_mode("FAST_RUN").options()
    assert f.built["optimize"] == "fast" and f.built["mode"] is None
    np.testing.assert_allclose(f([0.0]), [2.0])


def test_dotted_groups_read_with_theano_defaults_and_set():
    c = theano.config
    assert (c.blas.ldflags, c.nvcc.fastmath, c.lib.cnmem, c.dnn.enabled) == ("", False, 0, "auto")
    assert (c.gcc.cxxflags, c.scan.allow_gc, c.dnn.conv.algo_fwd) == ("", False, "small")
    assert c.traceback.limit == 8 and c.NanGuardMode.nan_is_error is True
    assert "conv" in dir(c.dnn) and "floatX" in dir(c)
    try:
        c.scan.allow_gc = "True"
        c.dnn.conv.algo_bwd_data = "deterministic"
        assert c.scan.allow_gc is True and c.dnn.conv.algo_bwd_data == "deterministic"
    finally:
        c.scan.allow_gc, c.dnn.conv.algo_bwd_data = False, "none"
    with pytest.raises(AttributeError, match="cannot be changed once Theano is imported"):
        c.lib.cnmem = 0.8
    with pytest.raises(AttributeError, match="theano.config.blas has no flag 'ldflag'"):
        c.blas.ldflag  # noqa: B018
    with pytest.raises(AttributeError, match="dnn is a group of flags, not a flag"):
        c.dnn = True
    with pytest.raises(ValueError, match="algo_fwd must be one of"):
        c.dnn.conv.algo_fwd = "fastest"


@pytest.mark.parametrize(
    "name, bad",
    [
        ("exception_verbosity", "medium"),
        ("warn_float64", "yes"),
        ("compute_test_value", "on"),
        ("mode", "FAST_RUNN"),
        ("traceback.limit", "x"),
        ("allow_gc", "maybe"),  # a bool's refusal did not name the flag
        ("warn.round", "maybe"),
    ],
)
def test_enumerated_flags_refuse_values_theano_refused(name, bad):
    before = theano.config._flags[name]
    with pytest.raises(ValueError, match=f"theano.config.{name} must be"):
        theano.config.set_flag(name, bad)
    assert theano.config._flags[name] == before


def test_theanorc_interpolates_and_names_are_case_insensitive(tmp_path):
    rc = tmp_path / "rc"
    rc.write_text(
        "[global]\nFLOATX = float32\nbase_compiledir = %(TMPDIR)s/theano-%(USER)s-%(PID)s\n"
        "compiledir = ~/cache\n[DNN.CONV]\nALGO_FWD = time_once\n"
    )
    flags = read_rc([str(rc)], {"USER": "ada", "TMPDIR": "/scratch"})
    assert flags == {
        "floatX": "float32",
        "base_compiledir": f"/scratch/theano-ada-{os.getpid()}",
        "compiledir": os.path.expanduser("~/cache"),
        "dnn.conv.algo_fwd": "time_once",
    }


def test_tag_takes_attributes_and_keys():
    x = T.matrix("x")
    x.tag.test_value = np.ones((2, 3))
    assert x.tag["test_value"].shape == (2, 3) and x.tag.test_value.shape == (2, 3)
    assert x.clone().tag.test_value.shape == (2, 3)
    with pytest.raises(AttributeError, match="tag has no 'nothing'"):
        x.tag.nothing  # noqa: B018
    assert (x * 2).owner.tag == {}


@pytest.fixture
def compute_test_value():
    def set_to(mode):
        theano.config.compute_test_value = mode

    yield set_to
    theano.config.compute_test_value = "off"


def test_compute_test_value_raise_stops_at_the_users_line(compute_test_value):
    compute_test_value("raise")
    x = T.matrix("x")
    x.tag.test_value = np.ones((3, 4))
    W = theano.shared(np.ones((4, 5)), name="W")
    h = T.nnet.sigmoid(T.dot(x, W))
    np.testing.assert_allclose(h.tag.test_value, np.full((3, 5), 1 / (1 + np.exp(-4))))
    assert T.grad(h.sum(), W).tag.test_value.shape == (4, 5)
    V = theano.shared(np.ones((3, 5)), name="V")
    with pytest.raises(ValueError, match=r"matmul on inputs of shapes \(3, 4\), \(3, 5\)") as e:
        T.dot(x, V)
    assert e.value.location.filename == __file__
    with pytest.raises(ValueError, match="y has no test value"):
        T.vector("y") * 2
    v = T.vector("v")
    v.tag.test_value = np.arange(3.0)
    out, _ = theano.scan(lambda a, acc: acc + a, sequences=v, outputs_info=T.constant(0.0))
    np.testing.assert_allclose(out.tag.test_value, [0, 1, 3])


def test_compute_test_value_warn_and_off(compute_test_value):
    compute_test_value("warn")
    with pytest.warns(UserWarning, match="y has no test value") as record:
        T.vector("y") * 2
    assert [w.filename for w in record] == [__file__]
    compute_test_value("off")
    x = T.vector("x")
    x.tag.test_value = np.ones(3)
    assert "test_value" not in (x * 2).tag


def test_compute_test_value_ignore_skips_missing_values_yet_raises_a_mistake(compute_test_value):
    """Under "ignore" a failing perform was swallowed: Theano skipped only missing values."""
    compute_test_value("ignore")
    a, b = T.matrix("a"), T.matrix("b")
    a.tag.test_value, b.tag.test_value = np.ones((2, 3)), np.ones((4, 5))
    with pytest.raises(ValueError, match=r"matmul on inputs of shapes \(2, 3\), \(4, 5\)") as e:
        T.dot(a, b)
    assert e.value.location.filename == __file__
    assert "test_value" not in (T.vector("y") * 2).tag


def test_a_variables_type_has_theanos_tensortype_api():
    x = T.fmatrix("x")
    assert x.type.broadcastable == (False, False) and T.row().type.broadcastable == (True, False)
    assert (x * T.row()).type.broadcastable == (False, False)
    y = x.type("y")
    assert (y.name, y.type, y.owner) == ("y", x.type, None)
    assert (x * 2).type("w").type == x.type
    assert x.type.filter([[1, 2]]).dtype == np.float32
    with pytest.raises(TypeError, match="without loss"):
        x.type.filter(np.full((1, 1), 0.1))
    assert x.type.filter(np.full((1, 1), 0.1), allow_downcast=True).dtype == np.float32
    with pytest.raises(TypeError, match="strict"):
        x.type.filter([[1.0]], strict=True)
    with pytest.raises(TypeError, match="2 dims, not 1"):
        x.type.filter(np.ones(3, "float32"))
    with pytest.raises(ValueError, match="dim 0 must be 1, not 3"):
        T.row().type.filter(np.ones((3, 2)))
    ttype = T.TensorType("float32", (False,) * 4)
    z = ttype("z")
    assert z.type.broadcastable == (False,) * 4 and z.dtype == "float32"
    assert ttype.filter(np.ones((1, 1, 1, 1))).dtype == np.float32
    f = theano.function([y], y * 2)
    np.testing.assert_allclose(f(np.ones((2, 2), "float32")), 2)


def _failing_device_check(monkeypatch, name: str, why: str) -> list:
    """The Theano layer's device check ``name`` answering ``why`` (the settings it is asked
    about are listed in what this returns), its memo of answers emptied."""
    from symnb.compat.theano import configparser

    asked = []
    monkeypatch.setattr(configparser, name, lambda setting: asked.append(setting) or why)
    monkeypatch.setattr(configparser, "_FELL_BACK", {})
    return asked


def test_a_cuda_device_that_cannot_run_falls_back_to_the_cpu_unless_forced(monkeypatch):
    asked = _failing_device_check(monkeypatch, "cuda_problem", "no CUDA driver on this machine")
    before = theano.config.device, sn.config.cuda_device
    try:
        theano.config.device = "cuda1"
        assert sn.config.cuda_device == 1
        with pytest.warns(UserWarning, match="'cuda1' cannot be used .no CUDA driver.*CPU"):
            assert theano.compile.get_mode(None).options()["backend"] is None
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # once
            assert theano.compile.get_mode(None).options()["backend"] is None
        assert asked == [1]
        theano.config.force_device = True
        assert theano.compile.get_mode(None).options()["backend"] == "cuda"
        theano.config.force_device = False
        theano.config.device = "gpu"
        assert sn.config.cuda_device == 0
        with pytest.raises(ValueError, match="'cudax' is not a device"):
            theano.config.device = "cudax"
    finally:
        theano.config.force_device = False
        theano.config.device, sn.config.cuda_device = before


def test_an_opencl_device_that_cannot_run_falls_back_to_the_cpu_unless_forced(monkeypatch):
    """Theano's gpuarray use() treated device=opencl* as device=cuda*: with force_device=False
    a device that cannot be initialised ran the program on the CPU (it raised here)."""
    why = "sn.config.opencl_device = '5:0' names no device; the devices are:\n  (none)"
    asked = _failing_device_check(monkeypatch, "opencl_problem", why)
    before = theano.config.device, sn.config.opencl_device
    try:
        theano.config.device = "opencl5:0"
        assert sn.config.opencl_device == "5:0"
        with pytest.warns(UserWarning, match="'opencl5:0' cannot be used .sn.config.*CPU"):
            assert theano.compile.get_mode(None).options()["backend"] is None
        x = T.vector("x")
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # once
            f = theano.function([x], x * 2)
        np.testing.assert_allclose(f(np.ones(3, theano.config.floatX)), 2)
        assert asked == ["5:0"]
        theano.config.force_device = True
        assert theano.compile.get_mode(None).options()["backend"] == "opencl"
    finally:
        theano.config.force_device = False
        theano.config.device, sn.config.opencl_device = before


def test_opencl_problem_says_why_a_device_cannot_run():
    pytest.importorskip("pyopencl", reason="the OpenCL extra is not installed")
    from symnb.backends.opencl.runtime import opencl_problem

    assert "names no device" in opencl_problem("97:0")


def test_erfcx_is_the_scaled_complementary_error_function():
    """``T.erfcx`` (was NotImplementedError): SciPy's values, also where erfc underflows,
    Theano's gradient ``2 x erfcx(x) - 2 / sqrt(pi)`` (without its cancellation at large x),
    and an integer x made float first."""
    x, i = T.dvector("x"), T.bvector("i")
    a = np.array([-3.0, 0.0, 0.5, 6.0, 30.0, 1e6])
    f = theano.function([x, i], [T.erfcx(x), T.grad(T.sum(T.erfcx(x)), x), T.erfcx(i)])
    value, grad, of_ints = f(a, np.array([0, 2], "int8"))
    np.testing.assert_allclose(value, scipy.special.erfcx(a), rtol=1e-14)
    # Theano's formula cancels for large x (at 1e6 only 5 digits are left): there the
    # asymptotic series, -(1 - 3 / (2 x^2)) / (sqrt(pi) x^2)
    big = a > 1e3
    want = 2 * a * scipy.special.erfcx(a) - 2 / np.sqrt(np.pi)
    want[big] = -(1 - 1.5 / a[big] ** 2) / (np.sqrt(np.pi) * a[big] ** 2)
    np.testing.assert_allclose(grad, want, rtol=1e-7)
    assert of_ints.dtype == "float32"  # Theano's upgrade_to_float of int8
    np.testing.assert_allclose(of_ints, scipy.special.erfcx(np.float32([0, 2])), rtol=1e-6)
