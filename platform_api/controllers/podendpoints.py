"""How a Service's selected pods become endpoints (kube's k8s.io/endpointslice util), shared
by the endpoints and endpointslice controllers, and the watch plumbing both need: which
Services a pod or Service event concerns.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from platform_api import errors
from platform_api.controllers.base import Controller
from platform_api.controllers.endpointsubsets import normalized_ip
from platform_api.registry.store import Store
from platform_api.storage.interface import Event, ListOptions

Obj = dict[str, Any]
Key = tuple[str, str]  # (namespace, name) of a Service
HEADLESS = "service.kubernetes.io/headless"


def pod_ready(pod: Obj) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def should_be_in_endpoints(pod: Obj, include_terminating: bool) -> bool:
    """kube's ShouldPodBeInEndpoints: not finished, has an IP, not deleting (unless asked)."""
    status = pod.get("status") or {}
    if status.get("phase") in ("Succeeded", "Failed"):
        return False
    if not status.get("podIP") and not status.get("podIPs"):
        return False
    return include_terminating or not (pod.get("metadata") or {}).get("deletionTimestamp")


def pod_ips(pod: Obj) -> list[tuple[str, str]]:
    """(IP, family) of each of the pod's IPs, as Go prints them."""
    out = []
    for entry in (pod.get("status") or {}).get("podIPs") or []:
        parsed = normalized_ip(entry.get("ip") or "")
        if parsed is not None:
            out.append(parsed)
    return out


def service_families(service: Obj) -> list[str]:
    """The address types a Service's endpoints come in (kube's getAddressTypesForService)."""
    spec = service.get("spec") or {}
    families = [f for f in ("IPv4", "IPv6") if f in (spec.get("ipFamilies") or [])]
    if families:
        return families
    cluster_ip = spec.get("clusterIP") or ""
    if cluster_ip and cluster_ip != "None":
        parsed = normalized_ip(cluster_ip)
        return [parsed[1] if parsed else "IPv4"]
    return ["IPv4", "IPv6"]  # a headless Service without families: both, as kube


def headless(service: Obj) -> bool:
    cluster_ip = (service.get("spec") or {}).get("clusterIP") or ""
    return cluster_ip in ("", "None")


def find_port(pod: Obj, service_port: Obj) -> int | None:
    """The pod's port for a Service port: a number as is, a name looked up in the
    containers (and restartable init containers) with the same protocol."""
    target = service_port.get("targetPort", service_port.get("port"))
    if isinstance(target, int):
        return target
    protocol = service_port.get("protocol") or "TCP"
    spec = pod.get("spec") or {}
    sidecars = [c for c in spec.get("initContainers") or [] if c.get("restartPolicy") == "Always"]
    for container in [*(spec.get("containers") or []), *sidecars]:
        for port in container.get("ports") or []:
            if port.get("name") == target and (port.get("protocol") or "TCP") == protocol:
                return int(port["containerPort"])
    return None


def set_hostname(pod: Obj, service: Obj) -> bool:
    spec, meta = pod.get("spec") or {}, pod.get("metadata") or {}
    smeta = service.get("metadata") or {}
    return (
        bool(spec.get("hostname"))
        and spec.get("subdomain") == smeta.get("name")
        and meta.get("namespace") == smeta.get("namespace")
    )


def target_ref(pod: Obj) -> Obj:
    meta = pod["metadata"]
    return {
        "kind": "Pod",
        "namespace": meta.get("namespace", ""),
        "name": meta["name"],
        "uid": meta.get("uid", ""),
    }


def selected(pods: Store, service: Obj) -> list[Obj]:
    """The pods a Service with a selector selects, in its namespace."""
    selector = (service.get("spec") or {}).get("selector") or {}
    namespace = service["metadata"].get("namespace", "")
    items = pods.list(namespace, ListOptions()).items
    return [
        s.object
        for s in items
        if all(
            ((s.object["metadata"].get("labels") or {}).get(k) == v) for k, v in selector.items()
        )
    ]


def services_for_pod(services: Store, pod: Obj) -> Iterable[Key]:
    """The Services whose selector takes ``pod``'s labels."""
    meta = pod.get("metadata") or {}
    namespace, labels = meta.get("namespace", ""), meta.get("labels") or {}
    for stored in services.list(namespace, ListOptions()).items:
        selector = (stored.object.get("spec") or {}).get("selector")
        if selector is not None and all(labels.get(k) == v for k, v in selector.items()):
            yield namespace, stored.object["metadata"]["name"]


def route(event: Event, services: Store, pods: Store, enqueue: Callable[[Key], None]) -> bool:
    """Queue the Services a Service or pod event concerns; False for other events."""
    if event.key.startswith(services.prefix):
        enqueue((services.namespace_of_key(event.key), services.name_of_key(event.key)))
        return True
    if event.key.startswith(pods.prefix):  # only now decode: most events are neither
        objs = [s.object for s in (event.prev, event.stored) if s is not None]
        keys = {key for obj in objs for key in services_for_pod(services, obj)}
        for key in sorted(keys):
            enqueue(key)
        return True
    return False


class ServicePodsController(Controller):
    """A controller keyed by Service, woken by its Service's and its pods' changes."""

    def __init__(self, services: Store, pods: Store, *args: Any) -> None:
        super().__init__(*args)
        self.services, self.pods = services, pods

    def resync(self) -> None:
        for stored in self.services.list("", ListOptions()).items:
            meta = stored.object["metadata"]
            self.enqueue((meta.get("namespace", ""), meta["name"]))

    def service(self, key: Key) -> Obj | None:
        """The Service, or None when it is gone (a StatusError other than 404 raises)."""
        try:
            found: Obj = self.services.get(*key).object
            return found
        except errors.StatusError as e:
            if e.code != 404:
                raise
            return None


def selects_pods(service: Obj) -> bool:
    """A Service whose endpoints the controllers manage: a selector, and not ExternalName."""
    spec = service.get("spec") or {}
    return spec.get("type") != "ExternalName" and spec.get("selector") is not None
