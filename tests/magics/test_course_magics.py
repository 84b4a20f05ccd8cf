"""What a student sees of the notebook layer (issue 34): the In[N] of an error raised in a
``%%symcompile`` cell, and ``sn.magics.stepper(f)`` with no ``%load_ext symnb``."""

import textwrap

from tests.helpers import run_python

CELLS = textwrap.dedent(
    """\
    from IPython.testing.globalipapp import start_ipython
    shell = start_ipython()
    shell.run_cell("%load_ext symnb", store_history=True)
    shell.run_cell("import numpy as np", store_history=True)
    number = shell.execution_count
    cell = '%%symcompile f\\nx = tensor("x", shape=(3,))\\n'
    cell += 'W = tensor("W", shape=(4, 5))\\ny = W @ x\\ny'
    result = shell.run_cell(cell, store_history=True)
    print("NUMBER", number)
    print("ERROR", result.error_in_exec)
    """
)


def test_an_error_in_a_symcompile_cell_names_that_cells_number():
    out = run_python(CELLS)
    number = out.split("NUMBER ")[1].split()[0]
    text = out.split("ERROR ")[1]
    assert "matmul: inner dims differ" in text
    assert f"at notebook cell, line 4: y = W @ x  (In[{number}])" in text


def test_the_stepper_needs_no_load_ext():
    out = run_python(
        "import symnb as sn\n"
        "x = sn.tensor('x', shape=(3,))\n"
        "f = sn.function([x], sn.log(1 + x))\n"
        "stepper = sn.magics.stepper(f)\n"
        "print(type(stepper).__name__, len(stepper.history) > 0)\n"
    )
    assert out.split() == ["RewriteStepper", "True"]
