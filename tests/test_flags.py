"""``SYMNB_FLAGS``: ``sn.config``'s starting values from the environment, parsed by each
field's type; an unknown key or a bad value is an error that says what there is. Also
``symnb --version``."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import numpy as np
import pytest

import symnb as sn
from symnb import flags
from symnb.backends import LINKERS
from symnb.backends.c.compiler import find_compiler
from symnb.backends.cuda.runtime import LAUNCHERS
from symnb.config import BOOLS, CHOICES, Config
from symnb.errors import ArgumentError
from tests.helpers import run_python

SHOW = (
    "import symnb as sn\n"
    "c = sn.config\n"
    "print(c.backend, c.optimize, c.cc, c.floatX, c.cache_limit_mb, c.c_runner)\n"
)


def with_flags(value: str) -> dict:
    return dict(os.environ, SYMNB_FLAGS=value)


def import_error(value: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", "import symnb"],
        env=with_flags(value),
        capture_output=True,
        text=True,
    )
    assert done.returncode != 0, done.stdout
    return done.stderr.strip().splitlines()[-1]


def test_flags_set_config_fields_by_their_types():
    env = with_flags(
        "backend=py, optimize=stable,cc=clang,floatX=float32,cache_limit_mb=64,c_runner=off"
    )
    assert run_python(SHOW, env).split() == ["py", "stable", "clang", "float32", "64", "False"]


def test_without_flags_the_defaults_hold():
    env = {k: v for k, v in os.environ.items() if k != "SYMNB_FLAGS"}
    assert run_python(SHOW, env).split() == ["fast", "float64", "1024", "True"]  # "" fields


def test_sn_function_takes_its_backend_and_rewrites_from_the_config():
    code = (
        "import numpy as np, symnb as sn\n"
        "x = sn.tensor('x', shape=('n',))\n"
        "f = sn.function([x], sn.log(1 + sn.exp(x)))\n"
        "print(f.backend, len(f.rewrites), f(np.zeros(2))[0])\n"
        "g = sn.function([x], sn.log(1 + sn.exp(x)), backend='c', optimize='fast')\n"
        "print(g.backend, len(g.rewrites) > 0)\n"
    )
    lines = run_python(code, with_flags("backend=py,optimize=none")).splitlines()
    assert lines[0].split()[:2] == ["py", "0"]  # no rewrite ran
    assert float(lines[0].split()[2]) == pytest.approx(np.log(2))
    assert lines[1] == "c True"  # arguments win over the config


def test_config_defaults_reach_sn_function_in_process():
    x = sn.tensor("x", shape=("n",))
    before = sn.config.backend, sn.config.optimize
    try:
        sn.config.backend, sn.config.optimize = "py", "none"
        f = sn.function([x], sn.log(1 + x))
        assert f.backend == "py" and len(f.rewrites) == 0
        assert f._built_from[4:7] == ("py", None, "none")  # a pickle rebuilds it the same
    finally:
        sn.config.backend, sn.config.optimize = before


@pytest.mark.parametrize(
    "value,message",
    [
        (
            "backnd=py",
            "SYMNB_FLAGS: unknown setting 'backnd'; the settings are backend, "
            "c_runner, cache_limit_mb, cc, compiledir, cuda_debug_sync, cuda_device, "
            "cuda_launcher, device_loops, floatX, loop_products_on_one_thread, opencl_device, "
            "openmp, optimize, threads, "
            "verify_rewrites",
        ),
        (
            "backend=fortran",
            "SYMNB_FLAGS: config.backend must be '', 'c', 'py', 'opencl' or 'cuda', not 'fortran'",
        ),
        (
            "optimize=fastest",
            "SYMNB_FLAGS: config.optimize must be 'fast', 'stable' or 'none', not 'fastest'",
        ),
        (
            "floatX=float8",
            "SYMNB_FLAGS: config.floatX must be float16, float32 or float64, not 'float8'",
        ),
        ("cache_limit_mb=lots", "SYMNB_FLAGS: cache_limit_mb takes an integer, not 'lots'"),
        (
            "c_runner=maybe",
            "SYMNB_FLAGS: c_runner takes true or false (1/0, yes/no, on/off), not 'maybe'",
        ),
        (
            "backend",
            "SYMNB_FLAGS: 'backend' is not key=value (items are separated by commas, "
            "e.g. backend=py,optimize=stable)",
        ),
        ("progress=tqdm", "SYMNB_FLAGS: unknown setting 'progress'; the settings are backend,"),
    ],
)
def test_bad_flags_are_clear_errors(value, message):
    settings = Config()
    with pytest.raises(flags.FlagError) as info:
        flags.apply(settings, value, "SYMNB_FLAGS")
    assert str(info.value).startswith(message), str(info.value)
    assert settings == Config()  # nothing was set


def test_a_bad_flag_in_the_environment_stops_the_import_with_its_message():
    assert import_error("optimize=fast,backnd=py").endswith(
        "FlagError: SYMNB_FLAGS: unknown setting 'backnd'; the settings are backend, c_runner, "
        "cache_limit_mb, cc, compiledir, cuda_debug_sync, cuda_device, cuda_launcher, "
        "device_loops, floatX, "
        "loop_products_on_one_thread, opencl_device, openmp, optimize, threads, "
        "verify_rewrites"
    )


@pytest.mark.parametrize(
    "value, message",
    [
        (
            "threads=0",
            "config.threads must be None (the thread policy) or a number of threads of at "
            "least 1, not 0",
        ),
        ("floatX=float128", "config.floatX must be float16, float32 or float64, not 'float128'"),
        ("cuda_device=-1", "config.cuda_device must be a device number, 0 or more, not -1"),
    ],
)
def test_a_value_its_setting_refuses_names_no_line(value, message):
    """The setting's own refusal is a located error: the FlagError ended with its line, "at
    <frozen importlib._bootstrap>, line 241" at import, a line of no flag."""
    assert import_error(value) == f"symnb.flags.FlagError: SYMNB_FLAGS: {message}"
    with pytest.raises(flags.FlagError) as info:
        flags.apply(Config(), value, "SYMNB_FLAGS")
    assert str(info.value) == f"SYMNB_FLAGS: {message}"


def test_every_settable_field_is_listed_and_parsed():
    settable = flags.settable(Config())
    assert "progress" not in settable  # a callable is set in code, not from text
    assert set(settable) == {f.name for f in fields(Config)} - {"progress"}
    settings = Config()
    flags.apply(settings, "verify_rewrites=YES,,cache_limit_mb=3, compiledir=/tmp/x", "test")
    assert settings.verify_rewrites is True and settings.cache_limit_mb == 3
    assert settings.compiledir == "/tmp/x"
    flags.apply(settings, "cc=", "test")  # an empty value is the field's empty string
    assert settings.cc == ""
    flags.apply(settings, "threads=2", "test")
    assert settings.threads == 2
    flags.apply(settings, "threads=none", "test")
    assert settings.threads is None
    with pytest.raises(flags.FlagError, match="threads takes an integer or none, not 'all'"):
        flags.apply(settings, "threads=all", "test")
    with pytest.raises(flags.FlagError, match="config.threads must be None"):
        flags.apply(settings, "threads=0", "test")


@pytest.mark.parametrize("size", ["-1", "-5"])
def test_a_negative_cache_limit_is_refused(size):
    """``cache_limit_mb=-5`` was accepted ("0.0 MB of -5 MB"); a size is 0 or more."""
    settings = Config()
    with pytest.raises(flags.FlagError, match=r"cache_limit_mb must be a whole number of MB, 0 or"):
        flags.apply(settings, f"cache_limit_mb={size}", "SYMNB_FLAGS")
    for wrong in (float("nan"), True, "10"):
        with pytest.raises(ValueError, match=r"a whole number of MB, 0 or more"):
            settings.cache_limit_mb = wrong
    assert settings.cache_limit_mb == 1024
    settings.cache_limit_mb = 0


def test_the_cache_limit_is_a_whole_number_of_mb_as_declared():
    """Declared an int, it took inf and 0.5 (and 0.0); 0 is allowed, as documented, and a
    NumPy integer is kept as an int."""
    settings = Config()
    for wrong in (float("inf"), 0.5, 0.0, 512.0, np.float64(2)):
        with pytest.raises(ValueError, match=r"cache_limit_mb must be a whole number of MB"):
            settings.cache_limit_mb = wrong
    assert settings.cache_limit_mb == 1024
    settings.cache_limit_mb = np.int64(512)
    assert settings.cache_limit_mb == 512 and type(settings.cache_limit_mb) is int
    settings.cache_limit_mb = 0
    assert settings.cache_limit_mb == 0


@pytest.mark.parametrize(
    "name,meant", [("floatx", "floatX"), ("Backend", "backend"), ("c_runer", "c_runner")]
)
def test_a_misspelt_setting_is_an_error_naming_the_one_meant(name, meant, monkeypatch):
    """``sn.config.floatx = "float32"`` once made an attribute nothing reads."""
    message = f"sn.config has no setting {name!r}; did you mean {meant!r}?"
    with pytest.raises(AttributeError, match=message.replace("?", r"\?")):
        setattr(sn.config, name, "float32")
    assert name not in vars(sn.config)
    with pytest.raises(AttributeError, match=message.replace("?", r"\?")):
        getattr(sn.config, name)
    with pytest.raises(AttributeError, match="no setting 'zzz'; the settings are backend, c_"):
        sn.config.zzz = 1
    assert getattr(sn.config, "zzz", None) is None and hasattr(sn.config, meant)
    monkeypatch.setattr(sn.config, "optimize", "stable")  # a field is set as before
    assert sn.config.optimize == "stable"


def test_the_backend_choices_are_the_backends_there_are():
    assert set(CHOICES["backend"]) == set(LINKERS) | {""}


def test_symnb_version_from_the_command_line():
    commands = [[sys.executable, "-m", "symnb", "--version"]]
    script = Path(sys.executable).with_name("symnb")  # the console script pip installed
    if script.exists():
        commands.append([str(script), "--version"])
    for command in commands:
        done = subprocess.run(command, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == f"symnb {sn.__version__}"


def test_the_version_is_written_once_in_pyproject():
    from symnb.version import _from_pyproject

    assert sn.__version__ == _from_pyproject(Path(sn.__file__).parent.parent / "pyproject.toml")
    assert '__version__ = "' not in Path(sn.__file__).read_text()


def test_the_version_is_read_from_pyproject_in_an_uninstalled_tree(tmp_path):
    from symnb.version import UNKNOWN, _from_pyproject

    (tmp_path / "pyproject.toml").write_text(
        '[build-system]\nversion = "9"\n\n[project]\nname = "symnb"\nversion = "1.2.3"\n'
        '\n[tool.x]\nversion = "7"\n'
    )
    assert _from_pyproject(tmp_path / "pyproject.toml") == "1.2.3"
    assert _from_pyproject(tmp_path / "missing.toml") == UNKNOWN


def test_the_version_is_the_running_packages_not_another_installed_ones(tmp_path, monkeypatch):
    """A checkout on sys.path where another symnb is installed said the installed one's
    version (its metadata); the pyproject.toml beside the package is the running one's."""
    from importlib import metadata

    from symnb import version as module

    monkeypatch.setattr(metadata, "version", lambda name: "0.0.1")  # another symnb, installed
    tree = tmp_path / "pyproject.toml"
    tree.write_text('[project]\nname = "symnb"\nversion = "9.9.9"\n')
    monkeypatch.setattr(module, "PYPROJECT", tree)
    assert module.version() == "9.9.9"
    tree.write_text('[project]\nname = "site"\nversion = "9.9.9"\n')  # not symnb's own
    assert module.version() == "0.0.1"
    monkeypatch.setattr(module, "PYPROJECT", tmp_path / "missing.toml")  # installed files
    assert module.version() == "0.0.1"


@pytest.mark.parametrize("name", ["openmp", "c_runner", "verify_rewrites", "cuda_debug_sync"])
@pytest.mark.parametrize("wrong", ["false", "no", 0, 1, None])
def test_a_bool_setting_takes_only_true_or_false(name, wrong):
    """``sn.config.openmp = "false"`` was taken as true (``bool("false")``)."""
    settings = Config()
    before = getattr(settings, name)
    with pytest.raises(ArgumentError, match=rf"config.{name} must be True or False, not {wrong!r}"):
        setattr(settings, name, wrong)
    assert getattr(settings, name) is before
    setattr(settings, name, np.bool_(not before))  # NumPy's bool is one, stored as Python's
    assert getattr(settings, name) is (not before)


def test_the_bool_settings_are_the_fields_declared_bool():
    assert set(BOOLS) == {f.name for f in fields(Config) if f.type in (bool, "bool")}


@pytest.mark.parametrize("name", ["cc", "compiledir"])
def test_a_path_setting_takes_a_path_and_keeps_its_text(name, tmp_path):
    """``sn.config.cc = pathlib.Path(...)`` failed in the compiler's lookup (AttributeError:
    no ``strip``); ``compiledir = 5`` at the first compile, naming neither setting nor value."""
    settings = Config()
    setattr(settings, name, tmp_path / "x")
    assert getattr(settings, name) == str(tmp_path / "x")
    assert type(getattr(settings, name)) is str
    for wrong in (5, None, b"/usr/bin/gcc", ["gcc"]):
        with pytest.raises(ArgumentError, match=rf"config.{name} must be a path .* of type"):
            setattr(settings, name, wrong)
    assert getattr(settings, name) == str(tmp_path / "x")


def test_a_pathlib_compiler_compiles(monkeypatch):
    cc = find_compiler()
    if cc is None:
        pytest.skip("no C compiler")
    monkeypatch.setattr(sn.config, "cc", Path(cc))
    assert find_compiler() == cc
    x = sn.vector("x")
    f = sn.function([x], sn.exp(x) + 1, backend="c")
    np.testing.assert_allclose(f(np.ones(3)), np.exp(np.ones(3)) + 1)


def test_the_progress_setting_and_the_launcher_are_checked():
    settings = Config()
    with pytest.raises(ArgumentError, match="config.progress must be callable.*not None"):
        settings.progress = None
    with pytest.raises(ValueError, match="config.cuda_launcher must be '', 'cuda-python' or"):
        settings.cuda_launcher = "cupy"
    settings.cuda_launcher = "pycuda"


def test_the_launcher_choices_are_the_launchers_there_are():
    assert set(CHOICES["cuda_launcher"]) == set(LAUNCHERS) | {""}


BAD_SETTINGS = {
    "threads": 0,
    "backend": "C",
    "optimize": "Fast",
    "floatX": "float128",
    "cache_limit_mb": -1,
    "cuda_device": -1,
    "opencl_device": 7,
    "device_loops": "gpu",
    "cuda_launcher": "numba",
    "openmp": "false",
    "cc": None,
}


@pytest.mark.parametrize("name", sorted(BAD_SETTINGS))
def test_every_refused_setting_is_an_argument_error_naming_it(name):
    """docs/notebook.md: a value is checked when set, an sn.ArgumentError naming the setting
    (most settings raised a plain ValueError, which `except sn.ArgumentError` missed); it is
    still a ValueError."""
    before = getattr(sn.config, name)
    with pytest.raises(sn.ArgumentError, match=f"config.{name}") as caught:
        setattr(sn.config, name, BAD_SETTINGS[name])
    assert isinstance(caught.value, ValueError)
    assert getattr(sn.config, name) == before
