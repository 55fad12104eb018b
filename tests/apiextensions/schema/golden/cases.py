"""Inputs of the golden tests, drawn from kube's schema tests and widened by hand.

Each was run through kube v1.36's own code, and its answers are stored
in ``*.json`` beside this file; the tests compare ours with those answers.
"""

from __future__ import annotations

from typing import Any

OBJ: dict[str, Any] = {"type": "object"}


def obj(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props}


INT = {"type": "integer"}
STR = {"type": "string"}
NUM = {"type": "number"}
BOOL = {"type": "boolean"}

STRUCTURAL: list[dict[str, Any]] = [
    obj(spec=obj(replicas=INT)),
    {"type": "string"},
    {},
    {"type": "object", "additionalProperties": STR},
    obj(a={"type": "array"}),
    obj(a={}),
    obj(a={"type": "array", "items": {}}),
    obj(a={"x-kubernetes-preserve-unknown-fields": True}),
    obj(a={"x-kubernetes-int-or-string": True}),
    obj(a={"x-kubernetes-int-or-string": True, "anyOf": [INT, STR]}),
    obj(a={"x-kubernetes-int-or-string": True, "anyOf": [INT, {"type": "string", "pattern": "x"}]}),
    obj(a={"x-kubernetes-int-or-string": True, "allOf": [{"anyOf": [INT, STR]}, {"maximum": 3}]}),
    obj(a={"x-kubernetes-int-or-string": True, "x-kubernetes-preserve-unknown-fields": True}),
    obj(a={"x-kubernetes-int-or-string": True, "x-kubernetes-embedded-resource": True}),
    obj(a={"x-kubernetes-embedded-resource": True}),
    obj(a={"type": "string", "x-kubernetes-embedded-resource": True}),
    obj(a={"type": "object", "x-kubernetes-embedded-resource": True}),
    obj(
        a={
            "type": "object",
            "x-kubernetes-embedded-resource": True,
            "x-kubernetes-preserve-unknown-fields": True,
            "additionalProperties": STR,
        }
    ),
    obj(
        a={
            "type": "object",
            "x-kubernetes-embedded-resource": True,
            "properties": {"kind": INT, "apiVersion": BOOL, "metadata": STR},
        }
    ),
    obj(kind=INT, apiVersion=STR),
    obj(metadata=obj(name=STR)),
    obj(metadata=obj(name=STR, generateName=STR)),
    obj(metadata=obj(name=STR, labels=OBJ)),
    obj(metadata={"type": "object", "description": "meta"}),
    obj(metadata={"type": "string"}),
    obj(metadata={"type": "object", "default": {"name": "x"}}),
    obj(metadata={"type": "object", "required": []}),
    obj(a=obj(metadata={"type": "string"})),
    obj(a=STR, b={"allOf": [{"type": "string"}]}),
    {
        "type": "object",
        "properties": {"a": STR},
        "anyOf": [{"properties": {"a": {"pattern": "x"}}}, {"properties": {"b": {"maxLength": 1}}}],
    },
    {
        "type": "object",
        "properties": {"a": {"type": "array", "items": STR}},
        "allOf": [{"properties": {"a": {"items": {"pattern": "["}}}}],
    },
    {
        "type": "object",
        "properties": {"a": STR},
        "oneOf": [
            {
                "type": "string",
                "title": "t",
                "description": "d",
                "nullable": True,
                "default": 1,
                "x-kubernetes-list-type": "set",
                "x-kubernetes-map-type": "atomic",
                "x-kubernetes-list-map-keys": ["a"],
                "x-kubernetes-preserve-unknown-fields": True,
                "x-kubernetes-embedded-resource": True,
                "x-kubernetes-int-or-string": True,
                "additionalProperties": {"maxLength": 1},
                "x-kubernetes-validations": [{"rule": "true"}],
            }
        ],
    },
    {"type": "object", "properties": {"a": STR}, "not": {"properties": {"metadata": {}}}},
    obj(a={"type": "string", "pattern": "+"}),
    obj(a={"type": "string", "pattern": "(a"}),
    obj(a={"type": "string", "pattern": "^[a-z]+$"}),
    obj(a={"type": "string", "pattern": "(?=x)"}),
    {"type": "object", "$ref": "#/x"},
    {"type": "object", "id": "x"},
    obj(a={"type": "array", "items": [STR]}),
    obj(a={"type": "object", "x-kubernetes-preserve-unknown-fields": False}),
    obj(a={"type": "object", "patternProperties": {"x": STR}}),
    obj(a={"type": "object", "additionalProperties": False}),
    # defaults
    obj(a={"type": "string", "default": "x"}),
    obj(a={"type": "string", "default": 1}),
    obj(a={"type": "integer", "default": "x", "maximum": 3}),
    obj(a={"type": "integer", "default": 5, "maximum": 3}),
    obj(a={"type": "object", "properties": {"b": STR}, "default": {"b": "x", "c": 1}}),
    obj(a={"type": "object", "x-kubernetes-preserve-unknown-fields": True, "default": {"c": 1}}),
    obj(a={"type": "string", "enum": ["x", "y"], "default": "z"}),
    obj(a={"type": "array", "items": {"type": "string", "default": "d"}, "default": ["a", 1]}),
    obj(
        a={
            "type": "object",
            "x-kubernetes-embedded-resource": True,
            "x-kubernetes-preserve-unknown-fields": True,
            "default": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a/b"}},
        }
    ),
    obj(
        a={
            "type": "object",
            "x-kubernetes-embedded-resource": True,
            "x-kubernetes-preserve-unknown-fields": True,
            "default": {"apiVersion": 1, "kind": "Pod"},
        }
    ),
    obj(
        a={
            "type": "object",
            "x-kubernetes-embedded-resource": True,
            "x-kubernetes-preserve-unknown-fields": True,
            "default": {"kind": "Pod", "metadata": {"labels": 1}},
        }
    ),
    obj(
        a={
            "type": "object",
            "x-kubernetes-embedded-resource": True,
            "properties": {"metadata": obj(name={"type": "string", "default": "a/b"})},
        }
    ),
    obj(
        a={
            "type": "object",
            "x-kubernetes-embedded-resource": True,
            "properties": {"kind": {"type": "string", "default": "in valid"}},
        }
    ),
    obj(metadata=obj(name={"type": "string", "default": "Bad_Name"})),
    obj(a={"x-kubernetes-int-or-string": True, "default": True}),
    obj(a={"type": "string", "format": "int32", "default": "x"}),
    obj(a={"type": "string", "nullable": True, "default": None}),
    obj(
        a={
            "type": "object",
            "properties": {"b": {"type": "integer", "default": "s"}},
            "default": {"b": 1},
        }
    ),
]

_PORT = {"x-kubernetes-int-or-string": True}
_VSCHEMA = obj(
    spec=obj(
        replicas={"type": "integer", "minimum": 0, "maximum": 10},
        ratio={"type": "number", "exclusiveMaximum": True, "maximum": 1.5, "multipleOf": 0.25},
        count={"type": "integer", "multipleOf": 3, "exclusiveMinimum": True, "minimum": 2},
        color={"type": "string", "enum": ["red", "blue"]},
        level={"type": "integer", "enum": [1, 2]},
        name={"type": "string", "minLength": 2, "maxLength": 5, "pattern": "^[a-z]+$"},
        tags={"type": "array", "items": STR, "maxItems": 2, "minItems": 1, "uniqueItems": True},
        labels={"type": "object", "additionalProperties": STR, "maxProperties": 2},
        props={"type": "object", "minProperties": 1},
        port=_PORT,
        nport={"x-kubernetes-int-or-string": True, "nullable": True},
        i32={"type": "integer", "format": "int32"},
        i64={"type": "integer", "format": "int64"},
        f32={"type": "number", "format": "float"},
        flag=BOOL,
        req={"type": "object", "required": ["a", "b"], "properties": {"a": STR, "b": STR}},
        nn={"type": "string", "nullable": True},
        ip={"type": "string", "format": "ipv4"},
        ip6={"type": "string", "format": "ipv6"},
        cidr={"type": "string", "format": "cidr"},
        uuid={"type": "string", "format": "uuid"},
        date={"type": "string", "format": "date"},
        dt={"type": "string", "format": "date-time"},
        dur={"type": "string", "format": "duration"},
        uri={"type": "string", "format": "uri"},
        email={"type": "string", "format": "email"},
        host={"type": "string", "format": "hostname"},
        mac={"type": "string", "format": "mac"},
        b64={"type": "string", "format": "byte"},
        short={"type": "string", "format": "k8s-short-name"},
        long={"type": "string", "format": "k8s-long-name"},
        unknownfmt={"type": "string", "format": "foo"},
        any_of={"anyOf": [{"maximum": 3}, {"minimum": 10}], "type": "integer"},
        one_of={"oneOf": [{"maximum": 3}, {"maximum": 5}], "type": "integer"},
        all_of={"allOf": [{"maximum": 3}, {"minimum": 1}], "type": "integer"},
        not_={"not": {"enum": ["x"]}, "type": "string"},
        objs={
            "type": "array",
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name"],
            "items": obj(name=STR, value=INT),
        },
        objs2={
            "type": "array",
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["a", "b"],
            "items": obj(a=STR, b=INT),
        },
        set={"type": "array", "x-kubernetes-list-type": "set", "items": {}},
        emb={
            "type": "object",
            "x-kubernetes-embedded-resource": True,
            "x-kubernetes-preserve-unknown-fields": True,
        },
    ),
)
_OK = {"apiVersion": "g/v1", "kind": "K", "metadata": {"name": "n"}}


def _v(spec: dict[str, Any], old: dict[str, Any] | None = None) -> dict[str, Any]:
    case = {"schema": _VSCHEMA, "object": {**_OK, "spec": spec}}
    if old is not None:
        case["old"] = {**_OK, "spec": old}
    return case


VALIDATE: list[dict[str, Any]] = [
    _v({"replicas": 3, "color": "red", "name": "abc", "tags": ["a"], "port": 1}),
    _v({"replicas": "string"}),
    _v({"replicas": 11}),
    _v({"replicas": -1}),
    _v({"replicas": 1.5}),
    _v({"replicas": 3.0}),
    _v({"replicas": None}),
    _v({"replicas": True}),
    _v({"replicas": {"a": 1}}),
    _v({"replicas": 10000000000000000000000}),
    _v({"ratio": 1.5}),
    _v({"ratio": 0.3}),
    _v({"ratio": 1}),
    _v({"ratio": 2}),
    _v({"count": 2}),
    _v({"count": 4}),
    _v({"count": 6}),
    _v({"color": "pink"}),
    _v({"color": None}),
    _v({"color": 1}),
    _v({"level": 3}),
    _v({"level": 1.0}),
    _v({"level": "x"}),
    _v({"name": "abcdef"}),
    _v({"name": "a"}),
    _v({"name": "ABC"}),
    _v({"name": "äöü"}),
    _v({"name": "äöüßéè"}),
    _v({"tags": ["a", "b", "c"]}),
    _v({"tags": []}),
    _v({"tags": ["a", "a"]}),
    _v({"tags": "a"}),
    _v({"tags": [1, "b"]}),
    _v({"labels": {"a": "1", "b": "2", "c": "3"}}),
    _v({"labels": {"a": 1}}),
    _v({"props": {}}),
    _v({"port": "http"}),
    _v({"port": 1.5}),
    _v({"port": None}),
    _v({"port": ["a"]}),
    _v({"nport": None}),
    _v({"nport": False}),
    _v({"i32": 2147483648}),
    _v({"i32": -2147483649}),
    _v({"i32": 1.0}),
    _v({"i64": 10000000000000000000.0}),
    _v({"f32": 3.5e38}),
    _v({"f32": "x"}),
    _v({"flag": "true"}),
    _v({"flag": 0}),
    _v({"req": {}}),
    _v({"req": {"a": "x"}}),
    _v({"nn": None}),
    _v({"ip": "1.2.3.4"}),
    _v({"ip": "01.02.03.004"}),
    _v({"ip": "1.2.3"}),
    _v({"ip": "::1"}),
    _v({"ip6": "::1"}),
    _v({"ip6": "1.2.3.4"}),
    _v({"ip6": "fe80::1%eth0"}),
    _v({"ip6": "::ffff:1.2.3.4"}),
    _v({"ip6": "1:2:3:4:5:6:7:8:9"}),
    _v({"cidr": "10.0.0.0/8"}),
    _v({"cidr": "10.0.0.0/33"}),
    _v({"cidr": "fd00::/64"}),
    _v({"uuid": "123e4567-e89b-12d3-a456-426614174000"}),
    _v({"uuid": "123e4567e89b12d3a456426614174000"}),
    _v({"uuid": "nope"}),
    _v({"date": "2024-02-29"}),
    _v({"date": "2023-02-29"}),
    _v({"date": "2024-2-1"}),
    _v({"dt": "2024-01-01T10:00:00Z"}),
    _v({"dt": "2024-01-01T10:00:00.123+02:00"}),
    _v({"dt": "2024-01-01 10:00:00"}),
    _v({"dt": "2024-01-01T25:00:00Z"}),
    _v({"dur": "1h30m"}),
    _v({"dur": "3 days"}),
    _v({"dur": "1.5h"}),
    _v({"dur": "forever"}),
    _v({"uri": "https://example.com/a?b=c"}),
    _v({"uri": "/relative/path"}),
    _v({"uri": "relative"}),
    _v({"uri": "mailto:a@b"}),
    _v({"uri": "http://exa mple.com/"}),
    _v({"uri": "http://[::1]:80/"}),
    _v({"uri": "http://a:b@host:99x/"}),
    _v({"email": "a@b.c"}),
    _v({"email": "Name <a@b.c>"}),
    _v({"email": "not an email"}),
    _v({"email": "a@"}),
    _v({"host": "example.com"}),
    _v({"host": "-bad.com"}),
    _v({"host": "a" * 64 + ".com"}),
    _v({"host": "localhost"}),
    _v({"mac": "01:23:45:67:89:ab"}),
    _v({"mac": "0123.4567.89ab"}),
    _v({"mac": "01:23:45:67:89"}),
    _v({"b64": "aGVsbG8="}),
    _v({"b64": "aGVsbG8"}),
    _v({"short": "abc-1"}),
    _v({"short": "Abc"}),
    _v({"long": "a.b-c"}),
    _v({"long": "a..b"}),
    _v({"unknownfmt": "anything"}),
    _v({"any_of": 5}),
    _v({"any_of": 2}),
    _v({"any_of": "x"}),
    _v({"one_of": 2}),
    _v({"one_of": 4}),
    _v({"one_of": 6}),
    _v({"all_of": 0}),
    _v({"all_of": 5}),
    _v({"all_of": 2}),
    _v({"not_": "x"}),
    _v({"not_": "y"}),
    _v({"objs": [{"name": "a"}, {"name": "a"}, {"name": "b"}, {}, {}]}),
    _v({"objs": [{"name": "a"}, 1]}),
    _v({"objs": [{"name": 1}, {"name": 1.0}]}),
    _v({"objs2": [{"a": "x", "b": 1}, {"a": "x", "b": 1}, {"a": "x"}, {"a": "x"}]}),
    _v({"set": [1, 1.0, "1", True, 1, {"a": 1}, {"a": 1.0}, [1], [1]]}),
    _v({"emb": {"kind": "Pod"}}),
    _v({"emb": {"apiVersion": "v1", "kind": "Po d", "metadata": {"name": "a/b"}}}),
    _v({"emb": {"apiVersion": "a/b/c", "kind": "", "metadata": {"labels": {"a": 1}}}}),
    _v(
        {
            "emb": {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "..", "namespace": "Bad", "generation": -1},
            }
        }
    ),
    _v({"emb": {"apiVersion": 1, "kind": 2}}),
    # ratcheting
    _v({"replicas": 11}, old={"replicas": 11}),
    _v({"replicas": 12}, old={"replicas": 11}),
    _v({"replicas": 11, "color": "pink"}, old={"replicas": 11}),
    _v({"tags": ["a", "b", "c"]}, old={"tags": ["a", "b", "c"]}),
    _v({"tags": ["a", "b", "c", "d"]}, old={"tags": ["a", "b", "c"]}),
    _v(
        {"objs": [{"name": "b", "value": "x"}, {"name": "a", "value": "y"}]},
        old={"objs": [{"name": "a", "value": "y"}, {"name": "b", "value": "x"}]},
    ),
    _v(
        {"objs": [{"name": "b", "value": "x"}, {"name": "a", "value": "z"}]},
        old={"objs": [{"name": "a", "value": "y"}, {"name": "b", "value": "x"}]},
    ),
    _v({"labels": {"a": 1, "b": "2"}}, old={"labels": {"a": 1}}),
    _v({"port": None}, old={"port": None}),
]

_PSCHEMA = obj(
    spec=obj(
        a=STR,
        nested=obj(b=INT),
        list={"type": "array", "items": obj(c=STR)},
        free={"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        freeknown={
            "type": "object",
            "x-kubernetes-preserve-unknown-fields": True,
            "properties": {"k": obj(x=STR)},
        },
        map={"type": "object", "additionalProperties": obj(v=STR)},
        anymap={"type": "object", "additionalProperties": True},
        emb={
            "type": "object",
            "x-kubernetes-embedded-resource": True,
            "properties": {"spec": obj(x=STR)},
        },
        freelist={
            "type": "array",
            "x-kubernetes-preserve-unknown-fields": True,
            "items": obj(d=STR),
        },
        withdefault={"type": "string", "default": "dflt"},
        nullable={"type": "string", "nullable": True},
        objdefault=obj(z={"type": "integer", "default": 7}),
        itemsdefault={"type": "array", "items": {"type": "string", "default": "i"}},
        mapdefault={"type": "object", "additionalProperties": {"type": "string", "default": "m"}},
    )
)
_POBJ = {
    "apiVersion": "g/v1",
    "kind": "K",
    "metadata": {"name": "n", "unknown": 1},
    "unknownRoot": 1,
    "spec": {
        "a": "x",
        "junk": {"deep": 1},
        "nested": {"b": 1, "junk": 2},
        "list": [{"c": "1", "junk": 1}, {"junk": 2}, 3],
        "free": {"any": {"thing": 1}},
        "freeknown": {"other": 1, "k": {"x": "1", "y": 2}},
        "map": {"k1": {"v": "1", "w": 2}},
        "anymap": {"k": {"deep": 1}, "s": "x"},
        "emb": {
            "apiVersion": "v1",
            "kind": "X",
            "metadata": {"name": "a", "junk": 1},
            "spec": {"x": "1", "y": 2},
            "status": {},
        },
        "freelist": [{"d": "1", "e": 2}],
    },
}

PRUNE: list[dict[str, Any]] = [
    {"schema": _PSCHEMA, "object": _POBJ, "root": True},
    {"schema": _PSCHEMA, "object": _POBJ, "root": False},
    {
        "schema": {},
        "object": {"apiVersion": "a", "kind": "b", "metadata": {}, "x": 1},
        "root": True,
    },
]

DEFAULT: list[dict[str, Any]] = [
    {"schema": _PSCHEMA, "object": {"spec": {}}},
    {"schema": _PSCHEMA, "object": {"spec": {"withdefault": None, "nullable": None, "a": None}}},
    {
        "schema": _PSCHEMA,
        "object": {
            "spec": {
                "objdefault": {"z": None},
                "itemsdefault": ["x", None],
                "mapdefault": {"a": None, "b": "y"},
            }
        },
    },
    {"schema": _PSCHEMA, "object": {}},
]

COERCE: list[dict[str, Any]] = [
    {
        "schema": _PSCHEMA,
        "object": {
            "spec": {"emb": {"apiVersion": "v1", "kind": "X", "metadata": {"name": "a", "junk": 1}}}
        },
        "track": True,
    },
    {"schema": _PSCHEMA, "object": {"spec": {"emb": {"apiVersion": 1, "kind": "X"}}}},
    {"schema": _PSCHEMA, "object": {"spec": {"emb": {"apiVersion": 1, "kind": "X"}}}, "drop": True},
    {
        "schema": _PSCHEMA,
        "object": {"spec": {"emb": {"kind": "X", "metadata": {"labels": 1, "name": "x"}}}},
    },
    {
        "schema": _PSCHEMA,
        "object": {"spec": {"emb": {"kind": "X", "metadata": {"labels": 1, "name": "x"}}}},
        "drop": True,
        "track": True,
    },
    {
        "schema": {},
        "object": {"apiVersion": "v", "kind": "K", "metadata": {"name": "x", "generation": 1.5}},
        "root": True,
    },
]

_META_SAMPLES: list[Any] = [
    {"name": "x", "unknownField": "foo", "generateName": None, "labels": {"a": "b"}},
    {"name": "x", "annotations": 11},
    {"name": 1},
    {"generation": 1.5},
    {"generation": 2.0},
    {"generation": "1"},
    {"labels": {"a": 1}},
    {"labels": {"a": None}},
    {"ownerReferences": [{"apiVersion": 1}]},
    {"ownerReferences": [1]},
    {"ownerReferences": [{"uid": "u", "controller": False, "junk": 1}]},
    {"finalizers": ["a", 1]},
    {"finalizers": "a"},
    {"creationTimestamp": "2020-01-01T00:00:00Z", "deletionTimestamp": None},
    {"creationTimestamp": "2020-01-01T02:00:00.5+02:00"},
    {"creationTimestamp": "nope"},
    {"creationTimestamp": "2020-13-01T00:00:00Z"},
    {"creationTimestamp": "2020-02-30T00:00:00Z"},
    {"creationTimestamp": 5},
    {"creationTimestamp": "2020-01-01T00:00:00"},
    {"deletionGracePeriodSeconds": 0, "generation": 0, "uid": ""},
    {"managedFields": [{"manager": "m", "operation": "Update", "fieldsV1": {"f:a": {}}, "x": 1}]},
    {"labels": 1, "annotations": {"a": 2}, "name": "n"},
    "string",
    [1],
    None,
]
META: list[dict[str, Any]] = [
    {"object": {"metadata": m}, "drop": drop, "track": track}
    for m in _META_SAMPLES
    for drop, track in ((False, False), (True, True))
]

REGEX: list[str] = [
    "+", "(abc", "abc)", "a**", "a*+", "a{2}*", "[a", "[z-a]", "\\1", "\\C", "a\\", "(?=a)",
    "(?P<n>a)", "(?P<>a)", "(?P<n", "a{1001}", "a{2,1}", "(a{100}){20}", "[[:foo:]]",
    "\\p{Foo}", "\\p", "\\x{110000}", "\\xZZ", "\\8", "(?i-)a", "a|*", "(*)", "^*",
    "(?<name>x)", "(?P=name)", "a++", "[a-\\d]", "x{2}{3}",
    "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", "\\d+\\.\\d+", "[[:alpha:]]+", "\\pL+", "\\p{Greek}",
    "a{,5}", "a{01}", "(?i)abc", "(?i:a)b", "(?m)^a$", "(?s).", "(?-i)a", "(?U)a+", "$+",
    "\\Qa.b\\E+", "[\\d\\s]+", "[^\\D]", "\\bfoo\\b", "\\z", "[]a]", "[a-]",
    "[\\x41-\\x5A]+", "\\é", "(?i)[k]", "x{2,}?", "\\0123", "[^a]", "$a", "\\A\\z",
]  # fmt: skip
REGEX_INPUTS = [
    "", "a", "abc", "ABC", "aa", "a\nb", "foo bar", "1.5", "é", "αβ", "{,5}", "a{01}", "x\n",
    "\n", "K", "\u212a", "aaa", "-", "]", "AZ", "\n\n", "a.b", "a.bb", "ab-1",
]  # fmt: skip
