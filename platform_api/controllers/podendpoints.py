"""How a Service's selected pods become endpoints (kube's k8s.io/endpointslice util), shared
by the endpoints and endpointslice controllers, and the watch plumbing both need: which
Services a pod or Service event concerns.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from platform_api.controllers.base import Controller, current_object
from platform_api.controllers.endpointsubsets import normalized_ip
from platform_api.controllers.informer import ByNamespace
from platform_api.registry.store import Store
from platform_api.storage.interface import Event

Obj = dict[str, Any]
Key = tuple[str, str]  # (namespace, name) of a Service
HEADLESS = "service.kubernetes.io/headless"
# Pod changes reach a Service's sync this long after the first of them: a burst of pods
# (a scale-up, a node's status) is one sync of the Service, not one per pod.  Each sync
# reads all the Service's pods, so a Service with thousands waits longer: at least
# PAUSE times its last sync's cost, which keeps its syncs to a tenth of the reactor.
POD_BATCH = 0.05
PAUSE = 9.0


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


def _matches(selector: dict[str, str], obj: Obj) -> bool:
    labels = (obj.get("metadata") or {}).get("labels") or {}
    return all(labels.get(k) == v for k, v in selector.items())


def selects(service: Obj, pod: Obj) -> bool:
    """Whether the Service's selector takes the pod (no selector: none)."""
    selector = (service.get("spec") or {}).get("selector")
    return selector is not None and _matches(selector, pod)


class ServicePodsController(Controller):
    """A controller keyed by Service, woken by its Service's and its pods' changes; it
    reads both from in-memory indexes kept from the hub's events."""

    # What a sync's cost is read with: real time, since it measures work, not the clock a
    # test steps (tests stop it, or a slow machine's costs delay syncs past their steps).
    timer: Callable[[], float] = staticmethod(time.perf_counter)

    def __init__(self, services: Store, pods: Store, *args: Any) -> None:
        super().__init__(*args)
        self.services, self.pods = services, pods
        self.service_index, self.pod_index = ByNamespace(services), ByNamespace(pods)
        self.cost: dict[Key, float] = {}  # seconds of CPU a Service's last sync took
        # Service -> (the selector, its pods by name), kept from pod events: a sync reads
        # its own pods, not every pod of the namespace.
        self.members: dict[Key, tuple[dict[str, str], dict[str, Obj]]] = {}

    async def sync(self, key: Key) -> float | None:
        started = self.timer()
        try:
            return await self.reconcile(key)
        finally:
            self.cost[key] = self.timer() - started

    async def reconcile(self, key: Key) -> float | None:
        raise NotImplementedError

    def resync(self) -> None:
        self.members.clear()
        self.pod_index.load()
        for service in self.service_index.load():
            meta = service["metadata"]
            self.enqueue((meta.get("namespace", ""), meta["name"]))

    def watched(self) -> tuple[bytes, ...]:
        return (self.services.prefix, self.pods.prefix)

    def route(self, event: Event) -> bool:
        """Queue the Services a Service or pod event concerns; False for other events."""
        if event.key.startswith(self.services.prefix):
            _, service = self.service_index.apply(event)
            key = (self.services.namespace_of_key(event.key), self.services.name_of_key(event.key))
            if service is None:
                self.members.pop(key, None)
            self.enqueue(key)
            return True
        if not event.key.startswith(self.pods.prefix):
            return False
        old, new = self.pod_index.apply(event)
        if old is None and new is None:
            return True
        namespace = self.pods.namespace_of_key(event.key)
        name = self.pods.name_of_key(event.key)
        for service in self.service_index.in_namespace(namespace):
            selector = (service.get("spec") or {}).get("selector")
            if selector is None:
                continue
            key = (namespace, service["metadata"]["name"])
            now = new is not None and _matches(selector, new)
            self._member(key, selector, name, new if now else None)
            if now or (old is not None and _matches(selector, old)):
                self.enqueue(key, max(POD_BATCH, PAUSE * self.cost.get(key, 0.0)))
        return True

    def _member(self, key: Key, selector: dict[str, str], name: str, pod: Obj | None) -> None:
        held = self.members.get(key)
        if held is None:
            return
        if held[0] != selector:  # the Service changed: the next sync takes its pods afresh
            del self.members[key]
        elif pod is not None:
            held[1][name] = pod
        else:
            held[1].pop(name, None)

    def selected(self, service: Obj) -> list[Obj]:
        """The pods a Service's selector takes, from the index."""
        selector = (service.get("spec") or {}).get("selector") or {}
        meta = service["metadata"]
        key = (meta.get("namespace", ""), meta["name"])
        held = self.members.get(key)
        if held is None or held[0] != selector:
            pods = self.pod_index.in_namespace(key[0])
            taken = {p["metadata"]["name"]: p for p in pods if _matches(selector, p)}
            held = self.members[key] = (dict(selector), taken)
        return list(held[1].values())

    def service(self, key: Key) -> Obj | None:
        """The Service, or None when it is gone."""
        return current_object(self.services, *key)


def selects_pods(service: Obj) -> bool:
    """A Service whose endpoints the controllers manage: a selector, and not ExternalName."""
    spec = service.get("spec") or {}
    return spec.get("type") != "ExternalName" and spec.get("selector") is not None
