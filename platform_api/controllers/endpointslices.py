"""kube's endpointslice-controller: a Service with a selector gets EndpointSlices of its pods.

For each address family of the Service, every selected pod that has an IP, is not
finished, and runs on a Node that exists (or any pod, with ``publishNotReadyAddresses``)
becomes an endpoint: its IPs of that family, ``ready`` (Ready and not terminating, or
always with ``publishNotReadyAddresses``), ``serving`` (Ready), ``terminating`` (being
deleted), node name, the node's ``topology.kubernetes.io/zone``, hostname and pod
reference.  Endpoints are grouped by the ports the pod has for the Service's ports, at
most 100 a slice.  Slices carry the Service's labels, ``kubernetes.io/service-name``,
``endpointslice.kubernetes.io/managed-by: endpointslice-controller.k8s.io`` and the
headless label, and are owned by the Service; a family with no endpoints keeps one empty
placeholder slice, as kube's does.  Slices are filled in order and rewritten only when
what they should hold changed (kube's packing, which minimises rewrites under churn, is
not reproduced: the slices hold the same endpoints, possibly grouped differently).
"""

from __future__ import annotations

from typing import Any

from platform_api import errors
from platform_api.controllers.endpointsubsets import (
    MANAGED_BY,
    SERVICE_NAME,
    canonical,
    controller_ref,
    slice_ports_key,
)
from platform_api.controllers.podendpoints import (
    HEADLESS,
    Key,
    ServicePodsController,
    find_port,
    headless,
    pod_ips,
    pod_ready,
    selects,
    selects_pods,
    service_families,
    set_hostname,
    should_be_in_endpoints,
    target_ref,
)
from platform_api.registry.store import Store
from platform_api.storage.interface import DELETED, Event, ListOptions

Obj = dict[str, Any]
CONTROLLER_NAME = "endpointslice-controller.k8s.io"
ZONE = "topology.kubernetes.io/zone"
MAX_PER_SLICE = 100
Group = tuple[str, bytes]  # (address type, port key)


def slice_ports(service: Obj, pod: Obj) -> list[Obj]:
    spec = service.get("spec") or {}
    out = []
    for port in spec.get("ports") or []:
        number = find_port(pod, port)
        if number is None:
            continue
        entry = {
            "name": port.get("name") or "",
            "port": number,
            "protocol": port.get("protocol") or "TCP",
        }
        if port.get("appProtocol") is not None:
            entry["appProtocol"] = port["appProtocol"]
        out.append(entry)
    return out


def pod_endpoint(pod: Obj, node: Obj | None, service: Obj, family: str) -> Obj:
    publish = bool((service.get("spec") or {}).get("publishNotReadyAddresses"))
    serving = pod_ready(pod)
    terminating = bool((pod.get("metadata") or {}).get("deletionTimestamp"))
    endpoint: Obj = {
        "addresses": [ip for ip, fam in pod_ips(pod) if fam == family],
        "conditions": {
            "ready": publish or (serving and not terminating),
            "serving": serving,
            "terminating": terminating,
        },
        "targetRef": target_ref(pod),
    }
    node_name = (pod.get("spec") or {}).get("nodeName")
    if node_name:
        endpoint["nodeName"] = node_name
    zone = ((node or {}).get("metadata") or {}).get("labels", {}).get(ZONE)
    if zone:
        endpoint["zone"] = zone
    if set_hostname(pod, service):
        endpoint["hostname"] = pod["spec"]["hostname"]
    return endpoint


def slice_labels(service: Obj) -> dict[str, str]:
    reserved = (SERVICE_NAME, MANAGED_BY, HEADLESS)
    labels = {
        k: v
        for k, v in ((service.get("metadata") or {}).get("labels") or {}).items()
        if k not in reserved
    }
    if headless(service):
        labels[HEADLESS] = ""
    labels[SERVICE_NAME] = service["metadata"]["name"]
    labels[MANAGED_BY] = CONTROLLER_NAME
    return labels


class EndpointSliceController(ServicePodsController):
    """Keys are (namespace, name) of Services."""

    name = "endpointslice-controller"

    def __init__(
        self, services: Store, pods: Store, nodes: Store, slices: Store, *args: Any
    ) -> None:
        super().__init__(services, pods, *args)
        self.nodes, self.slices = nodes, slices
        # (namespace, Service name) -> slice name -> our slice: kube's lister (a list
        # from storage per sync decoded the namespace's every slice).
        self.slice_index: dict[Key, dict[str, Obj]] = {}
        self.slices_revision = 0

    def watched(self) -> tuple[bytes, ...]:
        return (*super().watched(), self.slices.prefix, self.nodes.prefix)

    def resync(self) -> None:
        listed = self.slices.list("", ListOptions())
        self.slice_index.clear()
        for stored in listed.items:
            self._index(stored.object, present=True)
        self.slices_revision = listed.revision
        super().resync()

    def observe(self, event: Event) -> None:
        if self.route(event):
            return
        if event.key.startswith(self.slices.prefix):
            if event.revision <= self.slices_revision:
                return  # the resync's list had it
            for stored, present in ((event.prev, False), (event.stored, event.type != DELETED)):
                if stored is not None and self._index(stored.object, present):
                    meta = stored.object["metadata"]
                    labels = meta.get("labels") or {}
                    self.enqueue((meta.get("namespace", ""), labels.get(SERVICE_NAME, "")))
        elif event.key.startswith(self.nodes.prefix):
            self._node_changed(event)

    def _index(self, slice_: Obj, present: bool) -> bool:
        """Add or drop one of our slices in the by-Service index; False for others'."""
        meta = slice_["metadata"]
        labels = meta.get("labels") or {}
        if labels.get(MANAGED_BY) != CONTROLLER_NAME:
            return False
        key = (meta.get("namespace", ""), labels.get(SERVICE_NAME, ""))
        held = self.slice_index.setdefault(key, {})
        if present:
            held[meta["name"]] = slice_
        else:
            held.pop(meta["name"], None)
        return True

    def _node_changed(self, event: Event) -> None:
        """A node appearing, going or changing zone changes its pods' endpoints: the
        Services of the pods it runs are synced again."""
        zones = [
            (s.object["metadata"].get("labels") or {}).get(ZONE) if s is not None else None
            for s in (event.prev, event.stored)
        ]
        if event.prev is not None and event.stored is not None and zones[0] == zones[1]:
            return
        node = self.nodes.name_of_key(event.key)
        for namespace, pods in self.pod_index.objects.items():
            on_node = [p for p in pods.values() if (p.get("spec") or {}).get("nodeName") == node]
            for service in self.service_index.in_namespace(namespace) if on_node else ():
                if any(selects(service, p) for p in on_node):
                    self.enqueue((namespace, service["metadata"]["name"]))

    async def reconcile(self, key: Key) -> float | None:
        namespace, name = key
        service = self.service(key)
        if service is None or not selects_pods(service):
            return None  # a deleted Service's slices go with it (owner references)
        existing = self._existing(namespace, name)
        owned = [s for s in existing if _owned_by(s, service)]
        for stray in (s for s in existing if not _owned_by(s, service)):
            await self._delete(stray)
        families = service_families(service)
        for stray in (s for s in owned if s.get("addressType") not in families):
            await self._delete(stray)
        for family in families:
            mine = [s for s in owned if s.get("addressType") == family]
            await self._reconcile(service, family, self._desired(service, family), mine)
        return None

    def _existing(self, namespace: str, name: str) -> list[Obj]:
        """The Service's slices as stored now (kube's lister, with this turn's own writes
        taken in first, as kube's slice tracker keeps a sync from acting on stale ones)."""
        self.hub.take_in()
        held = self.slice_index.get((namespace, name), {})
        return [held[n] for n in sorted(held)]

    def _desired(self, service: Obj, family: str) -> dict[bytes, tuple[list[Obj], list[Obj]]]:
        """port key -> (ports, endpoints sorted by pod name)."""
        publish = bool((service.get("spec") or {}).get("publishNotReadyAddresses"))
        out: dict[bytes, tuple[list[Obj], list[Obj]]] = {}
        nodes: dict[str, Obj | None] = {}  # each Node read once a sync
        for pod in sorted(self.selected(service), key=lambda p: p["metadata"]["name"]):
            if not should_be_in_endpoints(pod, True):
                continue
            node_name = (pod.get("spec") or {}).get("nodeName") or ""
            if node_name not in nodes:
                nodes[node_name] = self._node(node_name)
            node = nodes[node_name]
            if node is None and not publish:
                continue  # kube skips a pod whose Node it cannot find
            ports = slice_ports(service, pod)
            endpoint = pod_endpoint(pod, node, service, family)
            if endpoint["addresses"]:
                out.setdefault(slice_ports_key(ports), (ports, []))[1].append(endpoint)
        return out

    def _node(self, name: str) -> Obj | None:
        if not name:
            return None
        try:
            node: Obj = self.nodes.get("", name).object
            return node
        except errors.StatusError:
            return None

    async def _reconcile(
        self,
        service: Obj,
        family: str,
        desired: dict[bytes, tuple[list[Obj], list[Obj]]],
        mine: list[Obj],
    ) -> None:
        by_ports: dict[bytes, list[Obj]] = {}
        for slice_ in mine:
            by_ports.setdefault(slice_ports_key(slice_.get("ports") or []), []).append(slice_)
        if not desired:  # kube keeps one empty placeholder slice for the family
            desired = {slice_ports_key([]): ([], [])}
        writes: list[tuple[list[Obj], list[Obj], Obj | None]] = []
        unused: list[Obj] = []
        for key, (ports, endpoints) in desired.items():
            have = by_ports.pop(key, [])
            chunks = [
                endpoints[i : i + MAX_PER_SLICE] for i in range(0, len(endpoints), MAX_PER_SLICE)
            ] or [[]]
            for index, chunk in enumerate(chunks):
                writes.append((ports, chunk, have[index] if index < len(have) else None))
            unused.extend(have[len(chunks) :])
        for leftovers in by_ports.values():
            unused.extend(leftovers)
        for ports, chunk, kept in writes:
            target = kept
            if target is None and unused:  # kube turns a delete and a create into an update
                target = {**unused.pop(0), "ports": None}  # rewritten, whatever it held
            await self._write(service, family, ports, chunk, target)
        for slice_ in unused:
            await self._delete(slice_)

    async def _write(
        self, service: Obj, family: str, ports: list[Obj], endpoints: list[Obj], current: Obj | None
    ) -> None:
        meta = service["metadata"]
        namespace = meta.get("namespace", "")
        labels = slice_labels(service)
        if current is not None and _same(current, labels, ports, endpoints):
            return
        body: Obj = {
            "apiVersion": "discovery.platform.io/v1",
            "kind": "EndpointSlice",
            "metadata": {
                "namespace": namespace,
                "labels": labels,
                "ownerReferences": [controller_ref("Service", meta)],
            },
            "addressType": family,
            "endpoints": endpoints,
            "ports": ports,
        }
        if current is None:
            body["metadata"]["generateName"] = meta["name"] + "-"
            await errors.tolerating(self.slices.create(namespace, body), 403, 409)
            return
        name = current["metadata"]["name"]

        def replace(existing: Obj | None) -> Obj:
            assert existing is not None
            body["metadata"].update(
                name=name, resourceVersion=existing["metadata"]["resourceVersion"]
            )
            return body

        await errors.tolerating(self.slices.update(namespace, name, replace), 404, 409)

    async def _delete(self, slice_: Obj) -> None:
        meta = slice_["metadata"]
        await errors.tolerating(self.slices.delete(meta.get("namespace", ""), meta["name"]), 404)


def _same(current: Obj, labels: dict[str, str], ports: list[Obj], endpoints: list[Obj]) -> bool:
    """As kube's Semantic.DeepEqual compares: a null list (how an empty one is stored)
    and an empty one are the same."""
    return (
        (current.get("metadata") or {}).get("labels") == labels
        and slice_ports_key(current.get("ports") or []) == slice_ports_key(ports)
        and canonical(current.get("endpoints") or []) == canonical(endpoints)
    )


def _owned_by(slice_: Obj, service: Obj) -> bool:
    uid = service["metadata"].get("uid")
    refs = (slice_.get("metadata") or {}).get("ownerReferences") or []
    return any(
        r.get("uid") == uid and r.get("kind") == "Service" and r.get("apiVersion") == "v1"
        for r in refs
    )
