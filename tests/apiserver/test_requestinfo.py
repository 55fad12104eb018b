"""RequestInfo parsing, case by case as kube's RequestInfoFactory."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from twisted.web.http_headers import Headers

from platform_api.apiserver import requestinfo
from platform_api.apiserver.requestinfo import RequestInfoError, parse


@pytest.mark.parametrize(
    ("method", "path", "args", "expected"),
    [
        (b"GET", "/api/v1/namespaces", {}, ("list", "", "namespaces", "", "")),
        (b"GET", "/api/v1/namespaces/x", {}, ("get", "x", "namespaces", "x", "")),
        (b"PUT", "/api/v1/namespaces/x/status", {}, ("update", "x", "namespaces", "x", "status")),
        (
            b"PUT",
            "/api/v1/namespaces/x/finalize",
            {},
            ("update", "x", "namespaces", "x", "finalize"),
        ),
        (b"GET", "/api/v1/namespaces/x/pods", {}, ("list", "x", "pods", "", "")),
        (
            b"GET",
            "/api/v1/namespaces/x/pods",
            {b"watch": [b"true"]},
            ("watch", "x", "pods", "", ""),
        ),
        (
            b"GET",
            "/api/v1/namespaces/x/pods",
            {b"watch": [b"false"]},
            ("list", "x", "pods", "", ""),
        ),
        (b"DELETE", "/api/v1/namespaces/x/pods", {}, ("deletecollection", "x", "pods", "", "")),
        (b"DELETE", "/api/v1/namespaces/x/pods/p", {}, ("delete", "x", "pods", "p", "")),
        (b"GET", "/api/v1/namespaces/x/pods/p/log", {}, ("get", "x", "pods", "p", "log")),
        (
            b"POST",
            "/apis/apps/v1/namespaces/x/deployments",
            {},
            ("create", "x", "deployments", "", ""),
        ),
        (
            b"PATCH",
            "/apis/apps/v1/namespaces/x/deployments/d/scale",
            {},
            ("patch", "x", "deployments", "d", "scale"),
        ),
        (b"GET", "/api/v1/watch/namespaces/x/pods", {}, ("watch", "x", "pods", "", "")),
        (b"GET", "/api/v1/watch/namespaces/x/pods/p", {}, ("watch", "x", "pods", "p", "")),
        (
            b"GET",
            "/api/v1/nodes",
            {b"fieldSelector": [b"metadata.name=n1"]},
            ("list", "", "nodes", "n1", ""),
        ),
    ],
)
def test_resource_requests(method: bytes, path: str, args: dict, expected: tuple[str, ...]) -> None:
    info = parse(method, path, args)
    assert info.is_resource
    assert (info.verb, info.namespace, info.resource, info.name, info.subresource) == expected


@pytest.mark.parametrize(
    "path", ["/", "/healthz", "/api", "/api/v1", "/apis", "/apis/apps", "/apis/apps/v1", "/version"]
)
def test_non_resource_requests(path: str) -> None:
    info = parse(b"GET", path, {})
    assert not info.is_resource and info.verb == "get" and info.path == path


def test_group_and_version() -> None:
    info = parse(b"GET", "/apis/rbac.authorization.platform.io/v1/clusterroles/admin", {})
    assert (info.api_group, info.api_version, info.resource, info.name) == (
        "rbac.authorization.platform.io",
        "v1",
        "clusterroles",
        "admin",
    )
    assert info.namespace == "" and not info.namespace_path


def test_long_running() -> None:
    assert parse(b"GET", "/api/v1/pods", {b"watch": [b"1"]}).long_running
    assert parse(b"GET", "/api/v1/namespaces/x/pods/p/exec", {}).long_running
    assert not parse(b"GET", "/api/v1/pods", {}).long_running


def test_watch_prefix_without_resource() -> None:
    with pytest.raises(RequestInfoError):
        parse(b"GET", "/api/v1/watch", {})


@pytest.mark.parametrize(
    ("values", "upgrade"),
    [
        ([b"Upgrade"], True),
        ([b"keep-alive, Upgrade"], True),
        ([b"keep-alive", b"upgrade"], True),  # any of the header's values
        ([b"keep-alive"], False),
        ([], False),
    ],
)
def test_an_upgrade_request_is_kubes(values: list[bytes], upgrade: bool) -> None:
    request = SimpleNamespace(requestHeaders=Headers({b"Connection": values} if values else {}))
    assert requestinfo.is_upgrade_request(request) is upgrade
