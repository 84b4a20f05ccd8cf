"""``sn.function``: the orchestrator that checks, optimises and links a graph into a callable."""

from symnb.compile.function import Function, function  # noqa: F401
