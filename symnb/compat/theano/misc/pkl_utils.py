"""``theano.misc.pkl_utils``: ``dump(obj, file)`` and ``load(file)``.

Theano wrote a zip of the pickle and of each shared variable's array; here it is the
pickle of the object (shared variables and compiled functions pickle with their values),
so files written by Theano cannot be read, and files written here only by this layer.
"""

from __future__ import annotations

import pickle


def dump(obj, file_handler, protocol=pickle.HIGHEST_PROTOCOL, persistent_id=None):
    """Pickle ``obj`` to the open binary file ``file_handler``."""
    pickle.dump(obj, file_handler, protocol=protocol)


def load(f, persistent_load=None):
    """The object ``dump`` wrote to the open binary file ``f``."""
    return pickle.load(f)  # noqa: S301 - the user's own file, as Theano's load


StripPickler = pickle.Pickler
