"""The environment factory: compile once, run many times, cel-go's error wording."""

from __future__ import annotations

from typing import Any

import pytest
from cel_expr_python import cel

from platform_api.cel import DYN_MAP, CELError, CompileError, Environment, activation
from platform_api.cel.errors import compile_issues
from tests.cel.conftest import compile_error, run, runtime_error


def test_compile_and_run_with_variables() -> None:
    env = Environment({"request": DYN_MAP})
    program = env.compile("request.user == 'alice'", ("BOOL",))
    assert program.return_type == "BOOL"
    assert program.run({"request": {"user": "alice"}}) is True
    assert program.run({"request": {"user": "bob"}}) is False


def test_allowed_return_types() -> None:
    env = Environment({"claims": DYN_MAP})
    with pytest.raises(CELError, match=r"must evaluate to one of \['BOOL'\], not INT"):
        env.compile("1 + 2", ("BOOL",))
    assert env.compile("claims.sub", ("BOOL",)).return_type == "DYN"


def test_shared_activation() -> None:
    env = Environment({"self": DYN_MAP})
    programs = [env.compile(f"self.n > {i}") for i in range(3)]
    act = activation({"self": {"n": 1}})
    assert [p.eval(act) for p in programs] == [True, False, False]


def test_compile_errors_read_as_cel_go() -> None:
    assert compile_error("1 + 'a'") == (
        "compilation failed: ERROR: <input>:1:3: found no matching overload for '_+_' applied to "
        "'(int, string)'\n | 1 + 'a'\n | ..^"
    )
    assert compile_error("'abc'.reverse()") == (
        "compilation failed: ERROR: <input>:1:14: found no matching overload for 'reverse' "
        "applied to 'string.()'\n | 'abc'.reverse()\n | .............^"
    )
    # cel-go names null's type "null" (cel-cpp "null_type"), as the reference answered
    assert compile_error("true ? 'a' : null") == (
        "compilation failed: ERROR: <input>:1:6: found no matching overload for '_?_:_' "
        "applied to '(bool, string, null)'\n | true ? 'a' : null\n | .....^"
    )
    assert compile_error("[null] + 1").startswith(
        "compilation failed: ERROR: <input>:1:8: found no matching overload for '_+_' "
        "applied to '(list(null), int)'"
    )
    assert compile_error("nope == 1").startswith(
        "compilation failed: ERROR: <input>:1:1: undeclared reference to 'nope' (in container '')"
    )
    # cel-go names the first undeclared name of a qualified one, where it stands
    assert compile_error("1 + \n  nope.a.b == 2") == (
        "compilation failed: ERROR: <input>:2:3: undeclared reference to 'nope' (in container '')"
        "\n |   nope.a.b == 2\n | ..^"
    )
    # an object literal of an undeclared type: at its brace, named whole, and nothing
    # within it checked (as the reference answered)
    assert compile_error("1 == Foo . Bar{a: Baz{}, b: nope}") == (
        "compilation failed: ERROR: <input>:1:15: undeclared reference to 'Foo.Bar' "
        "(in container '')\n | 1 == Foo . Bar{a: Baz{}, b: nope}\n | ..............^"
    )
    # inside has(), where cel-cpp places the select at the macro's parenthesis
    # (a ValidatingAdmissionPolicy without a paramKind, as the reference answered)
    assert compile_error("!has(params.data)") == (
        "compilation failed: ERROR: <input>:1:6: undeclared reference to 'params' (in container '')"
        "\n | !has(params.data)\n | .....^"
    )


def test_an_empty_line_has_cel_gos_empty_snippet() -> None:
    """cel-go draws the snippet and caret of an issue on an empty line, where cel-cpp
    draws none, and puts an empty source's issue at column 0 (the reference's answers)."""
    eof = (
        "Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', "
        "'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}"
    )
    assert compile_error("") == f"compilation failed: ERROR: <input>:1:0: {eof}"
    assert compile_error("\n") == f"compilation failed: ERROR: <input>:2:1: {eof}\n | \n | ^"
    assert compile_error(" ") == f"compilation failed: ERROR: <input>:1:2: {eof}\n |  \n | .^"


@pytest.mark.parametrize(
    ("source", "issue"),
    [
        # cel-go's macros word their own errors (each as kube-apiserver v1.36 answered)
        ("has(1)", "1:5: invalid argument to has() macro"),
        ("[1].all(1, true)", "1:9: argument must be a simple name"),
        ("[1].exists_one(x.y, true)", "1:17: argument must be a simple name"),
        ("[1].map(1, 2) == []", "1:9: argument is not an identifier"),
        ("1.all(x, true)", "1:1: expression of type 'int' cannot be range of a comprehension"),
        # two-variable comprehensions (cel-go's ext): one wording for a name that is not one
        ("[1].all(i, 2, v)", "1:12: argument must be a simple name"),
        ("{1:2}.transformMapEntry(2, i, {v:v}) == {}", "1:25: argument must be a simple name"),
        ("[1].existsOne(1, i, i)", "1:15: argument must be a simple name"),
        # a repeated name is a duplicate where the second stands
        (
            "[1].all(i, i, i>0)",
            "1:12: duplicate variable name: i\n | [1].all(i, i, i>0)\n | ...........",
        ),
        ("[1].transformList(i,  i, i) == []", "1:23: duplicate variable name: i"),
    ],
)
def test_macro_errors_read_as_cel_go(source: str, issue: str) -> None:
    assert compile_error(source).startswith(f"compilation failed: ERROR: <input>:{issue}")


def test_exists_one_takes_two_variables_as_cel_gos_existsOne() -> None:
    """cel-go's two-variable comprehensions answer to ``exists_one`` as to ``existsOne``;
    issues still show the expression as written."""
    env = Environment({})
    assert env.compile("{'a': 1, 'b': 2}.exists_one(k, v, v > 1)").run({}) is True
    assert env.compile("[3, 3].exists_one(i, v, v == 3)").run({}) is False
    assert env.compile("'exists_one(' != '' && [1].exists_one(x, x == 1)").run({}) is True
    assert compile_error("[1].exists_one(i, v, v > 0) && [1].exists_one (i, v, v.x)") == (
        "compilation failed: ERROR: <input>:1:55: type 'int' does not support field selection"
        "\n | [1].exists_one(i, v, v > 0) && [1].exists_one (i, v, v.x)"
        "\n | ......................................................^"
    )


def test_issues_come_in_cel_gos_order_of_where_they_stand() -> None:
    """cel-go sorts its issues by line and column, each with its snippet lines; cel-cpp
    lists them as it met them (an undeclared macro argument before the call)."""
    met = "ERROR: <input>:1:17: b\n | s\n | ^\nERROR: <input>:1:16: a\n | s\n | ^"
    assert compile_issues(met) == (
        "ERROR: <input>:1:16: a\n | s\n | ^\nERROR: <input>:1:17: b\n | s\n | ^"
    )
    later = "ERROR: <input>:2:1: b\n | s\n | ^\nERROR: <input>:1:9: a\n | s\n | ^"
    assert compile_issues(later).split("\n")[0] == "ERROR: <input>:1:9: a"


def test_typed_message_field_errors() -> None:
    from platform_api.cel.schematypes import build_pool, decl_type

    decl = decl_type({"type": "object", "properties": {"replicas": {"type": "integer"}}})
    assert decl is not None
    pool = build_pool(decl)
    env = Environment({"self": decl.cel_type()}, pool=pool)
    with pytest.raises(CompileError) as info:
        env.compile("self.nope == 1")
    assert info.value.issues == (
        "ERROR: <input>:1:5: undefined field 'nope'\n | self.nope == 1\n | ....^"
    )
    with pytest.raises(CompileError, match=r"applied to '\(int, string\)'"):
        env.compile("self.replicas + 'x' == 1")


def test_runtime_errors_read_as_cel_go() -> None:
    assert runtime_error("x.b", x={"a": 1}) == "no such key: b"
    assert runtime_error("1 / 0 == 1") == "division by zero"
    assert runtime_error("1 % 0 == 1") == "modulus by zero"
    assert runtime_error("dyn(1) + dyn('a') == 1") == "no such overload"
    assert runtime_error("9223372036854775807 + 1 == 0") == "integer overflow"
    assert runtime_error("[1][3] == 1") == "index out of bounds: 3"
    # conversions of a string that does not read name the target type (the reference's)
    conversion = "type conversion error from 'string' to '{}'"
    assert runtime_error("duration(x) > duration('1s')", x="bogus") == conversion.format(
        "google.protobuf.Duration"
    )
    assert runtime_error("timestamp(x) > timestamp(1)", x="bogus") == conversion.format(
        "google.protobuf.Timestamp"
    )
    assert runtime_error("bool(x)", x="bogus") == conversion.format("bool")
    assert runtime_error("duration(x) > duration('1s')", x=5) == (
        "type conversion error from 'int' to 'google.protobuf.Duration'"
    )
    # a type no overload of the conversion takes: cel-go's dispatch finds none
    assert runtime_error("string(x) == ''", x={"k": 1}) == "no such overload: string(map)"
    assert runtime_error("int(x) == 1", x=[1]) == "no such overload: int(list)"
    assert runtime_error("double(x) == 1.0", x=True) == "no such overload: double(bool)"
    assert runtime_error("bytes(x) == b''", x=1) == "no such overload: bytes(int)"
    assert runtime_error("timestamp(x) == timestamp(1)", x=1.5) == (
        "no such overload: timestamp(double)"
    )


@pytest.mark.parametrize(
    ("expr", "x", "message"),
    [  # each as the reference answered a rule on an int-or-string field (2026-12-06)
        ("x.size() > 0", 5, "no such overload: size"),
        ("size(x) > 0", 5, "no such overload: size"),
        ("x.contains('a')", 1, "no such overload"),
        ("x.matches('a')", 1, "no such overload"),
        ("x + 1 > 0", "s", "no such overload"),
        ("x.upperAscii() == ''", 1, "no such overload: upperAscii(int)"),
        ("x.replace('a', 'b') == ''", 1, "no such overload: replace(int, string, string)"),
        ("x.split(',', 2) == []", 1, "no such overload: split(int, string, int)"),
        ("x.format([]) == ''", 1, "no such overload: format(int, list)"),
        ("x.sum() == 0", "s", "no such overload: sum(string)"),
        ("x.isSorted()", "s", "no such overload: isSorted(string)"),
        ("url(x).getHost() == ''", 5, "no such overload: url(int)"),
        (
            "x.isLessThan(quantity('1'))",
            5,
            "no such overload: isLessThan(int, kubernetes.Quantity)",
        ),
    ],
)
def test_calls_no_overload_takes_read_as_cel_gos(expr: str, x: Any, message: str) -> None:
    """cel-go names the function (and the arguments it got) for its extensions' and
    kube's libraries' functions, ``size`` alone for size, nothing for the rest."""
    assert runtime_error(expr, x=x) == message


@pytest.mark.parametrize(
    ("expr", "message"),
    [  # each as the reference answered rules over dyn values (2026-12-07)
        ("x.z.a == 1", "no such key: a"),  # null: a request's object on DELETE
        ("dyn(x.n).a == 1", "no such key: a"),
        ("dyn(x.n)['a'] == 1", "no such key: a"),
        ("x.l.a == 1", "unsupported index type 'string' in list"),
        ("x.l['a'] == 1", "unsupported index type 'string' in list"),
        ("x.l[1.5] == 1", "unsupported index value 1.5 in list"),
        ("x.l[3] == 1", "index out of bounds: 3"),
    ],
)
def test_selects_from_what_is_no_map_read_as_cel_gos(expr: str, message: str) -> None:
    x = {"n": 1, "z": None, "l": [1], "m": {"k": 2}}
    assert runtime_error(expr, x=x) == message


def test_has_of_a_field_of_what_is_no_map_is_false() -> None:
    """cel-go's presence test on null or an int is false, not an error: a policy's
    ``!has(object.spec) || ...`` holds on DELETE."""
    x = {"n": 1, "z": None, "m": {"k": 2}}
    assert run("!has(x.z.spec) || x.z.spec.a == 1", x=x) is True
    assert run("has(dyn(x.n).a) || has(x.m.zz)", x=x) is False
    assert run("x.m.k == 2 && !has(x.z.q)", x=x) is True


def test_kube_validators() -> None:
    """Homogeneous aggregate literals, and regex/duration/timestamp literals are checked."""
    assert compile_error("[1, 'a'] == []") == (
        "compilation failed: ERROR: <input>:1:5: expected type 'int' but found 'string'\n"
        " | [1, 'a'] == []\n | ....^"
    )
    assert compile_error("'a'.matches('[')") == (
        "compilation failed: ERROR: <input>:1:13: invalid matches argument\n"
        " | 'a'.matches('[')\n | ............^"
    )
    assert compile_error("duration('1x') > duration('1s')").startswith(
        "compilation failed: ERROR: <input>:1:10: invalid duration argument"
    )
    assert compile_error("timestamp('2020-13-01T00:00:00Z') == timestamp(1)").startswith(
        "compilation failed: ERROR: <input>:1:11: invalid timestamp argument"
    )
    assert compile_error("'x'.find('[') == ''") == (
        "program instantiation failed: error parsing regexp: missing closing ]: `[`"
    )
    assert run("'%s %d'.format(['a', 1])") == "a 1"  # format's list is exempt


def test_base_environment_features() -> None:
    assert run("1 < 2.0 && 2u > 1 && 3.0 >= 3u") is True  # cross-type numeric comparisons
    assert run("[1, 2].all(i, v, v > i)") is True  # two-variable comprehensions
    assert run("{'a': 1}.transformMap(k, v, v + 1)") == {"a": 2}
    assert run("sets.contains([1, 2, 3], [3, 1]) && sets.intersects([1], [1, 2])") is True
    assert run("sets.equivalent([1, 2], [2, 1, 1])") is True
    assert run("[3, 1, 2].sort() == [1, 2, 3] && [[1], [2, 3]].flatten() == [1, 2, 3]")
    assert run("lists.range(3) == [0, 1, 2] && [1, 2, 2].distinct() == [1, 2]") is True
    assert run("[1, 2, 3].slice(1, 3) == [2, 3] && [1, 2].reverse() == [2, 1]") is True
    assert run("x.?a.orValue(5)", x={"b": 1}) == 5
    assert run("optional.of(1).hasValue() && !optional.none().hasValue()") is True


def test_not_in_kube_base_environment() -> None:
    for expr in ("math.greatest(1, 2) == 2", "base64.encode(b'a') == ''", "'ab'.reverse() == ''"):
        with pytest.raises(CompileError):
            run(expr)


def test_optional_results_reach_python() -> None:
    assert run("optional.of(3)") == 3
    assert run("optional.none()") is None


def test_optional_variables_in_cel_notation() -> None:
    env = Environment({"self": cel.Type.INT, "oldSelf": "optional(int)"})
    program = env.compile("oldSelf.orValue(0) <= self")
    assert program.return_type == "BOOL"
