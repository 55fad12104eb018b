"""Data of kube's jsonpath_test.go, as the JSON an unstructured object holds.

kube's struct-typed inputs become dicts: their JSON prints with sorted keys, and maps
iterate in insertion order here where Go's order is random.
"""

from __future__ import annotations

from typing import Any

TYPES: dict[str, Any] = {
    "bools": [True, False, True, False],
    "integers": [1, 2, 3, 4],
    "floats": [1.0, 2.2, 3.3, 4.0],
    "strings": ["one", "two", "three", "four"],
    "interfaces": [True, "one", 1, 1.1],
    "maps": [
        {"name": "one", "value": 1},
        {"name": "two", "value": 2.02},
        {"name": "three", "value": 3.03},
        {"name": "four", "value": 4.04},
    ],
    "structs": [
        {"name": "one", "value": 1, "type": "integer"},
        {"name": "two", "value": 2.002, "type": "float"},
        {"name": "three", "value": 3, "type": "integer"},
        {"name": "four", "value": 4.004, "type": "float"},
    ],
}

STORE: dict[str, Any] = {
    "Book": [
        {
            "Category": "reference",
            "Author": "Nigel Rees",
            "Title": "Sayings of the Centurey",
            "Price": 8.95,
        },
        {
            "Category": "fiction",
            "Author": "Evelyn Waugh",
            "Title": "Sword of Honour",
            "Price": 12.99,
        },
        {"Category": "fiction", "Author": "Herman Melville", "Title": "Moby Dick", "Price": 8.99},
    ],
    "Bicycle": [
        {"Color": "red", "Price": 19.95, "IsNew": True},
        {"Color": "green", "Price": 20.01, "IsNew": False},
    ],
    "Name": "jsonpath",
    "Labels": {"engieer": 10, "web/html": 15, "k8s-app": 20},
    "Employees": {"jason": "manager", "dan": "clerk"},
}

POINTS: list[Any] = [
    {"id": "i1", "x": 4, "y": -5},
    {"id": "i2", "x": -2, "y": -5, "z": 1},
    {"id": "i3", "x": 8, "y": 3},
    {"id": "i4", "x": -6, "y": -1},
    {"id": "i5", "x": 0, "y": 2, "z": 1},
    {"id": "i6", "x": 1, "y": 4},
    {"id": "i7", "x": None, "y": 4},
]

NODES: dict[str, Any] = {
    "kind": "List",
    "items": [
        {
            "kind": "None",
            "metadata": {"name": "127.0.0.1", "labels": {"platform.io/hostname": "127.0.0.1"}},
            "status": {
                "capacity": {"cpu": "4"},
                "ready": True,
                "addresses": [{"type": "LegacyHostIP", "address": "127.0.0.1"}],
            },
        },
        {
            "kind": "None",
            "metadata": {"name": "127.0.0.2", "labels": {"platform.io/hostname": "127.0.0.2"}},
            "status": {
                "capacity": {"cpu": "8"},
                "ready": False,
                "addresses": [
                    {"type": "LegacyHostIP", "address": "127.0.0.2"},
                    {"type": "another", "address": "127.0.0.3"},
                ],
            },
        },
    ],
    "users": [
        {"name": "myself", "user": {}},
        {"name": "e2e", "user": {"username": "admin", "password": "secret"}},
    ],
}


def _another() -> list[dict[str, str]]:
    return [{"name": "value1"}, {"name": "value2"}]


NESTED: dict[str, Any] = {
    "items": [
        {
            "metadata": {"name": "pod1"},
            "spec": {
                "containers": [
                    {"name": "foo", "another": _another()},
                    {"name": "bar", "another": _another()},
                ]
            },
        },
        {
            "metadata": {"name": "pod2"},
            "spec": {"containers": [{"name": "baz", "another": _another()}]},
        },
    ]
}

ANNOTATED: dict[str, Any] = {
    "kind": "List",
    "items": [
        {"kind": "Pod", "metadata": {"name": "pod1", "annotations": {"color": "blue"}}},
        {"kind": "Pod", "metadata": {"name": "pod2"}},
        {"kind": "Pod", "metadata": {"name": "pod3", "annotations": {"color": "green"}}},
        {"kind": "Pod", "metadata": {"name": "pod4", "annotations": {"color": "blue"}}},
    ],
}


def containers(count: int) -> dict[str, Any]:
    """A pod with containers fake0..fake<count-1> (TestNegativeIndex, TestStep)."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "spec": {
            "containers": [
                {"image": "radial/busyboxplus:curl", "name": f"fake{i}"} for i in range(count)
            ]
        },
    }


RUNNING: dict[str, Any] = {
    "kind": "List",
    "items": [
        {"kind": "Pod", "metadata": {"name": "pod1"}, "status": {"phase": "Running"}},
        {"kind": "Pod", "metadata": {"name": "pod2"}, "status": {"phase": "Running"}},
        {"kind": "Pod", "metadata": {"name": "pod3"}, "status": {"phase": "Running"}},
        {"resourceVersion": ""},
    ],
}
