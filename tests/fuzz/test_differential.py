"""The differential fuzzer in ``make test``: random well-typed graphs (tests/fuzz/graphs.py)
compiled with and without rewrites on every backend ("opencl" where PoCL runs), against the
NumPy reference; the steps NumPy judges too against NumPy's own functions; and the float
programs' gradients on the host backends against the reference's (tests/fuzz/gradients.py).

Batches of programs compile as one function, so their kernels compile together; a fixed seed
keeps the graphs the same from run to run (``make fuzz`` draws new ones for a given time, and
spot-checks gradients by finite differences too).
"""

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.fuzz.gradients import judge_gradients
from tests.fuzz.graphs import Outcome, every_backend, judge, programs

BATCH = 12
#: 288 programs drawn (those whose reference raises are dropped). The shape ops, products and
#: scans give a batch more kernels to compile than the elementwise steps alone did: 24
#: batches take the time 30 took then
EXAMPLES = 24
#: where the gradients are compared here: the rewrites ("py"), and with them the C kernels.
#: PoCL's compiles of them (a sixth of the test's time) and the C kernels of each op alone
#: ("c" without rewrites) are left to ``make fuzz``
GRADIENT_CONFIGS = [("py", "fast"), ("c", "fast"), ("py", "stable")]
OUTCOME = Outcome()


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    phases=[Phase.generate],
    suppress_health_check=list(HealthCheck),
)
@given(st.lists(programs(), min_size=BATCH, max_size=BATCH))
def test_random_graphs_agree_with_numpy(batch):
    kept = judge(batch, every_backend(), outcome=OUTCOME)
    judge_gradients(kept, GRADIENT_CONFIGS, OUTCOME, finite_differences=False)


def test_enough_graphs_were_compared():
    """The fuzzer above compared at least 250 graphs on every configuration, 250 of their
    steps with NumPy and 25 of their gradients."""
    assert OUTCOME.graphs >= 250, OUTCOME
    assert OUTCOME.numpy_checks >= 250, OUTCOME
    assert OUTCOME.grad_graphs >= 25, OUTCOME
