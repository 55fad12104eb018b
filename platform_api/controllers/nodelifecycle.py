"""node-lifecycle-controller (kube's nodelifecycle Controller): a Node's taints follow its
conditions, and a Node whose kubelet (or kwok, or a test) stops reporting is marked
Unknown.

Every 5 s each Node's health is judged: a Ready heartbeat or a Lease renewal (in the
node-lease namespace) seen within the grace period (50 s; 60 s for a Node that never
reported) keeps it; past it, its Ready, MemoryPressure, DiskPressure and PIDPressure
conditions become Unknown (``NodeStatusUnknown``, "Kubelet stopped posting node status.")
and its pods are marked not Ready.  As kube's, time is this controller's own: what counts
is when a new heartbeat was *seen*, so clocks that disagree do not matter, and a server
that restarts gives every Node a full grace period.

On every change of a Node its NoSchedule taints are set from its conditions (not-ready,
unreachable, memory/disk/pid pressure, network-unavailable) and ``spec.unschedulable``,
which lifts the not-ready taint TaintNodesByCondition put on it at creation once it
reports Ready; its NoExecute not-ready/unreachable taints (with ``timeAdded``) follow its
Ready condition.  Zone-based rate limits and evicting pods that do not tolerate the
NoExecute taints (kube's taint-eviction-controller) are not done here.
"""

from __future__ import annotations

from typing import Any

from platform_api import errors
from platform_api.controllers.base import Controller, current_object, status_condition
from platform_api.controllers.events import EventRecorder
from platform_api.registry.store import Store, resource_prefix
from platform_api.scheme import nodetaints as taints
from platform_api.storage.interface import Event, ListOptions
from platform_api.timestamps import format_timestamp

Obj = dict[str, Any]
MONITOR = "monitor"  # the periodic health pass's key
MONITOR_PERIOD = 5.0  # --node-monitor-period
GRACE_PERIOD = 50.0  # --node-monitor-grace-period
STARTUP_GRACE_PERIOD = 60.0  # --node-startup-grace-period
JUDGED = ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure")


def wanted_taints(node: Obj, now: str, keys: taints.TaintKeys = taints.BRANDED) -> list[Obj]:
    """The controller's taints this Node's conditions call for."""
    out = []
    for type_, by_status in keys.by_condition.items():
        found = status_condition(node, type_)
        key = by_status.get(found.get("status", "")) if found is not None else None
        if key is not None:
            out.append({"key": key, "effect": taints.NO_SCHEDULE})
    if (node.get("spec") or {}).get("unschedulable"):
        out.append({"key": keys.unschedulable, "effect": taints.NO_SCHEDULE})
    ready = status_condition(node, "Ready")
    state = ready.get("status") if ready is not None else None
    if state in ("False", "Unknown"):
        key = keys.not_ready if state == "False" else keys.unreachable
        out.append({"key": key, "effect": taints.NO_EXECUTE, "timeAdded": now})
    return out


# Under either prefix: a server started with --serve-upstream-groups, or no longer,
# replaces what it set under the other one.
_MANAGED = {
    taints.NO_SCHEDULE: taints.BRANDED.all | taints.UPSTREAM.all,
    taints.NO_EXECUTE: frozenset(
        {k.not_ready for k in (taints.BRANDED, taints.UPSTREAM)}
        | {k.unreachable for k in (taints.BRANDED, taints.UPSTREAM)}
    ),
}


def _ours(taint: Obj) -> bool:
    """A taint this controller sets and lifts (others on the Node are left alone)."""
    return taint.get("key") in _MANAGED.get(taint.get("effect", ""), frozenset())


class NodeLifecycle(Controller):
    name = "node-lifecycle-controller"

    def __init__(
        self,
        nodes: Store,
        leases: Store,
        pods: Store,
        events: Store,
        lease_namespaces: tuple[str, ...],
        *args: Any,
        keys: taints.TaintKeys = taints.BRANDED,
    ) -> None:
        super().__init__(*args)
        self.keys = keys  # the taints' keys: kube's own under --serve-upstream-groups
        self.nodes, self.leases, self.pods = nodes, leases, pods
        self.node_prefix = resource_prefix(nodes.resource)
        self.lease_namespaces = lease_namespaces
        self.events = EventRecorder(events, self.name, self.reactor)
        self._seen: dict[str, tuple[Any, Any, float]] = {}  # node -> heartbeat, renewal, when

    def resync(self) -> None:
        self.enqueue(MONITOR)
        for stored in self.nodes.list("", ListOptions()).items:
            self.enqueue(stored.object["metadata"]["name"])

    def watched(self) -> tuple[bytes, ...]:
        # Not the Leases: kube reads them at each health pass.  A pass per renewal
        # would judge every Node on every Node's heartbeat (quadratic in the Nodes).
        return (self.node_prefix,)

    def observe(self, event: Event) -> None:
        self.enqueue(self.nodes.name_of_key(event.key))

    async def sync(self, key: str) -> float | None:
        if key == MONITOR:
            nodes = [s.object for s in self.nodes.list("", ListOptions()).items]
            lost = [each for each in nodes if await self._judge(each)]
            if lost:  # one read of the pods for all the Nodes lost in this pass
                await self._pods_not_ready({n["metadata"]["name"] for n in lost})
            live = {each["metadata"]["name"] for each in nodes}
            self._seen = {n: v for n, v in self._seen.items() if n in live}
            return MONITOR_PERIOD
        node = current_object(self.nodes, "", key)
        if node is not None:
            await self._taint(node)
        return None

    # -- health --------------------------------------------------------------------------

    def _renewal(self, name: str) -> Any:
        for namespace in self.lease_namespaces:
            lease = current_object(self.leases, namespace, name)
            if lease is not None:
                return (lease.get("spec") or {}).get("renewTime")
        return None

    async def _judge(self, node: Obj) -> bool:
        """kube's tryUpdateNodeHealth; True for a Node just lost (its pods are then
        marked not Ready, kube's MarkPodsNotReady)."""
        name, now = node["metadata"]["name"], self.reactor.seconds()
        ready = status_condition(node, "Ready")
        heartbeat = ready.get("lastHeartbeatTime") if ready is not None else None
        renewal = self._renewal(name)
        seen = self._seen.get(name)
        probe = now if seen is None or (seen[0], seen[1]) != (heartbeat, renewal) else seen[2]
        self._seen[name] = (heartbeat, renewal, probe)
        grace = GRACE_PERIOD if ready is not None else STARTUP_GRACE_PERIOD
        if now <= probe + grace:
            return False
        was = ready.get("status") if ready is not None else "Unknown"
        changed = await self._mark_unknown(node, now)
        if changed and was == "True":
            self.events.record(
                node,
                "v1",
                "Node",
                "Normal",
                "NodeNotReady",
                f"Node {name} status is now: NodeNotReady",
            )
        return changed and was == "True"

    async def _mark_unknown(self, node: Obj, now: float) -> bool:
        stamp = format_timestamp(now)
        created = node["metadata"].get("creationTimestamp")
        meta = node["metadata"]

        def unknown(existing: Obj | None) -> Obj:
            assert existing is not None
            if existing["metadata"].get("uid") != meta.get("uid"):
                raise errors.conflict("nodes", "", meta["name"])
            conditions = existing.setdefault("status", {}).setdefault("conditions", [])
            for type_ in JUDGED:
                found = next((c for c in conditions if c.get("type") == type_), None)
                if found is None:
                    conditions.append(
                        {
                            "type": type_,
                            "status": "Unknown",
                            "lastHeartbeatTime": created,
                            "lastTransitionTime": stamp,
                            "reason": "NodeStatusNeverUpdated",
                            "message": "Kubelet never posted node status.",
                        }
                    )
                elif found.get("status") != "Unknown":
                    found.update(
                        status="Unknown",
                        reason="NodeStatusUnknown",
                        message="Kubelet stopped posting node status.",
                        lastTransitionTime=stamp,
                    )
            return existing

        before = status_condition(node, "Ready")
        if before is not None and before.get("status") == "Unknown":
            return False
        await errors.tolerating(
            self.nodes.update("", meta["name"], unknown, subresource="status"), 404, 409
        )
        return True

    async def _pods_not_ready(self, node_names: set[str]) -> None:
        stamp = format_timestamp(self.reactor.seconds())
        for stored in self.pods.list("", ListOptions()).items:
            pod = stored.object
            if (pod.get("spec") or {}).get("nodeName") not in node_names:
                continue
            ready = status_condition(pod, "Ready")
            if ready is None or ready.get("status") != "True":
                continue

            def not_ready(existing: Obj | None) -> Obj:
                assert existing is not None
                for c in (existing.get("status") or {}).get("conditions") or ():
                    if c.get("type") == "Ready":
                        c.update(status="False", lastTransitionTime=stamp)
                return existing

            meta = pod["metadata"]
            update = self.pods.update(
                meta.get("namespace", ""), meta["name"], not_ready, subresource="status"
            )
            await errors.tolerating(update, 404, 409)

    # -- taints --------------------------------------------------------------------------

    async def _taint(self, node: Obj) -> None:
        """kube's doNoScheduleTaintingPass and NoExecute tainting: our taints as the
        conditions call for them; the Node's other taints kept."""
        now = format_timestamp(self.reactor.seconds())
        current = (node.get("spec") or {}).get("taints") or []
        wanted = wanted_taints(node, now, self.keys)
        kept = [t for t in current if not _ours(t)]
        same = {(t["key"], t["effect"]) for t in current if _ours(t)} == {
            (t["key"], t["effect"]) for t in wanted
        }
        if same:
            return
        held = {(t["key"], t["effect"]): t for t in current if _ours(t)}
        new = kept + [held.get((t["key"], t["effect"]), t) for t in wanted]
        uid = node["metadata"].get("uid")

        def retaint(existing: Obj | None) -> Obj:
            assert existing is not None
            if existing["metadata"].get("uid") != uid:
                raise errors.conflict("nodes", "", node["metadata"]["name"])
            spec = existing.setdefault("spec", {})
            if new:
                spec["taints"] = new
            else:
                spec.pop("taints", None)
            return existing

        await errors.tolerating(self.nodes.update("", node["metadata"]["name"], retaint), 404, 409)
