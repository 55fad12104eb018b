"""The server's own documents over real HTTPS: discovery, /version and the health checks,
each as kube-apiserver v1.36 answers them."""

from __future__ import annotations

import requests

from platform_api.codec import protobuf
from tests.e2e.answers import status
from tests.e2e.conftest import E2E_WORKERS, Server, session_for


def test_health_and_version_without_credentials(server: Server) -> None:
    anonymous = session_for(server)
    for path in ("/livez", "/readyz", "/healthz"):
        r = anonymous.get(server.url + path)
        assert r.status_code == 200 and r.text == "ok"
    r = anonymous.get(server.url + "/readyz?verbose&exclude=ping")
    assert r.text.splitlines()[0] == "[+]ping excluded: ok"
    assert r.text.endswith("readyz check passed\n")
    assert anonymous.get(server.url + "/livez/ping").text == "ok"
    # Without credentials only the health endpoints are open (AlwaysAllow turns anonymous off).
    r = anonymous.get(server.url + "/api/v1/namespaces")
    assert r.status_code == 401
    assert r.json() == status(401, "Unauthorized", "Unauthorized")


def test_version(server: Server, admin: requests.Session) -> None:
    for path in ("/version", "/version/"):
        info = admin.get(server.url + path).json()
        for key in (
            "major",
            "minor",
            "gitVersion",
            "gitCommit",
            "gitTreeState",
            "buildDate",
            "goVersion",
            "compiler",
            "platform",
        ):
            assert isinstance(info[key], str) and info[key]


def test_discovery_documents(server: Server, admin: requests.Session) -> None:
    api = admin.get(server.url + "/api").json()
    assert api["kind"] == "APIVersions" and api["versions"] == ["v1"]
    groups = admin.get(server.url + "/apis").json()
    names = [g["name"] for g in groups["groups"]]
    assert "rbac.authorization.platform.io" in names and "apps" in names
    rbac = admin.get(server.url + "/apis/rbac.authorization.platform.io/v1").json()
    assert {r["name"] for r in rbac["resources"]} == {
        "clusterrolebindings",
        "clusterroles",
        "rolebindings",
        "roles",
    }
    aggregated = "application/json;g=apidiscovery.platform.io;v=v2;as=APIGroupDiscoveryList"
    r = admin.get(server.url + "/apis", headers={"Accept": aggregated + ",application/json"})
    assert r.headers["Content-Type"] == aggregated and r.json()["kind"] == "APIGroupDiscoveryList"
    r2 = admin.get(
        server.url + "/apis", headers={"Accept": aggregated, "If-None-Match": r.headers["ETag"]}
    )
    assert r2.status_code == 304
    # a built-in kind of the group's own: kube's installer leaves its group and version out
    apps = next(g for g in r.json()["items"] if g["metadata"]["name"] == "apps")
    deployments = next(
        x for x in apps["versions"][0]["resources"] if x["resource"] == "deployments"
    )
    assert deployments["responseKind"] == {"group": "", "version": "", "kind": "Deployment"}
    scale = next(x for x in deployments["subresources"] if x["subresource"] == "scale")
    assert scale["responseKind"] == {"group": "autoscaling", "version": "v1", "kind": "Scale"}
    upstream = (
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"
    )
    assert (
        admin.get(server.url + "/apis", headers={"Accept": upstream}).json()["kind"]
        == "APIGroupList"
    )


def test_discovery_paths_with_a_trailing_slash(server: Server, admin: requests.Session) -> None:
    """As kube: upstream's Discovery conformance case reads /apis/<group>/."""
    for path, kind in (
        ("/api/", "APIVersions"),
        ("/api/v1/", "APIResourceList"),
        ("/apis/", "APIGroupList"),
        ("/apis/apps/", "APIGroup"),
        ("/apis/apps/v1/", "APIResourceList"),
    ):
        r = admin.get(server.url + path)
        assert (r.status_code, r.json()["kind"]) == (200, kind), path
    # The address clients are told is where the server listens (port 0 was asked for).
    port = server.url.rsplit(":", 1)[1]
    api = admin.get(server.url + "/api").json()
    assert api["serverAddressByClientCIDRs"] == [
        {"clientCIDR": "0.0.0.0/0", "serverAddress": f"127.0.0.1:{port}"}
    ]


def test_discovery_gives_stored_resources_a_storage_version_hash(
    server: Server, admin: requests.Session
) -> None:
    """kube lists no storageVersionHash for what it answers and never stores: bindings,
    componentstatuses and the reviews (exactly these, in the reference's discovery)."""
    unstored = set()
    for gv in (
        "/api/v1",
        "/apis/authentication.platform.io/v1",
        "/apis/authorization.platform.io/v1",
    ):
        for r in admin.get(server.url + gv).json()["resources"]:
            if "/" not in r["name"] and "storageVersionHash" not in r:
                unstored.add(r["name"])
    assert unstored == {
        "bindings",
        "componentstatuses",
        "tokenreviews",
        "selfsubjectreviews",
        "localsubjectaccessreviews",
        "selfsubjectaccessreviews",
        "selfsubjectrulesreviews",
        "subjectaccessreviews",
    }
    apps = admin.get(server.url + "/apis/apps/v1").json()["resources"]
    assert all("storageVersionHash" in r for r in apps if "/" not in r["name"])


def test_a_storage_version_hash_names_the_stored_form(
    server: Server, admin: requests.Session
) -> None:
    """kube hashes the group, version and kind its storage encodes: autoscaling/v1
    HorizontalPodAutoscalers are stored as v2, events.k8s.io Events as core v1 Events
    (the reference's hashes); the core group's aggregated document has no name."""

    def hashed(gv: str, plural: str) -> str:
        found = admin.get(server.url + gv).json()["resources"]
        return next(r["storageVersionHash"] for r in found if r["name"] == plural)

    hpa = "horizontalpodautoscalers"
    assert hashed("/apis/autoscaling/v1", hpa) == hashed("/apis/autoscaling/v2", hpa)
    assert hashed("/apis/autoscaling/v2", hpa) == "qwQve8ut294="
    assert hashed("/apis/events.platform.io/v1", "events") == "r2yiGXH7wu8="
    assert hashed("/api/v1", "events") == "r2yiGXH7wu8="
    aggregated = admin.get(
        server.url + "/api",
        headers={
            "Accept": "application/json;g=apidiscovery.platform.io;v=v2;as=APIGroupDiscoveryList"
        },
    ).json()
    assert aggregated["items"][0]["metadata"] == {}


def test_discovery_refuses_an_accept_as_kubes_handlers_do(
    server: Server, admin: requests.Session
) -> None:
    """/api, /api/v1 and a group's version are go-restful routes; /apis and /apis/<group>
    are plain handlers, whose 406 is the negotiation's (recorded from kube)."""
    restful = status(
        406,
        "NotAcceptable",
        "406: Not Acceptable\n\nAvailable representations: application/json, "
        "application/yaml, application/vnd.platform.protobuf",
        {},
    )
    negotiated = status(
        406,
        "NotAcceptable",
        "only the following media types are accepted: application/json, application/yaml, "
        "application/vnd.platform.protobuf",
    )
    expected = {"/api": restful, "/api/v1": restful, "/apis/apps/v1": restful}
    expected |= {"/apis": negotiated, "/apis/apps": negotiated}
    for path, answer in expected.items():
        r = admin.get(server.url + path, headers={"Accept": "application/xml"})
        assert (r.status_code, r.json()) == (406, answer), path


# kube-apiserver v1.36's /healthz?verbose (the reference, on etcd), one name per line.
KUBE_HEALTHZ = [
    "ping",
    "log",
    "loopback-serving-certificate",
    "etcd",
    "poststarthook/start-apiserver-admission-initializer",
    "poststarthook/generic-apiserver-start-informers",
    "poststarthook/priority-and-fairness-config-consumer",
    "poststarthook/priority-and-fairness-filter",
    "poststarthook/storage-object-count-tracker-hook",
    "poststarthook/start-apiextensions-informers",
    "poststarthook/start-apiextensions-controllers",
    "poststarthook/crd-informer-synced",
    "poststarthook/start-system-namespaces-controller",
    "poststarthook/peer-endpoint-reconciler-controller",
    "poststarthook/start-cluster-authentication-info-controller",
    "poststarthook/start-kube-apiserver-identity-lease-controller",
    "poststarthook/start-kube-apiserver-identity-lease-garbage-collector",
    "poststarthook/storage-readiness",
    "poststarthook/start-legacy-token-tracking-controller",
    "poststarthook/start-service-ip-repair-controllers",
    "poststarthook/rbac/bootstrap-roles",
    "poststarthook/scheduling/bootstrap-system-priority-classes",
    "poststarthook/priority-and-fairness-config-producer",
    "poststarthook/bootstrap-controller",
    "poststarthook/start-kubernetes-service-cidr-controller",
    "poststarthook/start-kube-aggregator-informers",
    "poststarthook/apiservice-status-local-available-controller",
    "poststarthook/apiservice-status-remote-available-controller",
    "poststarthook/apiservice-registration-controller",
    "poststarthook/apiservice-wait-for-first-sync",
    "poststarthook/apiservice-discovery-controller",
    "poststarthook/kube-apiserver-autoregistration",
    "autoregister-completion",
    "poststarthook/apiservice-openapi-controller",
    "poststarthook/apiservice-openapiv3-controller",
]


def test_health_checks_carry_kubes_names_in_kubes_order(
    server: Server, admin: requests.Session
) -> None:
    """Scripts and upstream's e2e health case look for kube's post-start hook names."""
    expected = KUBE_HEALTHZ  # the storage's check is kube's ``etcd`` on LMDB too
    for path in ("healthz", "livez"):
        lines = admin.get(f"{server.url}/{path}?verbose").text.splitlines()
        assert lines[-1] == f"{path} check passed"
        assert [line.removeprefix("[+]").removesuffix(" ok") for line in lines[:-1]] == expected
    ready = admin.get(server.url + "/readyz?verbose").text.splitlines()
    names = [line.removeprefix("[+]").removesuffix(" ok") for line in ready[:-1]]
    assert expected[2:4] == ["loopback-serving-certificate", "etcd"]  # not on /readyz, as kube
    ready_storage = ["etcd", "etcd-readiness"]
    # Under --workers (PLATFORM_E2E_WORKERS), /readyz reports each worker after kube's checks.
    workers = [f"worker-{i}" for i in range(int(E2E_WORKERS))] if E2E_WORKERS else []
    kube = ["ping", "log", *ready_storage, "informer-sync", *expected[4:], "shutdown"]
    assert names == [*kube, *workers]
    one = admin.get(server.url + "/readyz/poststarthook/start-kube-aggregator-informers")
    assert (one.status_code, one.text) == (200, "ok")


def test_resources_that_cannot_be_watched(server: Server, admin: requests.Session) -> None:
    """As the reference answered: kube registers no ``/watch/`` route for them (404),
    and ComponentStatuses' list route refuses ``?watch=1`` once routed (405 naming
    the verb, with the kind's deprecation warning)."""
    not_found = (404, "NotFound", "the server could not find the requested resource")
    for path in (
        "/api/v1/watch/componentstatuses",
        "/api/v1/watch/componentstatuses/etcd-0",
        "/api/v1/watch/namespaces/default/bindings",
        "/apis/authorization.platform.io/v1/watch/selfsubjectaccessreviews",
    ):
        answer = admin.get(server.url + path, timeout=5)
        body = answer.json()
        assert (answer.status_code, body["reason"], body["message"]) == not_found, path
    answer = admin.get(server.url + "/api/v1/componentstatuses?watch=1", timeout=5)
    body = answer.json()
    assert (answer.status_code, body["reason"], body["message"]) == (
        405,
        "MethodNotAllowed",
        'watch is not supported on resources of kind "componentstatuses"',
    )
    assert answer.headers["Warning"] == '299 - "v1 ComponentStatus is deprecated in v1.19+"'


def test_a_component_status_get_refuses_export(server: Server, admin: requests.Session) -> None:
    answer = admin.get(server.url + "/api/v1/componentstatuses/etcd-0?export=true")
    assert (answer.status_code, answer.json()["message"]) == (
        400,
        "the export parameter, deprecated since v1.14, is no longer supported",
    )


def test_component_statuses_in_protobuf_and_as_metadata(
    server: Server, admin: requests.Session
) -> None:
    """As the reference answered: the list in Protobuf (it was JSON under Protobuf's media
    type), PartialObjectMetadataList for the list, PartialObjectMetadata for one and
    kube's 406 for the list asked as one object."""
    base = server.url + "/api/v1/componentstatuses"
    answer = admin.get(base, headers={"Accept": "application/vnd.platform.protobuf"})
    listed = protobuf.decode(answer.content)
    assert (listed["kind"], len(listed["items"])) == ("ComponentStatusList", 3)
    meta = "v=v1;g=meta.platform.io"
    answer = admin.get(
        base, headers={"Accept": f"application/json;as=PartialObjectMetadataList;{meta}"}
    )
    assert answer.json()["kind"] == "PartialObjectMetadataList"
    answer = admin.get(
        base + "/etcd-0", headers={"Accept": f"application/json;as=PartialObjectMetadata;{meta}"}
    )
    assert answer.json() == {
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.platform.io/v1",
        "metadata": {"name": "etcd-0"},
    }
    answer = admin.get(
        base, headers={"Accept": f"application/json;as=PartialObjectMetadata;{meta}"}
    )
    assert (answer.status_code, answer.json()["message"]) == (
        406,
        "you requested PartialObjectMetadata, but the requested object is a list "
        "(*core.ComponentStatusList)",
    )
