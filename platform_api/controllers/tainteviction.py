"""taint-eviction-controller (kube's NoExecuteTaintManager): a pod bound to a Node with a
NoExecute taint it does not tolerate is deleted; one that tolerates it for
``tolerationSeconds`` is deleted that long after this controller first saw it so (the
300 s DefaultTolerationSeconds gives every pod for the not-ready and unreachable taints
the node lifecycle controller puts on a lost Node).  Before the deletion the pod gets
kube's DisruptionTarget condition (``DeletionByTaintManager``) and a
``TaintManagerEviction`` event; a ReplicaSet's pod is then made again by its controller.
"""

from __future__ import annotations

from typing import Any

from platform_api import errors
from platform_api.controllers.base import Controller, current_object
from platform_api.controllers.events import EventRecorder
from platform_api.registry.store import Store, resource_prefix
from platform_api.scheme.nodetaints import NO_EXECUTE
from platform_api.storage.interface import DELETED, Event, ListOptions
from platform_api.timestamps import format_timestamp

Obj = dict[str, Any]
Key = tuple[str, str]


def tolerates(toleration: Obj, taint: Obj) -> bool:
    """kube's Toleration.ToleratesTaint."""
    if toleration.get("effect") and toleration["effect"] != taint.get("effect"):
        return False
    if toleration.get("key") and toleration["key"] != taint.get("key"):
        return False
    operator = toleration.get("operator") or "Equal"
    if operator == "Exists":
        return True
    return operator == "Equal" and (toleration.get("value") or "") == (taint.get("value") or "")


def toleration_time(tolerations: list[Obj], taints: list[Obj]) -> float | None:
    """Seconds the pod may stay: 0 if some taint is not tolerated, None for ever (kube's
    getMinTolerationTime over the tolerations that match)."""
    used = []
    for taint in taints:
        matching = [t for t in tolerations if tolerates(t, taint)]
        if not matching:
            return 0.0
        used += matching
    limits = [t["tolerationSeconds"] for t in used if t.get("tolerationSeconds") is not None]
    if not limits:
        return None
    return float(max(min(limits), 0))


def _no_execute(stored: Any) -> list[Obj]:
    node = stored.object if stored is not None else {}
    return [
        t for t in (node.get("spec") or {}).get("taints") or () if t.get("effect") == NO_EXECUTE
    ]


def _placement(stored: Any) -> tuple[Any, Any] | None:
    """What kube's PodUpdated compares: the pod's Node and tolerations."""
    if stored is None:
        return None
    spec = stored.object.get("spec") or {}
    return spec.get("nodeName"), spec.get("tolerations")


class TaintEviction(Controller):
    name = "taint-eviction-controller"

    def __init__(self, pods: Store, nodes: Store, events: Store, *args: Any) -> None:
        super().__init__(*args)
        self.pods, self.nodes = pods, nodes
        self.pod_prefix, self.node_prefix = (
            resource_prefix(pods.resource),
            resource_prefix(nodes.resource),
        )
        self.events = EventRecorder(events, self.name, self.reactor)
        self._on_node: dict[str, set[Key]] = {}  # node -> its pods
        self._since: dict[Key, float] = {}  # pod -> when first seen tolerating for a while

    def resync(self) -> None:
        for stored in self.pods.list("", ListOptions()).items:
            self._place(stored.object)

    def watched(self) -> tuple[bytes, ...]:
        return (self.pod_prefix, self.node_prefix)

    def observe(self, event: Event) -> None:
        if event.key.startswith(self.pod_prefix):
            key = (self.pods.namespace_of_key(event.key), self.pods.name_of_key(event.key))
            if event.type == DELETED:
                for pods in self._on_node.values():
                    pods.discard(key)
                self._since.pop(key, None)
            elif event.stored is not None and _placement(event.prev) != _placement(event.stored):
                self._place(event.stored.object)
        elif event.key.startswith(self.node_prefix) and self._taints_changed(event):
            for key in self._on_node.get(self.nodes.name_of_key(event.key), ()):
                self.enqueue(key)

    @staticmethod
    def _taints_changed(event: Event) -> bool:
        """kube's NodeUpdated: only a change of the NoExecute taints concerns the pods (a
        Node's status heartbeat would otherwise wake every pod on it)."""
        now = None if event.type == DELETED else event.stored
        return _no_execute(event.prev) != _no_execute(now)

    def _place(self, pod: Obj) -> None:
        meta = pod["metadata"]
        key = (meta.get("namespace", ""), meta["name"])
        node = (pod.get("spec") or {}).get("nodeName") or ""
        if node:
            self._on_node.setdefault(node, set()).add(key)
            self.enqueue(key)

    async def sync(self, key: Key) -> float | None:
        pod = current_object(self.pods, *key)
        node_name = (pod.get("spec") or {}).get("nodeName") if pod is not None else None
        node = current_object(self.nodes, "", node_name) if node_name else None
        taints = [
            t
            for t in ((node or {}).get("spec") or {}).get("taints") or ()
            if t.get("effect") == NO_EXECUTE
        ]
        if pod is None or node is None or not taints or pod["metadata"].get("deletionTimestamp"):
            self._since.pop(key, None)
            return None
        allowed = toleration_time((pod.get("spec") or {}).get("tolerations") or [], taints)
        if allowed is None:
            self._since.pop(key, None)
            return None
        now = self.reactor.seconds()
        left = self._since.setdefault(key, now) + allowed - now
        if left > 0:
            return left  # look again when the toleration runs out
        self._since.pop(key, None)
        await self._evict(pod)
        return None

    async def _evict(self, pod: Obj) -> None:
        meta = pod["metadata"]
        namespace, name, uid = meta.get("namespace", ""), meta["name"], meta.get("uid")
        stamp = format_timestamp(self.reactor.seconds())

        def disrupted(existing: Obj | None) -> Obj:
            assert existing is not None
            if existing["metadata"].get("uid") != uid:
                raise errors.conflict("pods", "", name)
            status = existing.setdefault("status", {})
            others = [
                c for c in status.get("conditions") or () if c.get("type") != "DisruptionTarget"
            ]
            condition = {
                "type": "DisruptionTarget",
                "status": "True",
                "lastTransitionTime": stamp,
                "reason": "DeletionByTaintManager",
                "message": "Taint manager: deleting due to NoExecute taint",
            }
            status["conditions"] = [*others, condition]
            return existing

        self.events.record(
            pod,
            "v1",
            "Pod",
            "Normal",
            "TaintManagerEviction",
            f"Marking for deletion Pod {namespace}/{name}",
        )
        await errors.tolerating(
            self.pods.update(namespace, name, disrupted, subresource="status"), 404, 409
        )
        await errors.tolerating(self.pods.delete(namespace, name), 404)
