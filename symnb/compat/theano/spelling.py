"""Messages in Theano's names where the user's code is Theano code.

symnb's messages suggest its own functions (``sn.where``, ``sn.ifelse``, ``sn.cast``); a
student running a Theano course through this layer has ``T`` and ``theano`` in hand, not
``sn``. The "spelling" hook of core (``symnb.core.hooks.spelled``) rewrites those names when
the user's frame (the first outside symnb) reaches this layer through its globals: a module
such as ``T`` or a function such as ``function`` imported from it. Code that uses symnb's
own API keeps symnb's names.
"""

from __future__ import annotations

import re
import types

from symnb.core.hooks import register
from symnb.core.source import user_frame

#: symnb's names in messages -> Theano's, in the order they are replaced
THEANO_NAMES = (
    (" (also spelled sn.switch)", ""),
    ("sn.config.floatX", "theano.config.floatX"),
    ("sn.where", "T.switch"),
    ("sn.switch", "T.switch"),
    ("sn.ifelse", "ifelse"),
    ("sn.cast", "T.cast"),
    ("sn.any", "T.any"),
    ("sn.all", "T.all"),
    ("sn.scan", "theano.scan"),
    ("sn.set_subtensor", "T.set_subtensor"),
    ("sn.inc_subtensor", "T.inc_subtensor"),
    ("sn.function", "theano.function"),
    ("sn.grad", "T.grad"),
    ("sn.disconnected_grad", "theano.gradient.disconnected_grad"),
    ("sn.Lop", "T.Lop"),
    ("sn.Rop", "T.Rop"),
    ("sn.jacobian", "T.jacobian"),
    ("sn.hessian", "T.hessian"),
    ("sn.sum", "T.sum"),
    ("sn.mean", "T.mean"),
    ("sn.shared", "theano.shared"),
    ("sn.tensor/sn.matrix/...", "T.matrix/T.tensor4/..."),
)
LAYER = "symnb.compat.theano"
#: where a message quotes the user's source line (``at prog.py, line 12: y = sn.sum(x)``)
QUOTED_SOURCE = re.compile(r", line \d+: ")


def theano_spelling(message: str) -> str:
    """``message`` with Theano's names where the user's code is Theano code."""
    frame = user_frame()
    if frame is None or not uses_theano(frame.f_globals):
        return message
    return "\n".join(_respelled(line) for line in message.split("\n"))


def _respelled(line: str) -> str:
    """One line of a message in Theano's names; a quoted line of the user's program (after
    ``, line 12: ``) is left as the user wrote it."""
    quoted = QUOTED_SOURCE.search(line)
    said, source = (line[: quoted.end()], line[quoted.end() :]) if quoted else (line, "")
    for old, new in THEANO_NAMES:
        said = said.replace(old, new)
    return said + source


def uses_theano(namespace: dict) -> bool:
    """Whether a module's (or notebook's) globals hold this layer or something from it."""
    for value in list(namespace.values()):
        if isinstance(value, types.ModuleType):
            name = value.__name__
        else:
            try:
                name = getattr(value, "__module__", None)
            except Exception:  # an object whose attributes misbehave: not ours
                continue
        if isinstance(name, str) and name.startswith(LAYER):
            return True
    return False


register("spelling", theano_spelling)
