"""``sn.progress`` in a Jupyter kernel: tqdm's widget while it runs where tqdm is installed,
symnb's own otherwise; either way the output becomes one line when the loop ends, which is
what a saved or exported notebook shows."""

import pytest

from tests.magics.nbtools import data, execute, mimetypes, notebook, stream

pytest.importorskip("ipywidgets")
pytest.importorskip("tqdm")

WIDGET = "application/vnd.jupyter.widget-view+json"
CELLS = [
    # count the bars tqdm's notebook class makes, and what they counted
    "import tqdm.notebook\nimport symnb as sn\nbars = []\n"
    "class Counted(tqdm.notebook.tqdm):\n"
    "    def __init__(self, *args, **kwargs):\n"
    "        super().__init__(*args, **kwargs)\n"
    "        bars.append(self)\n"
    "tqdm.notebook.tqdm = Counted",
    "sum(sn.progress(range(8), label='work'))",
    "print([(b.desc, b.n, b.total, type(b.container).__name__) for b in bars])",
    "import sys\nsys.modules['tqdm'] = sys.modules['tqdm.notebook'] = None  # tqdm uninstalled\n"
    "sum(sn.progress(range(6), label='own'))",
    "print(len(bars))",
]


@pytest.fixture(scope="module")
def cells(tmp_path_factory):
    nb = notebook(*CELLS)
    execute(nb, str(tmp_path_factory.mktemp("nb")))
    return nb.cells


def test_tqdm_draws_the_bar_in_a_kernel_and_leaves_one_line(cells):
    assert stream(cells[2]).strip() == "[('work', 8, 8, 'TqdmHBox')]"
    assert WIDGET not in mimetypes(cells[1])  # the widget closed; its output is the summary
    assert "work: 8/8 done" in data(cells[1], "text/html")[0]
    assert data(cells[1], "text/plain") == ["work: 8/8 done", "28"]


def test_without_tqdm_symnbs_own_widget_runs(cells):
    assert stream(cells[4]).strip() == "1"  # no new tqdm bar
    assert data(cells[3], "text/plain") == ["own: 6/6 done", "15"]
