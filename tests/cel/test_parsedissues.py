"""Issues cel-go words from where operands stand: each expected text is the reference
kube-apiserver v1.36's for a ValidatingAdmissionPolicy expression (2026-12-07)."""

from __future__ import annotations

import pytest

from tests.cel.conftest import compile_error


def _issue(source: str, column: int, message: str) -> str:
    return f"ERROR: <input>:1:{column}: {message}\n | {source}\n | {'.' * (column - 1)}^"


@pytest.mark.parametrize(
    ("source", "issues"),
    [
        ("[1] || {}", [(1, "list(int)"), (8, "map(_var0, _var1)")]),
        ("[] && true", [(1, "list(_var0)")]),
        ("true && (1 || null)", [(10, "int"), (15, "null")]),
        ("{'a': 1}.a || []", [(9, "int"), (15, "list(_var0)")]),
        # double negation is dropped by the parser: the selection itself is the operand
        ("!!'a'.size() && true", [(11, "int")]),
        ("(true && 1) == 2", [(10, "int")]),
    ],
)
def test_logical_operands_are_checked_where_they_stand(
    source: str, issues: list[tuple[int, str]]
) -> None:
    expected = [_issue(source, c, f"expected type 'bool' but found '{t}'") for c, t in issues]
    assert compile_error(source) == "compilation failed: " + "\n".join(expected)


def test_a_field_of_an_undeclared_name_is_dyn() -> None:
    """``params.x`` without a paramKind: cel-go reports the name, and types the field
    dyn in the overload it reaches."""
    source = "(null) ? {'a': 'b'} : params.x"
    assert compile_error(source) == "compilation failed: " + "\n".join(
        [
            _issue(
                source,
                8,
                "found no matching overload for '_?_:_' applied to "
                "'(null, map(string, string), dyn)'",
            ),
            _issue(source, 23, "undeclared reference to 'params' (in container '')"),
        ]
    )
