"""A function compiled by %%symcompile in a kernel and the same graph compiled by sn.function in
a plain script use identical kernels: same cache keys, and the script compiles nothing."""

import json
import subprocess
import sys

from tests.helpers import needs_c
from tests.magics.nbtools import data, execute, notebook, stream

pytestmark = needs_c

REPORT = (
    "import json\nfrom symnb.backends.c.cache import cache_key, stats\n"
    "f(np.ones(5, 'float32'), np.ones(5, 'float32'))\n"
    "print(json.dumps({'keys': [cache_key(s) for s in f.kernels.sources()],"
    " 'compiles': stats.compiles}))"
)
CELL = (
    "%%symcompile f --backend c --quiet --show kernels\n"
    "x = tensor('x', shape=('n',), dtype='float32')\n"
    "y = tensor('y', shape=('n',), dtype='float32')\n"
    "sqrt(exp(x) * y + 1.0)"
)
SCRIPT = """
import json
import numpy as np
import symnb as sn
from symnb.backends.c.cache import cache_key, forbid_compile, stats

x = sn.tensor('x', shape=('n',), dtype='float32')
y = sn.tensor('y', shape=('n',), dtype='float32')
with forbid_compile():  # a kernel missing from the cache raises CacheMiss
    f = sn.function([x, y], sn.sqrt(sn.exp(x) * y + 1.0), backend='c', name='f')
    f(np.ones(5, 'float32'), np.ones(5, 'float32'))
print(json.dumps({'keys': [cache_key(s) for s in f.kernels.sources()],
                  'compiles': stats.compiles, 'hits': stats.disk_hits + stats.memory_hits}))
"""


def test_symcompile_and_a_script_share_kernels(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # a fresh, empty cache
    monkeypatch.delenv("SYMNB_COMPILEDIR", raising=False)  # (which would win over it)
    nb = notebook("%load_ext symnb\nimport numpy as np", CELL, REPORT)
    execute(nb, str(tmp_path))
    in_kernel = json.loads(stream(nb.cells[2]))
    (kernels_html,) = data(nb.cells[1], "text/html")  # --show kernels: the generated C
    assert "kernels (" in kernels_html and "<pre>" in kernels_html
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        capture_output=True,
        text=True,
        cwd=str(tmp_path),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    in_script = json.loads(done.stdout)
    assert in_kernel["keys"] and in_kernel["compiles"] >= 1
    assert in_script["keys"] == in_kernel["keys"]
    assert in_script["compiles"] == 0 and in_script["hits"] >= len(in_script["keys"])
