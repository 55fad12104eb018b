"""THE environment factory: every CEL field of the server compiles and evaluates through here.

``Environment(variables)`` holds kube's v1.36 base environment (standard library, optional
types, cross-type numeric comparisons, strings v2, lists, sets, two-variable comprehensions,
kube's URL, regex, lists, authz (+selectors), quantity, IP, CIDR, format and semver libraries)
plus the field's variables, typed with ``cel.Type`` values over an optional descriptor pool.
``compile`` type-checks once, runs kube's AST validators, rewrites the checked AST for the
runtime environment (see ``checked``) and returns a ``Program`` to evaluate many times.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from cel_expr_python import cel

from platform_api.cel import library
from platform_api.cel.checked import Checked, Rewriter, rewrite, walk
from platform_api.cel.errors import CELError, CompileError, compile_issues, runtime_message
from platform_api.cel.formatcheck import constant_conversions
from platform_api.cel.library import dynselect
from platform_api.cel.library import format as format_lib
from platform_api.cel.library.decl import config_yaml, parse_type
from platform_api.cel.parsedissues import rewrite_issues
from platform_api.cel.protos import LIBRARY_POOL, decode_checked, decode_parsed, encode_checked
from platform_api.cel.runtime import python_functions, runtime_env
from platform_api.cel.validators import literal_errors, program_error

Type = cel.Type
DYN_MAP = cel.Type.Map(cel.Type.STRING, cel.Type.DYN)


@functools.lru_cache(maxsize=64)
def _config(variables: str = "", extensions: tuple[tuple[str, int | None], ...] = ()) -> Any:
    """The base environment's declarations (and typed variables, and extensions beyond
    the base's), parsed once: parsing is most of an environment's cost."""
    yaml = config_yaml(
        library.BASE, [*library.EXTENSIONS, *extensions], library.REDECLARED_STANDARD
    )
    if variables:
        config = json.loads(yaml)
        config["variables"] = json.loads(variables)
        yaml = json.dumps(config)
    return cel.NewEnvConfigFromYaml(yaml)


class ProgramError(CELError):
    """kube failed to build the program (a literal ``find`` pattern that does not compile)."""


class Program:
    """A compiled expression: ``run`` evaluates it, ``checked`` is its checked AST."""

    def __init__(
        self,
        source: str,
        expression: Any,
        result: Any,
        checked: Checked,
        optional: bool,
        second_try: Callable[[], Any] | None = None,
    ) -> None:
        self.source = source
        self.checked = checked
        self._expression = expression
        self._result = result
        self._optional = optional
        self._second_try = second_try  # builds the program with cel-go's dyn selects
        self._guarded: Any = None

    @property
    def return_type(self) -> str:
        name: str = self._result.name()
        return name

    @property
    def result_type(self) -> Any:
        return self._result

    def run(self, variables: Mapping[str, Any]) -> Any:
        """Evaluate with a fresh activation; raises CELError with cel-go's wording."""
        return self.eval(activation(variables))

    def eval(self, act: Any) -> Any:
        """Evaluate on an activation from ``activation()`` (share one across programs)."""
        failed, result = _evaluated(self._expression, act)
        if failed and self._second_try is not None and _SELECT_REFUSED.search(str(result)):
            if self._guarded is None:
                self._guarded = self._second_try()
            failed, result = _evaluated(self._guarded, act)
        if failed:
            raise CELError(runtime_message(str(result), library_overloads()))
        if self._optional:  # rewritten to a list of zero or one item: Python has no optional
            return result[0] if result else None
        return result


def _evaluated(expression: Any, act: Any) -> tuple[bool, Any]:
    """(failed, the value or cel-cpp's error text)."""
    try:
        value = expression.eval(act)
    except (RuntimeError, TypeError, ValueError) as e:  # ValueError: C++ exceptions
        return True, str(e)
    if value.type() == cel.Type.ERROR:
        return True, value.value()
    return False, value.plain_value()


# cel-cpp refusing a select or index on a value that is no container (cel-go: no such key)
_SELECT_REFUSED = re.compile(
    r"Applying SELECT to non-message type|Invalid container type|Index error: expected integer"
)


def _dyn_selects(checked: Checked, expr: Any, _parents: tuple[Any, ...]) -> Any | None:
    """A select, ``has()`` or index on a ``dyn`` operand as a call of cel-go's behaviour."""
    kind = expr.WhichOneof("expr_kind")
    if kind == "select_expr":
        select = expr.select_expr
        if checked.type_of(select.operand.id).WhichOneof("type_kind") != "dyn":
            return None
        name = dynselect.HAS if select.test_only else dynselect.SELECT
        return checked.call(name, select.operand, checked.string(select.field))
    if kind == "call_expr" and expr.call_expr.function == "_[_]":
        container, key = expr.call_expr.args
        if checked.type_of(container.id).WhichOneof("type_kind") != "dyn":
            return None
        return checked.call(dynselect.INDEX, container, key)
    return None


@functools.cache
def library_overloads() -> dict[str, tuple[str, tuple[str, ...]]]:
    """Overload id -> (function name, argument types) of the library functions (not the
    standard ones it redeclares): their runtime failures name them as cel-go does."""
    functions = (*library.BASE, *library.RUNTIME_ONLY)
    return {
        o.id: (fn.name, o.args)
        for fn in functions
        if fn.name not in library.REDECLARED_STANDARD
        for o in fn.overloads
    }


def activation(variables: Mapping[str, Any]) -> Any:
    """Variables bound once for several evaluations (the cheap way to run many programs)."""
    try:
        return runtime_env().Activation(dict(variables))
    except RuntimeError as e:
        raise CELError(runtime_message(str(e))) from None


def _library_calls(checked: Checked, expr: Any, _parents: tuple[Any, ...]) -> Any | None:
    """Rename a Python-implemented call to its overload id; expand optional-returning calls."""
    if expr.WhichOneof("expr_kind") != "call_expr":
        return None
    ids = checked.overloads(expr.id)
    if ids == ["format-named"]:
        arg = expr.call_expr.args[0]
        known = checked.call(format_lib.KNOWN, arg)
        value = checked.call("optional.of", checked.call(format_lib.GET, checked.clone(arg)))
        return checked.call("_?_:_", known, value, checked.call("optional.none"))
    if ids == ["format-validate"]:
        target, arg = expr.call_expr.target, expr.call_expr.args[0]
        valid = checked.call(format_lib.VALID, arg, target=target)
        errors = checked.call(format_lib.ERRORS, checked.clone(arg), target=checked.clone(target))
        return checked.call(
            "_?_:_", valid, checked.call("optional.none"), checked.call("optional.of", errors)
        )
    known = python_functions()
    if len(ids) == 1 and ids[0] in known:
        expr.call_expr.function = ids[0]
    return None


# Issues that parsedissues rewords from the parsed expression.
_NEEDS_PARSE = re.compile(r"overload for '_(&&|\|\|)_'|!error!")


class Environment:
    """Declarations for one kind of CEL field: kube's base environment plus ``variables``."""

    def __init__(
        self,
        variables: Mapping[str, Any] | None = None,
        *,
        pool: Any = None,
        extensions: tuple[tuple[str, int | None], ...] = (),
    ) -> None:
        """``extensions``: cel-cpp extensions a field's environment adds to kube's base
        (DRA's device selectors add ``bindings``, cel-go's ``ext.Bindings``)."""
        declared = {n: t for n, t in (variables or {}).items() if isinstance(t, cel.Type)}
        # Types written in CEL notation ("optional(list(string))") go through the config:
        # cel.Type cannot express optional types.
        spelled = [
            {"name": n, "type": parse_type(t)}
            for n, t in (variables or {}).items()
            if not isinstance(t, cel.Type)
        ]
        self._env = cel.NewEnv(
            pool if pool is not None else LIBRARY_POOL,
            config=_config(json.dumps(spelled) if spelled else "", extensions),
            variables=declared,
        )

    def parse(self, source: str) -> None:
        """Only parse ``source``: CompileError for a syntax error, as ``check`` words it."""
        try:
            self._env.compile(self._spelled(source), disable_check=True)
        except RuntimeError as e:
            raise CompileError(compile_issues(str(e), source)) from None

    def _spelled(self, source: str) -> str:
        """``source`` with each three-argument ``exists_one`` spelled ``existsOne``: cel-go's
        two-variable comprehensions take both names, cel-cpp only the second.  The name
        keeps its width (``existsOne (``) so issues' columns still point into ``source``."""
        if "exists_one" not in source:
            return source
        try:
            parsed = decode_parsed(self._env.compile(source, disable_check=True).serialize())
        except RuntimeError:
            return source
        positions = parsed.source_info.positions
        calls = sorted(
            positions[node.id]
            for node, _ in walk(parsed.expr)
            if node.WhichOneof("expr_kind") == "call_expr"
            and node.call_expr.function == "exists_one"
            and node.call_expr.HasField("target")
            and len(node.call_expr.args) == 3
        )
        for opening in reversed(calls):  # a call's position is its "("
            start = source.rfind("exists_one", 0, opening)
            source = source[:start] + "existsOne " + source[start + len("exists_one") :]
        return source

    def check(self, source: str) -> tuple[Checked, Any]:
        """Type-check ``source`` and run kube's validators: (checked AST, result type)."""
        spelled = self._spelled(source)
        try:
            expression = self._env.compile(spelled)
        except RuntimeError as e:
            issues = _unspelled(compile_issues(str(e), source), spelled, source)
            if _NEEDS_PARSE.search(issues):
                parsed = decode_parsed(self._env.compile(source, disable_check=True).serialize())
                issues = rewrite_issues(issues, source, parsed)
            raise CompileError(issues) from None
        checked = Checked(source, decode_checked(expression.serialize()))
        literal_issues = literal_errors(checked)
        if literal_issues:
            raise CompileError("\n".join(literal_issues))
        return checked, expression.return_type()

    def compile(
        self,
        source: str,
        allowed: Sequence[str] = (),
        rewriters: Sequence[Rewriter] = (),
    ) -> Program:
        """Compile and type-check; ``allowed`` return type names (DYN always passes).

        ``rewriters`` adapt the checked AST to the values the caller evaluates on (e.g.
        escaped property names of custom resources).
        """
        checked, result = self.check(source)
        if allowed and result.name() not in (*allowed, "dyn", "DYN"):
            raise CELError(f"must evaluate to one of {list(allowed)}, not {result.name()}")
        return self.program(checked, result, rewriters)

    def program(self, checked: Checked, result: Any, rewriters: Sequence[Rewriter] = ()) -> Program:
        """Build the runtime program of a checked AST (``Program.checked`` stays unrewritten)."""
        failure = program_error(checked)
        if failure is not None:
            raise ProgramError(f"program instantiation failed: {failure}")
        folded = _fold_constants(checked)
        if folded is not None:
            raise ProgramError(f"program instantiation failed: {folded}")
        optional = result.name().startswith("optional")

        def planned(extra: Sequence[Rewriter] = ()) -> Any:
            runnable = checked.copy()
            rewrite(runnable, [_library_calls, *rewriters, *extra])
            if optional:
                _listify_optional(runnable)
            return runtime_env().deserialize(encode_checked(runnable.ast))

        try:
            expression = planned()
        except RuntimeError as e:
            message = runtime_message(str(e))
            raise ProgramError(f"program instantiation failed: {message}") from None
        second_try = functools.partial(planned, [_dyn_selects])
        return Program(checked.source, expression, result, checked, optional, second_try)


def _unspelled(issues: str, spelled: str, source: str) -> str:
    """Issues drawn from ``spelled`` with their snippets as the expression was written."""
    if spelled == source:
        return issues
    rows = dict(zip(spelled.split("\n"), source.split("\n"), strict=True))
    lines = issues.split("\n")
    return "\n".join(
        " | " + rows[line[3:]] if line.startswith(" | ") and line[3:] in rows else line
        for line in lines
    )


def _fold_constants(checked: Checked) -> str | None:
    """kube's OptOptimize evaluates conversions of literals when building a program."""
    for call in constant_conversions(checked):
        single = checked.copy()
        single.ast.expr.CopyFrom(call)
        try:
            value = runtime_env().deserialize(encode_checked(single.ast)).eval(data={})
        except (RuntimeError, ValueError) as e:
            return runtime_message(str(e))
        if value.type() == cel.Type.ERROR:
            return runtime_message(str(value.value()))
    return None


def _listify_optional(checked: Checked) -> None:
    """``e`` -> ``e.hasValue() ? [e.value()] : []``: an optional cannot reach Python."""
    root = checked.ast.expr
    present = checked.call("hasValue", target=root)
    item = checked.new_id()
    listed = checked.call("value", target=checked.clone(root))
    as_list = checked.call("_?_:_", present, present, present)  # placeholder shape
    as_list.call_expr.args[1].Clear()
    as_list.call_expr.args[1].id = item
    as_list.call_expr.args[1].list_expr.elements.add().CopyFrom(listed)
    as_list.call_expr.args[2].Clear()
    as_list.call_expr.args[2].id = checked.new_id()
    as_list.call_expr.args[2].list_expr.SetInParent()
    root.CopyFrom(as_list)
