"""Static shape analysis: warnings for legal but error-prone shape patterns, hints for shape
errors, ``infer_shape``, and the check mode behind ``symnb check``.

The ops call into :mod:`symnb.shapes.warnings` with one-line hooks; the rules about what a
dim is stay in :mod:`symnb.core.dims`.
"""

from symnb.shapes.infer import infer_shape  # noqa: F401
