"""``THEANO_FLAGS`` and ``.theanorc``: how Theano programs are launched
(``THEANO_FLAGS=floatX=float32,device=cuda python lstm.py``).

Theano read both when it was imported; so does this layer, when ``symnb.compat.theano`` is
imported (symnb itself reads only ``SYMNB_FLAGS`` at import, symnb/config.py: these two are
Theano's, read by this layer alone, for the programs written for it). ``THEANO_FLAGS`` is
``name=value`` pairs separated by commas; ``.theanorc`` (``$THEANORC``, a list of files
separated by ``:``, else ``~/.theanorc`` and ``~/.theanorc.txt``) an INI file whose
``[global]`` section holds the plain flags and whose other sections the flags of a group
(``[warn]`` ``round = False`` is ``warn.round``). The environment's flags override the files'.
"""

from __future__ import annotations

import configparser
import os

from symnb import flags
from symnb.compat.theano.configdefaults import BY_LOWER


def parse_pairs(text: str, what: str = "THEANO_FLAGS") -> dict[str, str]:
    """``"a=1,b=x"`` -> ``{"a": "1", "b": "x"}`` (``symnb.flags.parse``, worded as Theano's)."""
    return flags.parse(text, what, form="name=value", example="floatX=float32,device=cpu")


def rc_paths(environ) -> list[str]:
    """The ``.theanorc`` files Theano read: ``$THEANORC`` or its two defaults."""
    listed = environ.get("THEANORC")
    if listed is None:
        listed = os.pathsep.join(["~/.theanorc", "~/.theanorc.txt"])
    return [os.path.expanduser(p) for p in listed.split(os.pathsep) if p]


def rc_defaults(environ) -> dict[str, str]:
    """The names Theano's ``.theanorc`` could interpolate (``%(USER)s``, ``%(PID)s``...)."""
    home_user = os.path.split(os.path.expanduser("~"))[-1]
    return {
        "USER": environ.get("USER", home_user),
        "LSCRATCH": environ.get("LSCRATCH", ""),
        "TMPDIR": environ.get("TMPDIR", ""),
        "TEMP": environ.get("TEMP", ""),
        "TMP": environ.get("TMP", ""),
        "PID": str(os.getpid()),
    }


def read_rc(paths, environ=None) -> dict[str, str]:
    """The flags of the ``.theanorc`` files that exist (later files win). As in Theano,
    values may use ``%(USER)s``, ``%(PID)s``, ``%(TMPDIR)s``, ``%(TEMP)s``, ``%(TMP)s`` and
    ``%(LSCRATCH)s``, a value starting with ``~`` is under the home directory, and names are
    case-insensitive (``floatx`` is ``floatX``)."""
    environ = os.environ if environ is None else environ
    defaults = rc_defaults(environ)
    parser = configparser.ConfigParser(defaults=defaults)
    parser.read([p for p in paths if os.path.isfile(p)])
    flags = {}
    for section in parser.sections():
        prefix = "" if section == "global" else section + "."
        for name in parser.options(section):
            if name in parser.defaults():  # USER, PID...: names to interpolate, not flags
                continue
            try:
                value = parser.get(section, name)
            except configparser.Error as exc:
                raise ValueError(f".theanorc: [{section}] {name}: {exc}") from None
            key = prefix + name
            key = BY_LOWER.get(key.lower(), key)
            flags[key] = os.path.expanduser(value) if value.startswith("~") else value
    return flags


def from_environment(environ=None) -> dict[str, str]:
    """Every flag the files and ``THEANO_FLAGS`` set, the environment's last."""
    environ = os.environ if environ is None else environ
    return {**read_rc(rc_paths(environ)), **parse_pairs(environ.get("THEANO_FLAGS", ""))}


def as_bool(value, name: str) -> bool:
    """Flag ``name``'s truth from its text (``True``, ``false``, ``1``, ``0``); a ValueError
    naming the flag for other text."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in flags.TRUE:
        return True
    if text and text in flags.FALSE:  # an empty value is no truth value here
        return False
    raise ValueError(
        f"theano.config.{name} must be True or False (1/0, yes/no, on/off), not {value!r}"
    )
