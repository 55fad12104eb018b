"""A DaemonSet's rolling update (kube's daemon/update.go rollingUpdate): without surge,
old pods are deleted while at most maxUnavailable Nodes lack an available pod (an
unavailable old pod is replaced at once); with maxSurge, a new pod starts beside the old
one on up to maxSurge Nodes and the old one goes once the new one is available.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from platform_api.controllers import daemonsetutil as dsu
from platform_api.controllers import podcontrol

if TYPE_CHECKING:
    from platform_api.controllers.daemonset import DaemonSetController

Obj = dict[str, Any]


def _split(ds: Obj, pods: list[Obj], hash_: str) -> tuple[Obj | None, Obj | None, bool]:
    """kube's findUpdatedPodsOnNode: (the new pod, the old pod, at most one of each)."""
    new = old = None
    for pod in pods:
        if pod["metadata"].get("deletionTimestamp"):
            continue
        if dsu.is_updated(pod, ds, hash_):
            if new is not None:
                return None, None, False
            new = pod
        else:
            if old is not None:
                return None, None, False
            old = pod
    return new, old, True


async def rolling_update(
    c: DaemonSetController, ds: Obj, hash_: str
) -> tuple[list[str], list[str]]:
    """(old pods to delete, Nodes to start a new pod on)."""
    by_node = await c.pods_by_node(ds)
    nodes = {n["metadata"]["name"]: n for n in c.node_list()}
    desired = 0
    for name, node in nodes.items():
        if dsu.should_run(ds, node)[0]:
            desired += 1
            by_node.setdefault(name, [])
    surge, unavailable = dsu.surge_and_unavailable(ds, desired)
    min_ready = ds["spec"].get("minReadySeconds") or 0
    now = c.reactor.seconds()

    def available(pod: Obj) -> bool:
        return podcontrol.is_available(pod, min_ready, now)

    if surge == 0:
        return _without_surge(ds, by_node, hash_, unavailable, available), []
    return _with_surge(ds, by_node, nodes, hash_, surge, desired, available)


def _without_surge(
    ds: Obj, by_node: dict[str, list[Obj]], hash_: str, most: int, available: Any
) -> list[str]:
    down = 0
    replace: list[str] = []
    candidates: list[str] = []
    for pods in by_node.values():
        new, old, ok = _split(ds, pods, hash_)
        if not ok or (new is None) == (old is None):
            down += 1
        elif new is not None:
            down += not available(new)
        elif old is not None and not available(old):
            replace.append(old["metadata"]["name"])
            down += 1
        elif old is not None and down < most:
            candidates.append(old["metadata"]["name"])
    room = min(max(most - down, 0), len(candidates))
    return replace + candidates[:room]


def _with_surge(
    ds: Obj,
    by_node: dict[str, list[Obj]],
    nodes: dict[str, Obj],
    hash_: str,
    most: int,
    desired: int,
    available: Any,
) -> tuple[list[str], list[str]]:
    delete: list[str] = []
    misplaced: list[str] = []
    candidates: list[str] = []
    allowed: list[str] = []
    surging = up = 0
    for name, pods in by_node.items():
        new, old, ok = _split(ds, pods, hash_)
        if not ok:
            surging += 1
            continue
        if old is not None:
            up += available(old)
        elif new is not None:
            up += available(new)
        if old is None:
            continue
        runs = name in nodes and dsu.should_run(ds, nodes[name])[0]
        if new is None:
            if not available(old):
                (allowed.append(name) if runs else delete.append(old["metadata"]["name"]))
            elif not runs:
                misplaced.append(old["metadata"]["name"])
            elif surging < most:
                candidates.append(name)
        elif not available(new):
            surging += 1
        else:
            delete.append(old["metadata"]["name"])
    spare = up - desired
    if spare > 0:
        delete += misplaced[:spare]
    room = min(max(most - surging, 0), len(candidates))
    return delete, allowed + candidates[:room]
