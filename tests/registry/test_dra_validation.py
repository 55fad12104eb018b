"""DeviceClasses, ResourceClaims (and their status), ResourceClaimTemplates and
ResourceSlices written through the store as kube-apiserver v1.36 answered the same writes
(reference; fixtures/dra_validation_kube.json, kube's branding mapped to ours): the exact
message of every refusal, and the object of every accepted write, defaults included."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, cast

import pytest
from twisted.internet.defer import succeed

from platform_api.endpoints.typemeta import cannot_handle
from platform_api.errors import StatusError
from platform_api.registry.claimstatus import device_id
from platform_api.registry.dranames import qualified_name, truncate, uid
from platform_api.registry.resourceclaims import ResourceClaimStrategy
from platform_api.registry.store import Store
from platform_api.scheme.catalog import Scheme, builtin_scheme
from platform_api.scheme.decoding import Decoder
from platform_api.scheme.gonames import DecodeError
from platform_api.scheme.optional import OPTIONAL_TYPES
from platform_api.scheme.schemas import load_schemas
from platform_api.storage.lmdb_store import LMDBStorage, open_environment
from tests.synchronous import run

Obj = dict[str, Any]
FIXTURE = Path(__file__).parent / "fixtures" / "dra_validation_kube.json"


def ours(text: str) -> str:
    """kube's branding as this server's."""
    return text.replace("resource.k8s.io", "resource.platform.io").replace(
        "kubernetes.io", "platform.io"
    )


CASES: list[Obj] = json.loads(ours(FIXTURE.read_text()))["cases"]
KINDS = ("DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "ResourceSlice")
ADMIN_NAMESPACE = "dra-admin"
ADMIN_LABEL = "resource.kubernetes.io/admin-access"
SCHEME = Scheme([rt for rt in OPTIONAL_TYPES if rt.version == "v1"], load_schemas().copy())


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Store]:
    env = open_environment(str(tmp_path_factory.mktemp("dra") / "db"), 256 * 2**20)
    storage = LMDBStorage(env, lambda w: succeed(w()))
    by_kind = {rt.kind: Store(rt, storage) for rt in SCHEME.all() if rt.kind in KINDS}
    namespaces_rt = builtin_scheme().lookup("", "v1", "namespaces")
    assert namespaces_rt is not None
    namespaces = Store(namespaces_rt, storage)
    for name, labels in (("default", {}), (ADMIN_NAMESPACE, {ours(ADMIN_LABEL): "true"})):
        run(namespaces.create("", {"metadata": {"name": name, "labels": labels}}))
    wired = {("", "v1", "namespaces"): namespaces}
    for store in by_kind.values():
        connect = getattr(store.strategy, "connect", None)
        if connect is not None:
            connect(wired, lambda: None)
    return by_kind


def shown(obj: Obj) -> Obj:
    """An answer as recorded: no identity, times masked."""
    obj = copy.deepcopy(obj)
    meta = obj["metadata"]
    for key in ("uid", "resourceVersion", "creationTimestamp", "managedFields"):
        meta.pop(key, None)
    if "deletionTimestamp" in meta:
        meta["deletionTimestamp"] = "<t>"
    if obj.get("kind") == "ResourceSlice":
        for device in obj["spec"].get("devices") or []:
            for taint in device.get("taints") or []:
                if taint.get("timeAdded") != "2024-01-02T03:04:05Z":
                    taint["timeAdded"] = "<now>"
    return obj


def decoded(store: Store, body: Obj) -> Obj:
    """A body as the server's handlers decode it (Go's typed decoding; a wrong type is
    their 400)."""
    rt = store.resource
    try:
        return Decoder(SCHEME.schemas).decode(copy.deepcopy(body), rt.definition).obj
    except DecodeError as e:
        raise cannot_handle(rt.kind, rt.api_version, str(e)) from None


def _write(store: Store, case: Obj) -> Obj:
    """The case's write as the server's handlers make it; returns the answer."""
    namespace = case.get("namespace", "default") if store.resource.namespaced else ""
    body = decoded(store, case["body"])
    if case["op"] == "create":
        return cast(Obj, run(store.create(namespace, body, dry_run=True)).object)
    name = case["objectName"]
    old = decoded(store, case["old"])
    old["metadata"]["name"] = name
    run(store.create(namespace, old))
    for step, step_body in case["steps"]:
        if step == "delete":
            run(store.delete(namespace, name))
        else:
            _put(store, namespace, name, decoded(store, step_body), step, dry_run=False)
    return _put(store, namespace, name, body, case.get("subresource", ""), dry_run=True)


def _put(store: Store, namespace: str, name: str, body: Obj, sub: str, dry_run: bool) -> Obj:
    body = copy.deepcopy(body)
    body["metadata"]["name"] = name
    stored, _ = run(
        store.update(
            namespace, name, lambda _: copy.deepcopy(body), subresource=sub, dry_run=dry_run
        )
    )
    return cast(Obj, stored.object)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_writes_are_answered_as_kube_answered_them(stores: dict[str, Store], case: Obj) -> None:
    store = stores[case["kind"]]
    try:
        answer = _write(store, case)
    except StatusError as e:
        assert (e.code, e.message) == (case["status"], case["message"])
        return
    assert case["status"] < 300, case.get("message")
    assert shown(answer) == case["object"]


def test_map_keys_in_paths_are_cut_in_the_middle() -> None:
    assert truncate("a" * 10, 96) == "a" * 10
    assert truncate("ab" * 60, 96) == "ab" * 23 + "a..." + "ab" * 23  # 47 + ... + 46
    assert len(truncate("x" * 200, 10)) == 16  # small limits grow to 16


def test_qualified_names_with_two_slashes_pass_as_in_kube() -> None:
    assert qualified_name("a/b/c", "p") == []
    assert [str(e) for e in qualified_name("", "p")] == [
        'p: Invalid value: "": a valid C identifier must start with alphabetic character '
        "or '_', followed by a string of alphanumeric characters or '_' (e.g. 'my_name',  "
        "or 'MY_NAME',  or 'MyName', regex used for validation is '[A-Za-z_][A-Za-z0-9_]*')"
    ]


def test_uids_in_google_uuid_forms_are_named() -> None:
    assert uid("0b6f5b7e-2f0e-4d5b-9a1c-7c7c8f6d1e01", "p") == []
    messages = [str(e) for e in uid("abc", "p")]
    assert messages == ['p: Invalid value: "abc": error validating uid: invalid UUID length: 3']
    urn = "URN:UUID:0b6f5b7e-2f0e-4d5b-9a1c-7c7c8f6d1e01"
    assert "normalized form" in str(uid(urn, "p")[0])


def test_deallocation_drops_the_status_of_devices_no_longer_allocated() -> None:
    (rt,) = [rt for rt in SCHEME.all() if rt.kind == "ResourceClaim"]
    strategy = ResourceClaimStrategy(rt)
    result = {"driver": "d", "pool": "p", "device": "x"}
    kept = {"driver": "d", "pool": "p", "device": "y"}
    old = {"status": {"allocation": {"devices": {"results": [result]}}, "devices": [result]}}
    new: Obj = {"status": {"devices": [result, kept]}}
    strategy.prepare_status_update(new, old)
    assert new["status"]["devices"] == [kept]
    new = {"status": {"devices": [result]}}
    strategy.prepare_status_update(new, old)
    assert "devices" not in new["status"]
    assert device_id(None) == ("", "", "", "")
