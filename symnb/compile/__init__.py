"""``sn.function``: the orchestrator that checks, optimises and links a graph into a callable.

It registers itself as the "function" hook, through which ``Variable.eval`` and
``sn.check_grad`` (in layers below) compile.
"""

from symnb.compile.function import Function, function  # noqa: F401
from symnb.core.hooks import register

register("function", function)
