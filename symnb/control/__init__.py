"""Control flow: ``sn.scan`` (loops, docs/loops.md) and ``sn.ifelse`` (lazy branches).

This layer sits above symnb.grad: a scan's gradient is a backward scan whose step is the
inner graph differentiated by ``sn.Lop``, and ``sn.jacobian`` of a symbolic shape
(:mod:`symnb.control.jacobian`) is a scan over its rows. The rewrites (symnb.opt) and the
backends sit above it.
"""

import sys as _sys

from symnb.control import ifelse as _ifelse_module
from symnb.control import loop as _loop
from symnb.control import loop_graph as _loop_graph
from symnb.control import scan as _scan_module
from symnb.control import scan_build as _scan_build
from symnb.control import scan_grad as _scan_grad
from symnb.control.ifelse import ifelse  # noqa: F401
from symnb.control.scan_build import scan, until  # noqa: F401

# Functions pickled before these modules moved out of symnb.ops name their ops by the old
# paths (``symnb.ops.scan.Scan``, ``symnb.ops.loop.Loop``, ``symnb.ops.ifelse.IfElse``):
# the old module names stay importable, as the moved modules, so those pickles still load.
for _old, _module in {
    "symnb.ops.ifelse": _ifelse_module,
    "symnb.ops.loop": _loop,
    "symnb.ops.loop_graph": _loop_graph,
    "symnb.ops.scan": _scan_module,
    "symnb.ops.scan_build": _scan_build,
    "symnb.ops.scan_grad": _scan_grad,
}.items():
    _sys.modules.setdefault(_old, _module)
