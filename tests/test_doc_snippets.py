"""The Python snippets of docs/*.md run as written, each document's snippets in order in one
fresh process (a snippet may register a rule or set a warning filter). Fragments that use
names the prose defines get those names from a small preamble per document."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).parents[1] / "docs"
BLOCK = re.compile(r"```python\n(.*?)```", re.S)
COMMON = "import numpy as np\nimport symnb as sn\n"
#: names a document's prose defines before its fragments use them
PREAMBLE = {
    "rewrites.md": (
        "x = sn.tensor('x', shape=('batch', 4)); y = sn.tensor('y', shape=('batch',), "
        "dtype='int64')\nW = sn.shared(np.ones((4, 3)), name='W')\n"
        "loss = sn.mean(sn.crossentropy(sn.softmax(x @ W), y))\n"
        "updates = {W: W - 0.1 * sn.grad(loss, W)}\nins, outs = [x, y], [loss]\n"
    ),
}
#: what each document's snippets must have done, checked after they ran
CHECKS = {
    "autodiff.md": "assert gW.type.shape == (64, 10) and callable(train)\n",
    "c_backend.md": "assert f(np.array(True), np.zeros(3)) == 3.0\n",
    "random.md": "assert mask.type.shape == ('batch', 8) and len(rng.updates()) == 2\n",
    "rewrites.md": (
        "assert f.rewrites.counts() and 'sin_of_neg' in sn.opt.RULES\n"
        "v = sn.vector('v')\n"
        "assert sn.function([v], sn.sin(-v)).rewrites.counts().get('sin_of_neg') == 1\n"
    ),
    "shapes.md": "assert any(f[2] is sn.ShapeWarning for f in warnings.filters)\n",
    "theano.md": "assert W.get_value().shape == (4, 3) and W.get_value().any()\n",
    "loops.md": "assert hs.type.shape[1:] == ('batch', 32) and gW_value.shape == (32, 32)\n",
}


def documents() -> list[Path]:
    return sorted(p for p in DOCS.glob("*.md") if BLOCK.search(p.read_text()))


def test_the_documents_with_snippets_are_all_checked():
    assert {p.name for p in documents()} == set(CHECKS)


@pytest.mark.parametrize("doc", documents(), ids=lambda p: p.name)
def test_document_snippets_run(doc, tmp_path):
    code = COMMON + PREAMBLE.get(doc.name, "") + "\n".join(BLOCK.findall(doc.read_text()))
    script = tmp_path / "snippets.py"
    script.write_text(code + "\n" + CHECKS[doc.name] + "print('snippets ran')\n")
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0 and "snippets ran" in done.stdout, done.stderr[-3000:]
