"""kube's pod-garbage-collector-controller (``podgc``): pods nothing else will remove.

Every 20 seconds, as kube's: pods bound to a Node that has been gone for 40 seconds are
marked ``Failed`` (with kube's ``DisruptionTarget`` condition) and deleted; terminating
pods without a node, and terminating pods on a Node that is not Ready and tainted
``node.kubernetes.io/out-of-service``, are marked ``Failed`` and deleted; and once more
than 12500 pods have finished (kube's ``--terminated-pod-gc-threshold``, not a flag here), the oldest finished
ones (evicted first) are deleted.  Here, with no kubelet to finish a bound pod's graceful
deletion, the orphan rule is the one users meet: a fake node deleted takes its pods,
terminating or not, with it 40 seconds on.
"""

from __future__ import annotations

from typing import Any

from platform_api import errors
from platform_api.controllers.base import Controller
from platform_api.controllers.informer import ByNamespace
from platform_api.registry.store import Store
from platform_api.storage.interface import Event, Preconditions
from platform_api.timestamps import format_timestamp

Obj = dict[str, Any]
CHECK_PERIOD = 20.0
QUARANTINE = 40.0
TERMINATED_THRESHOLD = 12500
OUT_OF_SERVICE = "node.kubernetes.io/out-of-service"
ORPHANED = {
    "type": "DisruptionTarget",
    "status": "True",
    "reason": "DeletionByPodGC",
    "message": "PodGC: node no longer exists",
}
GC = "gc"  # the one key


def terminated(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") not in (None, "", "Pending", "Running", "Unknown")


def _evicted(pod: Obj) -> bool:
    status = pod.get("status") or {}
    return status.get("phase") == "Failed" and status.get("reason") == "Evicted"


def _ready(node: Obj) -> bool:
    conditions = (node.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


class PodGC(Controller):
    name = "pod-garbage-collector-controller"

    def __init__(
        self, pods: Store, nodes: Store, *args: Any, threshold: int = TERMINATED_THRESHOLD
    ) -> None:
        super().__init__(*args)
        self.pods, self.nodes = pods, nodes
        self.threshold = threshold
        self._missing: dict[str, float] = {}  # node name -> when first seen gone
        # kube's listers: a pass every 20 s decoding every pod held the reactor for
        # seconds in a large cluster
        self.pod_index, self.node_index = ByNamespace(pods), ByNamespace(nodes)

    def resync(self) -> None:
        self.pod_index.load()
        self.node_index.load()
        self.enqueue(GC)

    def watched(self) -> tuple[bytes, ...]:
        return (self.pods.prefix, self.nodes.prefix)

    def observe(self, event: Event) -> None:
        """Kept in the indexes only: kube's collector polls them (its listers)."""
        index = self.pod_index if event.key.startswith(self.pods.prefix) else self.node_index
        index.apply(event)

    async def sync(self, key: str) -> float | None:
        pods = [p for held in list(self.pod_index.objects.values()) for p in held.values()]
        nodes = dict(self.node_index.objects.get("", {}))
        doomed: list[tuple[Obj, Obj | None]] = []
        if self.threshold > 0:
            done = sorted(
                (p for p in pods if terminated(p)),
                key=lambda p: (
                    not _evicted(p),
                    p["metadata"].get("creationTimestamp", ""),
                    p["metadata"]["name"],
                ),
            )
            doomed += [(p, None) for p in done[: max(0, len(done) - self.threshold)]]
        for pod in pods:
            node_name = (pod.get("spec") or {}).get("nodeName") or ""
            deleting = bool(pod["metadata"].get("deletionTimestamp"))
            node = nodes.get(node_name)
            stuck = not node_name or (node is not None and _out_of_service(node))
            if deleting and stuck:
                doomed.append((pod, None))
            elif node_name and node is None and self._gone_long_enough(node_name):
                doomed.append((pod, ORPHANED))
        self._missing = {n: t for n, t in self._missing.items() if n not in nodes}
        seen: set[str] = set()
        for pod, condition in doomed:
            uid = pod["metadata"].get("uid", "")
            if uid not in seen:
                seen.add(uid)
                await self._fail_and_delete(pod, condition)
        return CHECK_PERIOD

    def _gone_long_enough(self, node: str) -> bool:
        now = float(self.reactor.seconds())
        first = self._missing.setdefault(node, now)
        return now - first >= QUARANTINE

    async def _fail_and_delete(self, pod: Obj, condition: Obj | None) -> None:
        meta = pod["metadata"]
        namespace, name, uid = meta.get("namespace", ""), meta["name"], meta.get("uid")
        if not terminated(pod):

            def failed(existing: Obj | None) -> Obj:
                assert existing is not None
                if existing["metadata"].get("uid") != uid:
                    raise errors.conflict("pods", "", name)
                status = existing.setdefault("status", {})
                status["phase"] = "Failed"
                if condition is not None:
                    now = format_timestamp(float(self.reactor.seconds()))
                    others = [
                        c
                        for c in status.get("conditions") or []
                        if c.get("type") != condition["type"]
                    ]
                    status["conditions"] = [*others, {**condition, "lastTransitionTime": now}]
                return existing

            await errors.tolerating(
                self.pods.update(namespace, name, failed, subresource="status"), 404, 409
            )
        await errors.tolerating(
            self.pods.delete(
                namespace,
                name,
                preconditions=Preconditions(uid=uid) if uid else None,
                grace_period=0,  # kube's podgc deletes at once: no kubelet will
            ),
            404,
            409,
        )


def _out_of_service(node: Obj) -> bool:
    taints = (node.get("spec") or {}).get("taints") or []
    return not _ready(node) and any(t.get("key") == OUT_OF_SERVICE for t in taints)
