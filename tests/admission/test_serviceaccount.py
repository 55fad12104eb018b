"""ServiceAccount admission: kube's cases (serviceaccount/admission_test.go) over real stores."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from twisted.internet.defer import ensureDeferred
from twisted.internet.task import Clock

from platform_api.admission.serviceaccount import (
    ENFORCE_MOUNTABLE_SECRETS,
    MOUNT_PATH,
    ServiceAccount,
    mount_token,
)
from tests.admission.plugin_kit import Cluster, attrs, refused, run

Obj = dict[str, Any]
MIRROR = {"platform.io/config.mirror": "hash"}


def account(name: str, **extra: Any) -> Obj:
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}, **extra}


def pod(name: str = "p", **spec: Any) -> Obj:
    spec.setdefault("containers", [{"name": "c", "image": "i"}])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


@pytest.fixture
def cluster(tmp_path: Path) -> Cluster:
    c = Cluster(str(tmp_path / "db"))
    c.create("serviceaccounts", account("default"), namespace="default")
    return c


def plugin(cluster: Cluster, attempts: int = 1) -> ServiceAccount:
    return ServiceAccount(cluster.store("serviceaccounts"), Clock(), attempts)


def test_default_account_token_volume_and_mounts(cluster: Cluster) -> None:
    p = pod(initContainers=[{"name": "i", "image": "i"}])
    run(plugin(cluster).admit(attrs("CREATE", "pods", "p"), p, None))
    spec = p["spec"]
    assert (spec["serviceAccountName"], spec["serviceAccount"]) == ("default", "default")
    [volume] = spec["volumes"]
    assert volume["name"].startswith("kube-api-access-") and len(volume["name"]) == 21
    assert volume["projected"]["defaultMode"] == 420
    assert [list(s) for s in volume["projected"]["sources"]] == [
        ["serviceAccountToken"],
        ["configMap"],
        ["downwardAPI"],
    ]
    mount = {"name": volume["name"], "readOnly": True, "mountPath": MOUNT_PATH}
    assert spec["initContainers"][0]["volumeMounts"] == [mount]
    assert spec["containers"][0]["volumeMounts"] == [mount]
    run(plugin(cluster).validate(attrs("CREATE", "pods", "p"), p, None))


def test_existing_volume_and_mount_are_kept() -> None:
    own = {"name": "mine", "mountPath": MOUNT_PATH}
    p = pod(containers=[{"name": "a", "volumeMounts": [own]}, {"name": "b"}])
    p["spec"]["volumes"] = [{"name": "kube-api-access-abcde", "projected": {}}]
    mount_token(p)
    assert p["spec"]["containers"][0]["volumeMounts"] == [own]
    assert p["spec"]["containers"][1]["volumeMounts"][0]["name"] == "kube-api-access-abcde"
    assert len(p["spec"]["volumes"]) == 1


@pytest.mark.parametrize(
    ("pod_choice", "account_choice", "mounted"),
    [(None, None, True), (None, False, False), (True, False, True), (False, True, False)],
)
def test_automount_choice(
    cluster: Cluster, pod_choice: Any, account_choice: Any, mounted: bool
) -> None:
    extra = {} if account_choice is None else {"automountServiceAccountToken": account_choice}
    cluster.create("serviceaccounts", account("sa", **extra), namespace="default")
    spec: Obj = {"serviceAccountName": "sa"}
    if pod_choice is not None:
        spec["automountServiceAccountToken"] = pod_choice
    p = pod(**spec)
    run(plugin(cluster).admit(attrs("CREATE", "pods", "p"), p, None))
    assert ("volumes" in p["spec"]) is mounted


def test_image_pull_secrets_come_from_the_account(cluster: Cluster) -> None:
    pulls = [{"name": "reg"}]
    cluster.create("serviceaccounts", account("sa", imagePullSecrets=pulls), namespace="default")
    p = pod(serviceAccountName="sa")
    run(plugin(cluster).admit(attrs("CREATE", "pods", "p"), p, None))
    assert p["spec"]["imagePullSecrets"] == pulls
    own = pod(serviceAccountName="sa", imagePullSecrets=[{"name": "mine"}])
    run(plugin(cluster).admit(attrs("CREATE", "pods", "p"), own, None))
    assert own["spec"]["imagePullSecrets"] == [{"name": "mine"}]


def test_missing_account_is_forbidden(cluster: Cluster) -> None:
    err = refused(
        lambda: plugin(cluster).admit(
            attrs("CREATE", "pods", "x"), pod("x", serviceAccountName="sa"), None
        )
    )
    assert (err.code, err.reason) == (403, "Forbidden")
    assert (
        err.message
        == 'pods "x" is forbidden: error looking up service account default/sa: serviceaccount "sa" not found'
    )


def test_missing_default_is_waited_for(cluster: Cluster) -> None:
    clock = Clock()
    sa = ServiceAccount(cluster.store("serviceaccounts"), clock)
    pending = ensureDeferred(sa.admit(attrs("CREATE", "pods", "p", namespace="later"), pod(), None))
    clock.advance(0.2)
    assert not pending.called
    cluster.create("serviceaccounts", account("default"), namespace="later")
    clock.advance(0.2)
    assert pending.called and pending.result is None


def test_mirror_pods(cluster: Cluster) -> None:
    p = pod()
    p["metadata"]["annotations"] = MIRROR
    run(plugin(cluster).admit(attrs("CREATE", "pods", "p"), p, None))
    assert "serviceAccountName" not in p["spec"] and "volumes" not in p["spec"]
    cases = [
        ({"serviceAccountName": "default"}, "a mirror pod may not reference service accounts"),
        (
            {"volumes": [{"name": "v", "secret": {"secretName": "s"}}]},
            "a mirror pod may not reference secrets",
        ),
        (
            {
                "volumes": [
                    {
                        "name": "v",
                        "projected": {"sources": [{"serviceAccountToken": {"path": "t"}}]},
                    }
                ]
            },
            "a mirror pod may not use ServiceAccountToken volume projections",
        ),
    ]
    for spec, why in cases:
        bad = pod(**spec)
        bad["metadata"]["annotations"] = MIRROR
        err = refused(
            lambda bad=bad: plugin(cluster).admit(attrs("CREATE", "pods", "p"), bad, None)
        )
        assert err.message == f'pods "p" is forbidden: {why}'


def test_enforced_mountable_secrets(cluster: Cluster) -> None:
    meta = {"name": "strict", "annotations": {ENFORCE_MOUNTABLE_SECRETS: "true"}}
    strict = {**account("strict", secrets=[{"name": "ok"}]), "metadata": meta}
    cluster.create("serviceaccounts", strict, namespace="default")
    tail = "is not allowed because service account strict does not reference that secret"
    env = [{"name": "E", "valueFrom": {"secretKeyRef": {"name": "bad", "key": "k"}}}]
    cases = [
        (
            {"volumes": [{"name": "v", "secret": {"secretName": "bad"}}]},
            f'volume with secret.secretName="bad" {tail}',
        ),
        (
            {"containers": [{"name": "c", "env": env}]},
            f'container c with envVar E referencing secret.secretName="bad" {tail}',
        ),
        (
            {"initContainers": [{"name": "i", "envFrom": [{"secretRef": {"name": "bad"}}]}]},
            f'init container i with envFrom referencing secret.secretName="bad" {tail}',
        ),
        (
            {"imagePullSecrets": [{"name": "reg"}]},
            'imagePullSecrets[0].name="reg" is not allowed because service account strict does not reference that imagePullSecret',
        ),
    ]
    for spec, why in cases:
        p = pod(serviceAccountName="strict", **spec)
        err = refused(lambda p=p: plugin(cluster).validate(attrs("CREATE", "pods", "p"), p, None))
        assert err.message == f'pods "p" is forbidden: {why}'
    fine = pod(serviceAccountName="strict", volumes=[{"name": "v", "secret": {"secretName": "ok"}}])
    run(plugin(cluster).validate(attrs("CREATE", "pods", "p"), fine, None))
    eph = pod(serviceAccountName="strict", ephemeralContainers=[{"name": "e", "env": env}])
    err = refused(
        lambda: plugin(cluster).validate(
            attrs("UPDATE", "pods", "p", sub="ephemeralcontainers"), eph, eph
        )
    )
    assert err.message.endswith(
        f'ephemeral container e with envVar E referencing secret.secretName="bad" {tail}'
    )


def test_updates_are_not_mutated(cluster: Cluster) -> None:
    p = pod()
    run(plugin(cluster).admit(attrs("UPDATE", "pods", "p"), p, p))
    run(plugin(cluster).validate(attrs("UPDATE", "pods", "p"), p, p))
    assert "serviceAccountName" not in p["spec"]
