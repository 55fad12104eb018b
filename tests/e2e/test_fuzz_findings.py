"""Regression tests of what the fuzzing found, through the real server: each was a 500 or
a crash logged after a 200, or an input Go's strconv refuses that Python's int() took."""

from __future__ import annotations

import requests

from tests.e2e.conftest import Server, session_for

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
# kube-apiserver v1.36's answer to a schema with ``dependencies: {a: "x"}`` (a status
# sub-resource: the whole schema is shown, as Go prints its internal struct).
DEPENDENCY_FORBIDDEN = (
    'CustomResourceDefinition.apiextensions.platform.io "things.x.example.com" is invalid: [s'
    'pec.validation.openAPIV3Schema: Invalid value: {"ID":"","Schema":"","Ref":null,"Descript'
    'ion":"","Type":"object","Nullable":false,"Format":"","Title":"","Default":null,"Maximum"'
    ':null,"ExclusiveMaximum":false,"Minimum":null,"ExclusiveMinimum":false,"MaxLength":null,'
    '"MinLength":null,"Pattern":"","MaxItems":null,"MinItems":null,"UniqueItems":false,"Multi'
    'pleOf":null,"Enum":null,"MaxProperties":null,"MinProperties":null,"Required":null,"Items'
    '":null,"AllOf":null,"OneOf":null,"AnyOf":null,"Not":null,"Properties":null,"AdditionalPr'
    'operties":null,"PatternProperties":null,"Dependencies":{"a":{"Schema":null,"Property":nu'
    'll}},"AdditionalItems":null,"Definitions":null,"ExternalDocs":null,"Example":null,"XPres'
    'erveUnknownFields":null,"XEmbeddedResource":false,"XIntOrString":false,"XListMapKeys":nu'
    'll,"XListType":null,"XMapType":null,"XValidations":null}: only [Description Type Format '
    "Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength MinLength Pattern MaxI"
    "tems MinItems UniqueItems MultipleOf Required Items Properties ExternalDocs Example XPre"
    "serveUnknownFields XValidations] fields are allowed at the root of the schema if the sta"
    "tus subresource is enabled, spec.validation.openAPIV3Schema.dependencies: Forbidden: dep"
    "endencies is not supported]"
)


def _status(response: requests.Response) -> tuple[int, str]:
    return response.status_code, response.json()["message"]


def test_integer_query_parameters_parse_as_go(server: Server, admin: requests.Session) -> None:
    cases = {
        "limit=1_0": 'strconv.ParseInt: parsing "1_0": invalid syntax',
        "limit=%201": 'strconv.ParseInt: parsing " 1": invalid syntax',
        "timeoutSeconds=99999999999999999999": (
            'strconv.ParseInt: parsing "99999999999999999999": value out of range'
        ),
        "resourceVersion=%D9%A1": (
            'invalid resource version: resourceVersion: Invalid value: "\u0661": '
            'strconv.ParseUint: parsing "\u0661": invalid syntax'
        ),
        "resourceVersion=99999999999999999999999": (
            'invalid resource version: resourceVersion: Invalid value: "99999999999999999999999": '
            'strconv.ParseUint: parsing "99999999999999999999999": value out of range'
        ),
    }
    for query, message in cases.items():
        assert _status(admin.get(f"{server.url}{CONFIGMAPS}?{query}")) == (400, message), query


def test_watch_edge_values_end_cleanly(fresh_server: Server) -> None:
    """A negative timeout ends the watch at once (kube's timer fires); a revision at the top
    of uint64 has no history yet.  Both were tracebacks after a 200.  A server of its own:
    its log shows this test's errors only."""
    server = fresh_server
    admin = session_for(server, cert=server.admin_cert)
    for query in ("timeoutSeconds=-5", "resourceVersion=18446744073709551615&timeoutSeconds=1"):
        response = admin.get(f"{server.url}{CONFIGMAPS}?watch=1&{query}", timeout=10)
        assert response.status_code == 200, query
    assert server.log is not None
    assert "#critical]" not in server.log.read_text()


def test_huge_quota_is_accepted(server: Server, admin: requests.Session) -> None:
    """``1e10000000`` raised decimal.Overflow in the integer-resource check (500)."""
    quota = {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": "huge"},
        "spec": {"hard": {"pods": "1e10000000", "cpu": "1e10000000"}},
    }
    response = admin.post(
        f"{server.url}/api/v1/namespaces/default/resourcequotas?dryRun=All", json=quota
    )
    assert response.status_code == 201
    assert response.json()["spec"]["hard"] == {"cpu": "10e9999999", "pods": "10e9999999"}


def test_invalid_managed_fields_are_reset(server: Server, admin: requests.Session) -> None:
    """``k:1`` (a key element that is no object) raised AttributeError (500); kube drops
    managedFields that do not decode and tracks the request's own fields."""
    entry = {"manager": "x", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1"}
    body = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "fuzz-mf", "managedFields": [{**entry, "fieldsV1": {"k:1": {}}}]},
        "data": {"a": "b"},
    }
    response = admin.post(f"{server.url}{CONFIGMAPS}?dryRun=All", json=body)
    assert response.status_code == 201
    assert [m["manager"] for m in response.json()["metadata"]["managedFields"]] != ["x"]


def test_retain_keys_of_lists_is_a_bad_request(server: Server, admin: requests.Session) -> None:
    """kube panics (a reset stream); a 400 with the retainKeys format error here."""
    created = admin.post(
        f"{server.url}{CONFIGMAPS}",
        json={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "fuzz-rk"}},
    )
    assert created.status_code == 201
    response = admin.patch(
        f"{server.url}{CONFIGMAPS}/fuzz-rk",
        data=b'{"$retainKeys": [["x"]], "data": {"a": "c"}}',
        headers={"Content-Type": "application/strategic-merge-patch+json"},
    )
    assert _status(response) == (400, "invalid patch format of retainKeys")


def test_crd_schema_with_a_number_in_items_is_refused(
    server: Server, admin: requests.Session
) -> None:
    """``items: [1]`` raised AttributeError in the defaults walk (500)."""
    crd = {
        "apiVersion": "apiextensions.platform.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.fuzz.example.com"},
        "spec": {
            "group": "fuzz.example.com",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": {"type": "object", "items": [1]}},
                }
            ],
        },
    }
    url = f"{server.url}/apis/apiextensions.platform.io/v1/customresourcedefinitions?dryRun=All"
    response = admin.post(url, json=crd)
    assert _status(response) == (
        400,
        'CustomResourceDefinition in version "v1" cannot be handled as a CustomResourceDefinition: '
        "json: cannot unmarshal number into Go struct field "
        "JSONSchemaProps.spec.versions.schema.openAPIV3Schema.items of type v1.JSONSchemaProps",
    )


def _status_crd(openapi: dict[str, object]) -> dict[str, object]:
    """A CRD with a status sub-resource (so its schema is also checked as a whole)."""
    return {
        "apiVersion": "apiextensions.platform.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "things.x.example.com"},
        "spec": {
            "group": "x.example.com",
            "scope": "Namespaced",
            "names": {"plural": "things", "kind": "Thing"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "schema": {"openAPIV3Schema": {"type": "object", **openapi}},
                }
            ],
        },
    }


def test_crd_schema_or_bool_and_dependencies_of_other_types(
    server: Server, admin: requests.Session
) -> None:
    """An ``additionalProperties`` that is neither a boolean nor a schema, and a dependency
    that is neither a schema nor strings, were 500s; kube-apiserver v1.36 refuses the first
    as it decodes and decodes the second as nothing, which its validation forbids."""
    url = f"{server.url}/apis/apiextensions.platform.io/v1/customresourcedefinitions?dryRun=All"
    for value in ([[1], [2], []], "x", 5, []):
        response = admin.post(url, json=_status_crd({"additionalProperties": value}))
        assert _status(response) == (
            400,
            'CustomResourceDefinition in version "v1" cannot be handled as a '
            "CustomResourceDefinition: boolean or JSON schema expected",
        ), value
    response = admin.post(url, json=_status_crd({"dependencies": {"a": "x"}}))
    assert _status(response) == (422, DEPENDENCY_FORBIDDEN)
