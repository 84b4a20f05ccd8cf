"""``theano.tensor.opt``: Theano's graph rewrites, which symnb does not have by these names.

Importing the module works (programs import it for one name); reading any name from it is an
error that says where symnb's rewrites are.
"""

from symnb.compat.theano.missing import missing


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    raise missing(
        name,
        f"theano.tensor.opt.{name}: Theano's graph rewrites are not in symnb's Theano layer; "
        "symnb's own are rules in phases (symnb.opt, docs/rewrites.md): choose them with "
        "theano.compile.Mode().including(...)/excluding(...) by symnb's names, and see what "
        "fired in f.rewrites",
    )
