"""daemonset-controller (kube's DaemonSetsController): one pod on every Node the
DaemonSet's template admits (nodeSelector, required node affinity, taints it does not
tolerate), pinned there by a required node affinity on the Node's name, as kube's
controller leaves the binding to the scheduler; pods on Nodes that no longer admit them
go, failed ones are replaced (with kube's per-node backoff), and a changed template
rolls out within maxUnavailable or, with maxSurge, alongside the old pods.

Each template is kept as a ControllerRevision labelled with its hash (the hash is
deploymentutil's, as for Deployments: kube's hashes Go's printout of the struct).  Pods
are made through the API, so admission applies to them.  No scheduler runs here, so a
daemon pod stays Pending until something binds it; the status counts it by the Node it
is pinned to, as kube's does.
"""

from __future__ import annotations

import copy
import functools
from typing import Any

from platform_api.controllers import daemonsethistory as history
from platform_api.controllers import daemonsetutil as dsu
from platform_api.controllers import podcontrol
from platform_api.controllers.base import Controller, current_object
from platform_api.controllers.daemonsetroll import rolling_update
from platform_api.controllers.events import EventRecorder
from platform_api.controllers.informer import ByNamespace
from platform_api.errors import StatusError
from platform_api.registry.store import Store, resource_prefix
from platform_api.scheme import nodetaints as nt
from platform_api.storage.interface import Event
from platform_api.timers import timer_clock
from platform_api.timestamps import parse_timestamp

Obj = dict[str, Any]
Key = tuple[str, str]
COMPONENT = "daemonset-controller"
FAILED_BACKOFF, MAX_FAILED_BACKOFF = 1.0, 900.0  # kube's failedPodsBackoff


class DaemonSetController(Controller):
    name = COMPONENT

    def __init__(
        self,
        sets: Store,
        pods: Store,
        nodes: Store,
        revisions: Store,
        events: Store,
        *args: Any,
        keys: nt.TaintKeys = nt.BRANDED,
    ) -> None:
        super().__init__(*args)
        self.keys = keys  # the taints its pods tolerate: kube's under --serve-upstream-groups
        self.sets, self.pods, self.nodes, self.revisions = sets, pods, nodes, revisions
        self.set_index, self.pod_index = ByNamespace(sets), ByNamespace(pods, owners=True)
        self.node_index = ByNamespace(nodes)
        self.revision_index = ByNamespace(revisions, owners=True)
        self.prefixes = [
            (resource_prefix(r.resource), index)
            for r, index in (
                (sets, self.set_index),
                (pods, self.pod_index),
                (nodes, self.node_index),
                (revisions, self.revision_index),
            )
        ]
        self.events = EventRecorder(events, COMPONENT, self.reactor)
        self.pod_control = podcontrol.PodControl(pods, self.record_event)
        self.expectations = podcontrol.Expectations(timer_clock(self.reactor))
        self.pod_claims = podcontrol.Claims(sets, pods, dsu.API_VERSION, dsu.KIND)
        self.revision_claims = podcontrol.Claims(sets, revisions, dsu.API_VERSION, dsu.KIND)
        self.backoff: dict[str, tuple[float, float]] = {}  # key -> (delay, since)
        self._failures: dict[Key, int] = {}

    # -- events ------------------------------------------------------------------------

    def resync(self) -> None:
        for _, index in self.prefixes[1:]:
            index.load()
        for ds in self.set_index.load():
            self.enqueue(_key(ds))

    def watched(self) -> tuple[bytes, ...]:
        return tuple(prefix for prefix, _ in self.prefixes)

    def observe(self, event: Event) -> None:
        for prefix, index in self.prefixes:
            if not event.key.startswith(prefix):
                continue
            old, new = index.apply(event)
            if old is None and new is None:
                return
            if index is self.set_index:
                self.enqueue(_key(new or old))  # type: ignore[arg-type]
            elif index is self.pod_index:
                self._pod_changed(old, new)
            elif index is self.node_index:
                for ds in self._all_sets():  # kube re-checks every DaemonSet per Node
                    self.enqueue(_key(ds))
            return

    def _pod_changed(self, old: Obj | None, new: Obj | None) -> None:
        for obj in (old, new):
            if obj is None:
                continue
            owner = podcontrol.resolve(self.set_index, obj, dsu.KIND)
            if owner is not None:
                key = _key(owner)
                if obj is new and old is None:
                    self.expectations.created(key)
                if new is None or (obj is new and new["metadata"].get("deletionTimestamp")):
                    self.expectations.deleted(key, obj["metadata"]["name"])
                self.enqueue(key)
            elif obj is new and podcontrol.controller_of(obj) is None:
                namespace = obj["metadata"].get("namespace", "")
                for candidate in self.set_index.in_namespace(namespace):
                    if podcontrol.matches(podcontrol.spec_selector(candidate), obj):
                        self.enqueue(_key(candidate))

    def _all_sets(self) -> list[Obj]:
        return [
            ds
            for namespace in list(self.set_index.objects)
            for ds in self.set_index.in_namespace(namespace)
        ]

    def node_list(self) -> list[Obj]:
        return self.node_index.in_namespace("")

    # -- sync --------------------------------------------------------------------------

    async def sync(self, key: Key) -> float | None:
        namespace, name = key
        ds = current_object(self.sets, namespace, name)
        if ds is None:
            self.expectations.forget(key)
            return None
        if ds["spec"].get("selector") in ({}, {"matchLabels": {}}):
            message = "This daemon set is selecting all pods. A non-empty selector is required."
            self.record_event(ds, "Warning", "SelectingAll", message)
            return None
        if ds["metadata"].get("deletionTimestamp"):
            return None
        try:
            retry = await self._sync(key, ds)
        except (StatusError, ValueError):  # ValueError: an unusable maxSurge/maxUnavailable
            failures = self._failures[key] = self._failures.get(key, 0) + 1
            return min(0.005 * 2**failures, 60.0)
        self._failures.pop(key, None)
        return retry

    async def _sync(self, key: Key, ds: Obj) -> float | None:
        current, old = await history.construct(self, ds)
        hash_ = current["metadata"]["labels"].get(dsu.HASH_LABEL, "")
        if not self.expectations.satisfied(key):
            return await self._status(ds, hash_, observed=False)
        retry = await self._manage(key, ds, hash_)
        strategy = (ds["spec"].get("updateStrategy") or {}).get("type", "RollingUpdate")
        if self.expectations.satisfied(key) and strategy == "RollingUpdate":
            victims, nodes = await rolling_update(self, ds, hash_)
            await self.sync_nodes(key, ds, victims, nodes, hash_)
        await history.trim(self, ds, old)
        wait = await self._status(ds, hash_, observed=True)
        return wait if retry is None else retry if wait is None else min(retry, wait)

    async def pods_by_node(self, ds: Obj, *, include_done: bool = False) -> dict[str, list[Obj]]:
        """kube's getNodesToDaemonPods: its claimed pods by the Node they are pinned to."""
        claimed = await self.claimed(ds, self.pod_index, self.pod_claims)
        out: dict[str, list[Obj]] = {}
        for pod in claimed:
            terminal = (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")
            if not include_done and terminal and pod["metadata"].get("deletionTimestamp"):
                continue
            node = dsu.target_node(pod)
            if node is not None:
                out.setdefault(node, []).append(pod)
        return out

    async def claimed(self, ds: Obj, index: ByNamespace, claims: Any) -> list[Obj]:
        uid = ds["metadata"]["uid"]
        candidates = index.candidates(ds["metadata"].get("namespace", ""), uid)
        found: list[Obj] = await claims.claim(ds, podcontrol.spec_selector(ds), candidates)
        return found

    async def _manage(self, key: Key, ds: Obj, hash_: str) -> float | None:
        by_node = await self.pods_by_node(ds)
        create: list[str] = []
        delete: list[str] = []
        retry: float | None = None
        for node in self.node_list():
            more, gone, wait = self._should_be_on(node, by_node, ds, hash_)
            create += more
            delete += gone
            if wait is not None:
                retry = wait if retry is None else min(retry, wait)
        running = {n["metadata"]["name"] for n in self.node_list()}
        for node_name, pods in by_node.items():
            if node_name not in running:  # kube's getUnscheduledPodsWithoutNode
                delete += [p["metadata"]["name"] for p in pods if not p["spec"].get("nodeName")]
        await self.sync_nodes(key, ds, delete, create, hash_)
        return retry

    def _should_be_on(
        self, node: Obj, by_node: dict[str, list[Obj]], ds: Obj, hash_: str
    ) -> tuple[list[str], list[str], float | None]:
        """kube's podsShouldBeOnNode: (Nodes needing a pod, pods to delete, a retry)."""
        name = node["metadata"]["name"]
        run, stay = dsu.should_run(ds, node)
        pods = by_node.get(name)
        if run and not pods:
            return [name], [], None
        if not stay:
            live = [p for p in pods or () if not p["metadata"].get("deletionTimestamp")]
            return [], [p["metadata"]["name"] for p in live], None
        delete: list[str] = []
        running: list[Obj] = []
        retry: float | None = None
        for pod in pods or ():
            if pod["metadata"].get("deletionTimestamp"):
                continue
            phase = (pod.get("status") or {}).get("phase")
            where = (
                f"{pod['metadata'].get('namespace', '')}/{pod['metadata']['name']} on node {name}"
            )
            if phase == "Failed":
                wait = self._backoff(ds, name)
                if wait > 0:
                    retry = wait
                    continue
                self.record_event(
                    ds,
                    "Warning",
                    "FailedDaemonPod",
                    f"Found failed daemon pod {where}, will try to kill it",
                )
                delete.append(pod["metadata"]["name"])
            elif phase == "Succeeded":
                self.record_event(
                    ds,
                    "Normal",
                    "SucceededDaemonPod",
                    f"Found succeeded daemon pod {where}, will try to delete it",
                )
                delete.append(pod["metadata"]["name"])
            else:
                running.append(pod)
        return self._extra(ds, running, run, name, hash_, delete, retry)

    def _extra(
        self,
        ds: Obj,
        running: list[Obj],
        run: bool,
        name: str,
        hash_: str,
        delete: list[str],
        retry: float | None,
    ) -> tuple[list[str], list[str], float | None]:
        """Of several live pods on one Node, which go (the oldest stays; with surge, the
        oldest of each revision until the new one is available)."""
        ordered = sorted(running, key=functools.cmp_to_key(_by_age))
        if not dsu.allows_surge(ds):
            return [], delete + [p["metadata"]["name"] for p in ordered[1:]], retry
        if len(ordered) <= 1:
            return ([name] if not ordered and run else []), delete, retry
        newest_new = oldest_old = None
        for pod in ordered:
            if dsu.is_updated(pod, ds, hash_):
                if newest_new is None:
                    newest_new = pod
                    continue
            elif oldest_old is None:
                oldest_old = pod
                continue
            delete.append(pod["metadata"]["name"])
        if newest_new is not None and oldest_old is not None:
            min_ready = ds["spec"].get("minReadySeconds") or 0
            if not podcontrol.is_ready(oldest_old) or podcontrol.is_available(
                newest_new, min_ready, self.reactor.seconds()
            ):
                delete.append(oldest_old["metadata"]["name"])
        return [], delete, retry

    def _backoff(self, ds: Obj, node: str) -> float:
        """kube's failedPodsBackoff per DaemonSet generation and Node: 1 s doubling to 15
        min; the seconds still to wait (0: kill the failed pod now)."""
        generation = (ds.get("status") or {}).get("observedGeneration", 0)
        key = f"{ds['metadata']['uid']}/{generation}/{node}"
        now = self.reactor.seconds()
        delay, since = self.backoff.get(key, (0.0, 0.0))
        if delay and now - since < delay:
            return delay - (now - since)
        self.backoff[key] = (min(delay * 2, MAX_FAILED_BACKOFF) if delay else FAILED_BACKOFF, now)
        return 0.0

    async def sync_nodes(
        self, key: Key, ds: Obj, delete: list[str], nodes: list[str], hash_: str
    ) -> None:
        """kube's syncNodes: pods for ``nodes`` in slow-start batches, ``delete`` deleted."""
        nodes, delete = nodes[: podcontrol.BURST_REPLICAS], delete[: podcontrol.BURST_REPLICAS]
        if not nodes and not delete:
            return
        self.expectations.expect(key, adds=len(nodes), deletes=set(delete))
        namespace = ds["metadata"].get("namespace", "")
        template = dsu.pod_template(ds, hash_, self.keys)
        ref = podcontrol.controller_ref(ds, dsu.API_VERSION, dsu.KIND)
        queue = list(nodes)

        async def create_one() -> None:
            one = copy.deepcopy(template)
            dsu.pin_to_node(one["spec"], queue.pop(0))
            pod = podcontrol.from_template(one, ds["metadata"]["name"], ref)
            await self.pod_control.create(namespace, pod, ds)

        done, error = await podcontrol.slow_start(len(nodes), create_one)
        for _ in range(len(nodes) - done):
            self.expectations.created(key)
        for name in delete:
            try:
                gone = await self.pod_control.delete(namespace, name, ds)
            except StatusError as e:
                gone, error = False, error or e
            if not gone:
                self.expectations.deleted(key, name)
        if error is not None:
            raise error

    # -- status ------------------------------------------------------------------------

    async def _status(self, ds: Obj, hash_: str, *, observed: bool) -> float | None:
        """kube's updateDaemonSetStatus; a retry when minReadySeconds will make a ready
        pod available."""
        by_node = await self.pods_by_node(ds)
        counts = dict.fromkeys(
            ("desired", "current", "misscheduled", "ready", "updated", "available"), 0
        )
        now = self.reactor.seconds()
        min_ready = ds["spec"].get("minReadySeconds") or 0
        for node in self.node_list():
            run, _ = dsu.should_run(ds, node)
            pods = sorted(
                by_node.get(node["metadata"]["name"]) or (), key=functools.cmp_to_key(_by_age)
            )
            if not run:
                counts["misscheduled"] += bool(pods)
                continue
            counts["desired"] += 1
            if not pods:
                continue
            counts["current"] += 1
            pod = pods[0]
            if podcontrol.is_ready(pod):
                counts["ready"] += 1
                counts["available"] += podcontrol.is_available(pod, min_ready, now)
            counts["updated"] += dsu.is_updated(pod, ds, hash_)
        await self._write_status(ds, counts, observed)
        if min_ready and counts["ready"] != counts["available"]:
            return float(min_ready)
        return None

    async def _write_status(self, ds: Obj, counts: dict[str, int], observed: bool) -> None:
        status = {
            "desiredNumberScheduled": counts["desired"],
            "currentNumberScheduled": counts["current"],
            "numberMisscheduled": counts["misscheduled"],
            "numberReady": counts["ready"],
            "updatedNumberScheduled": counts["updated"],
            "numberAvailable": counts["available"],
            "numberUnavailable": counts["desired"] - counts["available"],
        }
        before = ds.get("status") or {}
        generation = ds["metadata"].get("generation", 0)
        same = all(before.get(k, 0) == v for k, v in status.items())
        if same and before.get("observedGeneration", 0) >= generation:
            return

        def change(existing: Obj | None) -> Obj:
            assert existing is not None
            if existing["metadata"].get("uid") != ds["metadata"].get("uid"):
                raise StatusError(409, "Conflict", "the DaemonSet was replaced")
            merged = {**(existing.get("status") or {}), **status}
            if observed:
                merged["observedGeneration"] = generation
            # Go's omitempty: these four are written even at zero
            kept = (
                "currentNumberScheduled",
                "numberMisscheduled",
                "desiredNumberScheduled",
                "numberReady",
            )
            existing["status"] = {
                k: v for k, v in merged.items() if v not in (0, None) or k in kept
            }
            return existing

        try:
            await self.sets.update(
                ds["metadata"].get("namespace", ""),
                ds["metadata"]["name"],
                change,
                subresource="status",
            )
        except StatusError as e:
            if e.code != 404:
                raise

    def record_event(self, ds: Obj, type_: str, reason: str, message: str) -> None:
        self.events.record(ds, dsu.API_VERSION, dsu.KIND, type_, reason, message)


def _key(obj: Obj) -> Key:
    meta = obj["metadata"]
    return meta.get("namespace", ""), meta["name"]


def _by_age(a: Obj, b: Obj) -> int:
    """kube's podByCreationTimestampAndPhase: bound pods first, then oldest, then name."""
    bound_a, bound_b = bool(a["spec"].get("nodeName")), bool(b["spec"].get("nodeName"))
    if bound_a != bound_b:
        return -1 if bound_a else 1
    created_a = parse_timestamp(a["metadata"].get("creationTimestamp")) or 0.0
    created_b = parse_timestamp(b["metadata"].get("creationTimestamp")) or 0.0
    if created_a == created_b:
        return -1 if a["metadata"]["name"] < b["metadata"]["name"] else 1
    return -1 if created_a < created_b else 1
