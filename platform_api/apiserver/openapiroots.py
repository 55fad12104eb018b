"""The paths of the documents that are no group version's: discovery's, ``/version/``'s and
the service-account issuer's, as kube publishes them (each its own ``/openapi/v3``
document, and in ``/openapi/v2``); and a group version's own path, which lists its
resources."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from platform_api.apiserver.openapipaths import (
    DOCUMENTED,
    META,
    RESOURCE_LIST,
    UNAUTHORIZED,
    group_name,
    group_tag,
    gv_name,
    ref,
    tag,
)
from platform_api.endpoints.negotiation import JSON, OBJECT_PRODUCES, VERSION_PRODUCES
from platform_api.scheme.types import api_path

VERSION_INFO = "io.platform.apimachinery.pkg.version.Info"
# the service-account issuer's documents, which declare no media types they consume
ISSUER_OPERATIONS = (
    "getServiceAccountIssuerOpenIDConfiguration",
    "getServiceAccountIssuerOpenIDKeyset",
)
BEARER = {
    "BearerToken": {
        "type": "apiKey",
        "description": "Bearer Token authentication",
        "name": "authorization",
        "in": "header",
    }
}


def document_path(
    op_id: str, tag_name: str, description: str, schema: Any, produces: list[str]
) -> Any:
    """A path whose one operation reads a document of no resource."""
    content = {media: {"schema": schema} for media in produces}
    operation = {
        "tags": [tag_name],
        "description": description,
        "operationId": op_id,
        "responses": {"200": {"description": "OK", "content": content}, "401": UNAUTHORIZED},
    }
    return {"get": operation}


def resource_list_path(group: str, version: str) -> dict[str, Any]:
    """The group version's own path, which lists its resources."""
    op_id = f"get{gv_name(group, version)}APIResources"
    found = document_path(
        op_id, tag(group, version), "get available resources", ref(RESOURCE_LIST), DOCUMENTED
    )
    return {f"{api_path(group, version)}/": found}


def root_documents(groups: Iterable[str]) -> dict[str, dict[str, Any]]:
    """The paths of the documents kube publishes beside the group versions', by their
    ``/openapi/v3`` key: discovery (each of ``groups``), ``/version/`` and the
    service-account issuer's two."""
    versions = "get available API versions"
    docs = {
        "api": {
            "/api/": document_path(
                "getCoreAPIVersions", "core", versions, ref(META + "APIVersions"), OBJECT_PRODUCES
            )
        },
        "apis": {
            "/apis/": document_path(
                "getAPIVersions", "apis", versions, ref(META + "APIGroupList"), OBJECT_PRODUCES
            )
        },
    }
    for group in groups:
        op = document_path(
            f"get{group_name(group)}APIGroup",
            group_tag(group),
            "get information of a group",
            ref(META + "APIGroup"),
            OBJECT_PRODUCES,
        )
        docs[f"apis/{group}"] = {f"/apis/{group}/": op}
    code = document_path(
        "getCodeVersion",
        "version",
        "get the version information for this server",
        ref(VERSION_INFO),
        VERSION_PRODUCES,
    )
    docs["version"] = {"/version/": code}
    text = {"type": "string"}
    oidc = "get service account issuer OpenID configuration, also known as the 'OIDC discovery doc'"
    docs[".well-known/openid-configuration"] = {
        "/.well-known/openid-configuration/": document_path(
            ISSUER_OPERATIONS[0], "WellKnown", oidc, text, [JSON]
        )
    }
    keys = "get service account issuer OpenID JSON Web Key Set (contains public token verification keys)"
    docs["openid/v1/jwks"] = {
        "/openid/v1/jwks/": document_path(
            ISSUER_OPERATIONS[1], "openid", keys, text, ["application/jwk-set+json"]
        )
    }
    return docs
