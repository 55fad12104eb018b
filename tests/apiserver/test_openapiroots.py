"""The /openapi/v3 documents that are no group version's: discovery, /version/ and the
service-account issuer's, as kube publishes them."""

from __future__ import annotations

from datetime import UTC, datetime

import orjson
import pytest

from platform_api.apiserver.openapi import OpenAPI, _a_year_after
from platform_api.scheme.aliases import Aliases
from platform_api.scheme.catalog import Scheme, builtin_scheme

META = "#/components/schemas/io.platform.apimachinery.pkg.apis.meta.v1."


@pytest.fixture(scope="module")
def api() -> OpenAPI:
    scheme: Scheme = builtin_scheme()
    return OpenAPI(scheme, Aliases(scheme, True))


def test_the_index_lists_them_beside_the_group_versions(api: OpenAPI) -> None:
    index = orjson.loads(api.v3_index())["paths"]
    for key in (
        "api",
        "apis",
        "apis/apps",
        "apis/rbac.authorization.platform.io",
        "apis/rbac.authorization.k8s.io",  # each name a group is served by
        "version",
        ".well-known/openid-configuration",
        "openid/v1/jwks",
    ):
        assert index[key]["serverRelativeURL"].startswith(f"/openapi/v3/{key}?hash="), key


def test_a_groups_document_describes_its_discovery(api: OpenAPI) -> None:
    doc = orjson.loads(api.v3_document("apis/rbac.authorization.k8s.io"))
    op = doc["paths"]["/apis/rbac.authorization.k8s.io/"]["get"]
    assert (op["operationId"], op["tags"], op["description"]) == (
        "getRbacAuthorizationAPIGroup",
        ["rbacAuthorization"],
        "get information of a group",
    )
    assert op["responses"]["200"]["content"]["application/json"]["schema"] == {
        "$ref": META + "APIGroup"
    }
    assert sorted(doc["components"]["schemas"]) == [
        "io.platform.apimachinery.pkg.apis.meta.v1.APIGroup",
        "io.platform.apimachinery.pkg.apis.meta.v1.GroupVersionForDiscovery",
        "io.platform.apimachinery.pkg.apis.meta.v1.ServerAddressByClientCIDR",
    ]
    assert doc["components"]["securitySchemes"]["BearerToken"]["in"] == "header"


def test_version_and_the_issuer_documents(api: OpenAPI) -> None:
    version = orjson.loads(api.v3_document("version"))["paths"]["/version/"]["get"]
    assert list(version["responses"]["200"]["content"]) == ["application/json"]
    jwks = orjson.loads(api.v3_document("openid/v1/jwks"))
    op = jwks["paths"]["/openid/v1/jwks/"]["get"]
    assert op["operationId"] == "getServiceAccountIssuerOpenIDKeyset"
    assert op["responses"]["200"]["content"] == {
        "application/jwk-set+json": {"schema": {"type": "string"}}
    }
    assert list(jwks["components"]) == ["securitySchemes"]  # no schemas: no key, as kube's


def test_a_hashed_document_expires_a_year_on_as_gos_add_date_counts_it() -> None:
    def at(*when: int) -> float:
        return datetime(*when, tzinfo=UTC).timestamp()

    assert _a_year_after(at(2026, 12, 6, 12, 30, 57)) == "Mon, 06 Dec 2027 12:30:57 UTC"
    assert _a_year_after(at(2028, 2, 29, 1, 2, 3)) == "Thu, 01 Mar 2029 01:02:03 UTC"
