"""Static cost estimates against kube's numbers (k8s.io/apiserver library/cost_test.go).

kube's test environment sizes every string and bytes value as [0, 12]; ``TestSizes`` does the
same.  Cases whose literals mix element types are left out: kube's base environment (used here)
rejects them as non-homogeneous literals.
"""

from __future__ import annotations

import pytest
from cel_expr_python import cel

from platform_api.cel import Environment
from platform_api.cel.cost import Estimate, Node, estimate, type_kind
from platform_api.cel.schematypes import decl_type
from platform_api.cel.sizes import ActualSizes, DeclSizes


class TestSizes:
    def size(self, node: Node) -> Estimate | None:
        return Estimate(0, 12) if type_kind(node.type) in ("string", "bytes") else None


_ENV = Environment({"authorizer": cel.Type("kubernetes.authorization.Authorizer")})

CASES = [
    ("'ABCDEFGHIJ abcdefghij'.lowerAscii()", 3, 3),
    ("'ABCDEFGHIJ abcdefghij'.lowerAscii() == 'abcdefghij ABCDEFGHIJ'.lowerAscii()", 7, 9),
    ("'ABCDEFGHIJ abcdefghij'.upperAscii()", 3, 3),
    ("'ABCDEFGHIJ abcdefghij'.upperAscii() == 'abcdefghij ABCDEFGHIJ'.upperAscii()", 7, 9),
    ("strings.quote('ABCDEFGHIJ abcdefghij')", 3, 3),
    ("strings.quote('ABCDEFGHIJ abcdefghij') == strings.quote('ABCDEFGHIJ abcdefghij')", 7, 11),
    ("'abc 123 def 123'.replace('123', '456')", 3, 3),
    ("'abc 123 def 123'.replace('', 'x')", 3, 3),
    ("'abc 123 def 123'.replace('123', '')", 3, 3),
    ("'abc 123 def 123'.replace('123', '456', 1)", 3, 3),
    ("'abc 123 def 123'.split(' ')", 3, 3),
    ("'abc 123 def 123'.split(' ', 1)", 3, 3),
    ("'abc 123 def 123'.substring(5)", 2, 2),
    ("'abc 123 def 123'.substring(5, 8)", 2, 2),
    ("'  abc 123 def 123  '.trim()", 2, 2),
    ("['aa', 'bb', 'cc', 'd', 'e', 'f', 'g', 'h', 'i', 'j'].join(' ')", 11, 23),
    ("['aa', 'bb', 'cc', 'd', 'e', 'f', 'g', 'h', 'i', 'j'].join()", 10, 22),
    ("'abc 123 def 123'.find('123')", 2, 2),
    ("'abc 123 def 123'.findAll('123')", 2, 2),
    ("'abc 123 def 123'.findAll('123', 1)", 2, 2),
    ("authorizer.path('/healthz')", 2, 2),
    (
        "authorizer.group('apps').resource('deployments').subresource('status').namespace('test').name('backend')",
        6,
        6,
    ),
    (
        "authorizer.group('').resource('pods').fieldSelector('spec.nodeName=example-node-name.fully.qualified.domain.name.example.com')",
        1821,
        1821,
    ),
    (
        "authorizer.group('').resource('pods').labelSelector('spec.nodeName=example-node-name.fully.qualified.domain.name.example.com')",
        1821,
        1821,
    ),
    ("authorizer.path('/healthz').check('get').allowed()", 350003, 350003),
    (
        "authorizer.group('apps').resource('deployments').subresource('status').namespace('test').name('backend').check('create').allowed()",
        350007,
        350007,
    ),
    (
        "authorizer.group('apps').resource('deployments').subresource('status').namespace('test').name('backend').check('create').errored()",
        350007,
        350007,
    ),
    (
        "authorizer.group('apps').resource('deployments').subresource('status').namespace('test').name('backend').check('create').error()",
        350007,
        350007,
    ),
    ('quantity("12Mi")', 1, 1),
    ('isQuantity("20")', 1, 1),
    ('isQuantity("20M")', 1, 1),
    ('quantity("200M") == quantity("200M")', 3, 3),
    ('quantity("200M") == quantity("0.2G") && quantity("0.2G") == quantity("200M")', 3, 6),
    (
        'quantity("2M") == quantity("0.002G") && quantity("2000k") == quantity("2M") && quantity("0.002G") == quantity("2000k")',
        3,
        9,
    ),
    ('quantity("50M").isLessThan(quantity("50Mi"))', 3, 3),
    ('quantity("50Mi").isGreaterThan(quantity("50M"))', 3, 3),
    ('quantity("200M").compareTo(quantity("0.2G")) > 0', 4, 4),
    ('quantity("50k").add(quantity("20")) == quantity("50.02k")', 5, 5),
    ('quantity("50k").sub(quantity("20")) == quantity("49.98k")', 5, 5),
    ('quantity("50k").sub(20) == quantity("49980")', 4, 4),
    ('quantity("50k").add(20).sub(quantity("100k")).asInteger() > 0', 6, 6),
    ('quantity("50k").add(20).sub(quantity("100k")).sub(-50000).asInteger() > 0', 7, 7),
    ('quantity("50k").asInteger() > 0', 3, 3),
    ('quantity("50").isInteger()', 2, 2),
    ('quantity("50.703k").asApproximateFloat() > 0.0', 3, 3),
    ('format.named("dns1123subdomain")', 1, 1),
    ('format.named("dns1123Subdomain").value().validate("my-name")', 34, 34),
    ('format.named("dns1123Label").value().validate("my-name")', 34, 34),
    ('format.named("dns1123Label").value() == format.named("dns1123Label").value()', 5, 11),
    ("sets.contains([], [])", 21, 21),
    ("sets.contains([1], [])", 21, 21),
    ("sets.contains([1], [1])", 22, 22),
    ("sets.contains([1], [1, 1])", 23, 23),
    ("sets.contains([1, 1], [1])", 23, 23),
    ("sets.contains([2, 1], [1])", 23, 23),
    ("sets.contains([1, 2, 3, 4], [2, 3])", 29, 29),
    ("!sets.contains([1], [2])", 23, 23),
    ("!sets.contains([1], [1, 2])", 24, 24),
    ("sets.equivalent([], [])", 21, 21),
    ("sets.equivalent([1], [1])", 23, 23),
    ("sets.equivalent([1], [1, 1])", 25, 25),
    ("sets.equivalent([1, 1], [1])", 25, 25),
    ("!sets.equivalent([2, 1], [1])", 26, 26),
    ("!sets.equivalent([1], [1, 2])", 26, 26),
    ("sets.intersects([1], [1])", 22, 22),
    ("sets.intersects([1], [1, 1])", 23, 23),
    ("sets.intersects([1, 1], [1])", 23, 23),
    ("sets.intersects([2, 1], [1])", 23, 23),
    ("sets.intersects([1], [1, 2])", 23, 23),
    ("!sets.intersects([], [])", 22, 22),
    ("!sets.intersects([1], [])", 22, 22),
    ("!sets.intersects([1], [2])", 23, 23),
    ('semver("1.0.0")', 1, 1),
    ('semver("1234.56789012345.67890123456789")', 4, 4),
    ('isSemver("1.0.0")', 1, 1),
    ('isSemver("1234.56789012345.67890123456789")', 4, 4),
    ('semver("1.2.3").major()', 2, 2),
    ('semver("1.2.3").minor()', 2, 2),
    ('semver("1.2.3").patch()', 2, 2),
    ('semver("1.0.0").isLessThan(semver("1.1.0"))', 3, 3),
    ('semver("1.1.0").isGreaterThan(semver("1.0.0"))', 3, 3),
    ('semver("1.0.0").compareTo(semver("1.2.3"))', 3, 3),
    ("{'a': 1, 'b': 2}.all(k, v, v > 0)", 37, 41),
    ("{'a': 1, 'b': 2}.exists(k, v, v > 0)", 39, 43),
    ("{'a': 1, 'b': 2}.existsOne(k, v, v > 0)", 38, 40),
    ("{'a': 1, 'b': 2}.transformMap(k, v, v + 1)", 71, 71),
    ("{'a': 1, 'b': 2}.transformMap(k, v, v < 5, v + 1)", 67, 75),
    ("{'a': 1, 'b': 2}.transformMapEntry(k, v, {k: v + 1})", 131, 131),
    ("{'a': 1, 'b': 2}.transformMapEntry(k, v, v < 5, {k: v + 1})", 67, 135),
    ("[1, 2].all(i, v, v > 0)", 17, 21),
    ("[1, 2].exists(i, v, v > 0)", 19, 23),
    ("[1, 2].existsOne(i, v, v > 0)", 18, 20),
    ("[1, 2].transformList(i, v, v + 1)", 49, 49),
    ("[1, 2].transformList(i, v, v < 5, v + 1)", 27, 53),
    ("[1, 2, 3, 4, 5].sum()", 15, 15),
    ("[uint(1), uint(2), uint(3), uint(4), uint(5)].sum()", 20, 20),
    ("[1.0, 2.0, 3.0, 4.0, 5.0].sum()", 15, 15),
    (
        "[duration('1s'), duration('2s'), duration('3s'), duration('4s'), duration('5s')].sum()",
        20,
        20,
    ),
    ("[1, 2, 3, 4, 5].isSorted()", 15, 15),
    ("[1, 2, 3, 4, 5].max()", 15, 15),
    ("[1, 2, 3, 4, 5].min()", 15, 15),
    ("[uint(1), uint(2), uint(3), uint(4), uint(5)].isSorted()", 20, 20),
    ("[uint(1), uint(2), uint(3), uint(4), uint(5)].max()", 20, 20),
    ("[uint(1), uint(2), uint(3), uint(4), uint(5)].min()", 20, 20),
    ("[1.0, 2.0, 3.0, 4.0, 5.0].isSorted()", 15, 15),
    ("[1.0, 2.0, 3.0, 4.0, 5.0].max()", 15, 15),
    ("[1.0, 2.0, 3.0, 4.0, 5.0].min()", 15, 15),
    ("[false, true, false, true, false].isSorted()", 15, 15),
    ("[false, true, false, true, false].max()", 15, 15),
    ("[false, true, false, true, false].min()", 15, 15),
    (
        "['012345678901', '012345678901', '012345678901', '012345678901', '012345678901'].isSorted()",
        15,
        25,
    ),
    (
        "['012345678901', '012345678901', '012345678901', '012345678901', '012345678901'].max()",
        15,
        25,
    ),
    (
        "['012345678901', '012345678901', '012345678901', '012345678901', '012345678901'].min()",
        15,
        25,
    ),
    (
        "[bytes('012345678901'), bytes('012345678901'), bytes('012345678901'), bytes('012345678901'), bytes('012345678901')].isSorted()",
        25,
        35,
    ),
    (
        "[bytes('012345678901'), bytes('012345678901'), bytes('012345678901'), bytes('012345678901'), bytes('012345678901')].max()",
        25,
        35,
    ),
    (
        "[bytes('012345678901'), bytes('012345678901'), bytes('012345678901'), bytes('012345678901'), bytes('012345678901')].min()",
        25,
        35,
    ),
    (
        "[duration('1s'), duration('2s'), duration('3s'), duration('4s'), duration('5s')].isSorted()",
        20,
        20,
    ),
    (
        "[duration('1s'), duration('2s'), duration('3s'), duration('4s'), duration('5s')].max()",
        20,
        20,
    ),
    (
        "[duration('1s'), duration('2s'), duration('3s'), duration('4s'), duration('5s')].min()",
        20,
        20,
    ),
    ("[1, 2, 3, 4, 5].indexOf(3)", 15, 15),
    ("[1, 2, 3, 4, 5].lastIndexOf(3)", 15, 15),
    ("[uint(1), uint(2), uint(3), uint(4), uint(5)].indexOf(uint(3))", 21, 21),
    ("[uint(1), uint(2), uint(3), uint(4), uint(5)].lastIndexOf(uint(3))", 21, 21),
    ("[1.0, 2.0, 3.0, 4.0, 5.0].indexOf(3.0)", 15, 15),
    ("[1.0, 2.0, 3.0, 4.0, 5.0].lastIndexOf(3.0)", 15, 15),
    ("[false, true, false, true, false].indexOf(true)", 15, 15),
    ("[false, true, false, true, false].lastIndexOf(true)", 15, 15),
    (
        "['012345678901', '012345678901', '012345678901', '012345678901', '012345678901'].indexOf('x')",
        15,
        25,
    ),
    (
        "['012345678901', '012345678901', '012345678901', '012345678901', '012345678901'].lastIndexOf('x')",
        15,
        25,
    ),
    (
        "[bytes('012345678901'), bytes('012345678901'), bytes('012345678901'), bytes('012345678901'), bytes('012345678901')].indexOf(bytes('x'))",
        26,
        36,
    ),
    (
        "[bytes('012345678901'), bytes('012345678901'), bytes('012345678901'), bytes('012345678901'), bytes('012345678901')].lastIndexOf(bytes('x'))",
        26,
        36,
    ),
    (
        "[duration('1s'), duration('2s'), duration('3s'), duration('4s'), duration('5s')].indexOf(duration('3s'))",
        21,
        21,
    ),
    (
        "[duration('1s'), duration('2s'), duration('3s'), duration('4s'), duration('5s')].lastIndexOf(duration('3s'))",
        21,
        21,
    ),
    ("'01234567890123456789012345678901234567890123456789'.indexOf('123')", 5, 5),
    ("'01234567890123456789012345678901234567890123456789'.lastIndexOf('123')", 5, 5),
]
MORE = [
    ("{'a': 1, 'b': 2}.all(k, v, v > 0)", 37, 41),
    ("{'a': 1, 'b': 2}.exists(k, v, v > 0)", 39, 43),
    ("{'a': 1, 'b': 2}.existsOne(k, v, v > 0)", 38, 40),
    ("{'a': 1, 'b': 2}.transformMap(k, v, v + 1)", 71, 71),
    ("{'a': 1, 'b': 2}.transformMap(k, v, v < 5, v + 1)", 67, 75),
    ("{'a': 1, 'b': 2}.transformMapEntry(k, v, {k: v + 1})", 131, 131),
    ("[1, 2].all(i, v, v > 0)", 17, 21),
    ("[1, 2].exists(i, v, v > 0)", 19, 23),
    ("[1, 2].existsOne(i, v, v > 0)", 18, 20),
    ("[1, 2].transformList(i, v, v + 1)", 49, 49),
    ("[1, 2].transformList(i, v, v < 5, v + 1)", 27, 53),
    ("sets.contains([], [])", 21, 21),
    ("sets.contains([1], [1])", 22, 22),
    ("sets.contains([1, 2, 3, 4], [2, 3])", 29, 29),
    ("!sets.contains([1], [2])", 23, 23),
]


@pytest.mark.parametrize(("expr", "lo", "hi"), CASES + MORE)
def test_kube_estimates(expr: str, lo: int, hi: int) -> None:
    program = _ENV.compile(expr)
    assert estimate(program.checked, TestSizes()) == Estimate(lo, hi)


SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 10},
        "items": {"type": "array", "maxItems": 5, "items": {"type": "string", "maxLength": 3}},
        "any": {"type": "array", "items": {"type": "string"}},
    },
}


def _schema_program(expr: str) -> tuple[object, object]:
    from platform_api.cel.schematypes import build_pool

    decl = decl_type(SCHEMA)
    assert decl is not None
    pool = build_pool(decl)  # names the message types first
    env = Environment({"self": decl.cel_type()}, pool=pool)
    return decl, env.compile(expr)


def test_schema_sizes_bound_estimates() -> None:
    decl, program = _schema_program("self.items.all(i, i.startsWith('a'))")
    # range 2; per item: loop condition 2, step up to 3 (&& of @result and startsWith); 5 items
    assert estimate(program.checked, DeclSizes(decl)) == Estimate(3, 28)
    _, unbounded = _schema_program("self.any.all(i, i.startsWith('a'))")
    assert estimate(unbounded.checked, DeclSizes(decl)).hi > 1_000_000


def test_actual_sizes_give_the_runtime_bound() -> None:
    decl, program = _schema_program("self.any.all(i, i.size() < 3)")
    sizes = ActualSizes(decl, {"self": {"any": ["a", "bb"]}})
    assert estimate(program.checked, sizes) == Estimate(3, 15)  # 2 items of at most 6
