"""The README's example runs as written."""

from pathlib import Path

README = Path(__file__).parents[1] / "README.md"


def test_readme_example_runs(capsys):
    text = README.read_text()
    first = text.splitlines()[3:5]
    assert first[0].startswith("make demo") and first[1].startswith("make test")
    code = text.split("```python\n")[1].split("```")[0]
    namespace: dict = {}
    exec(compile(code, str(README), "exec"), namespace)
    out = capsys.readouterr().out
    assert "= softmax_cross_entropy" in out and "gemm" in out
    assert namespace["train"].rewrites.counts()
