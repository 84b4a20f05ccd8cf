"""``sn.function``: the orchestrator that checks, optimises and links a graph into a callable.

It registers itself as the "function" hook, through which ``sn.check_grad`` (in a layer
below) compiles, and ``Variable.eval`` as the "eval" hook.
"""

from symnb.compile.evaluate import evaluate
from symnb.compile.function import Function, function  # noqa: F401
from symnb.core.hooks import register

register("function", function)
register("eval", evaluate)
