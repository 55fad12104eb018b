"""An applied configuration against its schema: structured-merge-diff's type problems and
kube's integer conversion, each message recorded from kube-apiserver v1.36 (server-side
apply of a ConfigMap and a Deployment)."""

from __future__ import annotations

from typing import Any

import pytest

from platform_api.fieldmanager import fit
from tests.fieldmanager.test_manager import manager_for

CM = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}


def misfits(**fields: Any) -> list[str]:
    fm = manager_for("", "ConfigMap")
    return fm.misfits({**CM, **fields})


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"immutable": "x"}, ".immutable: expected boolean, got &{x}"),
        ({"immutable": {"a": "b", "c": 1}}, ".immutable: expected boolean, got &{map[a:b c:1]}"),
        (
            {"data": {"a": {"x": "y", "n": 1, "z": None, "l": [1, "s", True, 1.5]}}},
            ".data.a: expected string, got &value.valueUnstructured{Value:map[string]interface {}"
            '{"l":[]interface {}{1, "s", true, 1.5}, "n":1, "x":"y", "z":interface {}(nil)}}',
        ),
        ({"data": {"a": 1.0}}, ".data.a: expected string, got &value.valueUnstructured{Value:1}"),
        (
            {"metadata": {"name": "c", "generation": {"a": 1}}},
            ".metadata.generation: expected numeric (int or float), got map[string]interface {}",
        ),
        (
            {"metadata": {"name": "c", "generation": True}},
            ".metadata.generation: expected numeric (int or float), got bool",
        ),
        ({"data": "x"}, ".data: expected map, got &{x}"),
        (
            {"metadata": {"name": "c", "finalizers": "x"}},
            ".metadata.finalizers: expected list, got &{x}",
        ),
    ],
)
def test_type_problems(fields: dict[str, Any], problem: str) -> None:
    assert misfits(**fields) == [problem]


def test_null_and_fitting_values_pass() -> None:
    assert misfits(immutable=None, data={"a": "b"}, metadata={"name": "c", "generation": 1.5}) == []


def test_several_problems_are_listed() -> None:
    found = misfits(immutable="x", foo=1)
    assert fit.message(found) == (
        "errors:\n  .immutable: expected boolean, got &{x}\n  .foo: field not declared in schema"
    )
    assert fit.message(found[:1]) == ".immutable: expected boolean, got &{x}"


def test_untyped_fields_take_any_scalar() -> None:
    pod = manager_for("", "Pod")
    container = {"name": "c", "resources": {"limits": {"cpu": 1}}, "ports": [{"containerPort": 80}]}
    probe = {"httpGet": {"port": "http"}}
    spec = {"containers": [{**container, "livenessProbe": probe}]}
    assert pod.misfits({"apiVersion": "v1", "kind": "Pod", "metadata": {}, "spec": spec}) == []


def test_integer_fields_convert_as_kube_converts_them() -> None:
    fm = manager_for("apps", "Deployment")
    spec: dict[str, Any] = {"replicas": 3.0, "progressDeadlineSeconds": 1e2}
    config = {"apiVersion": "apps/v1", "kind": "Deployment", "spec": spec}
    assert fit.convert_numbers(fm.typed, fm.node, config) is None
    assert spec == {"replicas": 3, "progressDeadlineSeconds": 100}
    spec["replicas"] = 99999999999  # an int32 field wraps, as Go's conversion does
    assert fit.convert_numbers(fm.typed, fm.node, config) is None
    assert spec["replicas"] == 1215752191
    spec["replicas"] = 2.5
    assert fit.convert_numbers(fm.typed, fm.node, config) == "cannot convert float64 to int32"


def test_only_floats_and_wide_integers_need_converting() -> None:
    assert not fit.has_conversions({"spec": {"replicas": 3, "paused": True, "l": ["a", 2**31 - 1]}})
    assert fit.has_conversions({"spec": {"replicas": 3.0}})
    assert fit.has_conversions({"l": [2**31]})


DEPLOYMENT = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}}


@pytest.mark.parametrize(
    ("spec", "found"),
    [
        (
            {"containers": [{"name": "a", "image": "x"}, {"name": "a", "image": "y"}]},
            ['.spec.template.spec.containers: duplicate entries for key [name="a"]'],
        ),
        (  # the key's defaulted field counts: both ports are 80/TCP
            {
                "containers": [
                    {
                        "name": "a",
                        "ports": [{"containerPort": 80}, {"containerPort": 80, "name": "b"}],
                    }
                ]
            },
            [
                '.spec.template.spec.containers[name="a"].ports: duplicate entries for key '
                '[containerPort=80,protocol="TCP"]'
            ],
        ),
        (  # each repeat where it stands, with what is wrong inside it
            {"containers": [{"name": "a", "image": "x"}, {"name": "a", "image": 3}, {"name": "a"}]},
            [
                '.spec.template.spec.containers: duplicate entries for key [name="a"]',
                '.spec.template.spec.containers[name="a"].image: expected string, got '
                "&value.valueUnstructured{Value:3}",
                '.spec.template.spec.containers: duplicate entries for key [name="a"]',
            ],
        ),
        (  # an atomic or plain list may repeat items
            {"containers": [{"name": "a", "args": ["x", "x"]}], "imagePullSecrets": []},
            [],
        ),
    ],
)
def test_an_applier_may_not_name_a_list_item_twice(spec: dict[str, Any], found: list[str]) -> None:
    """Recorded from kube-apiserver v1.36 (a bare 500, ``failed to create typed patch
    object``), found by tests/fuzz/test_apply.py."""
    fm = manager_for("apps", "Deployment")
    assert fm.misfits({**DEPLOYMENT, "spec": {"template": {"spec": spec}}}) == found


def test_a_set_item_named_twice_is_its_value() -> None:
    assert misfits(metadata={"name": "c", "finalizers": ["x.io/a", "x.io/a"]}) == [
        '.metadata.finalizers: duplicate entries for key [="x.io/a"]'
    ]


@pytest.mark.parametrize(
    ("spec", "found"),
    [
        (  # SMD cannot name the item: it reports where and reads no further in the list
            {"containers": [{"name": "a", "env": [[{"name": "c"}], None]}]},
            [
                '.spec.template.spec.containers[name="a"].env: element 0: associative list '
                "with keys may not have non-map elements"
            ],
        ),
        (
            {"containers": [{"name": "a", "env": [None]}]},
            [
                '.spec.template.spec.containers[name="a"].env: element 0: associative list '
                "with keys may not have a null element"
            ],
        ),
        (  # a key field Go always writes defaults to its zero value: both are name=""
            {"containers": [{"image": "c"}, {"image": "d"}]},
            ['.spec.template.spec.containers: duplicate entries for key [name=""]'],
        ),
        (
            {"containers": [{"name": "a", "ports": [{"name": "x"}, {"name": "y"}]}]},
            [
                '.spec.template.spec.containers[name="a"].ports: duplicate entries for key '
                '[containerPort=0,protocol="TCP"]'
            ],
        ),
    ],
)
def test_list_items_without_a_key(spec: dict[str, Any], found: list[str]) -> None:
    """The reference's answers (kube-apiserver v1.36, server-side apply)."""
    fm = manager_for("apps", "Deployment")
    assert fm.misfits({**DEPLOYMENT, "spec": {"template": {"spec": spec}}}) == found


@pytest.mark.parametrize(
    ("finalizers", "problem"),
    [
        ([None], "explicit null"),
        (["a", {"a": 1}], "map type"),
        ([["a"]], "lists as elements"),
    ],
)
def test_set_items_that_are_no_values(finalizers: list[Any], problem: str) -> None:
    (found,) = misfits(metadata={"name": "c", "finalizers": finalizers})
    assert found.startswith(".metadata.finalizers: element ") and found.endswith(problem)


def test_an_atomic_struct_is_checked_inside() -> None:
    """A selector is merged whole, but SMD's validation reads its fields all the same."""
    fm = manager_for("apps", "Deployment")
    found = fm.misfits({**DEPLOYMENT, "spec": {"selector": {"matchLabels": {"app": {}}}}})
    assert found == [
        ".spec.selector.matchLabels.app: expected string, got "
        "&value.valueUnstructured{Value:map[string]interface {}{}}"
    ]
    assert fm.misfits({**DEPLOYMENT, "spec": {"selector": {"matchLabels": -1}}}) == [
        ".spec.selector.matchLabels: expected map, got &{-1}"
    ]
