"""``theano.misc.pkl_utils``: ``dump(obj, file)``, ``load(file)`` and ``StripPickler``.

Theano wrote a zip of the pickle and of each shared variable's array; here it is the
pickle of the object (shared variables and compiled functions pickle with their values),
so files written by Theano cannot be read, and files written here only by
this layer.
"""

from __future__ import annotations

import pickle

from symnb.core.variable import Tag


def dump(obj, file_handler, protocol=pickle.HIGHEST_PROTOCOL, persistent_id=None):
    """Pickle ``obj`` to the open binary file ``file_handler``."""
    pickle.dump(obj, file_handler, protocol=protocol)


def load(f, persistent_load=None):
    """The object ``dump`` wrote to the open binary file ``f``."""
    return pickle.load(f)  # noqa: S301 - the user's own file, as Theano's load


class StripPickler(pickle.Pickler):
    """Theano 1.0's ``StripPickler(file, protocol=0, extra_tag_to_remove=None)``: a pickler
    that leaves out the tags ``trace`` and ``test_value`` (and those ``extra_tag_to_remove``
    names) of the variables and nodes it pickles. Theano deleted them from the objects
    themselves; here only the pickle goes without them."""

    def __init__(self, file, protocol=0, extra_tag_to_remove=None):
        super().__init__(file, protocol)
        self.tag_to_remove = ["trace", "test_value", *(extra_tag_to_remove or ())]

    def reducer_override(self, obj):
        if isinstance(obj, Tag) and any(key in obj for key in self.tag_to_remove):
            kept = [(key, value) for key, value in obj.items() if key not in self.tag_to_remove]
            return Tag, (), None, None, iter(kept)
        return NotImplemented
