"""``theano.misc.pkl_utils``: ``dump(obj, file)``, ``load(file)`` and ``StripPickler``.

Theano wrote a zip of the pickle and of each shared variable's array; here it is the
pickle of the object (shared variables and compiled functions pickle with their values),
so files written by Theano cannot be read (``load`` says so), and files written here only by
this layer.
"""

from __future__ import annotations

import io
import pickle

from symnb.core.variable import Tag
from symnb.errors import InputError

#: how a zip archive starts (Theano's ``pkl_utils.dump`` wrote one)
_ZIP_MAGIC = b"PK\x03\x04"


def dump(obj, file_handler, protocol=pickle.HIGHEST_PROTOCOL, persistent_id=None):
    """Pickle ``obj`` to the open binary file ``file_handler``."""
    pickle.dump(obj, file_handler, protocol=protocol)


def load(f, persistent_load=None):
    """The object ``dump`` wrote to the open binary file ``f``. A zip archive Theano's
    ``pkl_utils.dump`` wrote is an InputError saying so (it was pickle's "persistent id"
    message)."""
    f, head = _peeked(f, len(_ZIP_MAGIC))
    if head == _ZIP_MAGIC:
        name = getattr(f, "name", None)
        raise InputError(
            f"pkl_utils.load: {'the file' if name is None else repr(name)} is a zip archive, "
            "as Theano's pkl_utils.dump wrote (a 'pkl' entry and one entry per array); this "
            "layer's dump/load write and read a plain pickle and cannot read Theano's files: "
            "load it with Theano, save the arrays (W.get_value()) with numpy.save, and make "
            "the shared variables here from them"
        )
    return pickle.load(f)  # noqa: S301 - the user's own file, as Theano's load


def _peeked(f, n: int):
    """The file (``f``, or the bytes read from it where it cannot go back) and its first
    ``n`` bytes, none of them consumed."""
    if getattr(f, "seekable", lambda: False)():
        where = f.tell()
        head = f.read(n)
        f.seek(where)
        return f, head
    rest = f.read()
    return io.BytesIO(rest), rest[:n]


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
