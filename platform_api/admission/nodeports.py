"""Service node ports from the node-port range (kube's node-port allocator, which kube
runs in the Service store; here beside the cluster-IP allocation).

A NodePort Service, or a LoadBalancer one that allocates node ports, gets a random free
port for each port that names none (on create, the ports of one number share one, as
53/TCP and 53/UDP do); a LoadBalancer with ``externalTrafficPolicy: Local`` also gets a
``healthCheckNodePort``.  A port asked for outside the range, or that another Service
(or another port of this one) holds, is refused alone, before the Service is validated,
as kube's allocator refuses it (its dry runs take any).  On update, ports the body
leaves out keep their node ports (matched by name), and a Service turned into a type
without node ports loses the ones it did not change, as kube's update does.  Ports in
use are read from the Services that exist, plus those handed out moments ago, as for
cluster IPs; the Services' ports are kept from the watch hub's events (kube keeps a
bitmap), so a create does not read every Service.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from platform_api import errors
from platform_api.admission.allocation import Holds, Owner, Share, pick_free
from platform_api.admission.interface import Attributes
from platform_api.registry.servicetypes import needs_health_check
from platform_api.storage.interface import DELETED, Event, ListOptions, Storage, readable
from platform_api.storage.watch import WatchHub
from platform_api.validation import field

Obj = dict[str, Any]
ALLOCATED = "provided port is already allocated"
HOLD = 10.0  # seconds a handed-out port waits for its Service to be stored


Used = Callable[[int], bool]


def _has_node_ports(spec: Obj) -> bool:
    """A type whose ports may hold node ports (kube allocates them for NodePort and
    LoadBalancer; one that allocates none keeps those it asks for)."""
    return (spec.get("type") or "ClusterIP") in ("NodePort", "LoadBalancer")


def needs_node_ports(spec: Obj) -> bool:
    kind = spec.get("type") or "ClusterIP"
    return kind == "NodePort" or (
        kind == "LoadBalancer" and spec.get("allocateLoadBalancerNodePorts") is not False
    )


class NodePortAllocation:
    name = "ServiceNodePortAllocation"
    resources = frozenset({("", "services")})
    allocates = True  # after the webhooks and policies, as kube's Service store does

    def __init__(
        self,
        storage: Storage,
        hub: WatchHub,
        services_prefix: bytes,
        ports: tuple[int, int],  # --service-node-port-range
        share: Share = (0, 1),
    ) -> None:
        self._ports = PortsInUse(storage, hub, services_prefix)
        self._share = share
        self._holds = Holds(HOLD)
        self.range = ports

    def admit(self, attrs: Attributes, obj: Obj | None, old: Obj | None) -> None:
        rt = attrs.resource
        if rt.group or rt.plural != "services":
            return
        if attrs.operation == "DELETE" and not attrs.dry_run:
            self._holds.release((attrs.namespace, attrs.name))  # free once it is gone
        if attrs.operation not in ("CREATE", "UPDATE"):
            return
        if obj is None or attrs.subresource or not isinstance(obj.get("spec"), dict):
            return
        spec = obj["spec"]
        ports = [p for p in spec.get("ports") or [] if isinstance(p, dict)]
        old_spec = (old or {}).get("spec") or {}
        if old is not None:
            _keep_allocated(old_spec, spec, ports)
        if not (_has_node_ports(spec) or needs_health_check(spec)):
            return  # a ClusterIP Service: no other Service's ports to read
        used = self._in_use(attrs)
        taken: set[int] = set()  # the node ports this Service holds now
        if _has_node_ports(spec):
            if old is None:
                self._create_ports(attrs, spec, ports, used, taken)
            else:
                self._update_ports(attrs, spec, ports, used, taken)
        if needs_health_check(spec) and not spec.get("healthCheckNodePort"):
            spec["healthCheckNodePort"] = self._free(lambda n: used(n) or n in taken)
        if not attrs.dry_run:
            mine = [*taken, spec.get("healthCheckNodePort")]
            self._holds.hold(
                [n for n in mine if isinstance(n, int) and n], (attrs.namespace, attrs.name)
            )

    def _create_ports(
        self, attrs: Attributes, spec: Obj, ports: list[Obj], used: Used, taken: set[int]
    ) -> None:
        """kube's initNodePorts: the ports of one number share one node port (53/TCP and
        53/UDP), the one a port of that number asks for, else a free one; a port asking
        for a node port this Service already took for another number is refused.  A
        LoadBalancer that allocates none still gets the ports it asks for."""
        by_number: dict[Any, Any] = {}
        for i, port in enumerate(ports):
            if not port.get("nodePort") and not needs_node_ports(spec):
                continue
            number = port.get("port")
            if number not in by_number:
                asked = next(
                    (p["nodePort"] for p in ports if p.get("port") == number and p.get("nodePort")),
                    None,
                )
                port["nodePort"] = by_number[number] = self._claim(attrs, asked, i, used, taken)
            elif not port.get("nodePort"):
                port["nodePort"] = by_number[number]
            elif port["nodePort"] != by_number[number]:
                port["nodePort"] = self._claim(attrs, port["nodePort"], i, used, taken)

    def _update_ports(
        self, attrs: Attributes, spec: Obj, ports: list[Obj], used: Used, taken: set[int]
    ) -> None:
        """kube's updateNodePorts: each port its own node port (one it asks for, or a free
        one); two ports of one protocol on one node port are kube's plain 500."""
        seen: set[tuple[str, Any]] = set()
        for i, port in enumerate(ports):
            if not port.get("nodePort") and not needs_node_ports(spec):
                continue
            asked = port.get("nodePort")
            if not asked or asked not in taken:
                port["nodePort"] = self._claim(attrs, asked, i, used, taken)
            key = (port.get("protocol") or "TCP", port["nodePort"])
            if key in seen:
                raise errors.StatusError(500, "", f"duplicate nodePort: {{{key[0]} {key[1]}}}")
            seen.add(key)

    def _claim(self, attrs: Attributes, wanted: Any, i: int, used: Used, taken: set[int]) -> Any:
        """The node port ``wanted`` (a free one for none), refused where it is outside the
        range or another Service, or another port of this one, holds it."""
        if not wanted:
            wanted = self._free(lambda n: used(n) or n in taken)
        elif not isinstance(wanted, int):
            return wanted  # the decoder refuses it
        elif not self.range[0] <= wanted <= self.range[1]:
            if attrs.dry_run:
                return wanted  # kube's dry-run allocator takes any port
            low, high = self.range
            why = (
                f"provided port is not in the valid range. The range of valid ports is {low}-{high}"
            )
            error = field.invalid(f"spec.ports[{i}].nodePort", wanted, why)
            raise errors.invalid("Service", "", attrs.name, [error])
        elif used(wanted) or wanted in taken:
            error = field.invalid(f"spec.ports[{i}].nodePort", wanted, ALLOCATED)
            raise errors.invalid("Service", "", attrs.name, [error])
        taken.add(wanted)
        return wanted

    def _in_use(self, attrs: Attributes) -> Callable[[int], bool]:
        """Whether another Service holds a node port, or it was just handed out to one
        (this Service's own ports are its to keep)."""
        me = (attrs.namespace, attrs.name)
        by_owner, counts = self._ports.current()
        mine = by_owner.get(me, frozenset())
        pending = self._holds.pending(me, by_owner)
        return lambda port: counts.get(port, 0) > (port in mine) or port in pending

    def _free(self, used: Callable[[int], bool]) -> int:
        """A random free port above the static band, else within it (kube's
        ServiceNodePortStaticSubrange: the lowest ports are left for Services that name
        one, so a port picked from there rarely meets a random one)."""
        low, high = self.range
        size = high - low + 1
        offset = pick_free(size, lambda o: used(low + o), self._share, static_band(size))
        if offset is None:
            raise errors.internal_error("failed to allocate a nodePort: range is full")
        return low + offset


def static_band(size: int) -> int:
    """kube's ``calculateRangeOffset`` for port ranges: min(max(16, size/32), 128), none
    for a range of 16 ports or fewer (30000-30085 of the default range)."""
    if size <= 16:
        return 0
    return min(max(16, size // 32), 128)


class PortsInUse:
    """Every Service's node ports (its health check's too) and how many Services hold
    each, kept from the hub's events once first asked for; each read first takes in what
    storage holds beyond them (own commits of this turn, other workers' and replicas'), so
    it is as current as a list of the Services."""

    def __init__(self, storage: Storage, hub: WatchHub, prefix: bytes) -> None:
        self._storage, self._hub, self.prefix = storage, hub, prefix
        self._by_owner: dict[Owner, frozenset[int]] | None = None
        self._counts: Counter[int] = Counter()
        self._revision = 0

    def current(self) -> tuple[dict[Owner, frozenset[int]], Counter[int]]:
        if self._by_owner is None:
            self._by_owner = {}
            self._hub.subscribe(self, under=(self.prefix,))
            self._revision = self._storage.current_revision()
            listed = self._storage.get_list(self.prefix, ListOptions(revision=self._revision))
            for item in readable(listed.items):
                self._put(item.object, False)
        else:
            self._hub.take_in()
        return self._by_owner, self._counts

    def deliver(self, events: list[Event]) -> None:
        for event in events:
            if event.revision <= self._revision or not event.key.startswith(self.prefix):
                continue
            self._revision = event.revision
            if event.stored is not None:
                self._put(event.stored.object, event.type == DELETED)

    def _put(self, svc: Obj, deleted: bool) -> None:
        meta, spec = svc.get("metadata", {}), svc.get("spec", {})
        owner = (meta.get("namespace", ""), meta.get("name", ""))
        ports = {p.get("nodePort") for p in spec.get("ports") or [] if p.get("nodePort")}
        if spec.get("healthCheckNodePort"):
            ports.add(spec["healthCheckNodePort"])
        assert self._by_owner is not None
        self._counts.subtract(self._by_owner.pop(owner, ()))
        if not deleted:
            self._by_owner[owner] = frozenset(ports)
            self._counts.update(ports)


def _node_port_set(ports: list[Obj]) -> set[Any]:
    return {p["nodePort"] for p in ports if p.get("nodePort")}


def _keep_allocated(old: Obj, new: Obj, ports: list[Obj]) -> None:
    """kube's update: node ports the body leaves out stay (by port name) unless another
    port took them; a type that holds none drops those the body did not change."""
    old_ports = [p for p in old.get("ports") or [] if isinstance(p, dict)]
    if needs_node_ports(old) and needs_node_ports(new):
        mine = {p.get("nodePort") for p in ports if p.get("nodePort")}
        kept = {p.get("name", ""): p.get("nodePort") for p in old_ports}
        for port in ports:
            previous = kept.get(port.get("name", ""))
            if not port.get("nodePort") and previous and previous not in mine:
                port["nodePort"] = previous
    # the drop asks only the type (kube's dropTypeDependentFields): a LoadBalancer that
    # stops allocating keeps its node ports until the body removes them; the body kept
    # them when it holds no node port the old ports did not, on whichever ports
    # (kube's sameNodePorts: adding, removing or changing ports is fine)
    same = _node_port_set(ports) <= _node_port_set(old_ports)
    if _has_node_ports(old) and not _has_node_ports(new) and same:
        for port in ports:
            port.pop("nodePort", None)
    if needs_health_check(old) and needs_health_check(new):
        if not new.get("healthCheckNodePort"):
            new["healthCheckNodePort"] = old.get("healthCheckNodePort")
    elif needs_health_check(old) and new.get("healthCheckNodePort") == old.get(
        "healthCheckNodePort"
    ):
        new.pop("healthCheckNodePort", None)
