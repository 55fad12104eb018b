"""Protobuf on the wire: stock kubectl's everyday commands, and raw Protobuf reads."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
import requests

from platform_api.codec import protobuf
from tests.e2e.conftest import Server, session_for, start_server
from tests.e2e.crds import crd_manifest, create_crd, crontab

PB = "application/vnd.kubernetes.protobuf"
CM = "/api/v1/namespaces/{ns}/configmaps"


@pytest.fixture(scope="module")
def stock(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    server = start_server(tmp_path_factory.mktemp("protobuf") / "data", "--serve-upstream-groups")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def admin_pb(stock: Server) -> requests.Session:
    return session_for(stock, cert=stock.admin_cert)


CREATES = [
    ("namespace", "pb-ns"),
    ("configmap", "cm1", "--from-literal=a=1"),
    ("secret", "generic", "s1", "--from-literal=p=q"),
    (
        "secret",
        "docker-registry",
        "reg",
        "--docker-server=r.example",
        "--docker-username=u",
        "--docker-password=p",
    ),
    ("deployment", "web", "--image=nginx:1.27", "--replicas=2"),
    ("serviceaccount", "bot"),
    ("service", "clusterip", "svc1", "--tcp=80:8080"),
    ("service", "nodeport", "svc2", "--tcp=80:8080"),
    ("job", "once", "--image=busybox"),
    ("cronjob", "nightly", "--image=busybox", "--schedule=0 0 * * *"),
    ("role", "reader", "--verb=get", "--resource=pods"),
    ("rolebinding", "reader-bob", "--role=reader", "--user=bob"),
    ("clusterrole", "peeker", "--verb=list", "--resource=nodes"),
    ("clusterrolebinding", "peeker-bob", "--clusterrole=peeker", "--user=bob"),
    ("quota", "small", "--hard=pods=5"),
    ("priorityclass", "urgent", "--value=1000"),
    ("poddisruptionbudget", "keep", "--selector=app=web", "--min-available=1"),
    ("ingress", "front", "--rule=example.com/=svc1:80"),
]


@pytest.mark.parametrize("args", CREATES, ids=lambda a: "-".join(a[:2]))
def test_kubectl_create(stock: Server, args: tuple[str, ...]) -> None:
    namespaced = args[0] not in ("namespace", "clusterrole", "clusterrolebinding", "priorityclass")
    where = ["-n", "default"] if namespaced else []
    result = stock.kubectl(*where, "create", *args)
    assert " created" in result.stdout, result.stderr


def test_kubectl_run_expose_set_image_and_rollout(stock: Server) -> None:
    stock.kubectl("-n", "default", "create", "deployment", "app", "--image=nginx:1.26")
    assert (
        "pod/solo created" in stock.kubectl("-n", "default", "run", "solo", "--image=nginx").stdout
    )
    out = stock.kubectl("-n", "default", "expose", "deployment", "app", "--port=80").stdout
    assert "service/app exposed" in out
    out = stock.kubectl("-n", "default", "set", "image", "deployment/app", "nginx=nginx:1.27")
    assert "image updated" in out.stdout
    history = stock.kubectl("-n", "default", "rollout", "history", "deployment/app").stdout
    assert history.startswith("deployment.apps/app")


def test_kubectl_resolves_bare_names_to_kubes_groups(stock: Server) -> None:
    """kubectl takes the first group discovery lists for a bare resource name or short name:
    kube's, so it prints kube's names and describes with its typed describers (a branded
    group's kinds would get the generic one: ``API Version:``, ``Metadata:``)."""
    stock.kubectl("-n", "default", "create", "role", "viewer", "--verb=get", "--resource=pods")
    named = stock.kubectl("-n", "default", "get", "role", "viewer", "-o", "name")
    assert named.stdout == "role.rbac.authorization.k8s.io/viewer\n"
    described = stock.kubectl("-n", "default", "describe", "role", "viewer").stdout
    assert described.splitlines()[3:7] == [
        "PolicyRule:",
        "  Resources  Non-Resource URLs  Resource Names  Verbs",
        "  ---------  -----------------  --------------  -----",
        "  pods       []                 []              [get]",
    ]
    stock.kubectl("create", "priorityclass", "later", "--value=10", "--description=batch")
    described = stock.kubectl("describe", "pc", "later")  # a short name: kube's group too
    assert described.stdout.splitlines()[:5] == [
        "Name:              later",
        "Value:             10",
        "GlobalDefault:     false",
        "PreemptionPolicy:  PreemptLowerPriority",
        "Description:       batch",
    ]
    assert described.stderr == ""  # no short name matching two groups


def test_kubectl_auth_and_tokens(stock: Server) -> None:
    assert stock.kubectl("auth", "can-i", "create", "pods").stdout.strip() == "yes"
    whoami = stock.kubectl("auth", "whoami", "-o", "json").stdout
    assert '"username": "platform-admin"' in whoami
    stock.kubectl("-n", "default", "create", "serviceaccount", "tokens")
    token = stock.kubectl("-n", "default", "create", "token", "tokens").stdout.strip()
    assert token.count(".") == 2


def test_protobuf_get_list_and_errors(stock: Server, admin_pb: requests.Session) -> None:
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "p1"}, "data": {"k": "v"}}
    r = admin_pb.post(
        stock.url + CM.format(ns="default"),
        data=protobuf.encode(body),
        headers={"Content-Type": PB, "Accept": PB},
    )
    assert (r.status_code, r.headers["Content-Type"]) == (201, PB)
    created = protobuf.decode(r.content)
    assert created["data"] == {"k": "v"} and created["metadata"]["uid"]
    got = admin_pb.get(stock.url + CM.format(ns="default") + "/p1", headers={"Accept": PB})
    assert protobuf.decode(got.content) == created
    again = admin_pb.get(stock.url + CM.format(ns="default") + "/p1", headers={"Accept": PB})
    assert again.content == got.content  # the cached message
    listed = protobuf.decode(
        admin_pb.get(stock.url + CM.format(ns="default"), headers={"Accept": PB}).content
    )
    assert listed["kind"] == "ConfigMapList"
    assert "p1" in [i["metadata"]["name"] for i in listed["items"]]
    missing = admin_pb.get(stock.url + CM.format(ns="default") + "/nope", headers={"Accept": PB})
    assert (missing.status_code, missing.headers["Content-Type"]) == (404, PB)
    status = protobuf.decode(missing.content)
    assert (status["kind"], status["reason"], status["message"]) == (
        "Status",
        "NotFound",
        'configmaps "nope" not found',
    )
    garbage = admin_pb.post(
        stock.url + CM.format(ns="default"), data=b"k8s\x00\x0a", headers={"Content-Type": PB}
    )
    assert garbage.status_code == 400
    assert garbage.json()["message"] == (
        "the object provided is unrecognized (must be of type ConfigMap): unexpected EOF "
        "(6b3873000a)"
    )


def test_protobuf_watch_frames(stock: Server, admin_pb: requests.Session) -> None:
    frames: list[tuple[str, dict]] = []
    reader = protobuf.FrameReader()
    ready = threading.Event()

    def watch() -> None:
        url = stock.url + CM.format(ns="default") + "?watch=1&resourceVersion=0&timeoutSeconds=5"
        with admin_pb.get(url, headers={"Accept": PB}, stream=True, timeout=20) as r:
            assert r.headers["Content-Type"] == PB + ";stream=watch"
            ready.set()
            for chunk in r.iter_content(None):
                frames.extend(protobuf.decode_watch_event(f) for f in reader.feed(chunk))

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    assert ready.wait(10)
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "w1"}}
    assert admin_pb.post(stock.url + CM.format(ns="default"), json=body).status_code == 201
    thread.join(15)
    names = {(kind, obj["metadata"]["name"]) for kind, obj in frames}
    assert ("ADDED", "w1") in names


def test_custom_resources_are_not_protobuf(stock: Server, admin_pb: requests.Session) -> None:
    group = "pb.example.com"
    create_crd(admin_pb, stock, crd_manifest(group))
    url = f"{stock.url}/apis/{group}/v1/namespaces/default/crontabs"
    r = admin_pb.get(url, headers={"Accept": PB + ", application/json"})
    assert (r.status_code, r.headers["Content-Type"]) == (200, "application/json")
    r = admin_pb.get(url, headers={"Accept": PB})
    assert r.status_code == 406
    assert protobuf.decode(r.content)["reason"] == "NotAcceptable"
    body = protobuf.encode({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}})
    r = admin_pb.post(url, data=body, headers={"Content-Type": PB, "Accept": "application/json"})
    assert r.status_code == 415
    assert r.json()["message"] == (
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json, application/yaml"
    )
    assert admin_pb.post(url, json=crontab("c", group)).status_code == 201


def test_a_dry_run_or_a_selector_delete_never_reaches_a_protobuf_get(
    stock: Server, admin_pb: requests.Session
) -> None:
    """Both carry a revision whose stored state is another: the message cache must not
    serve them for it (upstream's Watchers conformance case read a stale label back)."""
    url = stock.url + CM.format(ns="default")
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "pb-cache"}}
    body["metadata"]["labels"] = {"watch": "yes"}
    assert admin_pb.post(url, json=body).status_code == 201

    def get() -> dict:
        return protobuf.decode(admin_pb.get(f"{url}/pb-cache", headers={"Accept": PB}).content)

    assert get()["metadata"]["labels"] == {"watch": "yes"}
    merge = {"Content-Type": "application/merge-patch+json", "Accept": PB}
    patch = b'{"metadata":{"labels":{"watch":"dry"}}}'
    dry = admin_pb.patch(f"{url}/pb-cache?dryRun=All", data=patch, headers=merge)
    assert protobuf.decode(dry.content)["metadata"]["labels"] == {"watch": "dry"}
    assert get()["metadata"]["labels"] == {"watch": "yes"}
    # A watch on the label sees the object leave (DELETED, its last matching state at
    # the new revision); a GET then must see the new label.
    version = get()["metadata"]["resourceVersion"]
    events: list[bytes] = []
    params = f"?watch=1&labelSelector=watch%3Dyes&resourceVersion={version}"

    def watch() -> None:
        with admin_pb.get(url + params, headers={"Accept": PB}, stream=True, timeout=20) as r:
            for chunk in r.iter_content(chunk_size=None):
                events.append(chunk)
                return

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    patch = b'{"metadata":{"labels":{"watch":"no"}}}'
    merge["Accept"] = "application/json"
    assert admin_pb.patch(f"{url}/pb-cache", data=patch, headers=merge).status_code == 200
    thread.join(20)
    assert events, "no DELETED event"
    assert get()["metadata"]["labels"] == {"watch": "no"}
