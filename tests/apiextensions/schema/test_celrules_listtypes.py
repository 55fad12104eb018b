"""Rules on set- and map-lists (``x-kubernetes-list-type``) compare and join them as kube's
CEL values do: unordered, by element or by key; the left operand's type decides.  Each
expected outcome is kube-apiserver v1.36's answer to the same rule and object."""

from __future__ import annotations

from typing import Any

import pytest

from tests.apiextensions.schema.test_celrules_validate import check, validator

SET = {
    "type": "array",
    "maxItems": 5,
    "items": {"type": "string", "maxLength": 5},
    "x-kubernetes-list-type": "set",
}
ITEM = {
    "type": "object",
    "required": ["k"],
    "properties": {
        "k": {"type": "string", "maxLength": 5},
        "v": {"type": "string", "maxLength": 5},
        "sub": SET,
    },
}
SPEC = {
    "type": "object",
    "properties": {
        "tags": SET,
        "tags2": SET,
        "m": {"type": "object", "maxProperties": 3, "additionalProperties": SET},
        "items": {
            "type": "array",
            "maxItems": 5,
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["k"],
            "items": ITEM,
        },
    },
}
OBJECT = {
    "spec": {
        "tags": ["a", "b"],
        "tags2": ["b", "a"],
        "m": {"k": ["x", "y"]},
        "items": [{"k": "x", "v": "1", "sub": ["x", "y"]}, {"k": "y", "v": "2", "sub": ["x", "y"]}],
    }
}

# (rule, holds for OBJECT as kube evaluates it)
RULES = [
    ("self.tags == ['b','a']", True),
    ("['b','a'] == self.tags", False),  # a plain list on the left: ordered
    ("self.tags == self.tags2", True),
    ("self.tags2 == self.tags", True),
    ("self.items.all(i, i.sub == ['y','x'])", True),
    ("(self.tags + ['a']) == ['b','a']", True),  # a set's union is a set
    ("size(self.tags + ['c','a']) == 3", True),
    ("size(self.items + [self.items[0]]) == 2", True),  # a map-list's merge by key
    ("self.items[0].sub == ['y','x']", True),
    ("self.tags != ['b','a']", False),
    ("self.tags.filter(t, true) == ['b','a']", False),  # a macro builds a plain list
    ("self.m['k'] == ['y','x']", True),
    ("[self.tags][0] == ['b','a']", True),
    ("self.items.exists(i, i.sub + ['z'] == ['z','y','x'])", True),
    ("(self.items + [self.items[0]])[0].k == 'x'", True),
    ("self.tags + ['c'] == ['a','b','c']", True),
    ("self.tags + ['c'] == ['c','a','b']", True),
    ("self.m.k == ['y','x']", True),
    ("self.items[?0].sub.orValue([]) == ['y','x']", True),
    ("self.tags in [['b','a']]", True),
    ("['b','a'] in [self.tags]", False),
    ("self.items.map(i, i.sub)[0] == ['y','x']", True),
    ("dyn(self.tags) == ['b','a']", True),
    ("(size(self.tags) > 1 ? self.tags : self.tags2) == ['b','a']", True),
    ("optional.of(self.tags).value() == ['b','a']", True),
    ("[self.tags, self.tags2][1] == ['a','b']", True),
    ("self.tags.slice(0, 2) == ['b','a']", False),  # a new, plain list
    ("self.?tags.orValue([]) == ['b','a']", True),
    ("self.?m.k.orValue([]) == ['y','x']", True),
]


@pytest.mark.parametrize(("rule", "holds"), RULES)
def test_rules_on_set_and_map_lists(rule: str, holds: bool) -> None:
    compiled = validator({**SPEC, "x-kubernetes-validations": [{"rule": rule}]})
    failed = [f"spec: Invalid value: failed rule: {rule}"]
    assert check(compiled, OBJECT) == ([] if holds else failed)


def _reordered(spec: dict[str, Any]) -> dict[str, Any]:
    return {
        **spec,
        "tags": list(reversed(spec["tags"])),
        "items": list(reversed(spec["items"])),
    }


def test_transition_rules_ignore_the_order_of_sets_and_map_lists() -> None:
    """``self == oldSelf`` (the usual immutability rule) holds when an update only
    reorders a set or a map-list; a changed entry still breaks it."""
    transitions = [
        {"rule": "self == oldSelf", "message": "whole"},
        {"rule": "self.tags == oldSelf.tags", "message": "tags"},
        {"rule": "self.items == oldSelf.items", "message": "items"},
        {"rule": "oldSelf.tags == self.tags", "message": "tags-rev"},
        {"rule": "self.tags != oldSelf.tags", "message": "tags-ne"},
        {"rule": "size(self.items + oldSelf.items) == 2", "message": "merged"},
    ]
    compiled = validator({**SPEC, "x-kubernetes-validations": transitions})
    old = OBJECT
    new = {"spec": _reordered(OBJECT["spec"])}
    assert check(compiled, new, old) == ["spec: Invalid value: tags-ne"]
    changed = {
        "spec": {
            **new["spec"],
            "items": [{"k": "y", "v": "2", "sub": ["x"]}, OBJECT["spec"]["items"][0]],
        }
    }
    assert check(compiled, changed, old) == [
        "spec: Invalid value: whole",
        "spec: Invalid value: items",
        "spec: Invalid value: tags-ne",
    ]


def test_plain_lists_keep_their_order() -> None:
    spec = {
        "type": "object",
        "properties": {"tags": {"type": "array", "items": {"type": "string"}, "maxItems": 5}},
        "x-kubernetes-validations": [{"rule": "self.tags == ['b','a']"}],
    }
    assert check(validator(spec), {"spec": {"tags": ["a", "b"]}}) == [
        "spec: Invalid value: failed rule: self.tags == ['b','a']"
    ]
