"""A DaemonSet's ControllerRevisions (kube's constructHistory, snapshot and
cleanupHistory): one per pod template, the current one numbered past the others, old
ones beyond revisionHistoryLimit removed unless a pod still runs them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from platform_api.controllers import daemonsetutil as dsu
from platform_api.controllers import deploymentutil as du
from platform_api.controllers import podcontrol
from platform_api.controllers.base import current_object
from platform_api.errors import StatusError

if TYPE_CHECKING:
    from platform_api.controllers.daemonset import DaemonSetController

Obj = dict[str, Any]


async def construct(c: DaemonSetController, ds: Obj) -> tuple[Obj, list[Obj]]:
    """kube's constructHistory: the revision of the current template (made if new,
    renumbered past the others) and the old ones."""
    histories = await c.claimed(ds, c.revision_index, c.revision_claims)
    patch = podcontrol.template_patch(ds)
    current = [h for h in histories if h.get("data") == patch]
    old = [h for h in histories if h.get("data") != patch]
    number = max((int(h.get("revision") or 0) for h in old), default=0) + 1
    if not current:
        return await _snapshot(c, ds, patch, number), old
    keep = max(current, key=lambda h: int(h.get("revision") or 0))
    for extra in current:
        if extra is not keep:
            await c.revisions.delete(
                extra["metadata"].get("namespace", ""), extra["metadata"]["name"]
            )
    if int(keep.get("revision") or 0) < number:

        def renumber(existing: Obj | None) -> Obj:
            assert existing is not None
            existing["revision"] = number
            return existing

        stored, _ = await c.revisions.update(
            keep["metadata"].get("namespace", ""), keep["metadata"]["name"], renumber
        )
        keep = stored.object
    return keep, old


async def _snapshot(c: DaemonSetController, ds: Obj, patch: Obj, number: int) -> Obj:
    collisions = (ds.get("status") or {}).get("collisionCount")
    hash_ = du.template_hash(ds["spec"]["template"], collisions)
    labels = {
        **((ds["spec"]["template"].get("metadata") or {}).get("labels") or {}),
        dsu.HASH_LABEL: hash_,
    }
    meta: Obj = {
        "name": f"{ds['metadata']['name']}-{hash_}",
        "namespace": ds["metadata"].get("namespace", ""),
        "labels": labels,
        "ownerReferences": [podcontrol.controller_ref(ds, dsu.API_VERSION, dsu.KIND)],
    }
    if ds["metadata"].get("annotations"):
        meta["annotations"] = dict(ds["metadata"]["annotations"])
    revision = {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": meta,
        "data": patch,
        "revision": number,
    }
    try:
        made = await c.revisions.create(meta["namespace"], revision)
        return made.object
    except StatusError as e:
        if e.code != 409:
            raise
    existing = current_object(c.revisions, meta["namespace"], meta["name"])
    if existing is not None and existing.get("data") == patch:
        return existing
    await _bump_collisions(c, ds)
    raise StatusError(409, "Conflict", f"hash collision for DaemonSet {ds['metadata']['name']}")


async def _bump_collisions(c: DaemonSetController, ds: Obj) -> None:
    def change(existing: Obj | None) -> Obj:
        assert existing is not None
        status = existing.setdefault("status", {})
        status["collisionCount"] = int(status.get("collisionCount") or 0) + 1
        return existing

    await c.sets.update(
        ds["metadata"].get("namespace", ""),
        ds["metadata"]["name"],
        change,
        subresource="status",
    )


async def trim(c: DaemonSetController, ds: Obj, old: list[Obj]) -> None:
    limit = ds["spec"].get("revisionHistoryLimit", 10)
    extra = len(old) - limit
    if extra <= 0:
        return
    by_node = await c.pods_by_node(ds, include_done=True)
    live = {
        p["metadata"].get("labels", {}).get(dsu.HASH_LABEL)
        for pods in by_node.values()
        for p in pods
    }
    for revision in sorted(old, key=lambda h: int(h.get("revision") or 0)):
        if extra <= 0:
            break
        if revision["metadata"].get("labels", {}).get(dsu.HASH_LABEL) in live:
            continue
        await c.revisions.delete(
            revision["metadata"].get("namespace", ""), revision["metadata"]["name"]
        )
        extra -= 1
