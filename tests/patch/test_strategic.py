"""Strategic merge patch: strategies from the schema markers, every directive, element order."""

from __future__ import annotations

from typing import Any

import pytest

from platform_api.patch.strategic import BAD_REQUEST, INTERNAL, PatchError, apply
from platform_api.scheme.catalog import builtin_scheme

SCHEME = builtin_scheme()
POD = SCHEME.lookup("", "v1", "pods").definition  # type: ignore[union-attr]
DEPLOYMENT = SCHEME.lookup("apps", "v1", "deployments").definition  # type: ignore[union-attr]


def smp(original: dict[str, Any], patch: dict[str, Any], definition: str = POD) -> dict[str, Any]:
    return apply(original, patch, SCHEME.schemas, definition)


def pod(*containers: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "p"}, "spec": {"containers": list(containers), **spec}}


def test_maps_merge_and_nulls_delete() -> None:
    original = {"metadata": {"name": "p", "labels": {"a": "1", "b": "2"}}}
    result = smp(original, {"metadata": {"labels": {"b": None, "c": "3"}}})
    assert result["metadata"]["labels"] == {"a": "1", "c": "3"}


def test_containers_merge_by_name_keeping_order() -> None:
    original = pod({"name": "a", "image": "a:1"}, {"name": "b", "image": "b:1"})
    result = smp(
        original,
        {"spec": {"containers": [{"name": "b", "image": "b:2"}, {"name": "c", "image": "c:1"}]}},
    )
    assert result["spec"]["containers"] == [
        {"name": "a", "image": "a:1"},
        {"name": "b", "image": "b:2"},
        {"name": "c", "image": "c:1"},
    ]


def test_lists_without_strategy_are_replaced() -> None:
    original = pod({"name": "a", "args": ["x", "y"]})
    result = smp(original, {"spec": {"containers": [{"name": "a", "args": ["z"]}]}})
    assert result["spec"]["containers"][0]["args"] == ["z"]


def test_delete_directive_in_a_list() -> None:
    original = pod({"name": "a"}, {"name": "b"})
    result = smp(original, {"spec": {"containers": [{"name": "a", "$patch": "delete"}]}})
    assert result["spec"]["containers"] == [{"name": "b"}]


def test_replace_directives() -> None:
    original = pod({"name": "a", "image": "a:1"}, {"name": "b"})
    replaced_list = smp(original, {"spec": {"containers": [{"name": "c"}, {"$patch": "replace"}]}})
    assert replaced_list["spec"]["containers"] == [{"name": "c"}]
    original = {"metadata": {"name": "p", "labels": {"a": "1"}}}
    replaced_map = smp(original, {"metadata": {"labels": {"b": "2", "$patch": "replace"}}})
    assert replaced_map["metadata"]["labels"] == {"b": "2"}
    deleted_map = smp(
        {"metadata": {"labels": {"a": "1"}}}, {"metadata": {"labels": {"$patch": "delete"}}}
    )
    assert deleted_map["metadata"]["labels"] == {}


def test_primitive_list_with_merge_strategy_and_delete_from_it() -> None:
    original = {"metadata": {"name": "p", "finalizers": ["a", "b"]}}
    merged = smp(original, {"metadata": {"finalizers": ["c", "a"]}})
    # kube's normalizeElementOrder: the patch's items in the patch's order lead.
    assert merged["metadata"]["finalizers"] == ["c", "a", "b"]
    removed = smp(merged, {"metadata": {"$deleteFromPrimitiveList/finalizers": ["b"]}})
    assert removed["metadata"]["finalizers"] == ["c", "a"]


def test_set_element_order() -> None:
    original = pod({"name": "a"}, {"name": "b"}, {"name": "c"})
    patch = {
        "spec": {
            "$setElementOrder/containers": [{"name": "c"}, {"name": "a"}, {"name": "b"}],
            "containers": [{"name": "a", "image": "x"}],
        }
    }
    result = smp(original, patch)
    assert [c["name"] for c in result["spec"]["containers"]] == ["c", "a", "b"]
    assert result["spec"]["containers"][1]["image"] == "x"


def test_retain_keys() -> None:
    original = {"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}}
    patch = {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}
    result = smp(original, patch, DEPLOYMENT)
    assert result["spec"]["strategy"] == {"type": "Recreate"}
    with pytest.raises(PatchError) as caught:
        smp(
            original,
            {"spec": {"strategy": {"$retainKeys": ["type"], "rollingUpdate": {}}}},
            DEPLOYMENT,
        )
    assert (
        caught.value.kind == BAD_REQUEST
        and str(caught.value) == "invalid patch format of retainKeys"
    )


def test_new_fields_lose_their_directives_and_nulls() -> None:
    result = smp(
        {"metadata": {"name": "p"}}, {"spec": {"containers": [{"name": "a", "image": None}]}}
    )
    assert result["spec"] == {"containers": [{"name": "a"}]}


def test_missing_merge_key_is_an_error() -> None:
    with pytest.raises(PatchError) as caught:
        smp(pod({"name": "a"}), {"spec": {"containers": [{"image": "x"}]}})
    assert caught.value.kind == INTERNAL
    assert str(caught.value) == "map: map[image:x] does not contain declared merge key: name"


def test_unknown_directive() -> None:
    with pytest.raises(PatchError) as caught:
        smp({"metadata": {}}, {"metadata": {"$patch": "explode"}})
    assert str(caught.value).startswith("unknown patch type: explode in map:")


@pytest.mark.parametrize(
    ("directive", "shown"),
    [
        (1, "%!s(int64=1)"),
        (1.5, "%!s(float64=1.5)"),
        (True, "%!s(bool=true)"),
        (None, "%!s(<nil>)"),
        ({"a": None, "b": 2, "c": "x"}, "map[a:<nil> b:%!s(int64=2) c:x]"),
    ],
)
def test_an_unknown_directive_is_printed_as_gos_s_prints_it(directive: Any, shown: str) -> None:
    """fmt's %s of a value that is no string (reference, 2026-12-06)."""
    with pytest.raises(PatchError) as caught:
        smp({"metadata": {}}, {"metadata": {"$patch": directive, "x": "y"}})
    assert caught.value.kind == INTERNAL
    assert str(caught.value).startswith(f"unknown patch type: {shown} in map: map[$patch:")


@pytest.mark.parametrize(
    ("order", "received"),
    [("x", "string"), ({"a": 1}, "map[string]interface {}"), (1.5, "float64"), (True, "bool")],
)
def test_an_element_order_that_is_no_list_is_kubes_bad_arg_type(order: Any, received: str) -> None:
    """mergepatch.ErrBadArgType, a plain 500 (reference, 2026-12-06)."""
    with pytest.raises(PatchError) as caught:
        smp({"metadata": {}}, {"metadata": {"$setElementOrder/finalizers": order}})
    assert caught.value.kind == INTERNAL
    assert str(caught.value) == f"expected a []interface {{}}, but received a {received}"


def test_an_element_order_for_a_field_the_struct_lacks_is_kubes_500() -> None:
    """LookupPatchMetadataForSlice fails on a field the Go struct does not have."""
    with pytest.raises(PatchError) as caught:
        smp(pod(), {"$setElementOrder/ports": [{"port": 80}]})
    assert (caught.value.kind, str(caught.value)) == (
        INTERNAL,
        'unable to find api field in struct Pod for the json field "ports"',
    )


def test_list_elements_of_two_types_are_printed_as_kube_prints_them() -> None:
    """sliceElementType: the first element's type decides; the error prints both lists."""
    with pytest.raises(PatchError) as caught:
        smp(pod({"name": "c"}), {"spec": {"containers": ["\x00"]}})
    assert str(caught.value) == "list element types are not identical: [[map[name:c]] [\x00]]"


# The expected answers below are the reference kube-apiserver v1.36's for the same
# patches sent to a Deployment, a Pod or a Service (dry run).


def refused(original: dict[str, Any], patch: dict[str, Any], definition: str = POD) -> str:
    with pytest.raises(PatchError) as caught:
        smp(original, patch, definition)
    assert caught.value.kind == INTERNAL
    return str(caught.value)


def test_an_element_order_must_hold_the_patch_items_in_their_order() -> None:
    original = pod({"name": "a", "args": ["x"], "env": [{"name": "E1", "value": "1"}]})
    primitive = {"name": "a", "args": ["z"], "$setElementOrder/args": ["a.io/x"]}
    assert refused(original, {"spec": {"containers": [primitive]}}) == (
        "The order in patch list:\n[z]\n doesn't match $setElementOrder list:\n[a.io/x]\n"
    )
    keyed = {
        "name": "a",
        "env": [{"name": "B", "value": "2"}],
        "$setElementOrder/env": [{"name": "E2"}, {"name": "E1"}],
    }
    assert refused(original, {"spec": {"containers": [keyed]}}) == (
        "The order in patch list:\n[map[name:B value:2]]\n doesn't match $setElementOrder "
        "list:\n[map[name:E2] map[name:E1]]\n"
    )
    # an order entry that is no map, for a list merged by key
    unnamed = {"name": "a", "env": [{"name": "B"}], "$setElementOrder/env": ["name"]}
    assert refused(original, {"spec": {"containers": [unnamed]}}) == (
        "expected a map[string]interface {}, but received a string"
    )


def test_an_element_order_passes_over_directives_and_deletions() -> None:
    original = pod({"name": "a"}, {"name": "b"})
    patch = {
        "spec": {
            "containers": [{"name": "a", "$patch": "delete"}, {"name": "b", "image": "b:2"}],
            "$setElementOrder/containers": [{"name": "b"}],
        }
    }
    assert smp(original, patch)["spec"]["containers"] == [{"name": "b", "image": "b:2"}]


def test_an_empty_element_order_sorts_as_go_sorts_an_unknown_position() -> None:
    """Go's SliceStable with kube's comparison, which calls an item missing from the
    order "less" either way round: the new port ends up last."""

    def ports_after(change: dict[str, Any]) -> list[int]:
        containers = [{"name": "a", "ports": [{"containerPort": 80}, {"containerPort": 81}]}]
        original = {"spec": {"template": {"spec": {"containers": containers}}}}
        patch = {"spec": {"template": {"spec": {"containers": [{"name": "a", **change}]}}}}
        merged = smp(original, patch, DEPLOYMENT)["spec"]["template"]["spec"]["containers"]
        return [p["containerPort"] for p in merged[0]["ports"]]

    new_port = {"ports": [{"containerPort": 82}]}
    assert ports_after({**new_port, "$setElementOrder/ports": []}) == [80, 81, 82]
    # without the directive the patch's items come first, as kube orders them
    assert ports_after(new_port) == [82, 80, 81]


def test_lookups_the_go_type_cannot_answer() -> None:
    labelled = {"metadata": {"name": "p", "labels": {"a": "b"}}}
    in_a_map = {"metadata": {"labels": {"z": "1", "$setElementOrder/args": [{"name": "a"}]}}}
    assert refused(labelled, in_a_map) == (
        "merging an object in json but data type is not struct, instead is: map"
    )
    not_a_list = {"spec": {"containers": [{"name": "a", "$setElementOrder/image": ["x"]}]}}
    assert refused(pod({"name": "a"}), not_a_list) == (
        "expected slice or array type, but got: struct"
    )
    # inside a pointer to a struct, the kind reflect names is the pointer's
    probed = pod({"name": "a", "livenessProbe": {"exec": {"command": ["x"]}}})
    in_a_probe = {"livenessProbe": {"$setElementOrder/initialDelaySeconds": []}}
    assert refused(probed, {"spec": {"containers": [{"name": "a", **in_a_probe}]}}) == (
        "expected slice or array type, but got: ptr"
    )
    # a pointer field stands for what it points to: looked up without a refusal
    secured = pod({"name": "a"}, securityContext={})
    patch = {"spec": {"securityContext": {"$setElementOrder/runAsUser": []}}}
    assert smp(secured, patch)["spec"]["securityContext"] == {}
    unknown = {"spec": {"$setElementOrder/nothing": []}}
    assert refused(pod({"name": "a"}), unknown) == (
        'unable to find api field in struct PodSpec for the json field "nothing"'
    )


def test_a_null_patch_directive_in_a_list_is_an_unknown_type() -> None:
    patch = {"spec": {"containers": [{"$patch": None, "name": "E1"}]}}
    assert refused(pod({"name": "a"}), patch) == (
        "unknown patch type: %!s(<nil>) in map: map[$patch:<nil> name:E1]"
    )


def test_a_list_of_maps_without_a_merge_key_cannot_be_deleted_from() -> None:
    original = pod({"name": "a"}, tolerations=[{"key": "k", "operator": "Exists"}])
    patch = {"spec": {"$deleteFromPrimitiveList/tolerations": [{"key": "k"}]}}
    assert refused(original, patch) == "cannot merge lists without merge key for struct"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"ports": [], "$setElementOrder/ports": []}, "no elements in any of the given slices"),
        (
            {"ports": None, "$setElementOrder/ports": []},
            "expected a []interface {}, but received a %!s(<nil>)",
        ),
        (
            {"env": [], "$setElementOrder/env": [{"x": 1}]},
            "map: map[x:1] does not contain declared merge key: name",
        ),
        (
            {"env": [{"name": "B"}], "$setElementOrder/env": [{"name": "B"}, "x"]},
            "value for key 1 is not a map",
        ),
        # Go's == : a bool is no number
        (
            {"args": [1], "$setElementOrder/args": [True]},
            "The order in patch list:\n[1]\n doesn't match $setElementOrder list:\n[true]\n",
        ),
    ],
)
def test_element_orders_refused_as_kube_refuses_them(change: dict[str, Any], message: str) -> None:
    original = pod({"name": "c", "env": [{"name": "A", "value": "1"}]})
    assert refused(original, {"spec": {"containers": [{"name": "c", **change}]}}) == message
