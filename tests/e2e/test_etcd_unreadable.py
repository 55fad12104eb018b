"""Values in etcd that the server did not write and cannot read (``etcdctl put`` of any
bytes, another writer's garbage): the server starts and serves everything else, a read of
such a value answers kube's 500, watchers never see it, and an unsafe delete removes it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.e2e.answers import status, unknown
from tests.e2e.conftest import Server, session_for, start_server
from tests.e2e.crds import eventually
from tests.storage.etcd_server import EtcdServer

pytestmark = pytest.mark.slow

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
# kube's storage decoders end with a base64-wrapped one: text that neither JSON nor YAML
# reads as an object is reported by it (the reference kube-apiserver's answers).
WORDS = "illegal base64 data at input byte 4"  # "just words"
ARRAY = "illegal base64 data at input byte 0"  # "[1, 2]", "[1]"
UNSAFE = "ignoreStoreReadErrorWithClusterBreakingPotential"


@pytest.fixture
def on_etcd(tmp_path: Path, etcd: EtcdServer) -> Server:
    prefix = f"/unreadable-{tmp_path.name}"
    # There before the server starts: its first list reads it.
    etcd.put(f"{prefix}/configmaps/default/words", b"just words")
    server = start_server(
        tmp_path / "data",
        "--storage-backend", "etcd3", "--etcd-servers", etcd.endpoint, "--etcd-prefix", prefix,
        "--feature-gates=AllowUnsafeMalformedObjectDeletion=true",
    )  # fmt: skip
    server.etcd_prefix = prefix  # type: ignore[attr-defined]
    yield server  # type: ignore[misc]
    server.stop()


def test_reads_answer_500_and_writes_change_nothing(on_etcd: Server, etcd: EtcdServer) -> None:
    admin = session_for(on_etcd, cert=on_etcd.admin_cert)
    prefix = on_etcd.etcd_prefix  # type: ignore[attr-defined]
    meta = b'{"apiVersion":"v1","kind":"ConfigMap","metadata":"x"}'
    etcd.put(f"{prefix}/configmaps/default/meta", meta)
    etcd.put(f"{prefix}/configmaps/default/proto", b"k8s\x00\x0fnot protobuf")
    typed = (
        b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"typed","ownerReferences":"x"}}'
    )
    etcd.put(f"{prefix}/configmaps/default/typed", typed)
    url = on_etcd.base_url + CONFIGMAPS
    expected = {
        "words": WORDS,
        "meta": "json: cannot unmarshal string into Go struct field ConfigMap.metadata "
        "of type v1.ObjectMeta",
        "proto": "proto: wrong wireType = 7 for field TypeMeta",
        "typed": "json: cannot unmarshal string into Go struct field "
        "ObjectMeta.metadata.ownerReferences of type []v1.OwnerReference",
    }
    # With AllowUnsafeMalformedObjectDeletion (this server's) kube names corrupt objects.
    revisions = {}
    for name, message in expected.items():
        r = admin.get(f"{url}/{name}")
        revisions[name] = _revision(r.json()["message"])
        problem = f"object not decodable revision={revisions[name]}: {message}"
        text = _corrupt(f"/configmaps/default/{name}", problem)
        read = status(500, "InternalError", f"Internal error occurred: {text}", _cause(text))
        assert (r.status_code, r.json()) == (500, read), name
        # Writes decode what they replace, as kube's do: the value stays as it is.
        r = admin.patch(f"{url}/{name}", json={"data": {"k": "v"}}, headers=MERGE)
        assert (r.status_code, r.json()) == (500, unknown(problem)), name
        r = admin.delete(f"{url}/{name}")
        assert (r.status_code, r.json()) == (500, read), name
    causes = [
        _listed(f"{prefix}/configmaps/default/{name}", revisions[name], expected[name])
        for name in sorted(expected)
    ]
    for params in ({}, {"resourceVersion": "0"}, {"limit": "1"}):  # every one, in key order
        r = admin.get(url, params=params)
        assert (r.status_code, r.json()) == (500, _read_error("configmaps", causes))
    # Everything else is served: another namespace, another resource, new objects.
    assert admin.get(on_etcd.base_url + "/api/v1/namespaces/kube-system/configmaps").ok
    assert admin.post(url, json={"metadata": {"name": "fine"}}).status_code == 201
    assert admin.get(f"{url}/fine").status_code == 200


MERGE = {"Content-Type": "application/merge-patch+json"}


def test_each_read_of_it_from_etcd_counts_as_a_decode_error(on_etcd: Server) -> None:
    """kube's ``apiserver_storage_decode_errors_total``, counted as its etcd3 store counts:
    each read from etcd that meets the value (a get, a write's read of what it replaces, a
    consistent list), not a list its watch cache serves."""
    admin = session_for(on_etcd, cert=on_etcd.admin_cert)
    url = on_etcd.base_url + CONFIGMAPS
    series = 'apiserver_storage_decode_errors_total{group="",resource="configmaps"}'

    def counted() -> float:
        lines = admin.get(on_etcd.base_url + "/metrics").text.splitlines()
        return sum(float(line.rsplit(" ", 1)[1]) for line in lines if line.startswith(series))

    before = counted()
    steps = [
        (lambda: admin.get(f"{url}/words"), 1),
        (lambda: admin.patch(f"{url}/words", json={"data": {"k": "v"}}, headers=MERGE), 1),
        (lambda: admin.delete(f"{url}/words"), 1),
        (lambda: admin.get(url), 1),  # read from etcd (3.5.1: its consistent lists are)
        (lambda: admin.get(url, params={"resourceVersion": "0"}), 0),  # the cache's
    ]
    for request, more in steps:
        assert request().status_code == 500
        assert counted() == before + more
        before += more


def _revision(message: str) -> int:
    return int(message.split(" revision=", 1)[1].split(":", 1)[0])


def _corrupt(key: str, problem: str) -> str:
    return (
        f"StorageError: corrupt object, Code: 7, Key: {key}, ResourceVersion: 0, "
        f"AdditionalErrorMsg: {problem}"
    )


def _cause(text: str) -> dict[str, Any]:
    return {"causes": [{"message": text}]}


def _listed(where: str, revision: int, message: str) -> dict[str, str]:
    text = _corrupt(where, f"object not decodable revision={revision}: {message}")
    return {"reason": "UnexpectedServerResponse", "message": text, "field": where}


def _read_error(resource: str, causes: list[dict[str, str]]) -> dict[str, Any]:
    """kube's list of corrupt objects (AllowUnsafeMalformedObjectDeletion on)."""
    details = {"name": "list", "kind": resource, "causes": causes}
    message = f"failed to read one or more {resource} from the storage"
    return status(500, "StorageReadError", message, details)


def test_watchers_never_see_it_and_an_unsafe_delete_removes_it(
    on_etcd: Server, etcd: EtcdServer
) -> None:
    admin = session_for(on_etcd, cert=on_etcd.admin_cert)
    prefix = on_etcd.etcd_prefix  # type: ignore[attr-defined]
    url = on_etcd.base_url + CONFIGMAPS
    start = admin.get(on_etcd.base_url + "/api/v1/namespaces/kube-system/configmaps").json()
    params = {"watch": "1", "resourceVersion": start["metadata"]["resourceVersion"]}
    params["timeoutSeconds"] = "5"
    with admin.get(url, params=params, stream=True) as watch:
        assert watch.status_code == 200
        etcd.put(f"{prefix}/configmaps/default/later", b"[1, 2]")
        assert admin.post(url, json={"metadata": {"name": "after"}}).status_code == 201
        r = admin.delete(f"{url}/words", params={UNSAFE: "true"})
        assert r.status_code == 200, r.text
        assert r.json()["details"] == {"name": "words", "kind": "configmaps", "uid": ""}
        assert admin.post(url, json={"metadata": {"name": "last"}}).status_code == 201
        seen = _events_until(watch, "last")
    # The new object and the unsafe delete's stand-in; neither unreadable value.
    assert seen == [("ADDED", "after"), ("DELETED", "words"), ("ADDED", "last")]
    assert admin.get(f"{url}/words").status_code == 404
    r = admin.get(url)  # "later" is still there: the list still fails, on it
    later = f"{prefix}/configmaps/default/later"
    revision = _revision(r.json()["details"]["causes"][0]["message"])
    assert (r.status_code, r.json()) == (
        500,
        _read_error("configmaps", [_listed(later, revision, ARRAY)]),
    )


def _events_until(watch: requests.Response, last: str) -> list[tuple[str, str]]:
    seen = []
    for line in watch.iter_lines():
        event = json.loads(line)
        seen.append((event["type"], event["object"]["metadata"]["name"]))
        if seen[-1] == ("ADDED", last):
            break
    return seen


def test_a_value_that_does_not_decrypt_is_kubes_internal_error(
    tmp_path: Path, etcd: EtcdServer
) -> None:
    """Sealed with a key the configuration no longer has (here: not sealed at all): with
    AllowUnsafeMalformedObjectDeletion kube's corrupt object (kube-apiserver v1.36's
    answers), and the unsafe delete removes it."""
    prefix = f"/sealed-{tmp_path.name}"
    etcd.put(f"{prefix}/secrets/default/lost", b"k8s:enc:aescbc:v1:key1:" + b"x" * 20)
    config = Path(__file__).parents[2] / "etc" / "encryption-config.yaml"
    server = start_server(
        tmp_path / "data",
        "--storage-backend", "etcd3", "--etcd-servers", etcd.endpoint, "--etcd-prefix", prefix,
        f"--encryption-provider-config={config}",
        "--feature-gates=AllowUnsafeMalformedObjectDeletion=true",
    )  # fmt: skip
    try:
        admin = session_for(server, cert=server.admin_cert)
        url = server.base_url + "/api/v1/namespaces/default/secrets"
        why = "data from the storage is not transformable revision=0: the stored data is "
        why += "not a multiple of the block size"
        text = _corrupt("/secrets/default/lost", why)
        r = admin.get(url + "/lost")
        read = status(500, "InternalError", f"Internal error occurred: {text}", _cause(text))
        assert (r.status_code, r.json()) == (500, read)
        where = f"{prefix}/secrets/default/lost"
        cause = {"reason": "UnexpectedServerResponse", "message": _corrupt(where, why)}
        r = admin.get(url)
        assert (r.status_code, r.json()) == (
            500,
            _read_error("secrets", [cause | {"field": where}]),
        )
        assert admin.delete(f"{url}/lost", params={UNSAFE: "true"}).status_code == 200
        assert admin.get(url).json()["items"] == []
    finally:
        server.stop()


def test_the_servers_own_readers_pass_over_it(tmp_path: Path, etcd: EtcdServer) -> None:
    """Informers, controllers and admission list what they need at start and on each
    request: a value none of them can read is passed over, not a failed start."""
    prefix = f"/own-{tmp_path.name}"
    etcd.put(f"{prefix}/clusterroles/garbage", b"k8s\x00\x0fnot protobuf")
    etcd.put(f"{prefix}/namespaces/garbage", b"[1]")
    etcd.put(f"{prefix}/pods/default/garbage", b"just words")
    server = start_server(
        tmp_path / "data",
        "--storage-backend", "etcd3", "--etcd-servers", etcd.endpoint, "--etcd-prefix", prefix,
    )  # fmt: skip
    try:
        admin = session_for(server, cert=server.admin_cert)
        assert admin.get(server.base_url + "/readyz").status_code == 200
        apps = server.base_url + "/apis/apps/v1/namespaces/default"
        labels = {"app": "web"}
        template = {"metadata": {"labels": labels}, "spec": {"containers": [WEB]}}
        spec = {"replicas": 1, "selector": {"matchLabels": labels}, "template": template}
        deployment = {"metadata": {"name": "web"}, "spec": spec}
        assert admin.post(apps + "/deployments", json=deployment).status_code == 201
        made = eventually(lambda: admin.get(apps + "/replicasets").json()["items"])
        assert [rs["metadata"]["ownerReferences"][0]["name"] for rs in made] == ["web"]
        pods = server.base_url + "/api/v1/namespaces/default/pods"
        pod = {"metadata": {"name": "p"}, "spec": {"containers": [WEB]}}
        assert admin.post(pods, json=pod).status_code == 201
        r = admin.get(pods)  # a client's list still reports it
        assert (r.status_code, r.json()) == (500, unknown(WORDS))
        # Content in it: kube's NamespaceLifecycle wraps its lookup's (a GET's) error.
        r = admin.get(server.base_url + "/api/v1/namespaces/garbage")
        assert (r.status_code, r.json()) == (500, unknown(ARRAY))
        r = admin.post(
            server.base_url + "/api/v1/namespaces/garbage/configmaps",
            json={"metadata": {"name": "c"}},
        )
        wrapped = status(
            500,
            "InternalError",
            f"Internal error occurred: {ARRAY}",
            {"causes": [{"message": ARRAY}]},
        )
        assert (r.status_code, r.json()) == (500, wrapped)
    finally:
        server.stop()


WEB = {"name": "web", "image": "nginx"}


def test_a_value_that_names_no_type_reads_as_kubes_does(on_etcd: Server, etcd: EtcdServer) -> None:
    """What kube-apiserver v1.36 answered for these values put under its ConfigMaps: the
    resource's kind for one that names none; an empty object for one with no apiVersion
    (kube decodes it into its internal version, whose fields have no JSON names)."""
    admin = session_for(on_etcd, cert=on_etcd.admin_cert)
    prefix = on_etcd.etcd_prefix  # type: ignore[attr-defined]
    values = {
        "null": b"null",
        "empty": b"{}",
        "noapi": b'{"kind":"ConfigMap","metadata":{"name":"noapi"},"data":{"a":"b"}}',
        "nokind": b'{"apiVersion":"v1","metadata":{"name":"nokind"},"data":{"a":"b"}}',
    }
    for name, value in values.items():
        etcd.put(f"{prefix}/configmaps/typeless/{name}", value)
    url = on_etcd.base_url + "/api/v1/namespaces/typeless/configmaps"
    for name in values:
        r = eventually(lambda n=name: (got := admin.get(f"{url}/{n}")).status_code == 200 and got)
        meta = {"resourceVersion": r.json()["metadata"]["resourceVersion"]}
        body = {"kind": "ConfigMap", "apiVersion": "v1", "metadata": meta}
        if name == "nokind":
            body |= {"metadata": {"name": "nokind", **meta}, "data": {"a": "b"}}
        assert r.json() == body, name
        assert meta["resourceVersion"].isdigit()
    items = admin.get(url).json()["items"]
    assert [item["metadata"].get("name", "") for item in items] == ["", "", "nokind", ""]
    assert [item.get("data") for item in items] == [None, None, {"a": "b"}, None]
