"""The runtime environment: where rewritten checked ASTs are planned and evaluated.

cel-expr-python binds a Python implementation to runtime argument kinds, and has no kind for
``dyn`` or a type parameter: ``list(A).indexOf(A)`` cannot be bound as declared.  So the runtime
environment is separate from the checking one (``Env.deserialize`` plans a checked AST without
checking it again) and each implementation is registered once per combination of concrete
kinds: under its overload id (the name the rewrite gives single-overload calls) and, for calls
the checker left with several candidate overloads, under the function's own name with a
dispatcher that picks the candidate whose declared types the Python values fit.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Sequence
from typing import Any

from cel_expr_python import cel

from platform_api.cel import library
from platform_api.cel.library.common import EvalError, type_name
from platform_api.cel.library.decl import Function, Overload, config_yaml
from platform_api.cel.protos import LIBRARY_POOL

T = cel.Type
_MESSAGE = "kubernetes.Quantity"  # any message type stands for the message kind at runtime
_ANY = (
    "int",
    "uint",
    "double",
    "bool",
    "string",
    "bytes",
    "duration",
    "timestamp",
    "list",
    "map",
    "null",
    _MESSAGE,
)
_SCALAR = {
    "int": T.INT,
    "uint": T.UINT,
    "double": T.DOUBLE,
    "bool": T.BOOL,
    "string": T.STRING,
    "bytes": T.BYTES,
    "duration": T.DURATION,
    "timestamp": T.TIMESTAMP,
    "null": T.NULL,
    "list": T.LIST,
    "map": T.MAP,
    "dyn": T.DYN,
}


def _head(type_text: str) -> str:
    return type_text.split("(", 1)[0].strip()


def kinds(type_text: str) -> tuple[str, ...]:
    """Runtime kinds a declared parameter type admits."""
    head = _head(type_text)
    if head == "dyn" or (len(head) == 1 and head.isupper()):
        return _ANY
    if head in _SCALAR:
        return (head,)
    return (_MESSAGE,)


def runtime_type(kind: str) -> Any:
    return _SCALAR.get(kind) or T(kind)


def _fits(type_text: str, value: Any) -> bool:
    head = _head(type_text)
    if head == "dyn" or (len(head) == 1 and head.isupper()):
        return True
    actual = type_name(value)
    if head in ("int", "uint"):
        return actual == "int"
    if head == "list" and isinstance(value, list):
        inner = type_text[len(head) + 1 : -1].strip()
        return not value or _fits(inner, value[0])
    if head == "map":
        return actual == "map"
    return actual == {
        "duration": "google.protobuf.Duration",
        "timestamp": "google.protobuf.Timestamp",
    }.get(head, head)


def _wrap(impl: Callable[..., Any]) -> Callable[..., Any]:
    """Let library errors surface as CEL errors, never as Python tracebacks."""

    @functools.wraps(impl)
    def call(*args: Any) -> Any:
        try:
            return impl(*[bytes(a) if isinstance(a, bytearray) else a for a in args])
        except EvalError:
            raise
        except (ValueError, TypeError, KeyError, IndexError, AttributeError) as e:
            raise EvalError(str(e)) from None

    return call


def _dispatcher(candidates: Sequence[Overload]) -> Callable[..., Any]:
    def call(*args: Any) -> Any:
        for ov in candidates:
            if all(_fits(t, a) for t, a in zip(ov.args, args, strict=True)):
                assert ov.impl is not None
                return _wrap(ov.impl)(*args)
        raise EvalError("no such overload")

    return call


def _expansions(ov: Overload) -> list[tuple[str, ...]]:
    return list(itertools.product(*(kinds(a) for a in ov.args)))


def _declarations(functions: Sequence[Function]) -> list[Any]:
    decls = []
    for fn in functions:
        implemented = [ov for ov in fn.overloads if ov.impl is not None]
        for ov in implemented:
            assert ov.impl is not None
            overloads = [
                cel.Overload(
                    f"{ov.id}#{i}",
                    runtime_type(_rt_result(ov.result)),
                    [runtime_type(k) for k in combo],
                    is_member=ov.member,
                    impl=_wrap(ov.impl),
                )
                for i, combo in enumerate(_expansions(ov))
            ]
            decls.append(cel.FunctionDecl(ov.id, overloads))
        if fn.name in library.REDECLARED_STANDARD or len(implemented) < 2:
            continue
        decls.append(cel.FunctionDecl(fn.name, _grouped(fn.name, implemented)))
    return decls


def _rt_result(result: str) -> str:
    head = _head(result)
    if head in _SCALAR:
        return head
    if len(head) == 1 and head.isupper():
        return "dyn"
    return head


def _grouped(name: str, overloads: Sequence[Overload]) -> list[Any]:
    groups: dict[tuple[bool, tuple[str, ...]], list[Overload]] = {}
    for ov in overloads:
        for combo in _expansions(ov):
            groups.setdefault((ov.member, combo), []).append(ov)
    out = []
    for i, ((member, combo), candidates) in enumerate(groups.items()):
        results = {_rt_result(c.result) for c in candidates}
        result = results.pop() if len(results) == 1 else "dyn"
        out.append(
            cel.Overload(
                f"{name}#{i}",
                runtime_type(result),
                [runtime_type(k) for k in combo],
                is_member=member,
                impl=_dispatcher(candidates),
            )
        )
    return out


@functools.cache
def python_functions() -> dict[str, str]:
    """Overload id -> function name, for every overload implemented in Python."""
    return {
        ov.id: fn.name
        for fn in (*library.BASE, *library.RUNTIME_ONLY)
        for ov in fn.overloads
        if ov.impl is not None
    }


@functools.cache
def runtime_env() -> Any:
    # Planning a checked AST needs no macros: two-variable comprehensions stay out (their
    # declaration of cel.@mapInsert would clash with the binding registered here).
    extensions = [e for e in library.EXTENSIONS if e[0] != "two-var-comprehensions"]
    config = config_yaml([], extensions)
    return cel.NewEnv(
        LIBRARY_POOL,
        config=cel.NewEnvConfigFromYaml(config),
        functions=_declarations([*library.BASE, *library.RUNTIME_ONLY]),
    )
