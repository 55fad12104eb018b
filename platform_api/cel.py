"""CEL expressions on the official runtime (cel-expr-python, cel-cpp underneath).

One place builds environments (with the optional-types and strings extensions) and
turns the runtime's results into Python values or errors.  Expressions are compiled
and type-checked once, when configuration loads; evaluation errors (a missing key, a
wrong type at run time) raise ``CELError``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cel_expr_python import cel
from cel_expr_python.ext import ext_optional, ext_strings

Type = cel.Type
DYN_MAP = cel.Type.Map(cel.Type.STRING, cel.Type.DYN)


class CELError(ValueError):
    pass


class Program:
    """A compiled expression; ``run`` evaluates it against variables."""

    def __init__(self, source: str, expression: Any) -> None:
        self.source = source
        self._expression = expression

    @property
    def return_type(self) -> str:
        name: str = self._expression.return_type().name()
        return name

    def run(self, variables: Mapping[str, Any]) -> Any:
        try:
            value = self._expression.eval(data=dict(variables))
        except RuntimeError as e:
            raise CELError(str(e)) from None
        if value.type() == cel.Type.ERROR:
            raise CELError(str(value.value()))
        return value.plain_value()


class Environment:
    def __init__(self, variables: Mapping[str, Any]) -> None:
        self._env = cel.NewEnv(
            variables=dict(variables),
            extensions=[ext_optional.ExtOptional(), ext_strings.ExtStrings()],
        )

    def compile(self, source: str, allowed: tuple[str, ...] = ()) -> Program:
        """Compile and type-check; ``allowed`` return type names (DYN always passes)."""
        try:
            program = Program(source, self._env.compile(source))
        except RuntimeError as e:
            raise CELError(
                f"compilation failed: {str(e).removeprefix('INVALID_ARGUMENT: ')}"
            ) from None
        if allowed and program.return_type not in (*allowed, "dyn", "DYN"):
            raise CELError(f"must evaluate to one of {list(allowed)}, not {program.return_type}")
        return program
