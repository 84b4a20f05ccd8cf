"""Static shape analysis below the ops: the broadcast rule (:mod:`~symnb.core.shapes.broadcast`),
warnings for legal but error-prone shape patterns (:mod:`~symnb.core.shapes.warnings`), hints
appended to shape errors (:mod:`~symnb.core.shapes.hints`) and ``sn.infer_shape``.

The ops call into them while building nodes, with one-line hooks; the rules about what a dim
is stay in :mod:`symnb.core.dims`. Check mode, which runs the ops' rules on a call's concrete
shapes, is a linker of the compiler (:mod:`symnb.compile.checkmode`), and the ``symnb check``
tool sits on top (:mod:`symnb.shapes.checker`).
"""

from symnb.core.shapes.infer import infer_shape  # noqa: F401
