"""OwnerReferencesPermissionEnforcement, EventRateLimit and ImagePolicyWebhook: kube's
admission_test.go cases with a fake authorizer, a fake clock and a fake image service."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from twisted.internet.defer import ensureDeferred, succeed
from twisted.internet.task import Clock

from platform_api.admission.eventratelimit import EventRateLimit, load_configuration
from platform_api.admission.imagepolicy import ImagePolicyWebhook
from platform_api.admission.ownerrefs import OwnerReferencesPermissionEnforcement
from platform_api.apiserver.flagvalues import ConfigError
from platform_api.authentication.user import UserInfo
from platform_api.cel.library.authz import CheckAttributes
from platform_api.client.kubeconfig import Connection
from tests.admission.plugin_kit import Cluster, attrs, refused, run

Obj = dict[str, Any]
ALICE = UserInfo("alice")


def owned(*refs: Obj) -> Obj:
    return {"metadata": {"name": "cm", "namespace": "default", "ownerReferences": list(refs)}}


def ref(uid: str = "u1", block: bool | None = None, kind: str = "ReplicaSet") -> Obj:
    out: Obj = {"apiVersion": "apps/v1", "kind": kind, "name": "rs", "uid": uid}
    if block is not None:
        out["blockOwnerDeletion"] = block
    return out


class Authorizer:
    def __init__(self, *allowed: tuple[str, str, str]) -> None:
        self.allowed = allowed  # (verb, resource, subresource)
        self.checks: list[CheckAttributes] = []

    async def __call__(self, check: CheckAttributes) -> tuple[str, str]:
        self.checks.append(check)
        key = (check.verb, check.resource, check.subresource)
        return ("allow", "") if key in self.allowed else ("no-opinion", "")


@pytest.fixture
def cluster(tmp_path: Path) -> Cluster:
    return Cluster(str(tmp_path / "db"))


def test_owner_references(cluster: Cluster) -> None:
    def check(authz: Authorizer, op: str, new: Obj, old: Obj | None) -> str:
        plugin = OwnerReferencesPermissionEnforcement(authz, cluster.stores)
        a = attrs(op, "configmaps", "cm", user=ALICE)
        try:
            run(plugin.validate(a, new, old))
        except Exception:
            return refused(lambda: plugin.validate(a, new, old)).message
        return ""

    nothing = Authorizer()
    assert check(nothing, "CREATE", owned(ref()), None) == ""  # a creator may set refs
    assert check(nothing, "UPDATE", owned(ref()), owned(ref())) == ""  # unchanged
    prefix = 'configmaps "cm" is forbidden: '
    assert check(nothing, "UPDATE", owned(ref("u2")), owned(ref())) == (
        prefix + "cannot set an ownerRef on a resource you can't delete: , <nil>"
    )
    deleter = Authorizer(("delete", "configmaps", ""))
    assert check(deleter, "UPDATE", owned(ref("u2")), owned(ref())) == ""
    blocked = prefix + (
        "cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set "
        "finalizers on: , <nil>"
    )
    assert check(nothing, "CREATE", owned(ref(block=True)), None) == blocked
    assert check(deleter, "UPDATE", owned(ref(block=True)), owned(ref(block=False))) == blocked
    assert check(deleter, "UPDATE", owned(ref(block=True)), owned(ref(block=True), ref("u9"))) == ""
    finalizer = Authorizer(("update", "replicasets", "finalizers"))
    assert check(finalizer, "CREATE", owned(ref(block=True)), None) == ""
    owner_check = finalizer.checks[-1]
    assert (owner_check.api_group, owner_check.name, owner_check.namespace) == (
        "apps",
        "rs",
        "default",
    )
    assert check(nothing, "CREATE", owned(ref(block=True, kind="Nope")), None) == prefix + (
        "cannot set blockOwnerDeletion in this case because cannot find RESTMapping for "
        'APIVersion apps/v1 Kind Nope: no matches for kind "Nope" in version "apps/v1"'
    )
    status = attrs("UPDATE", "pods", "p", sub="status", user=ALICE)
    plugin = OwnerReferencesPermissionEnforcement(nothing, cluster.stores)
    run(plugin.validate(status, owned(ref("u2")), owned(ref())))


def event(**source: str) -> Obj:
    return {"metadata": {"name": "e", "namespace": "default"}, "source": source,
            "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"}}  # fmt: skip


def test_event_rate_limit() -> None:
    clock = Clock()
    limits = [{"type": "Namespace", "qps": 1, "burst": 2}, {"type": "Server", "qps": 2, "burst": 3}]
    plugin = EventRateLimit(limits, clock.seconds)
    create = attrs("CREATE", "events", "e")
    other = attrs("CREATE", "events", "e", namespace="other")
    plugin.validate(create, event(), None)
    plugin.validate(create, event(), None)
    error = refused(lambda: plugin.validate(create, event(), None))
    assert (error.code, error.reason) == (429, "TooManyRequests")
    assert error.message == "Too many requests: limit reached on type Namespace for key default"
    assert error.status().get("details") is None
    both = refused(lambda: plugin.validate(other, event(), None))  # the server bucket is empty too
    assert both.message == ("Too many requests: limit reached on type Server for key ")
    plugin.validate(attrs("CREATE", "events", "e", dry_run=True), event(), None)
    plugin.validate(attrs("CREATE", "configmaps", "e"), event(), None)
    clock.advance(1)
    plugin.validate(create, event(), None)
    sources = EventRateLimit([{"type": "SourceAndObject", "qps": 1, "burst": 1}], clock.seconds)
    sources.validate(create, event(component="kubelet"), None)
    sources.validate(create, event(component="other"), None)
    again = refused(lambda: sources.validate(create, event(component="kubelet"), None))
    assert again.message.endswith("for key kubeletPoddefaultp")


def test_event_rate_limit_configuration() -> None:
    config = {
        "apiVersion": "eventratelimit.admission.platform.io/v1alpha1",
        "kind": "Configuration",
    }
    good = {**config, "limits": [{"type": "User", "qps": 5, "burst": 10, "cacheSize": 3}]}
    assert load_configuration(good)[0]["type"] == "User"
    prefix = 'couldn\'t init admission plugin "EventRateLimit": '
    with pytest.raises(ConfigError) as caught:
        load_configuration(None)
    assert str(caught.value) == prefix + (
        "limits: Invalid value: []eventratelimit.Limit(nil): must not be empty"
    )
    bad = {**config, "limits": [{"type": "Pod", "qps": 0, "burst": 1, "cacheSize": -1}]}
    with pytest.raises(ConfigError) as caught:
        load_configuration(bad)
    assert str(caught.value) == prefix + (
        '[limits[0].type: Unsupported value: "Pod": supported values: "Server", "Namespace", '
        '"User", "SourceAndObject", limits[0].qps: Invalid value: 0: must be positive, '
        "limits[0].cacheSize: Invalid value: -1: must not be negative]"
    )


class Reply:
    def __init__(self, code: int, body: Obj) -> None:
        self.code, self.body = code, orjson.dumps(body)

    def content(self) -> Any:
        return succeed(self.body)


class Service:
    def __init__(self, *replies: Reply) -> None:
        self.replies = list(replies)
        self.reviews: list[Obj] = []

    def post(self, url: str, data: bytes, **kwargs: Any) -> Any:
        self.reviews.append(orjson.loads(data))
        return succeed(self.replies.pop(0) if len(self.replies) > 1 else self.replies[0])


def image_plugin(service: Service, clock: Clock, **settings: Any) -> ImagePolicyWebhook:
    plugin = ImagePolicyWebhook(settings, Connection(server="https://images"), clock)
    plugin.client = service
    return plugin


def pod(*images: str, **annotations: str) -> Obj:
    containers = [{"name": f"c{i}", "image": image} for i, image in enumerate(images)]
    meta = {"name": "p", "namespace": "default", "annotations": dict(annotations)}
    return {
        "metadata": meta,
        "spec": {"containers": containers[:1], "initContainers": containers[1:]},
    }


def test_image_policy_review_and_cache() -> None:
    clock = Clock()
    allowed = Reply(200, {"status": {"allowed": True}})
    service = Service(allowed)
    plugin = image_plugin(service, clock)
    create = attrs("CREATE", "pods", "p")
    keep = {"a.image-policy.platform.io/x": "1", "other": "2"}
    run(plugin.validate(create, pod("good", "init", **keep), None))
    assert service.reviews[0] == {
        "apiVersion": "imagepolicy.platform.io/v1alpha1",
        "kind": "ImageReview",
        "metadata": {},  # a zero creationTimestamp is omitted (omitzero)
        "spec": {
            "containers": [{"image": "good"}, {"image": "init"}],
            "annotations": {"a.image-policy.platform.io/x": "1"},
            "namespace": "default",
        },
        "status": {"allowed": False},
    }
    run(plugin.validate(create, pod("good", "init", **keep), None))
    assert len(service.reviews) == 1  # cached for allowTTL
    clock.advance(301)
    run(plugin.validate(create, pod("good", "init", **keep), None))
    assert len(service.reviews) == 2


def test_image_policy_denials_and_failures() -> None:
    clock = Clock()
    create = attrs("CREATE", "pods", "p")
    denied = Service(Reply(200, {"status": {"allowed": False, "reason": "bad image"}}))
    error = refused(lambda: image_plugin(denied, clock).validate(create, pod("x"), None))
    assert error.message == (
        'pods "p" is forbidden: image policy webhook backend denied one or more images: bad image'
    )
    silent = Service(Reply(200, {"status": {"allowed": False}}))
    error = refused(lambda: image_plugin(silent, clock).validate(create, pod("x"), None))
    assert error.message == 'pods "p" is forbidden: one or more images rejected by webhook backend'
    broken = Service(Reply(403, {"kind": "Status", "message": "nope"}))
    error = refused(lambda: image_plugin(broken, clock).validate(create, pod("x"), None))
    assert error.message == 'pods "p" is forbidden: nope'
    obj = pod("x")
    run(image_plugin(broken, clock, defaultAllow=True).validate(create, obj, None))
    assert obj["metadata"]["annotations"] == {"alpha.image-policy.platform.io/failed-open": "true"}
    run(image_plugin(broken, clock).validate(attrs("CREATE", "configmaps", "p"), obj, None))


def test_image_policy_retries_transient_failures() -> None:
    clock = Clock()
    service = Service(Reply(500, {}), Reply(200, {"status": {"allowed": True}}))
    plugin = image_plugin(service, clock)
    done = ensureDeferred(plugin.validate(attrs("CREATE", "pods", "p"), pod("x"), None))
    assert not done.called and len(service.reviews) == 1
    clock.advance(0.5)
    assert done.called and len(service.reviews) == 2


def test_image_policy_settings() -> None:
    with pytest.raises(ConfigError) as caught:
        image_plugin(Service(), Clock(), allowTTL=3600)
    assert str(caught.value) == "valid value is between 1s and 30m0s, got 1h0m0s"
    plugin = image_plugin(Service(), Clock(), allowTTL=-1, denyTTL=10, retryBackoff=100)
    assert (plugin.allow_ttl, plugin.deny_ttl, plugin.backoff) == (0.0, 10.0, 0.1)
