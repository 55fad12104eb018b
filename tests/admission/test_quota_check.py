"""ResourceQuota admission over real stores: kube's refusals, charges written with a
compare-and-swap, a lost race checked again, dry runs, limited resources."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from twisted.internet.defer import ensureDeferred, succeed
from twisted.internet.task import Clock

from platform_api.admission.interface import Attributes
from platform_api.admission.quota.check import LimitedResource
from platform_api.admission.quota.config import load_configuration
from platform_api.admission.quota.pending import PendingCharges
from platform_api.admission.quota.plugin import ResourceQuota
from platform_api.apiserver.flagvalues import ConfigError
from platform_api.authentication.user import UserInfo
from platform_api.errors import StatusError
from platform_api.registry.store import Store
from platform_api.scheme.catalog import builtin_scheme
from platform_api.storage.lmdb_store import LMDBStorage, open_environment
from platform_api.storage.watch import WatchHub

Obj = dict[str, Any]
SCHEME = builtin_scheme()
USER = UserInfo("alice")


def rt(plural: str) -> Any:
    return SCHEME.lookup("", "v1", plural)


def run(coroutine: Any) -> Any:
    d = ensureDeferred(coroutine)
    out: list[Any] = []
    d.addBoth(out.append)
    assert out, "still waiting"
    if hasattr(out[0], "raiseException"):
        out[0].raiseException()
    return out[0]


class Setup:
    def __init__(self, path: str, limited: list[LimitedResource] | None = None) -> None:
        storage = LMDBStorage(open_environment(path, 64 * 2**20), lambda w: succeed(w()))
        self.clock = Clock()
        hub = WatchHub(storage, self.clock)
        storage.on_commit = hub.committed
        self.quotas = Store(rt("resourcequotas"), storage)
        self.pending = PendingCharges()
        self.plugin = ResourceQuota(self.quotas, limited or [], self.pending, hub)
        self.plugin.start()

    def quota(self, name: str, hard: dict[str, str], used: dict[str, str], **spec: Any) -> None:
        body = {"metadata": {"name": name}, "spec": {"hard": hard, **spec}}
        run(self.quotas.create("ns", body))
        self.set_used(name, hard, used)

    def set_used(self, name: str, hard: dict[str, str], used: dict[str, str]) -> None:
        def write(current: Obj | None) -> Obj:
            assert current is not None
            current["status"] = {"hard": hard, "used": used}
            return current

        run(self.quotas.update("ns", name, write, subresource="status"))

    def used(self, name: str) -> dict[str, str]:
        return dict(self.quotas.get("ns", name).object["status"]["used"])

    def admit(
        self, op: str, plural: str, obj: Obj, old: Obj | None = None, dry: bool = False
    ) -> None:
        self.clock.advance(0)  # commits are published before the next request is served
        attrs = Attributes(op, rt(plural), "", "ns", obj["metadata"]["name"], USER, dry)
        pending = self.plugin.validate(attrs, obj, old)
        if pending is not None:
            run(pending)


@pytest.fixture
def setup(tmp_path: Path) -> Setup:
    return Setup(str(tmp_path / "db"))


def refused(call: Any) -> StatusError:
    with pytest.raises(StatusError) as caught:
        call()
    return caught.value


def pod(name: str, **resources: dict[str, str]) -> Obj:
    c = {"name": "c", "image": "i", "resources": resources}
    return {"metadata": {"name": name, "uid": f"uid-{name}"}, "spec": {"containers": [c]}}


def cm(name: str) -> Obj:
    return {"metadata": {"name": name, "uid": f"uid-{name}"}}


def test_charges_until_the_quota_is_full(setup: Setup) -> None:
    setup.quota("q", {"pods": "2"}, {"pods": "1"})
    setup.admit("CREATE", "pods", pod("a"))
    assert setup.used("q") == {"pods": "2"}
    assert setup.pending.holds("ns")  # the controller adds it until the pod is stored
    error = refused(lambda: setup.admit("CREATE", "pods", pod("b")))
    assert (error.code, error.reason) == (403, "Forbidden")
    assert error.message == (
        'pods "b" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2'
    )
    assert error.details == {"name": "b", "kind": "pods"}


def test_dry_run_is_checked_but_not_charged(setup: Setup) -> None:
    setup.quota("q", {"configmaps": "1"}, {"configmaps": "0"})
    setup.admit("CREATE", "configmaps", cm("a"), dry=True)
    assert setup.used("q") == {"configmaps": "0"}
    setup.quota("full", {"count/configmaps": "0"}, {"count/configmaps": "0"})
    error = refused(lambda: setup.admit("CREATE", "configmaps", cm("b"), dry=True))
    assert error.message.endswith(
        "exceeded quota: full, requested: count/configmaps=1, used: count/configmaps=0, "
        "limited: count/configmaps=0"
    )


def test_constraints_and_unknown_status(setup: Setup) -> None:
    setup.quota("cpu", {"requests.cpu": "1", "limits.memory": "1Gi"}, {"requests.cpu": "0"})
    error = refused(lambda: setup.admit("CREATE", "pods", pod("a")))
    assert error.message == (
        'pods "a" is forbidden: failed quota: cpu: must specify limits.memory for: c; '
        "requests.cpu for: c"
    )
    p = pod("b", requests={"cpu": "1"}, limits={"memory": "1Gi"})
    error = refused(lambda: setup.admit("CREATE", "pods", p))
    assert error.message == (
        'pods "b" is forbidden: status unknown for quota: cpu, resources: limits.memory,requests.cpu'
    )


def test_quotas_without_status_or_for_other_kinds_do_not_apply(setup: Setup) -> None:
    run(setup.quotas.create("ns", {"metadata": {"name": "new"}, "spec": {"hard": {"pods": "0"}}}))
    setup.admit("CREATE", "pods", pod("a"))  # status not filled yet: nothing enforced
    setup.quota("svc", {"services": "0"}, {"services": "0"})
    setup.admit("CREATE", "pods", pod("b"))


def test_updates_are_charged_their_difference(setup: Setup) -> None:
    setup.quota("q", {"services.nodeports": "2"}, {"services.nodeports": "1"})
    old = {"metadata": {"name": "s", "resourceVersion": "5"}, "spec": {"ports": [{}, {}]}}
    new = {"metadata": {"name": "s"}, "spec": {"type": "NodePort", "ports": [{}, {}]}}
    error = refused(lambda: setup.admit("UPDATE", "services", new, old))
    assert error.message == (
        'services "s" is forbidden: exceeded quota: q, requested: services.nodeports=2, '
        "used: services.nodeports=1, limited: services.nodeports=2"
    )
    new["spec"]["ports"] = [{}]
    setup.admit("UPDATE", "services", new, old)
    assert setup.used("q") == {"services.nodeports": "2"}


def test_a_lost_race_is_checked_again(setup: Setup) -> None:
    """Another writer (the controller) changes the quota between read and write: the
    compare-and-swap fails and the request is checked against the new usage."""
    setup.quota("q", {"pods": "1"}, {"pods": "0"})
    update = setup.quotas.update
    raced: list[bool] = []

    async def racing(*args: Any, **kwargs: Any) -> Any:
        if not raced:
            raced.append(True)
            setup.set_used("q", {"pods": "1"}, {"pods": "1"})
        return await update(*args, **kwargs)

    setup.quotas.update = racing  # type: ignore[method-assign]
    error = refused(lambda: setup.admit("CREATE", "pods", pod("a")))
    assert "exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1" in error.message
    assert setup.used("q") == {"pods": "1"}
    assert not setup.pending.holds("ns")  # the lost charge is forgotten


def test_limited_resources_need_a_covering_quota(tmp_path: Path) -> None:
    settings = {
        "apiVersion": "apiserver.config.platform.io/v1",
        "kind": "ResourceQuotaConfiguration",
        "limitedResources": [
            {"resource": "pods", "matchContains": ["cpu"]},
            {
                "resource": "pods",
                "matchScopes": [
                    {"scopeName": "PriorityClass", "operator": "In", "values": ["high"]}
                ],
            },
        ],
    }
    setup = Setup(str(tmp_path / "db"), load_configuration(settings))
    hungry = pod("a", requests={"cpu": "1"})
    error = refused(lambda: setup.admit("CREATE", "pods", hungry))
    assert error.message == 'pods "a" is forbidden: insufficient quota to consume: cpu,requests.cpu'
    high = {**pod("b"), "spec": {**pod("b")["spec"], "priorityClassName": "high"}}
    error = refused(lambda: setup.admit("CREATE", "pods", high))
    assert (error.code, error.reason) == (500, "")
    assert error.message == "insufficient quota to match these scopes: [{PriorityClass In [high]}]"
    setup.quota("cover", {"requests.cpu": "2", "cpu": "2"}, {"requests.cpu": "0", "cpu": "0"})
    setup.admit("CREATE", "pods", hungry)
    assert setup.used("cover") == {"cpu": "1", "requests.cpu": "1"}


def test_configuration_errors() -> None:
    assert load_configuration(None) == []
    with pytest.raises(ConfigError) as caught:
        load_configuration({"apiVersion": "v1", "kind": "Nope"})
    assert str(caught.value) == (
        'couldn\'t init admission plugin "ResourceQuota": no kind "Nope" is registered for '
        'version "v1"'
    )
    bad = {
        "apiVersion": "apiserver.config.platform.io/v1",
        "kind": "ResourceQuotaConfiguration",
        "limitedResources": [{"matchContains": ["cpu"]}],
    }
    with pytest.raises(ConfigError) as caught:
        load_configuration(bad)
    assert str(caught.value) == (
        'couldn\'t init admission plugin "ResourceQuota": limitedResources[0].resource: '
        "Required value"
    )


def test_namespaces_without_quotas_are_known_without_reading_storage(setup: Setup) -> None:
    """Which namespaces hold quotas comes from the informer: a write elsewhere reads
    nothing; a quota created or deleted is seen once its commit is published."""
    counted: list[bytes] = []
    real_count = setup.quotas.storage.count
    setup.quotas.storage.count = lambda p: counted.append(p) or real_count(p)  # type: ignore[method-assign]
    setup.admit("CREATE", "configmaps", cm("free"))
    assert counted == [] and not setup.plugin._has_quotas("ns")
    setup.quota("q", {"configmaps": "1"}, {"configmaps": "0"})
    setup.clock.advance(0)
    assert setup.plugin._has_quotas("ns") and not setup.plugin._has_quotas("other")
    run(setup.quotas.delete("ns", "q"))
    setup.clock.advance(0)
    assert not setup.plugin._has_quotas("ns") and counted == []
