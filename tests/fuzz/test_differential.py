"""The differential fuzzer in ``make test``: random well-typed graphs (tests/fuzz/graphs.py)
compiled with and without rewrites on every backend ("opencl" where PoCL runs), against the
NumPy reference.

Batches of programs compile as one function, so their kernels compile together; a fixed seed
keeps the graphs the same from run to run (``make fuzz`` draws new ones for a given time).
"""

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.fuzz.graphs import Outcome, every_backend, judge, programs

BATCH = 12
EXAMPLES = 30  # 360 programs drawn; those whose reference raises are dropped
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
    judge(batch, every_backend(), outcome=OUTCOME)


def test_enough_graphs_were_compared():
    """The fuzzer above compared at least 300 graphs on every configuration."""
    assert OUTCOME.graphs >= 300, OUTCOME
