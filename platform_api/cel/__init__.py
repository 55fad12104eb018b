"""One CEL library for the whole server, on cel-expr-python (cel-cpp) with kube's libraries.

Use ``Environment(variables).compile(source)`` to get a ``Program``; ``Program.run(vars)``
evaluates it.  Errors are ``CELError`` with cel-go's (kube's) wording.
"""

from platform_api.cel.environment import (
    DYN_MAP,
    Environment,
    Program,
    ProgramError,
    Type,
    activation,
)
from platform_api.cel.errors import CELError, CompileError

__all__ = [
    "DYN_MAP",
    "CELError",
    "CompileError",
    "Environment",
    "Program",
    "ProgramError",
    "Type",
    "activation",
]
