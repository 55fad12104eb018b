"""The paths of /openapi/v2: the v3 operations in Swagger 2.0's words, with kube-openapi's
shared parameters."""

from __future__ import annotations

import re
from typing import Any

import orjson
import pytest

from platform_api.apiserver import openapiswagger
from platform_api.apiserver.openapi import OpenAPI
from platform_api.scheme.aliases import Aliases
from platform_api.scheme.catalog import Scheme, builtin_scheme

LEASES = "/apis/coordination.platform.io/v1"
META = "#/definitions/io.platform.apimachinery.pkg.apis.meta.v1."


@pytest.fixture(scope="module")
def scheme() -> Scheme:
    return builtin_scheme()


@pytest.fixture(scope="module")
def doc(scheme: Scheme) -> dict[str, Any]:
    return orjson.loads(OpenAPI(scheme).v2_document())


def resolved(doc: dict[str, Any], params: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for p in params:
        ref = p.get("$ref")
        out.append(doc["parameters"][ref.removeprefix("#/parameters/")] if ref else p)
    return out


def operations(doc: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (path, method, op)
        for path, item in doc["paths"].items()
        for method, op in item.items()
        if method != "parameters"
    ]


def test_every_v3_operation_is_in_v2_with_its_id_and_action(scheme: Scheme) -> None:
    api = OpenAPI(scheme)
    v2 = orjson.loads(api.v2_document())
    for key in orjson.loads(api.v3_index())["paths"]:
        for path, item in orjson.loads(api.v3_document(key))["paths"].items():
            for method, op in item.items():
                if method == "parameters":
                    continue
                theirs = v2["paths"][path][method]
                assert theirs["operationId"] == op["operationId"], (path, method)
                assert theirs.get("x-kubernetes-action") == op.get("x-kubernetes-action")
                assert theirs["tags"] == op["tags"]


def test_a_replace_takes_its_object_as_a_body_parameter(doc: dict[str, Any]) -> None:
    put = doc["paths"][f"{LEASES}/namespaces/{{namespace}}/leases/{{name}}"]["put"]
    assert put["consumes"] == ["*/*"]
    assert put["parameters"][0] == {
        "in": "body",
        "name": "body",
        "required": True,
        "schema": {"$ref": "#/definitions/io.platform.api.coordination.v1.Lease"},
    }
    assert [p.get("name") for p in resolved(doc, put["parameters"])] == [
        "body",
        "dryRun",
        "fieldManager",
        "fieldValidation",
    ]
    assert put["produces"] == [  # CBOR too, whatever its gate, as kube's documents list it
        "application/json",
        "application/yaml",
        "application/vnd.platform.protobuf",
        "application/cbor",
    ]
    assert put["responses"]["201"] == {
        "description": "Created",
        "schema": {"$ref": "#/definitions/io.platform.api.coordination.v1.Lease"},
    }
    assert put["responses"]["401"] == {"description": "Unauthorized"}
    assert put["schemes"] == ["https"]


def test_a_patch_consumes_the_patch_types_and_a_delete_needs_no_body(
    doc: dict[str, Any],
) -> None:
    item = doc["paths"][f"{LEASES}/namespaces/{{namespace}}/leases/{{name}}"]
    assert item["patch"]["consumes"] == [
        "application/json-patch+json",
        "application/merge-patch+json",
        "application/strategic-merge-patch+json",
        "application/apply-patch+yaml",
        "application/apply-patch+cbor",
    ]
    (body,) = [p for p in resolved(doc, item["patch"]["parameters"]) if p["in"] == "body"]
    assert body == {
        "in": "body",
        "name": "body",
        "required": True,
        "schema": {"$ref": META + "Patch"},
    }
    (options,) = [p for p in resolved(doc, item["delete"]["parameters"]) if p["in"] == "body"]
    assert options == {"in": "body", "name": "body", "schema": {"$ref": META + "DeleteOptions"}}
    watch = doc["paths"][f"{LEASES}/watch/namespaces/{{namespace}}/leases"]["get"]
    assert "application/json;stream=watch" in watch["produces"]
    assert watch["responses"]["200"]["schema"] == {"$ref": META + "WatchEvent"}


def test_parameters_are_shared_as_kube_openapi_shares_them(doc: dict[str, Any]) -> None:
    """Every parameter but a ``name``, a kind's own body, ``dryRun`` and
    ``fieldValidation`` is a reference to the document's ``parameters``."""
    inline = set()
    for _, _, op in operations(doc):
        for p in op.get("parameters", ()):
            if "$ref" not in p:
                inline.add((p["in"], p["name"]))
    for item in doc["paths"].values():
        inline.update((p["in"], p["name"]) for p in item.get("parameters", ()) if "$ref" not in p)
    assert inline == {
        ("body", "body"),
        ("path", "name"),
        ("query", "dryRun"),
        ("query", "fieldValidation"),
    }
    assert "namespace-vgWSWtn3" in doc["parameters"]  # kube's own name: kube's own words
    assert list(doc["parameters"]) == sorted(doc["parameters"])
    for name, p in doc["parameters"].items():
        assert re.fullmatch(re.escape(p["name"]) + r"-[A-Za-z0-9_-]{8}", name)


def test_the_hash_is_kube_openapis() -> None:
    """FNV-1 of the parameter as Go writes it: kube's own ``pretty`` gets kube's name; a
    generic body is shared, a kind's own is not."""
    pretty = {
        "name": "pretty",
        "in": "query",
        "description": "If 'true', then the output is pretty printed. Defaults to 'false' unless "
        "the user-agent indicates a browser or command-line HTTP tool (curl and wget).",
        "type": "string",
        "uniqueItems": True,
    }
    options = {"in": "body", "name": "body", "schema": {"$ref": META + "DeleteOptions"}}
    own = {"in": "body", "name": "body", "schema": {"$ref": "#/definitions/a.Thing"}}
    paths = {"/x": {"get": {"parameters": [pretty]}, "delete": {"parameters": [options, own]}}}
    referring, shared = openapiswagger.share_parameters(paths)
    assert list(shared) == ["body-quz9Wdfr", "pretty-tJGM1-ng"]
    assert referring["/x"]["get"]["parameters"] == [{"$ref": "#/parameters/pretty-tJGM1-ng"}]
    assert referring["/x"]["delete"]["parameters"] == [
        {"$ref": "#/parameters/body-quz9Wdfr"},
        own,
    ]
    assert paths["/x"]["get"]["parameters"] == [pretty]  # the paths given are left as they are


def test_discovery_version_and_the_issuer_documents_are_described(doc: dict[str, Any]) -> None:
    paths = doc["paths"]
    api = paths["/api/"]["get"]
    assert (api["operationId"], api["tags"], api["responses"]["200"]["schema"]) == (
        "getCoreAPIVersions",
        ["core"],
        {"$ref": META + "APIVersions"},
    )
    assert api["consumes"] == api["produces"]
    assert paths["/apis/"]["get"]["operationId"] == "getAPIVersions"
    group = paths["/apis/rbac.authorization.platform.io/"]["get"]
    assert (group["operationId"], group["tags"]) == (
        "getRbacAuthorizationAPIGroup",
        ["rbacAuthorization"],
    )
    resources = paths["/api/v1/"]["get"]
    assert resources["operationId"] == "getCoreV1APIResources"
    assert resources["consumes"] == resources["produces"]
    version = paths["/version/"]["get"]
    assert (version["operationId"], version["consumes"], version["produces"]) == (
        "getCodeVersion",
        ["application/json"],
        ["application/json"],
    )
    jwks = paths["/openid/v1/jwks/"]["get"]
    assert "consumes" not in jwks and jwks["produces"] == ["application/jwk-set+json"]
    assert doc["security"] == [{"BearerToken": []}]
    assert doc["securityDefinitions"]["BearerToken"]["in"] == "header"


def test_every_reference_resolves_and_every_id_is_unique(scheme: Scheme) -> None:
    doc = orjson.loads(OpenAPI(scheme, Aliases(scheme, True)).v2_document())
    text = orjson.dumps(doc).decode()
    for ref in set(re.findall(r'"#/definitions/([^"]+)"', text)):
        assert ref in doc["definitions"], ref
    for ref in set(re.findall(r'"#/parameters/([^"]+)"', text)):
        assert ref in doc["parameters"], ref
    ids = [op["operationId"] for _, _, op in operations(doc)]
    assert len(ids) == len(set(ids))
    # the served names only: an upstream name would repeat every operation ID
    assert not [path for path in doc["paths"] if ".k8s.io" in path]
    for path, item in doc["paths"].items():
        shared = {p["name"] for p in resolved(doc, item.get("parameters", [])) if p["in"] == "path"}
        for method, op in item.items():
            if method != "parameters":
                own = resolved(doc, op.get("parameters", []))
                declared = shared | {p["name"] for p in own if p["in"] == "path"}
                assert set(re.findall(r"{(\w+)}", path)) == declared, (path, method)


def test_a_delete_answers_what_the_kinds_store_answers(scheme: Scheme) -> None:
    api = OpenAPI(scheme, deletes_to_object=lambda rt: rt.plural == "pods")
    paths = orjson.loads(api.v2_document())["paths"]
    pod = paths["/api/v1/namespaces/{namespace}/pods/{name}"]["delete"]["responses"]
    assert pod["200"]["schema"] == {"$ref": "#/definitions/io.platform.api.core.v1.Pod"}
    other = paths["/api/v1/namespaces/{namespace}/configmaps/{name}"]["delete"]["responses"]
    assert other["200"]["schema"] == {"$ref": META + "Status"}
