"""``%%symcompile`` cells run by an IPython shell (``start_ipython``, history stored, in a
process of their own): options, error lines, views and the names a failing cell keeps."""

import json
import re
import textwrap

from tests.helpers import run_python

SCRIPT = textwrap.dedent(
    """\
    import json
    from IPython.testing.globalipapp import start_ipython
    from IPython.utils.capture import capture_output
    shell = start_ipython()
    shell.run_cell("%load_ext symnb", store_history=True)
    shell.run_cell("import numpy as np", store_history=True)
    found = []
    for cell in json.loads(CELLS):
        number = shell.execution_count
        with capture_output() as shown:
            result = shell.run_cell(cell, store_history=True)
        error = result.error_before_exec or result.error_in_exec
        found.append({
            "number": number,
            "error": type(error).__name__ if error else None,
            "message": str(error) if error else "",
            "lineno": getattr(error, "lineno", None),
            "line": getattr(error, "text", None),
            "stdout": shown.stdout,
            "outputs": [{k: str(v) for k, v in o.data.items()} for o in shown.outputs],
            "result": repr(result.result),
        })
    print("FOUND" + json.dumps(found))
    """
)


def run_cells(*cells: str) -> list[dict]:
    """Each cell run in turn by a shell with symnb loaded: its error (name, message, line),
    printed text, displayed outputs (mimetype -> text) and result."""
    out = run_python(f"CELLS = {json.dumps(list(cells))!r}\n" + SCRIPT)
    return json.loads(out.split("FOUND", 1)[1])


def test_optimize_with_only_exclusions_keeps_the_default_rewrites():
    """``--optimize=-fuse`` (or ``--optimize -fuse``) is the default set less fuse, as
    ``optimize={"exclude": ["fuse"]}`` is for sn.function; an unknown name is refused before
    the cell runs, with the options' card."""
    body = "q = vector('q')\nlog(1 + exp(q))"
    out = run_cells(
        f"%%symcompile f --optimize=-fuse --quiet\n{body}",
        "print(f(np.array([1000.0])).tolist(), sorted(f.rewrites.counts()))",
        f"%%symcompile g --optimize -fuse,+stabilize --quiet\n{body}",
        "print(g(np.array([1000.0])).tolist())",
        f"%%symcompile h --optimize nonsense\n{body}",
    )
    assert [c["error"] for c in out[:4]] == [None] * 4
    value, rules = out[1]["stdout"].split("] ", 1)
    assert value == "[1000.0" and "softplus_of_formula" in rules and "log1p_of_sum" in rules
    assert out[3]["stdout"].strip() == "[1000.0]"
    assert out[4]["error"] == "CellError"
    assert "%%symcompile --optimize: 'nonsense' is neither a phase" in out[4]["message"]
    assert "text/html" in out[4]["outputs"][0]  # the card, not a traceback
    assert "select.py" not in out[4]["stdout"]


def test_a_view_that_cannot_be_built_is_one_line_and_the_others_are_shown():
    """Random int labels out of range make ``f.profile()`` raise: the profile view says why
    in one line; before, after and kernels are still shown."""
    out = run_cells(
        "%%symcompile clf --backend py --show before,after,profile,kernels --quiet\n"
        'x = tensor("x", shape=("batch", 4))\n'
        'y = tensor("y", shape=("batch",), dtype="int64")\n'
        'W = tensor("W", shape=(4, 3))\n'
        "loss = mean(crossentropy(softmax(x @ W), y))\n"
        "loss",
        "print(callable(clf))",
    )
    cell = out[0]
    assert cell["error"] is None, cell["message"]
    texts = [o["text/plain"] for o in cell["outputs"]]
    assert len(texts) == 4
    assert "as written" in texts[0] and "optimised" in texts[1]
    assert texts[2].startswith("profile: cannot be shown:") and "\n" not in texts[2].strip()
    assert "kernels" in texts[3]
    assert out[1]["stdout"].strip() == "True"


def test_error_lines_count_the_cells_leading_blank_lines():
    """The magic line is line 1, blank lines included after it (as ``symnb check`` counts):
    the message, the card and IPython's traceback name line 5 here."""
    out = run_cells(
        "%%symcompile f\n\n\n"
        'x2 = tensor("x2", shape=("batch", 4))\n'
        'h = x2 @ tensor("W", shape=(3,3))\n'
        "h",
        '%%symcompile g\n\n\nz = tensor("z", shape=(2,))\nlen(z, z)',
    )
    number = out[0]["number"]
    assert "at notebook cell, line 5: h = x2 @ " in out[0]["message"]
    assert f"(In[{number}])" in out[0]["message"]
    assert out[1]["error"] == "TypeError" and "line 5" in out[1]["stdout"]
    assert "len(z, z)" in out[1]["stdout"]


def test_a_bad_update_names_the_cell_line_that_assigned_updates():
    """The compile runs under IPython's frames: its errors name the cell's lines, never an
    IPython file (the updates' checks the ``updates =`` line, the rest the magic line)."""
    out = run_cells(
        '%%symcompile u\nx = vector("x")\nupdates = {x: x + 1}\nx * 2',
        "%%symcompile v\nW = shared(np.ones(3), name='W')\nx = vector('x')\n"
        "updates = [(W, W + 1),\n           (W, W - 1)]\nx * 2",
        "%%symcompile w --inputs x,x\nx = vector('x')\nx * 2",
    )
    number = out[0]["number"]
    assert out[0]["error"] == "GraphError" and "is not a shared variable" in out[0]["message"]
    assert (
        f"at notebook cell, line 3: updates = {{x: x + 1}}  (In[{number}])" in (out[0]["message"])
    )
    assert "is updated twice" in out[1]["message"]
    assert "at notebook cell, line 4: updates = [(W, W + 1)," in out[1]["message"]
    assert "interactiveshell.py" not in out[2]["message"]  # an error of the compile itself
    assert "at notebook cell, line 1: %%symcompile w --inputs x,x  (In[" in out[2]["message"]


def test_a_failing_cell_keeps_the_names_it_assigned_before_the_error():
    out = run_cells(
        '%%symcompile f\nW = tensor("W", shape=(4, 5))\nx = tensor("x", shape=(3,))\n'
        "y = W @ x\nz = 1\ny",
        "print(W.name, x.name, 'z' in dir(), 'f' in dir())",
    )
    assert out[0]["error"] == "ShapeError"
    assert out[1]["error"] is None, out[1]["message"]
    assert out[1]["stdout"].split() == ["W", "x", "False", "False"]


def test_a_syntax_error_is_a_card_at_the_users_line():
    out = run_cells('%%symcompile s\nx = vector("x"\nx', "%%symcompile t\n\ny = vector('y')\ny +")
    first, second = out
    assert first["error"] == "CellError" and "was never closed" in first["message"]
    assert (
        f'at notebook cell, line 2: x = vector("x"  (In[{first["number"]}])' in (first["message"])
    )
    assert "text/html" in first["outputs"][0]  # the card
    assert "cell.py" not in first["stdout"] and "ast.py" not in first["stdout"]
    assert "at notebook cell, line 4: y +" in second["message"]


def test_the_functions_name_must_be_a_python_name():
    body = "\nq = vector('q')\nq * 2"
    out = run_cells(
        f'%%symcompile "bad name"{body}',
        f"%%symcompile class{body}",
        "print(sorted(k for k in get_ipython().user_ns if k in ('bad name', 'class', 'q')))",
    )
    for cell, name in zip(out, ("'bad name'", "'class'")):
        assert cell["error"] == "CellError"
        assert f"the function's name {name} is not a Python name" in cell["message"]
        assert "text/html" in cell["outputs"][0]
    assert out[2]["stdout"].strip() == "[]"  # refused before the cell ran


def test_a_cell_run_again_keeps_its_updates():
    """``updates = upd`` binds ``updates`` to the object it already held when the cell runs
    again (or another cell assigns the same dict): the cell still assigned it, so the
    function still has the update."""
    cell = "%%symcompile tr --quiet\nx = tensor('x', shape=(3,))\nupdates = upd\n(x * W).sum()"
    out = run_cells(
        "import symnb as sn\nW = sn.shared(np.zeros(3), name='W')\nupd = {W: W + 1}",
        cell,
        "print(len(tr.updates))",
        cell,
        "print(len(tr.updates))",
        cell.replace("tr", "tr2"),
        "print(len(tr2.updates))",
        "%%symcompile tr3 --quiet\nx = tensor('x', shape=(3,))\n(x * W).sum()",
        "print(len(tr3.updates))",  # a cell that does not assign updates has none
    )
    assert [c["error"] for c in out] == [None] * len(out), [c["message"] for c in out]
    assert [out[i]["stdout"].strip() for i in (2, 4, 6, 8)] == ["1", "1", "1", "0"]


def test_functions_defined_in_a_cell_see_the_notebook_as_it_is_when_called():
    """A function, lambda or class defined in a %%symcompile cell reads the notebook's names
    when it runs, not a copy made when the cell ran (``later`` assigned afterwards, ``scale``
    assigned again); symnb's names stay in its scope where the notebook has none (``sum``
    is symnb's); a class body in the cell reads the notebook's and symnb's names."""
    out = run_cells(
        "base = 1",
        "%%symcompile f --quiet\n"
        "scale = 2\n"
        "def act(v):\n    return v * later + scale\n"
        "lam = lambda: later + base\n"
        "class K:\n    start = base\n    make = tensor\n    def m(self):\n        return later\n"
        "def total(xs):\n    return sum(xs)\n"
        "x = tensor('x', shape=(3,))\n"
        "x * scale",
        "later = 5\nscale = 10\nbase = 100\n"
        "print(act(3), lam(), K().m(), K.start, K.make.__name__)\n"
        "print(type(total([1, 2, 3])).__name__)",
    )
    assert [c["error"] for c in out] == [None] * len(out), [c["message"] for c in out]
    lines = out[2]["stdout"].split("\n")
    assert lines[0].split() == ["25", "105", "5", "1", "tensor"]
    assert lines[1] == "Variable"


def test_del_in_a_cell_deletes_the_name_from_the_notebook():
    """``del zzz`` deletes the notebook's ``zzz``, as in any cell (also when the cell fails
    later); a name deleted then assigned again is kept; ``del`` of an unknown name is
    Python's NameError."""
    out = run_cells(
        "zzz = 1\nyyy = 2\nwww = 3",
        "%%symcompile f --quiet\ndel zzz\ndel yyy\nyyy = 'again'\nx = tensor('x', shape=(3,))\n"
        "x * 2",
        "print('zzz' in dir(), yyy)",
        "%%symcompile g --quiet\ndel www\nraise RuntimeError('after the del')\nx",
        "print('www' in dir())",
        "%%symcompile h --quiet\ndel nosuch\nx",
    )
    assert [c["error"] for c in out] == [None, None, None, "RuntimeError", None, "NameError"]
    assert out[2]["stdout"].split() == ["False", "again"]
    assert out[4]["stdout"].strip() == "False"
    assert "nosuch" in out[5]["message"]


def test_odd_cell_endings_are_cards_naming_the_line():
    """An empty or nested last expression, ``await`` and an ``updates`` that is neither a
    dict nor pairs are cards at the cell's line, not a function of no outputs, NumPy's or
    the compiler's raw errors."""
    head = "%%symcompile f --quiet\nx = tensor('x', shape=(3,))\n"
    out = run_cells(
        head + "[]",
        head + "{}",
        head + "[x, [x * 2]]",
        head + "{'a': x, 'b': (x,)}",
        head + "await x",
        head + "updates = 5\nx",
        "print('f' in dir())",
    )
    number = out[0]["number"]
    for i, (kind, text) in enumerate(
        [
            ("CellError", "the cell's last expression is an empty list: nothing to compile"),
            ("CellError", "the cell's last expression is an empty dict: nothing to compile"),
            ("CellError", "output [1] of the cell's last expression is a list"),
            ("CellError", "output ['b'] of the cell's last expression is a tuple"),
            ("CellError", "%%symcompile: 'await' outside function"),
            ("GraphError", "updates is 5 (int): give a list of (shared variable, new value)"),
        ]
    ):
        assert out[i]["error"] == kind and text in out[i]["message"], out[i]["message"]
        assert "text/html" in out[i]["outputs"][0]  # the card
        assert "cell.py" not in out[i]["stdout"] and "ipython-input" not in out[i]["message"]
    last = ["[]", "{}", "[x, [x * 2]]", "{'a': x, 'b': (x,)}", "await x", "updates = 5"]
    for i, line in enumerate(last):
        assert f"at notebook cell, line 3: {line}  (In[{number + i}])" in out[i]["message"]
    assert out[6]["stdout"].strip() == "False"


def test_optimize_refuses_a_name_both_included_and_excluded():
    out = run_cells("%%symcompile f --optimize +fuse,-fuse\nx = vector('x')\nx")
    assert out[0]["error"] == "CellError"
    assert "'fuse' is both included and excluded in '+fuse,-fuse'" in out[0]["message"]
    assert "text/html" in out[0]["outputs"][0]


def test_an_error_of_the_cells_code_shows_its_traceback_from_the_cells_line():
    """A non-symnb error the cell's code raises: the traceback starts at the cell's line and
    goes on into the user's function; the magic's frames above it are left out. The same
    exception raised again by an ordinary cell shows that cell's traceback."""
    out = run_cells(
        "err = RuntimeError('boom')\ndef foo():\n    raise err",
        "%%symcompile g --quiet\nx = tensor('x', shape=(3,))\nfoo()\nx",
        "raise err",
    )
    number = out[0]["number"]
    assert [c["error"] for c in out] == [None, "RuntimeError", "RuntimeError"]
    shown = out[1]["stdout"]
    assert f"Cell In[{number + 1}], line 3" in shown and "----> 3 foo()" in shown
    assert f"Cell In[{number}], line 3, in foo()" in shown
    for frame in ("run_cell_magic", "commands.py", "cell.py", "interactiveshell.py"):
        assert frame not in shown
    assert f"Cell In[{number + 2}], line 1" in out[2]["stdout"]


def test_outputs_that_are_no_variables_are_cards_at_the_cells_line():
    """A last expression, item or ``--outputs``/``--inputs`` name that is no variable raised
    DTypeError located in IPython's interactiveshell.py: now a card naming its type at the
    cell's last line (the %% line for the options)."""
    body = "x = tensor('x', shape=(3,))\n"
    out = run_cells(
        "%%symcompile f --quiet\n" + body + "'hello'",
        "%%symcompile f --quiet\n" + body + "(x, None)",
        "%%symcompile f --quiet\n" + body + "{'a': x, 'b': print}",
        "%%symcompile f --quiet --outputs np\n" + body + "y = x * 2",
        "%%symcompile f --quiet --inputs np\n" + body + "x * 2",
        "%%symcompile f --quiet --outputs z\n" + body + "y = x * 2",
        "%%symcompile f --quiet\n" + body + "x, 2.0",
        "print(f(np.ones(3)))",
    )
    number = out[0]["number"]
    expected = [
        ("the cell's last expression is a str ('hello'), not a variable", "line 3: 'hello'"),
        ("output [1] of the cell's last expression is a NoneType (None)", "line 3: (x, None)"),
        ("output ['b'] of the cell's last expression is a builtin_function_or_method", "line 3"),
        ("--outputs 'np' is a module (<module 'numpy'", "line 1: %%symcompile f --quiet --out"),
        ("--inputs 'np' is a module (<module 'numpy'", "line 1: %%symcompile f --quiet --inp"),
        ("--outputs: the cell defines no variable named 'z'", "line 1: %%symcompile f"),
    ]
    for i, (text, line) in enumerate(expected):
        message = out[i]["message"]
        assert out[i]["error"] == "CellError" and text in message, message
        assert f"at notebook cell, {line}" in message and f"(In[{number + i}])" in message
        assert "interactiveshell.py" not in message and "text/html" in out[i]["outputs"][0]
    assert out[6]["error"] is None, out[6]["message"]  # a number is a constant output
    assert out[7]["stdout"].strip() == "(array([1., 1., 1.]), array(2.))"


def test_line_magics_given_bad_input_are_cards():
    """``%symgraph`` and ``%symprofile`` given nothing, a non-graph, an unclosed call, no
    call, ``-n 0`` or a non-function showed tracebacks through the magics' code."""
    out = run_cells(
        "%%symcompile f --backend py --quiet\nx = vector('x')\nx * 2",
        "%symgraph",
        "%symgraph 3",
        "%symgraph f(",
        "%symprofile f",
        "%symprofile f(np.ones(3)",
        "%symprofile -n 0 f(np.ones(3))",
        "%symprofile len([1])",
        "%symgraph np.ones(2)",
    )
    assert out[0]["error"] is None, out[0]["message"]
    expected = [
        "%symgraph needs what to draw: a variable, a list of variables or a compiled function",
        "%symgraph: 3 is an int; it draws a variable, a list of variables or a compiled",
        "%symgraph: cannot read 'f(' as an expression: '(' was never closed",
        "%symprofile takes a call such as f(x), not 'f' (f() times it on random inputs)",
        "%symprofile: cannot read 'f(np.ones(3)' as an expression: '(' was never closed",
        "%symprofile -n 0: the number of calls to time must be at least 1",
        "%symprofile: len is a builtin_function_or_method, not a compiled function",
        "%symgraph: np.ones(2) is an ndarray; it draws a variable",
    ]
    for cell, text in zip(out[1:], expected):
        assert cell["error"] == "CellError" and text in cell["message"], cell["message"]
        assert "text/html" in cell["outputs"][0]  # the card, not a traceback
        assert "commands.py" not in cell["stdout"] and "interactiveshell" not in cell["stdout"]


def test_symprofile_takes_starred_arguments_and_names_an_undefined_name():
    """``f(*args)`` was a SyntaxError from inside IPython and ``f(**kw)`` "keywords must be
    strings" (each argument was evaluated alone); an undefined name was a NameError
    traceback through the magic."""
    out = run_cells(
        "%%symcompile f --backend py --quiet\nx = vector('x')\nx * 2",
        "args, kw = [np.ones(3)], {'x': np.ones(3)}",
        "%symprofile -n 2 f(*args)",
        "%symprofile -n 2 f(**kw)",
        "%symprofile -n 2 f(*[], x=np.ones(3))",
        "%symprofile g(1)",
        "%symprofile f(undefined)",
        "%symgraph undefined",
    )
    for cell in out[:5]:
        assert cell["error"] is None, cell["message"]
    for cell in out[2:5]:
        assert "profile: 2 calls" in cell["stdout"] + str(cell["outputs"]), cell
    expected = [
        "%symprofile: name 'g' is not defined in the notebook's namespace",
        "%symprofile: name 'undefined' is not defined in the notebook's namespace",
        "%symgraph: name 'undefined' is not defined in the notebook's namespace",
    ]
    for cell, text in zip(out[5:], expected):
        assert cell["error"] == "CellError" and text in cell["message"], cell["message"]
        assert "commands.py" not in cell["stdout"] and "interactiveshell" not in cell["stdout"]


def test_symprofile_takes_repeat_in_the_call_and_shows_the_users_errors_from_their_code():
    """``f(x, repeat=3)`` (as f.profile takes it) was a raw TypeError "multiple values for
    keyword argument 'repeat'"; an error the arguments raise (``f(1/0)``) showed the magic's
    frames and "Could not get source" for the argument text."""
    out = run_cells(
        "%%symcompile f --backend py --quiet\nx = vector('x')\nx * 2",
        "%symprofile f(np.ones(3), repeat=3)",
        "%symprofile -n 2 f(np.ones(3), repeat=3)",
        "%symprofile f(np.ones(3), repeat=0)",
        "%symprofile f(np.ones(3), repeat='3')",
        "%symprofile f(1/0)",
        "def g(v):\n    return v / 0",
        "%symprofile f(g(1))",
        "%symgraph 1 / 0",
    )
    assert out[1]["error"] is None, out[1]["message"]
    assert "profile: 3 calls" in out[1]["stdout"] + str(out[1]["outputs"])
    expected = [
        "%symprofile -n 2 ... repeat=3: give the number of calls to time once, as -n N or as "
        "repeat=N",
        "%symprofile repeat=0: the number of calls to time must be at least 1",
        "%symprofile repeat='3': the number of calls to time is an integer",
    ]
    for cell, text in zip(out[2:5], expected):
        assert cell["error"] == "CellError" and text in cell["message"], cell["message"]
        assert "commands.py" not in cell["stdout"] and "text/html" in cell["outputs"][0]
    for cell, line in [(out[5], "f(1/0)"), (out[7], "f(g(1))"), (out[8], "1 / 0")]:
        assert cell["error"] == "ZeroDivisionError", cell["message"]
        shown = re.sub(r"\x1b\[[0-9;]*m", "", cell["stdout"])
        assert f"----> 1 {line}\n" in shown, shown  # the argument text, where it failed
        assert "commands.py" not in shown and "Could not get source" not in shown, shown
    assert "return v / 0" in re.sub(r"\x1b\[[0-9;]*m", "", out[7]["stdout"])


def test_a_shape_warning_an_error_filter_raises_is_a_card_naming_the_cell_line():
    """With docs/shapes.md's ``simplefilter("error", sn.ShapeWarning)`` the raised warning
    got no card, a traceback through symnb's frames and a message without the user's line."""
    out = run_cells(
        "import symnb as sn, warnings\nv = sn.tensor('v', shape=('n',))\n"
        "col = sn.tensor('col', shape=('n', 1))",
        "warnings.simplefilter('error', sn.ShapeWarning)",
        "u = v + col",
    )
    cell = out[2]
    assert cell["error"] == "BroadcastOuterWarning", cell
    assert "broadcast against each other into (n, n)" in cell["message"]
    assert f"\n  at notebook cell, line 1: u = v + col  (In[{cell['number']}])" in cell["message"]
    html = cell["outputs"][0]["text/html"]
    assert '<div class="symnb-error"><b>BroadcastOuterWarning</b>' in html
    assert "<b>at</b> notebook cell, line 1: u = v + col" in html
    assert "symnb/core" not in cell["stdout"] and "warnings.py" not in cell["stdout"]


def test_line_magics_locate_what_they_raise_at_the_cells_line():
    """``%symprofile f(...)``'s InputError and first-call warning, and a ShapeError built by
    ``%symgraph``'s expression, name the cell's line and its In[N], as the same code written
    in the cell does: the first frame outside symnb was IPython's ``run_line_magic``
    (interactiveshell.py), or the magic's own ``<%symgraph>``, line 1. What a function of
    the user's builds keeps its own line."""
    out = run_cells(
        "import symnb as sn, warnings\nx = sn.tensor('x', shape=(None, 3))\n"
        "f = sn.function([x], x * 2, backend='py')\n"
        "y, p = sn.vector('y'), sn.tensor('p', shape=(None, None))\n"
        "g = sn.function([y, p], y - p, backend='py')\n"
        "W = sn.tensor('W', shape=(10, 4))\n"
        "def layer(v):\n    return v @ W",
        "try:\n    %symprofile -n 1 f(np.ones((2, 4)))\nexcept sn.InputError as e:\n"
        "    print(e.location)",
        "warnings.simplefilter('error', sn.ShapeWarning)",
        "a = 1\n%symprofile -n 1 g(np.ones(4), np.ones((4, 1)))",
        "b = 2\n%symgraph x @ W",
        "%symgraph layer(x)",
    )
    first, number = out[0]["number"], out[1]["number"]
    assert out[1]["error"] is None, out[1]["message"]
    assert out[1]["stdout"] == f"notebook cell, line 2: f(np.ones((2, 4)))  (In[{number}])\n"
    warning, message = out[3], out[3]["message"]
    assert warning["error"] == "BroadcastOuterWarning", warning
    called = f"line 2: g(np.ones(4), np.ones((4, 1)))  (In[{warning['number']}])"
    assert f"(the function was called at notebook cell, {called})" in message
    built = f"line 5: g = sn.function([y, p], y - p, backend='py')  (In[{first}])"
    assert message.endswith(f"\n  at notebook cell, {built}")
    assert out[4]["error"] == "ShapeError", out[4]
    assert out[4]["message"].endswith(f"at notebook cell, line 2: x @ W  (In[{out[4]['number']}])")
    assert out[5]["message"].endswith(f"at notebook cell, line 8: return v @ W  (In[{first}])")
    for cell in out[1:]:
        assert "interactiveshell" not in cell["message"] + cell["stdout"]
        assert "<%sym" not in cell["message"] + cell["stdout"]
