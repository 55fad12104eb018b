"""Defaulting of the built-in kinds, as kube's SetDefaults_* functions do it.

Applied to every object a write would store (create, update, the result of a patch),
before validation, so what clients read back is what kube would have stored.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Obj = dict[str, Any]
Defaulter = Callable[[Obj], None]
DEFAULTERS: dict[tuple[str, str], Defaulter] = {}


def defaults(group: str, *kinds: str) -> Callable[[Defaulter], Defaulter]:
    def register(fn: Defaulter) -> Defaulter:
        for kind in kinds:
            DEFAULTERS[(group, kind)] = fn
        return fn

    return register


def apply_defaults(group: str, kind: str, obj: Obj) -> None:
    defaulter = DEFAULTERS.get((group, kind))
    if defaulter is not None:
        defaulter(obj)


def _ports(ports: list[Obj]) -> None:
    for port in ports:
        port.setdefault("protocol", "TCP")


def _container(container: Obj) -> None:
    image = container.get("image", "")
    tagged = ":" in image.rsplit("/", 1)[-1] or "@" in image
    latest = image.endswith(":latest") or not tagged
    container.setdefault("imagePullPolicy", "Always" if latest else "IfNotPresent")
    container.setdefault("terminationMessagePath", "/dev/termination-log")
    container.setdefault("terminationMessagePolicy", "File")
    container.setdefault("resources", {})
    _ports(container.get("ports") or [])


def pod_spec(spec: Obj) -> None:
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", "default-scheduler")
    for key in ("containers", "initContainers"):
        for container in spec.get(key) or []:
            _container(container)


def _template(obj: Obj) -> None:
    template = obj.setdefault("spec", {}).setdefault("template", {})
    pod_spec(template.setdefault("spec", {}))


@defaults("", "Pod")
def _pod(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    pod_spec(spec)
    spec.setdefault("enableServiceLinks", True)  # SetDefaults_Pod: Pods only, not templates
    # The ServiceAccount and Priority admission plugins fill the account and priority;
    # v1 mirrors the account into the deprecated field, as kube's conversion does.
    if spec.get("serviceAccountName"):
        spec["serviceAccount"] = spec["serviceAccountName"]


@defaults("", "Service")
def _service(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("type", "ClusterIP")
    if spec["type"] != "ExternalName":
        spec.setdefault("sessionAffinity", "None")
        spec.setdefault("internalTrafficPolicy", "Cluster")
    for port in spec.get("ports") or []:
        port.setdefault("protocol", "TCP")
        port.setdefault("targetPort", port.get("port"))
    if spec["type"] in ("NodePort", "LoadBalancer"):
        spec.setdefault("externalTrafficPolicy", "Cluster")


@defaults("", "Secret")
def _secret(obj: Obj) -> None:
    obj.setdefault("type", "Opaque")


@defaults("", "PersistentVolumeClaim")
def _pvc(obj: Obj) -> None:
    obj.setdefault("spec", {}).setdefault("volumeMode", "Filesystem")


@defaults("", "PodTemplate")
def _pod_template(obj: Obj) -> None:
    template = obj.setdefault("template", {})
    template.setdefault("metadata", {})  # ObjectMeta, held by value: Go always writes it
    pod_spec(template.setdefault("spec", {}))


@defaults("", "ReplicationController")
def _rc(obj: Obj) -> None:
    obj.setdefault("spec", {}).setdefault("replicas", 1)
    _template(obj)


@defaults("apps", "Deployment")
def _deployment(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    strategy = spec.setdefault("strategy", {})
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        rolling = strategy.setdefault("rollingUpdate", {})
        rolling.setdefault("maxUnavailable", "25%")
        rolling.setdefault("maxSurge", "25%")
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("progressDeadlineSeconds", 600)
    _template(obj)


@defaults("apps", "ReplicaSet")
def _replicaset(obj: Obj) -> None:
    obj.setdefault("spec", {}).setdefault("replicas", 1)
    _template(obj)


@defaults("apps", "StatefulSet")
def _statefulset(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    spec.setdefault("podManagementPolicy", "OrderedReady")
    strategy = spec.setdefault("updateStrategy", {})
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        strategy.setdefault("rollingUpdate", {}).setdefault("partition", 0)
    spec.setdefault("revisionHistoryLimit", 10)
    retention = spec.setdefault("persistentVolumeClaimRetentionPolicy", {})
    retention.setdefault("whenDeleted", "Retain")
    retention.setdefault("whenScaled", "Retain")
    _template(obj)


@defaults("apps", "DaemonSet")
def _daemonset(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    strategy = spec.setdefault("updateStrategy", {})
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        rolling = strategy.setdefault("rollingUpdate", {})
        rolling.setdefault("maxUnavailable", 1)
        rolling.setdefault("maxSurge", 0)
    spec.setdefault("revisionHistoryLimit", 10)
    _template(obj)


@defaults("batch", "Job")
def _job(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
    spec.setdefault("parallelism", 1)
    spec.setdefault("backoffLimit", 6)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    _template(obj)


@defaults("batch", "CronJob")
def _cronjob(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("concurrencyPolicy", "Allow")
    spec.setdefault("suspend", False)
    spec.setdefault("successfulJobsHistoryLimit", 3)
    spec.setdefault("failedJobsHistoryLimit", 1)
    job_spec = spec.setdefault("jobTemplate", {}).setdefault("spec", {})
    pod_spec(job_spec.setdefault("template", {}).setdefault("spec", {}))
