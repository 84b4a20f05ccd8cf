"""The ``symnb check`` tool (:mod:`symnb.shapes.checker`): runs a script or notebook statement
by statement in check mode and reports shape errors and warnings at the user's lines.

It sits on top of the library. The shape analysis it reports lives below: warnings, hints and
``infer_shape`` in :mod:`symnb.core.shapes`, check mode in :mod:`symnb.compile.checkmode`.
"""
