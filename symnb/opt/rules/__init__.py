"""The built-in rules, one module per kind; importing this package registers them all.

The import order is the order rules are tried within a phase: merging and folding first.
"""

# ruff: noqa: I001, F401 - imported in this order for their registrations
from symnb.opt.rules import merge, fold
from symnb.opt.rules import canonical, control, shapes, stabilize, handwritten
from symnb.opt.rules import specialize, xent, fuse, inplace
from symnb.opt.rules import loops
