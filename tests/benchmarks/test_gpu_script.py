"""``python -m benchmarks.gpu`` on a machine without a CUDA GPU: one clear line, exit 0."""

import pytest

from benchmarks import gpu


def test_without_a_gpu_it_says_so_and_exits_0(capsys):
    if gpu.cuda_problem() is None:
        pytest.skip("a CUDA GPU is present: the script would time it")
    assert gpu.main() == 0
    out = capsys.readouterr().out
    assert out.startswith("benchmarks.gpu: no CUDA GPU to run on, nothing timed (")
    assert "cuda" in out.lower() and len(out.splitlines()) == 1
