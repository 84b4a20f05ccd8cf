"""Backend "c": the graph becomes a plan (symnb/backends/plan.py) of C kernels, BLAS calls,
views and library calls, which runner.c runs (symnb/backends/execute.py runs the single steps
it hands back, and every call where there is no runner).

The planning every kernel target shares is ``KernelLinker``'s
(symnb/backends/planning/kernel_linker.py); this target adds C (the dialect, the compiler and
its cache), products as one ``?gemm`` call through NumPy's BLAS (2-d matmul, gemm and the
products inside convolutions), loops and lazy branches run by runner.c, and views at an
offset.
"""

from __future__ import annotations

import numpy as np

from symnb.backends import execute
from symnb.backends.c import blas, cache, runner, threads
from symnb.backends.c.dialect import CDialect
from symnb.backends.listing import KernelInfo
from symnb.backends.plan import Gemm, Library
from symnb.backends.planner import PLANS
from symnb.backends.planning.kernel_linker import KernelLinker
from symnb.core.dims import DimExpr, is_symbolic, names_in
from symnb.ops.blas import Gemm as GemmOp
from symnb.ops.linalg import Matmul


class CLinker(KernelLinker):
    """Compiles a Graph into a plan; ``run(values) -> outputs`` (see symnb/backends/py.py)."""

    name = "c"
    steps_timed = True
    dialect = CDialect()
    #: a host BLAS, loops and lazy branches in runner.c, views that start at an offset
    capabilities = frozenset({"blas", "loops", "branches", "offset_views"})

    def __init__(self, graph, leaves: list):
        super().__init__(graph, leaves)
        self._schedule = _UNMADE
        self._fixed_dims: dict = {}  # (fix_dims)
        self._load_kernels()

    def product_step(self, steps, a, b, out) -> Gemm:
        """``out = a @ b`` of two matrices inside a convolution's steps: one ``?gemm``."""
        ref = blas.gemm_ref(steps.dtype)
        fallback = steps.fallback(np.matmul, [a, b], out, kind="blas")
        step = Gemm(
            None,
            None,
            steps.slot(a),
            steps.slot(b),
            None,
            fallback.outs[0],
            steps.dtype,
            False,
            ref,
            steps.node,
            fallback,
        )
        steps.note("blas", blas.describe(ref))
        return step

    def _load_kernels(self) -> None:
        """Compile every kernel of the plan at once (cache.py batches them)."""
        with threads.openmp_environment():  # the first library may bring OpenMP in
            addresses = cache.load_many([ref.source for ref in self.kernel_refs])
        for ref, address in zip(self.kernel_refs, addresses):
            ref.load(None, address)  # the Python executor makes its cffi function

    # -- running ----------------------------------------------------------------------------
    def runner(self):
        """The plan as one C call (runner.py; the extension is built or loaded on the first
        one), made once; None where it does not apply (then the Python executor runs every
        call)."""
        if self._schedule is _UNMADE:
            shared = self._named_shared()
            self._schedule = runner.schedule(self.plan, shared, self._fixed_dims)
            every = runner.checks_every_dim([*self.plan.inputs, *shared], self._fixed_dims)
            self.runner_skips_dims = self._schedule is not None and not every
        return self._schedule

    def fix_dims(self, sizes: dict) -> None:
        """Named dims the runner checks as fixed (an update ties them): a call giving another
        size is declined, and the input checks name the update."""
        self._fixed_dims = dict(sizes)
        self._schedule = _UNMADE

    def _named_shared(self) -> list:
        """(dtype, shape) of the shared values with named or expression dims, which lead the
        shared arguments (sn.function puts them first): the runner checks their names with the
        inputs', and declines a call where one differs (the input checks then say which). An
        expression dim of names the value's plain dims give (``("n", "n+1")``) is its own
        value's check (``set_value``) and unchecked here; any other (``("2*n",)``, which gives
        n) the Python input checks check before each call reaches the runner, as an input's
        expression dim."""
        found = []
        for leaf in self.leaves[len(self.plan.inputs) : self.plan.nargs]:
            shape = leaf.type.shape
            if not any(map(is_symbolic, shape)):
                break
            plain = {d for d in shape if isinstance(d, str)}
            shape = tuple(
                None if isinstance(d, DimExpr) and names_in(d) <= plain else d for d in shape
            )
            found.append((leaf.type.dtype, shape))
        return found

    def entry(self, fast, owner, call, declined, structure, names, **state):
        """The C runner's ``Entry`` (runner_entry.h) where the runner runs this plan."""
        if self.runner() is None:
            return None
        return runner.entry(fast, owner, call, declined, structure, names, **state)

    def run(self, leaf_values: list) -> list:
        """A call without the runner (none could be built, or it is turned off)."""
        return execute.run(self.plan, leaf_values)

    def run_profiled(self, leaf_values: list) -> tuple[list, list]:
        """Like ``run``, timing each step: ``(outputs, [(node, seconds, bytes, kind, steps,
        within), ...])`` where ``kind`` is the step's (kernel, blas, view, library, loop).
        The runner times its own steps, the path a plain call takes; without a runner the
        Python executor times its steps. A separate call, so the normal call pays nothing
        for profiling (``f.profile()``)."""
        schedule = self.runner()
        timed = None if schedule is None else runner.run_profiled(schedule, self.plan, leaf_values)
        return timed or execute.run_profiled(self.plan, leaf_values)


_UNMADE = object()  # CLinker._schedule before runner() first ran


# -- products through the host BLAS -----------------------------------------------------------
@PLANS.register(GemmOp, needs={"blas"})
def _gemm(linker: CLinker, node) -> Gemm:
    z, alpha, x, y, beta = (linker.slot[id(v)] for v in node.inputs)
    return _gemm_step(linker, node, (z, alpha, x, y, beta), node.op.inplace)


@PLANS.register(Matmul, needs={"blas"})
def _matmul(linker: CLinker, node) -> Gemm | Library:
    """Matrices, or a matrix and a vector (``T.dot(x, w)``): one ?gemm call in runner.c where
    the product is small (runner_gemm.h's VECTOR_MAX), else NumPy's matmul (its gemv)."""
    x, y = node.inputs
    dtype = node.outputs[0].type.dtype
    ranks = (x.type.ndim, y.type.ndim)
    if ranks not in ((2, 2), (2, 1), (1, 2)) or not x.type.dtype == y.type.dtype == dtype:
        return linker._library_step(node, "BLAS through numpy.matmul", kind="blas")
    if dtype.name not in blas.FLOATS:
        return linker._library_step(node, "BLAS through numpy.matmul", kind="blas")
    slots = (None, None, linker.slot[id(x)], linker.slot[id(y)], None)
    return _gemm_step(linker, node, slots, inplace=False)


def _gemm_step(linker: CLinker, node, slots: tuple, inplace: bool) -> Gemm:
    dtype = node.outputs[0].type.dtype
    ref = blas.gemm_ref(dtype)
    fallback = linker.owning(linker.library(node, kind="blas"))
    linker.kernels.append(KernelInfo("blas", node, None, blas.describe(ref)))
    return Gemm(*slots, fallback.outs[0], dtype, inplace, ref, node, fallback)
