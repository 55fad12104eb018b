"""The paths of the /openapi/v3 documents: kube's layout, operation IDs and parameters."""

from __future__ import annotations

import re
from typing import Any

import orjson
import pytest

from platform_api.apiserver import enablement, runtimeconfig
from platform_api.apiserver.openapi import OpenAPI
from platform_api.apiserver.openapipaths import article, group_name, tag, valid_id
from platform_api.scheme.aliases import Aliases
from platform_api.scheme.catalog import Scheme, builtin_scheme
from tests.apiserver.test_openapi_cache import definition, install

LEASES = "/apis/coordination.platform.io/v1"


@pytest.fixture(scope="module")
def scheme() -> Scheme:
    return builtin_scheme()


def document(api: OpenAPI, key: str) -> dict[str, Any]:
    return orjson.loads(api.v3_document(key))


@pytest.mark.parametrize(
    ("group", "name", "tagged"),
    [
        ("", "Core", "core_v1"),
        ("apps", "Apps", "apps_v1"),
        ("rbac.authorization.platform.io", "RbacAuthorization", "rbacAuthorization_v1"),
        ("rbac.authorization.k8s.io", "RbacAuthorization", "rbacAuthorization_v1"),
        ("stable.example.com", "StableExampleCom", "stableExampleCom_v1"),
        ("my-group.example.com", "MyGroupExampleCom", "myGroupExampleCom_v1"),
        ("3d.example.com", "DExampleCom", "DExampleCom_v1"),
    ],
)
def test_group_names_as_kube_writes_them_in_operation_ids(
    group: str, name: str, tagged: str
) -> None:
    assert group_name(group) == name
    assert tag(group, "v1") == tagged


def test_an_operation_id_word_drops_what_is_no_letter() -> None:
    assert valid_id("v1beta1", True) == "V1beta1"
    assert valid_id("ephemeralcontainers", True) == "Ephemeralcontainers"
    assert valid_id("1a-b_c", False) == "AB_c"  # a leading digit is dropped too


@pytest.mark.parametrize(
    ("kind", "spaced"),
    [("Pod", " a "), ("Event", " an "), ("Endpoints", " "), ("IngressClass", " an ")],
)
def test_route_docs_take_kubes_articles(kind: str, spaced: str) -> None:
    assert article(kind) == spaced


def test_leases_have_every_path_and_operation_kube_publishes(scheme: Scheme) -> None:
    doc = document(OpenAPI(scheme), "apis/coordination.platform.io/v1")
    ops = {
        (path, method, op["operationId"], op.get("x-kubernetes-action"))
        for path, item in doc["paths"].items()
        for method, op in item.items()
        if method != "parameters"
    }
    ns, gv = f"{LEASES}/namespaces/{{namespace}}", "CoordinationV1"
    assert {o for o in ops if "leases" in o[0] and "candidates" not in o[0]} == {
        (f"{LEASES}/leases", "get", f"list{gv}LeaseForAllNamespaces", "list"),
        (f"{ns}/leases", "get", f"list{gv}NamespacedLease", "list"),
        (f"{ns}/leases", "post", f"create{gv}NamespacedLease", "post"),
        (f"{ns}/leases", "delete", f"delete{gv}CollectionNamespacedLease", "deletecollection"),
        (f"{ns}/leases/{{name}}", "get", f"read{gv}NamespacedLease", "get"),
        (f"{ns}/leases/{{name}}", "put", f"replace{gv}NamespacedLease", "put"),
        (f"{ns}/leases/{{name}}", "patch", f"patch{gv}NamespacedLease", "patch"),
        (f"{ns}/leases/{{name}}", "delete", f"delete{gv}NamespacedLease", "delete"),
        (f"{LEASES}/watch/leases", "get", f"watch{gv}LeaseListForAllNamespaces", "watchlist"),
        (
            f"{LEASES}/watch/namespaces/{{namespace}}/leases",
            "get",
            f"watch{gv}NamespacedLeaseList",
            "watchlist",
        ),
        (
            f"{LEASES}/watch/namespaces/{{namespace}}/leases/{{name}}",
            "get",
            f"watch{gv}NamespacedLease",
            "watch",
        ),
    }
    root = doc["paths"][f"{LEASES}/"]["get"]
    assert (root["operationId"], root["tags"]) == (
        "getCoordinationV1APIResources",
        ["coordination_v1"],
    )


def names(params: list[dict[str, Any]]) -> list[str]:
    return [p["name"] for p in params]


def test_shared_parameters_sit_on_the_path_and_the_rest_on_each_operation(
    scheme: Scheme,
) -> None:
    paths = document(OpenAPI(scheme), "apis/coordination.platform.io/v1")["paths"]
    item = paths[f"{LEASES}/namespaces/{{namespace}}/leases/{{name}}"]
    assert names(item["parameters"]) == ["name", "namespace", "pretty"]
    assert item["parameters"][0] == {
        "name": "name",
        "in": "path",
        "description": "name of the Lease",
        "required": True,
        "schema": {"type": "string", "uniqueItems": True},
    }
    assert "parameters" not in item["get"]
    assert names(item["patch"]["parameters"]) == [
        "dryRun",
        "fieldManager",
        "fieldValidation",
        "force",
    ]
    assert names(item["delete"]["parameters"]) == [
        "dryRun",
        "gracePeriodSeconds",
        "ignoreStoreReadErrorWithClusterBreakingPotential",
        "orphanDependents",
        "propagationPolicy",
    ]
    collection = paths[f"{LEASES}/namespaces/{{namespace}}/leases"]
    assert names(collection["parameters"]) == ["namespace", "pretty"]
    assert names(collection["get"]["parameters"]) == [
        "allowWatchBookmarks",
        "continue",
        "fieldSelector",
        "labelSelector",
        "limit",
        "resourceVersion",
        "resourceVersionMatch",
        "sendInitialEvents",
        "shardSelector",  # alpha, ignored: listed as kube lists it
        "timeoutSeconds",
        "watch",
    ]
    # one operation: everything on the path
    every = paths[f"{LEASES}/leases"]
    assert "parameters" not in every["get"]
    assert names(every["parameters"])[-5:] == [
        "resourceVersionMatch",
        "sendInitialEvents",
        "shardSelector",
        "timeoutSeconds",
        "watch",
    ]
    assert "pretty" in names(every["parameters"])


def test_responses_name_the_list_kind_and_what_a_delete_answers(scheme: Scheme) -> None:
    api = OpenAPI(scheme, deletes_to_object=lambda rt: rt.plural == "pods")
    paths = document(api, "api/v1")["paths"]
    prefix = "#/components/schemas/io.platform.api.core.v1."
    listed = paths["/api/v1/namespaces/{namespace}/pods"]["get"]["responses"]
    assert listed["200"]["content"]["application/json"]["schema"] == {"$ref": prefix + "PodList"}
    assert listed["401"] == {"description": "Unauthorized"}
    deleted = paths["/api/v1/namespaces/{namespace}/pods/{name}"]["delete"]
    assert deleted["responses"]["200"]["content"]["application/json"]["schema"] == {
        "$ref": prefix + "Pod"
    }
    assert deleted["description"] == "delete a Pod"
    assert deleted["requestBody"] == {  # not required: kube's delete takes no body too
        "content": {
            "*/*": {
                "schema": {
                    "$ref": "#/components/schemas/"
                    "io.platform.apimachinery.pkg.apis.meta.v1.DeleteOptions"
                }
            }
        }
    }
    collection = paths["/api/v1/namespaces/{namespace}/pods"]["delete"]["requestBody"]
    assert "required" not in collection
    assert paths["/api/v1/namespaces/{namespace}/pods"]["post"]["requestBody"]["required"]
    other = paths["/api/v1/namespaces/{namespace}/configmaps/{name}"]["delete"]["responses"]
    assert other["200"]["content"]["application/json"]["schema"]["$ref"].endswith("v1.Status")


def test_subresources_that_carry_objects_are_listed(
    scheme: Scheme,
) -> None:
    core = document(OpenAPI(scheme), "api/v1")["paths"]
    pod = "/api/v1/namespaces/{namespace}/pods/{name}"
    assert core[f"{pod}/binding"]["post"]["operationId"] == "createCoreV1NamespacedPodBinding"
    assert core[f"{pod}/eviction"]["post"]["description"] == "create eviction of a Pod"
    assert sorted(core[f"{pod}/status"]) == ["get", "parameters", "patch", "put"]
    token = core["/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token"]["post"]
    assert token["x-kubernetes-group-version-kind"] == {
        "group": "authentication.platform.io",
        "kind": "TokenRequest",
        "version": "v1",
    }
    apps = document(OpenAPI(scheme), "apis/apps/v1")["paths"]
    scale = apps["/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale"]
    assert scale["get"]["operationId"] == "readAppsV1NamespacedDeploymentScale"
    assert scale["get"]["x-kubernetes-group-version-kind"]["kind"] == "Scale"
    assert "strategic-merge" in " ".join(scale["patch"]["requestBody"]["content"])


def test_an_upstream_named_document_names_its_group_in_every_operation(scheme: Scheme) -> None:
    doc = document(OpenAPI(scheme, Aliases(scheme, True)), "apis/coordination.k8s.io/v1")
    groups = {
        op["x-kubernetes-group-version-kind"]["group"]
        for item in doc["paths"].values()
        for method, op in item.items()
        if method != "parameters" and "x-kubernetes-group-version-kind" in op
    }
    assert groups == {"coordination.k8s.io"}
    assert "/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases" in doc["paths"]


def empties(node: Any, where: str = "") -> list[str]:
    """Lists and objects written empty: kube-openapi drops them when it writes a document
    back, so a document holding one does not survive the round trip."""
    found = [where] if isinstance(node, (list, dict)) and not node else []
    if isinstance(node, dict):
        for key, value in node.items():
            found += empties(value, f"{where}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            found += empties(value, f"{where}[{i}]")
    return found


def test_every_document_declares_its_path_parameters_and_writes_nothing_empty(
    scheme: Scheme,
) -> None:
    api = OpenAPI(scheme, Aliases(scheme, True))
    operation_ids: list[str] = []
    for key in orjson.loads(api.v3_index())["paths"]:
        doc = document(api, key)
        assert empties(doc["paths"]) == [], key
        schemas = doc["components"].get("schemas", {})
        for path, item in doc["paths"].items():
            shared = {p["name"] for p in item.get("parameters", ()) if p["in"] == "path"}
            for method, op in item.items():
                if method == "parameters":
                    continue
                operation_ids.append(op["operationId"])
                own = {p["name"] for p in op.get("parameters", ()) if p["in"] == "path"}
                assert set(re.findall(r"{(\w+)}", path)) == shared | own, (path, method)
                refs = re.findall(r'"#/components/schemas/([^"]+)"', orjson.dumps(op).decode())
                assert all(ref in schemas for ref in refs), (path, method)
        ids = [i for i in operation_ids if i]
        assert len(ids) == len(set(ids)), key
        operation_ids.clear()


def test_subresources_that_connect_are_listed_as_kube_lists_them(scheme: Scheme) -> None:
    core = document(OpenAPI(scheme), "api/v1")["paths"]
    pod = "/api/v1/namespaces/{namespace}/pods/{name}"
    execute = core[f"{pod}/exec"]
    assert sorted(execute) == ["get", "parameters", "post"]
    assert names(execute["parameters"]) == [
        "command",
        "container",
        "name",
        "namespace",
        "stderr",
        "stdin",
        "stdout",
        "tty",
    ]
    assert execute["parameters"][2]["description"] == "name of the PodExecOptions"
    post = execute["post"]
    assert (post["operationId"], post["description"], post["x-kubernetes-action"]) == (
        "connectCoreV1PostNamespacedPodExec",
        "connect POST requests to exec of Pod",
        "connect",
    )
    assert post["x-kubernetes-group-version-kind"]["kind"] == "PodExecOptions"
    assert post["responses"]["200"]["content"] == {"*/*": {"schema": {"type": "string"}}}
    log = core[f"{pod}/log"]
    assert log["get"]["operationId"] == "readCoreV1NamespacedPodLog"
    assert log["get"]["x-kubernetes-group-version-kind"]["kind"] == "Pod"
    assert "text/plain" in log["get"]["responses"]["200"]["content"]
    proxied = core["/api/v1/nodes/{name}/proxy/{path}"]
    assert sorted(proxied) == [
        "delete",
        "get",
        "head",
        "options",
        "parameters",
        "patch",
        "post",
        "put",
    ]
    # a proxy's path is in its path and its query both
    assert [(p["name"], p["in"]) for p in proxied["parameters"]] == [
        ("name", "path"),
        ("path", "path"),
        ("path", "query"),
    ]
    assert proxied["head"]["operationId"] == "connectCoreV1HeadNodeProxyWithPath"
    assert "/api/v1/namespaces/{namespace}/services/{name}/proxy" in core


def test_a_custom_kinds_paths_are_kubes_crd_builders() -> None:
    """Checked against the reference's document of the same CRD: JSON and YAML only, no
    watch paths and no group version path, a read takes resourceVersion, a collection's
    delete ListOptions alone, a patch answers OK only, the scale names the kind's GVK."""
    scheme, _ = enablement.build(runtimeconfig.DEFAULT, lambda name: False, None)  # type: ignore[arg-type]
    crd = definition("w.example.com")
    scale = {"specReplicasPath": ".spec.size", "statusReplicasPath": ".status.size"}
    crd["spec"]["versions"][0]["subresources"] = {"status": {}, "scale": scale}
    install(scheme, crd)
    api = OpenAPI(scheme)
    doc = document(api, "apis/w.example.com/v1")
    base = "/apis/w.example.com/v1"
    assert sorted(doc["paths"]) == [
        f"{base}/namespaces/{{namespace}}/widgets",
        f"{base}/namespaces/{{namespace}}/widgets/{{name}}",
        f"{base}/namespaces/{{namespace}}/widgets/{{name}}/scale",
        f"{base}/namespaces/{{namespace}}/widgets/{{name}}/status",
        f"{base}/widgets",
    ]
    assert doc["info"] == {"title": "Kubernetes CRD Swagger", "version": "v0.1.0"}
    assert "securitySchemes" not in doc["components"]
    collection = doc["paths"][f"{base}/namespaces/{{namespace}}/widgets"]
    assert collection["get"]["description"] == "list objects of kind Widget"
    assert list(collection["get"]["responses"]["200"]["content"]) == [
        "application/json",
        "application/yaml",
    ]
    assert list(collection["post"]["requestBody"]["content"]) == [
        "application/json",
        "application/yaml",
    ]
    assert "requestBody" not in collection["delete"]
    assert "watch" in names(collection["delete"]["parameters"])
    assert "gracePeriodSeconds" not in names(collection["delete"]["parameters"])
    item = doc["paths"][f"{base}/namespaces/{{namespace}}/widgets/{{name}}"]
    assert names(item["get"]["parameters"]) == ["resourceVersion"]
    assert list(item["patch"]["responses"]) == ["200", "401"]
    scaled = doc["paths"][f"{base}/namespaces/{{namespace}}/widgets/{{name}}/scale"]["put"]
    assert scaled["x-kubernetes-group-version-kind"] == {
        "group": "w.example.com",
        "kind": "Widget",
        "version": "v1",
    }
    index = orjson.loads(api.v3_index())["paths"]
    assert "apis/w.example.com/v1" in index and "apis/w.example.com" not in index
    v2 = orjson.loads(api.v2_document())["paths"]
    read = v2[f"{base}/namespaces/{{namespace}}/widgets/{{name}}"]["get"]
    assert read["consumes"] == read["produces"] == ["application/json", "application/yaml"]
    assert "/apis/w.example.com/" not in v2 and f"{base}/" not in v2
