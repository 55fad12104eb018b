"""Shared helpers: evaluate CEL in the server's base environment."""

from __future__ import annotations

from typing import Any

import pytest
from cel_expr_python import cel

from platform_api.cel import CELError, Environment

_ENV = Environment(
    {"x": cel.Type.DYN, "authorizer": cel.Type("kubernetes.authorization.Authorizer")}
)


def run(expr: str, **variables: Any) -> Any:
    """Compile and evaluate ``expr`` (variables: ``x`` dyn, ``authorizer``)."""
    return _ENV.compile(expr).run({"x": None, "authorizer": None, **variables})


def runtime_error(expr: str, **variables: Any) -> str:
    program = _ENV.compile(expr)
    with pytest.raises(CELError) as info:
        program.run({"x": None, "authorizer": None, **variables})
    return str(info.value)


def compile_error(expr: str) -> str:
    with pytest.raises(CELError) as info:
        _ENV.compile(expr)
    return str(info.value)
