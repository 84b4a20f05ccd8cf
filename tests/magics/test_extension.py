"""``%load_ext symnb`` and ``%unload_ext symnb`` in an IPython shell (a process of its own)."""

import json
import textwrap

from tests.helpers import run_python

SCRIPT = textwrap.dedent(
    """\
    import json, warnings
    from IPython.testing.globalipapp import start_ipython
    from IPython.utils.capture import capture_output
    shell = start_ipython()
    before = warnings.showwarning

    def state():
        with capture_output() as shown:
            result = shell.run_cell("import symnb as sn\\nraise sn.ShapeError('boom')")
        return {
            "custom": [e.__name__ for e in shell.custom_exceptions],
            "hook": type(warnings.showwarning).__name__,
            "restored": warnings.showwarning is before,
            "magics": sorted(n for n in shell.magics_manager.magics["cell"] if "sym" in n)
            + sorted(n for n in shell.magics_manager.magics["line"] if "sym" in n),
            "card": any("symnb-error" in o.data.get("text/html", "") for o in shown.outputs),
            "error": type(result.error_in_exec).__name__,
        }

    found = []
    for line in ("%load_ext symnb", "%unload_ext symnb", "%load_ext symnb"):
        with capture_output() as said:
            shell.run_cell(line)
        found.append(dict(state(), said=said.stdout + said.stderr))
    print("FOUND" + json.dumps(found))
    """
)


def test_unload_ext_removes_the_magics_and_the_cards_and_load_brings_them_back():
    loaded, unloaded, again = json.loads(run_python(SCRIPT).split("FOUND", 1)[1])
    for state in (loaded, again):
        assert (
            state["custom"] == ["SymnbError", "ShapeWarning"] and state["hook"] == "_WarningCards"
        )
        assert state["magics"] == ["symcompile", "symgraph", "symprofile"]
        assert state["card"] and state["error"] == "ShapeError"
    assert "doesn't define how to unload" not in unloaded["said"], unloaded["said"]
    assert unloaded["custom"] == [] and unloaded["restored"] and unloaded["magics"] == []
    assert not unloaded["card"] and unloaded["error"] == "ShapeError"
