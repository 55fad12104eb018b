"""LimitRanger: kube's defaulting and constraint cases (limitranger/admission_test.go),
with the reference kube-apiserver's messages, over real stores."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from platform_api.admission.limitranger import (
    ANNOTATION,
    LimitRanger,
    apply_defaults,
    pod_total,
    validate_claim,
    validate_pod,
)
from tests.admission.plugin_kit import Cluster, attrs, refused

Obj = dict[str, Any]


def limit_range(*limits: Obj) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "LimitRange",
        "metadata": {"name": "lr"},
        "spec": {"limits": list(limits)},
    }


CONTAINER = {
    "type": "Container",
    "max": {"cpu": "1", "memory": "1Gi"},
    "min": {"cpu": "10m"},
    "default": {"cpu": "500m", "memory": "512Mi"},
    "defaultRequest": {"cpu": "100m", "memory": "256Mi"},
    "maxLimitRequestRatio": {"cpu": "10"},
}


def container(name: str = "nginx", requests: Obj | None = None, limits: Obj | None = None) -> Obj:
    resources: Obj = {}
    if requests is not None:
        resources["requests"] = requests
    if limits is not None:
        resources["limits"] = limits
    return {"name": name, "image": "nginx", "resources": resources}


def pod(*containers: Obj, init: tuple[Obj, ...] = (), name: str = "x") -> Obj:
    spec: Obj = {"containers": list(containers)}
    if init:
        spec["initContainers"] = list(init)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def test_defaults_and_annotation() -> None:
    p = pod(container(), init=(container("init", requests={"cpu": "50m"}),))
    apply_defaults(limit_range(CONTAINER), p)
    app, init = p["spec"]["containers"][0], p["spec"]["initContainers"][0]
    assert app["resources"] == {
        "requests": {"cpu": "100m", "memory": "256Mi"},
        "limits": {"cpu": "500m", "memory": "512Mi"},
    }
    assert init["resources"]["requests"] == {"cpu": "50m", "memory": "256Mi"}
    assert p["metadata"]["annotations"][ANNOTATION] == (
        "LimitRanger plugin set: cpu, memory request for container nginx; cpu, memory limit for "
        "container nginx; memory request for init container init; cpu, memory limit for init "
        "container init"
    )


def test_requests_default_to_limits_first() -> None:
    """kube defaults requests to limits before admission: LimitRanger's request defaults
    only fill what neither gives."""
    p = pod(container(limits={"cpu": "2"}))
    apply_defaults(limit_range(CONTAINER), p)
    assert p["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "2", "memory": "256Mi"}


def test_defaults_are_written_canonically_and_nothing_set_means_no_annotation() -> None:
    p = pod(container())
    apply_defaults(limit_range({"type": "Container", "default": {"cpu": "2000m"}}), p)
    assert p["spec"]["containers"][0]["resources"]["limits"] == {"cpu": "2"}
    full = pod(container(requests={"cpu": "1"}, limits={"cpu": "1"}))
    apply_defaults(limit_range({"type": "Container", "default": {"cpu": "2"}}), full)
    assert "annotations" not in full["metadata"]


@pytest.mark.parametrize(
    ("c", "errors"),
    [
        (
            container(requests={"cpu": "2", "memory": "2Gi"}, limits={"cpu": "2", "memory": "2Gi"}),
            [
                "maximum cpu usage per Container is 1, but limit is 2",
                "maximum memory usage per Container is 1Gi, but limit is 2Gi",
            ],
        ),
        (
            container(requests={"cpu": "10m"}, limits={"cpu": "1500m", "memory": "1Gi"}),
            [
                "maximum cpu usage per Container is 1, but limit is 1500m",
                "cpu max limit to request ratio per Container is 10, but provided ratio is 150.000000",
            ],
        ),
        (
            container(requests={"cpu": "5m"}, limits={"cpu": "5m", "memory": "1Gi"}),
            [
                "minimum cpu usage per Container is 10m, but request is 5m",
            ],
        ),
        (
            container(limits={"memory": "1Gi"}),
            [
                "minimum cpu usage per Container is 10m.  No request is specified",
                "maximum cpu usage per Container is 1.  No limit is specified",
                "cpu max limit to request ratio per Container is 10, but no request is specified or request is 0",
            ],
        ),
        (container(requests={"cpu": "100m"}, limits={"cpu": "1", "memory": "1024Mi"}), []),
    ],
)
def test_container_constraints(c: Obj, errors: list[str]) -> None:
    assert validate_pod(limit_range(CONTAINER), pod(c)) == errors


def test_pod_totals_count_sidecars_and_the_init_peak() -> None:
    sidecar = {**container("side", requests={"cpu": "200m"}), "restartPolicy": "Always"}
    spec = pod(
        container(requests={"cpu": "100m"}),
        init=(
            container("i1", requests={"cpu": "1"}),
            sidecar,
            container("i2", requests={"cpu": "500m"}),
        ),
    )["spec"]
    assert str(pod_total(spec, "requests")["cpu"]) == "1"  # max(100m+200m, 1, 200m+500m)
    spec["resources"] = {"requests": {"cpu": "3"}}
    assert str(pod_total(spec, "requests")["cpu"]) == "3"  # pod-level resources win
    lr = limit_range({"type": "Pod", "max": {"cpu": "2"}})
    assert validate_pod(lr, {"spec": spec}) == [
        "maximum cpu usage per Pod is 2.  No limit is specified"
    ]


def test_claim_min_and_max() -> None:
    lr = limit_range(
        {"type": "PersistentVolumeClaim", "min": {"storage": "1Gi"}, "max": {"storage": "10Gi"}}
    )
    claim = {"spec": {"resources": {"requests": {"storage": "20Gi"}}}}
    assert validate_claim(lr, claim) == [
        "maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi"
    ]
    assert validate_claim(lr, {"spec": {}}) == [
        "minimum storage usage per PersistentVolumeClaim is 1Gi.  No request is specified",
        "maximum storage usage per PersistentVolumeClaim is 10Gi.  No request is specified",
    ]


@pytest.fixture
def cluster(tmp_path: Path) -> Cluster:
    c = Cluster(str(tmp_path / "db"))
    c.create("limitranges", limit_range(CONTAINER), namespace="default")
    return c


def test_plugin_mutates_creates_and_refuses_with_kube_status(cluster: Cluster) -> None:
    plugin = LimitRanger(cluster.store("limitranges"))
    p = pod(container())
    plugin.admit(attrs("CREATE", "pods", "x"), p, None)
    assert ANNOTATION in p["metadata"]["annotations"]
    plugin.validate(attrs("CREATE", "pods", "x"), p, None)
    big = pod(container(limits={"cpu": "2", "memory": "1Gi"}, requests={"cpu": "1"}), name="")
    big["metadata"]["generateName"] = "gen-"
    err = refused(lambda: plugin.validate(attrs("CREATE", "pods"), big, None))
    assert (err.code, err.reason) == (403, "Forbidden")
    assert (
        err.message
        == 'pods "gen-" is forbidden: maximum cpu usage per Container is 1, but limit is 2'
    )


def test_plugin_skips_updates_deletions_and_other_namespaces(cluster: Cluster) -> None:
    plugin = LimitRanger(cluster.store("limitranges"))
    big = pod(container(limits={"cpu": "2"}))
    plugin.validate(attrs("UPDATE", "pods", "x"), big, big)
    plugin.validate(attrs("CREATE", "pods", "x", namespace="other"), big, None)
    gone = {**big, "metadata": {"name": "x", "deletionTimestamp": "2020-01-01T00:00:00Z"}}
    plugin.validate(attrs("UPDATE", "pods", "x", sub="resize"), big, gone)
    err = refused(lambda: plugin.validate(attrs("UPDATE", "pods", "x", sub="resize"), big, big))
    assert err.code == 403
    fresh = pod(container())
    plugin.admit(attrs("UPDATE", "pods", "x"), fresh, fresh)
    assert fresh["spec"]["containers"][0]["resources"] == {}
