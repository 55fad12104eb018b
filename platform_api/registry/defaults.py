"""Defaulting of the built-in kinds, as kube's SetDefaults_* functions do it.

Applied to every object a write would store (create, update, the result of a patch),
before validation, so what clients read back is what kube would have stored.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

from platform_api.codec.goshape import type_claim_templates
from platform_api.registry.imagerefs import pull_policy
from platform_api.registry.jobselector import default_job_labels
from platform_api.registry.lbstatus import default_ip_modes
from platform_api.registry.podprojections import default_selectors
from platform_api.registry.podqos import default_pod_level_requests
from platform_api.registry.podvolumes import default_volumes
from platform_api.registry.pvsources import default_sources
from platform_api.registry.servicetypes import externally_accessible, load_balancer

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
    container.setdefault("imagePullPolicy", pull_policy(container.get("image", "")))
    container.setdefault("terminationMessagePath", "/dev/termination-log")
    container.setdefault("terminationMessagePolicy", "File")
    container.setdefault("resources", {})
    _ports(container.get("ports") or [])
    for key in ("livenessProbe", "readinessProbe", "startupProbe"):
        if isinstance(container.get(key), dict):
            _probe(container[key])
    for var in container.get("env") or []:
        default_selectors(var.get("valueFrom"))


CLIENT_IP_AFFINITY = 10800  # seconds: v1.DefaultClientIPServiceAffinitySeconds
_PROBE_DEFAULTS: tuple[tuple[str, int], ...] = (("timeoutSeconds", 1), ("periodSeconds", 10))
_PROBE_DEFAULTS += (("successThreshold", 1), ("failureThreshold", 3))


def _probe(probe: Obj) -> None:
    """SetDefaults_Probe and SetDefaults_HTTPGetAction: a zero counts as unset."""
    for key, value in _PROBE_DEFAULTS:
        if not probe.get(key):
            probe[key] = value
    get = probe.get("httpGet")
    if isinstance(get, dict):
        get["path"] = get.get("path") or "/"
        get["scheme"] = get.get("scheme") or "HTTP"


def pod_spec(spec: Obj) -> None:
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", "default-scheduler")
    default_volumes(spec.get("volumes") or [])
    for key in ("containers", "initContainers", "ephemeralContainers"):
        for container in spec.get(key) or []:
            _container(container)
            if spec.get("hostNetwork"):  # the container's port is the host's
                for port in container.get("ports") or []:
                    if not port.get("hostPort") and port.get("containerPort"):
                        port["hostPort"] = port["containerPort"]


def _requests_from_limits(spec: Obj) -> None:
    """SetDefaults_Pod (Pods only, not templates): a limit without a request is both."""
    for key in ("containers", "initContainers"):
        for container in spec.get(key) or []:
            resources = container.get("resources") or {}
            limits = resources.get("limits")
            if isinstance(limits, dict) and limits:
                requests = resources.setdefault("requests", {})
                for name, value in limits.items():
                    requests.setdefault(name, value)


def _template(obj: Obj) -> None:
    template = obj.setdefault("spec", {}).setdefault("template", {})
    pod_spec(template.setdefault("spec", {}))


@defaults("", "Pod")
def _pod(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    pod_spec(spec)
    spec.setdefault("enableServiceLinks", True)  # SetDefaults_Pod: Pods only, not templates
    _requests_from_limits(spec)
    default_pod_level_requests(spec)
    # The ServiceAccount and Priority admission plugins fill the account and priority;
    # v1 mirrors the account into the deprecated field, as kube's conversion does.
    if spec.get("serviceAccountName"):
        spec["serviceAccount"] = spec["serviceAccountName"]
    grace = spec.get("terminationGracePeriodSeconds")
    if type(grace) is int and grace < 0:
        spec["terminationGracePeriodSeconds"] = 1  # kube's v1 Pod conversion, not templates'
    _pod_ips(obj.get("status"))


def _pod_ips(status: object) -> None:
    """kube's PodStatus conversions: ``podIP`` is authoritative (older kubelets write
    only it), so ``podIPs`` starts with it; read back, ``podIP`` is ``podIPs[0]``."""
    if not isinstance(status, dict):
        return
    single, ips = status.get("podIP"), status.get("podIPs")
    if isinstance(single, str) and single:
        first = ips[0] if isinstance(ips, list) and ips else None
        if not isinstance(first, dict) or first.get("ip") != single:
            status["podIPs"] = [{"ip": single}]
    elif isinstance(ips, list) and ips and isinstance(ips[0], dict) and ips[0].get("ip"):
        status["podIP"] = ips[0]["ip"]


@defaults("", "Service")
def _service(obj: Obj) -> None:
    default_ip_modes(obj)
    spec = obj.setdefault("spec", {})
    spec.setdefault("type", "ClusterIP")
    if not spec.get("sessionAffinity"):
        spec["sessionAffinity"] = "None"
    if spec["sessionAffinity"] == "None":
        spec.pop("sessionAffinityConfig", None)
    elif spec["sessionAffinity"] == "ClientIP":
        client = (spec.get("sessionAffinityConfig") or {}).get("clientIP")
        if not isinstance(client, dict) or client.get("timeoutSeconds") is None:
            spec["sessionAffinityConfig"] = {"clientIP": {"timeoutSeconds": CLIENT_IP_AFFINITY}}
    if spec["type"] != "ExternalName":
        spec.setdefault("internalTrafficPolicy", "Cluster")
    for port in spec.get("ports") or []:
        port.setdefault("protocol", "TCP")
        if not port.get("targetPort"):  # absent, 0 or "": the port itself
            port["targetPort"] = port.get("port", 0)
    if externally_accessible(spec) and not spec.get("externalTrafficPolicy"):
        spec["externalTrafficPolicy"] = "Cluster"
    if load_balancer(spec) and spec.get("allocateLoadBalancerNodePorts") is None:
        spec["allocateLoadBalancerNodePorts"] = True


@defaults("", "Secret")
def _secret(obj: Obj) -> None:
    """``stringData`` is write-only: kube's decoding (its v1 to internal conversion)
    writes its entries over ``data``, base64-encoded, so admission, managedFields and
    validation see them there and never see ``stringData``."""
    obj.setdefault("type", "Opaque")
    string_data = obj.pop("stringData", None)
    if string_data:
        data = obj.get("data")
        if not isinstance(data, dict):
            data = obj["data"] = {}
        for key, value in string_data.items():
            data[key] = base64.b64encode(str(value).encode()).decode()


@defaults("", "PersistentVolumeClaim")
def _pvc(obj: Obj) -> None:
    obj.setdefault("spec", {}).setdefault("volumeMode", "Filesystem")
    _pending(obj)


def _pending(obj: Obj) -> None:
    """A claim's or volume's status decodes with phase Pending when it has none: a
    status write that leaves it out stores Pending, as kube's."""
    status = obj.get("status")
    if isinstance(status, dict) and not status.get("phase"):
        status["phase"] = "Pending"


@defaults("", "PersistentVolume")
def _pv(obj: Obj) -> None:
    """SetDefaults_PersistentVolume: Retain and Filesystem, and the status's phase."""
    _pending(obj)
    spec = obj.setdefault("spec", {})
    if not spec.get("persistentVolumeReclaimPolicy"):
        spec["persistentVolumeReclaimPolicy"] = "Retain"
    spec.setdefault("volumeMode", "Filesystem")
    default_sources(spec)


@defaults("", "PodTemplate")
def _pod_template(obj: Obj) -> None:
    template = obj.setdefault("template", {})
    template.setdefault("metadata", {})  # ObjectMeta, held by value: Go always writes it
    pod_spec(template.setdefault("spec", {}))


@defaults("", "ReplicationController")
def _rc(obj: Obj) -> None:
    """SetDefaults_ReplicationController: the selector and the controller's labels from
    the template's when empty; the template is a pointer, so none is added."""
    spec = obj.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    template = spec.get("template")
    if not isinstance(template, dict):
        return
    pod_spec(template.setdefault("spec", {}))
    labels = (template.get("metadata") or {}).get("labels")
    if labels is not None:
        if not spec.get("selector"):
            spec["selector"] = dict(labels)
        meta = obj.setdefault("metadata", {})
        if not meta.get("labels"):
            meta["labels"] = dict(labels)


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
    type_claim_templates(obj)
    for claim in spec.get("volumeClaimTemplates") or []:
        if not isinstance(claim, dict):
            continue
        _pvc(claim)  # the claim defaults apply to a template as to a claim
        if not isinstance(claim.get("status"), dict):
            claim["status"] = {}
        claim["status"].setdefault("phase", "Pending")


@defaults("apps", "DaemonSet")
def _daemonset(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    strategy = spec.setdefault("updateStrategy", {})
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        rolling = strategy.setdefault("rollingUpdate", {})
        rolling.setdefault("maxUnavailable", 1)
        rolling.setdefault("maxSurge", 0)
    elif isinstance(strategy.get("rollingUpdate"), dict):
        # the internal RollingUpdateDaemonSet holds both as values, not pointers: kube's
        # round trip through it writes 0 for each one unset (an OnDelete set's too)
        strategy["rollingUpdate"].setdefault("maxUnavailable", 0)
        strategy["rollingUpdate"].setdefault("maxSurge", 0)
    spec.setdefault("revisionHistoryLimit", 10)
    _template(obj)
    # kube's internal DaemonSet keeps the template generation as a field its v1 form
    # always writes as this annotation ("0" until the strategy sets it): the writer's
    # fields include it, as kube's managedFields do.
    meta = obj.setdefault("metadata", {})
    if not isinstance(meta.get("annotations"), dict):
        meta["annotations"] = {}
    meta["annotations"].setdefault("deprecated.daemonset.template.generation", "0")


@defaults("batch", "Job")
def _job(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
    spec.setdefault("parallelism", 1)
    # With a per-index limit, the global one is off unless set (kube: MaxInt32).
    spec.setdefault(
        "backoffLimit", 2**31 - 1 if spec.get("backoffLimitPerIndex") is not None else 6
    )
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    spec.setdefault("manualSelector", False)
    # Pods are replaced once failed when a failure policy decides, else once terminating.
    policy = "Failed" if spec.get("podFailurePolicy") else "TerminatingOrFailed"
    spec.setdefault("podReplacementPolicy", policy)
    _failure_patterns(spec)
    _template(obj)
    default_job_labels(obj)


def _failure_patterns(job_spec: Obj) -> None:
    """SetDefaults_PodFailurePolicyOnPodConditionsPattern: a pattern's status is True."""
    policy = job_spec.get("podFailurePolicy")
    for rule in (policy.get("rules") or []) if isinstance(policy, dict) else []:
        for pattern in (rule.get("onPodConditions") or []) if isinstance(rule, dict) else []:
            if isinstance(pattern, dict) and not pattern.get("status"):
                pattern["status"] = "True"


@defaults("batch", "CronJob")
def _cronjob(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("concurrencyPolicy", "Allow")
    spec.setdefault("suspend", False)
    spec.setdefault("successfulJobsHistoryLimit", 3)
    spec.setdefault("failedJobsHistoryLimit", 1)
    job_spec = spec.setdefault("jobTemplate", {}).setdefault("spec", {})
    _failure_patterns(job_spec)
    pod_spec(job_spec.setdefault("template", {}).setdefault("spec", {}))


@defaults("scheduling.platform.io", "PriorityClass")
def _priority_class(obj: Obj) -> None:
    obj.setdefault("preemptionPolicy", "PreemptLowerPriority")
