"""kube's endpoints-controller: a Service with a selector gets Endpoints of its pods.

Every pod the selector takes that has an IP of the Service's first family, is not
finished, and is not being deleted (unless the Service publishes not-ready addresses)
becomes an address (ready when the pod is Ready, or always with
``publishNotReadyAddresses``) on each Service port the pod has (a named target port is
looked up in the pod's containers); the subsets are repacked to kube's canonical form.
The Endpoints carry the Service's labels, ``endpoints.kubernetes.io/managed-by:
endpoint-controller`` and the headless label, and at most 1000 addresses (then
``endpoints.kubernetes.io/over-capacity: truncated``).  A Service without a selector is
left to its user; a deleted Service takes its Endpoints with it.  kube's
``last-change-trigger-time`` annotation is not written (it measures kube's own
pipeline's latency).
"""

from __future__ import annotations

import math
from typing import Any

from platform_api import errors
from platform_api.controllers.base import current_object
from platform_api.controllers.endpointsubsets import TRIGGER_TIME, canonical, repack_subsets
from platform_api.controllers.podendpoints import (
    HEADLESS,
    Key,
    ServicePodsController,
    find_port,
    headless,
    pod_ips,
    pod_ready,
    selects_pods,
    service_families,
    set_hostname,
    should_be_in_endpoints,
    target_ref,
)
from platform_api.registry.store import Store
from platform_api.storage.interface import DELETED, Event

Obj = dict[str, Any]
MANAGED_BY = "endpoints.kubernetes.io/managed-by"
CONTROLLER_NAME = "endpoint-controller"
OVER_CAPACITY = "endpoints.kubernetes.io/over-capacity"
MAX_CAPACITY = 1000


def desired_subsets(service: Obj, pods: list[Obj]) -> list[Obj]:
    spec = service.get("spec") or {}
    publish = bool(spec.get("publishNotReadyAddresses"))
    family = service_families(service)[0]
    subsets: list[Obj] = []
    for pod in pods:
        if not should_be_in_endpoints(pod, publish):
            continue
        ips = [ip for ip, fam in pod_ips(pod) if fam == family]
        if not ips:
            continue
        address: Obj = {"ip": ips[0], "targetRef": target_ref(pod)}
        node = (pod.get("spec") or {}).get("nodeName")
        if node:  # kube points at the (empty) name; an empty name is no valid node name
            address["nodeName"] = node
        if set_hostname(pod, service):
            address["hostname"] = pod["spec"]["hostname"]
        field = "addresses" if publish or pod_ready(pod) else "notReadyAddresses"
        ports = spec.get("ports") or []
        if not ports and headless(service):
            subsets.append({field: [address]})
        for port in ports:
            number = find_port(pod, port)
            if number is None:
                continue
            subsets.append({field: [address], "ports": [_endpoint_port(port, number)]})
    return repack_subsets(subsets)


def _endpoint_port(port: Obj, number: int) -> Obj:
    out = {
        "name": port.get("name") or "",
        "port": number,
        "protocol": port.get("protocol") or "TCP",
    }
    if port.get("appProtocol") is not None:
        out["appProtocol"] = port["appProtocol"]
    return out


def truncate(subsets: list[Obj]) -> bool:
    """kube's truncateEndpoints: at most 1000 addresses, not-ready ones dropped first,
    each subset keeping its share."""
    ready = sum(len(s.get("addresses") or []) for s in subsets)
    not_ready = sum(len(s.get("notReadyAddresses") or []) for s in subsets)
    if ready + not_ready <= MAX_CAPACITY:
        return False
    cut_ready = ready > MAX_CAPACITY
    room = MAX_CAPACITY if cut_ready else MAX_CAPACITY - ready
    total = ready if cut_ready else not_ready
    left = room
    for subset in subsets:
        field = "addresses" if cut_ready else "notReadyAddresses"
        have = subset.get(field) or []
        take = min(math.ceil(len(have) / total * room), left)
        subset[field] = have[:take]
        if cut_ready:
            subset["notReadyAddresses"] = []
        left -= len(subset[field])
    return True


def labels_for(service: Obj) -> dict[str, str]:
    labels = dict((service.get("metadata") or {}).get("labels") or {})
    labels.pop(HEADLESS, None)
    if headless(service):
        labels[HEADLESS] = ""
    labels[MANAGED_BY] = CONTROLLER_NAME
    return labels


class EndpointsController(ServicePodsController):
    """Keys are (namespace, name) of Services."""

    name = "endpoints-controller"

    def __init__(self, services: Store, pods: Store, endpoints: Store, *args: Any) -> None:
        super().__init__(services, pods, *args)
        self.endpoints = endpoints

    def watched(self) -> tuple[bytes, ...]:
        return (*super().watched(), self.endpoints.prefix)

    def observe(self, event: Event) -> None:
        if self.route(event):
            return
        if event.key.startswith(self.endpoints.prefix) and event.type == DELETED:
            meta = event.prev.object["metadata"] if event.prev is not None else {}
            self.enqueue((meta.get("namespace", ""), meta.get("name", "")))

    async def reconcile(self, key: Key) -> float | None:
        namespace, name = key
        service = self.service(key)
        if service is None:
            await errors.tolerating(self.endpoints.delete(namespace, name), 404)
            return None
        if not selects_pods(service):
            return None
        subsets = desired_subsets(service, self.selected(service))
        current = current_object(self.endpoints, namespace, name)
        if current is not None and self._current(current, service, subsets):
            return None
        await self._write(namespace, name, service, subsets, current)
        return None

    @staticmethod
    def _current(current: Obj, service: Obj, subsets: list[Obj]) -> bool:
        have = current.get("subsets") or []
        annotations = (current.get("metadata") or {}).get("annotations") or {}
        count = sum(
            len(s.get("addresses") or []) + len(s.get("notReadyAddresses") or []) for s in have
        )
        capacity_ok = count <= MAX_CAPACITY and OVER_CAPACITY not in annotations
        same = canonical(have) == canonical(subsets) or canonical(
            repack_subsets(have)
        ) == canonical(subsets)
        labels = (current.get("metadata") or {}).get("labels") or {}
        return same and labels == labels_for(service) and capacity_ok

    async def _write(
        self, namespace: str, name: str, service: Obj, subsets: list[Obj], current: Obj | None
    ) -> None:
        annotations = dict(((current or {}).get("metadata") or {}).get("annotations") or {})
        annotations.pop(TRIGGER_TIME, None)
        if truncate(subsets):
            annotations[OVER_CAPACITY] = "truncated"
        else:
            annotations.pop(OVER_CAPACITY, None)
        metadata: Obj = {"name": name, "namespace": namespace, "labels": labels_for(service)}
        if annotations:
            metadata["annotations"] = annotations
        body: Obj = {"apiVersion": "v1", "kind": "Endpoints", "metadata": metadata}
        if subsets:
            body["subsets"] = subsets
        if current is None:
            await errors.tolerating(self.endpoints.create(namespace, body), 403, 409)
            return

        def replace(existing: Obj | None) -> Obj:
            assert existing is not None
            kept = {
                k: v for k, v in existing["metadata"].items() if k not in ("labels", "annotations")
            }
            body["metadata"] = {**kept, **metadata}
            if not annotations:
                body["metadata"].pop("annotations", None)
            return body

        await errors.tolerating(self.endpoints.update(namespace, name, replace), 404, 409)
