"""kube's storage protection controllers: a PersistentVolumeClaim, PersistentVolume or
VolumeAttributesClass that is deleted while in use waits; once unused, its protection
finalizer (which the StorageObjectInUseProtection admission plugin puts on every new
one) is removed and the deletion completes.

In use means, as kube decides it: a claim is named by a volume of a scheduled pod
(``spec.nodeName`` set; a generic ephemeral volume's claim only while its pod is not
shut down); a volume is ``Bound``; a class is named by a claim (spec, current or target
status) or a volume.  Objects without their finalizer and not being deleted get it
(those made before the plugin was on), as kube's controllers add it.
"""

from __future__ import annotations

from typing import Any

from platform_api import errors
from platform_api.admission.storage.protection import (
    PV_PROTECTION,
    PVC_PROTECTION,
    VAC_PROTECTION,
)
from platform_api.controllers.base import Controller
from platform_api.registry.store import Store
from platform_api.storage.interface import Event, ListOptions

Obj = dict[str, Any]
Key = tuple[str, str]


def _finalizers(obj: Obj) -> list[str]:
    return list(obj["metadata"].get("finalizers") or [])


class ProtectionController(Controller):
    """Keys are (namespace, name) of the protected kind; subclasses say what uses one."""

    finalizer = ""

    def __init__(self, protected: Store, *args: Any, users: tuple[Store, ...] = ()) -> None:
        super().__init__(*args)
        self.protected = protected
        self._user_prefixes = tuple(store.prefix for store in users)

    def resync(self) -> None:
        for stored in self.protected.list("", ListOptions()).items:
            self._consider(stored.object)

    def watched(self) -> tuple[bytes, ...]:
        return (self.protected.prefix, *self._user_prefixes)

    def observe(self, event: Event) -> None:
        if event.key.startswith(self.protected.prefix):
            if event.stored is not None:
                self._consider(event.stored.object)
            return
        if not self._user_prefixes or not event.key.startswith(self._user_prefixes):
            return
        for state in (event.prev, event.stored):
            if state is not None:
                for key in self.used_by(state.object):
                    self.enqueue(key)

    def _consider(self, obj: Obj) -> None:
        meta = obj["metadata"]
        if self._deletion_candidate(obj) or self._needs_finalizer(obj):
            self.enqueue((meta.get("namespace", ""), meta["name"]))

    def _deletion_candidate(self, obj: Obj) -> bool:
        meta = obj["metadata"]
        return bool(meta.get("deletionTimestamp")) and self.finalizer in _finalizers(obj)

    def _needs_finalizer(self, obj: Obj) -> bool:
        meta = obj["metadata"]
        return not meta.get("deletionTimestamp") and self.finalizer not in _finalizers(obj)

    async def sync(self, key: Key) -> float | None:
        namespace, name = key
        try:
            obj = self.protected.get(namespace, name).object
        except errors.StatusError:
            return None
        if self._deletion_candidate(obj) and not self.in_use(obj):
            await self._set_finalizer(namespace, name, present=False)
        elif self._needs_finalizer(obj):
            await self._set_finalizer(namespace, name, present=True)
        return None

    async def _set_finalizer(self, namespace: str, name: str, present: bool) -> None:
        def update(existing: Obj | None) -> Obj:
            if existing is None:
                raise errors.not_found(self.protected.resource.plural, "", name)
            left = [f for f in _finalizers(existing) if f != self.finalizer]
            if present:
                left.append(self.finalizer)
            if left:
                existing["metadata"]["finalizers"] = left
            else:
                existing["metadata"].pop("finalizers", None)
            return existing

        await errors.tolerating(self.protected.update(namespace, name, update), 404, 409)

    def used_by(self, user: Obj) -> list[Key]:
        """Protected objects a change of ``user`` (a pod, a claim) may have freed."""
        return []

    def in_use(self, obj: Obj) -> bool:
        raise NotImplementedError


class PVCProtection(ProtectionController):
    name = "persistentvolumeclaim-protection-controller"
    finalizer = PVC_PROTECTION

    def __init__(self, claims: Store, pods: Store, *args: Any) -> None:
        super().__init__(claims, *args, users=(pods,))
        self.pods = pods

    def used_by(self, user: Obj) -> list[Key]:
        namespace = user["metadata"].get("namespace", "")
        return [(namespace, claim) for claim in _claims(user)]

    def in_use(self, obj: Obj) -> bool:
        meta = obj["metadata"]
        pods = self.pods.list(meta.get("namespace", ""), ListOptions()).items
        return any(_pod_uses(p.object, obj) for p in pods)


def _claims(pod: Obj) -> list[str]:
    out = []
    for volume in (pod.get("spec") or {}).get("volumes") or []:
        if volume.get("persistentVolumeClaim") is not None:
            out.append(volume["persistentVolumeClaim"].get("claimName", ""))
        elif volume.get("ephemeral") is not None:
            out.append(f"{pod['metadata']['name']}-{volume.get('name', '')}")
    return out


def _pod_uses(pod: Obj, claim: Obj) -> bool:
    """kube's podUsesPVC."""
    spec = pod.get("spec") or {}
    if not spec.get("nodeName"):
        return False  # not scheduled: no kubelet will start it with a claim being deleted
    name = claim["metadata"]["name"]
    for volume in spec.get("volumes") or []:
        source = volume.get("persistentVolumeClaim")
        if source is not None and source.get("claimName") == name:
            return True
        if volume.get("ephemeral") is not None and _ephemeral_claim(pod, volume, claim):
            return True
    return False


def _ephemeral_claim(pod: Obj, volume: Obj, claim: Obj) -> bool:
    """The claim is this generic ephemeral volume's, and its pod is not shut down."""
    name = f"{pod['metadata']['name']}-{volume.get('name', '')}"
    return name == claim["metadata"]["name"] and not _shut_down(pod) and _owned_by(claim, pod)


def _shut_down(pod: Obj) -> bool:
    """Done with by its kubelet, or force-deleted: deleting with no grace period left."""
    meta = pod["metadata"]
    return bool(meta.get("deletionTimestamp")) and meta.get("deletionGracePeriodSeconds") == 0


def _owned_by(claim: Obj, pod: Obj) -> bool:
    uid = pod["metadata"].get("uid")
    return any(
        r.get("controller") and r.get("uid") == uid
        for r in claim["metadata"].get("ownerReferences") or []
    )


class PVProtection(ProtectionController):
    name = "persistentvolume-protection-controller"
    finalizer = PV_PROTECTION

    def in_use(self, obj: Obj) -> bool:
        return bool((obj.get("status") or {}).get("phase") == "Bound")


class VACProtection(ProtectionController):
    name = "volumeattributesclass-protection-controller"
    finalizer = VAC_PROTECTION

    def __init__(self, classes: Store, claims: Store, volumes: Store, *args: Any) -> None:
        super().__init__(classes, *args, users=(claims, volumes))
        self.claims, self.volumes = claims, volumes

    def used_by(self, user: Obj) -> list[Key]:
        return [("", name) for name in _class_names(user)]

    def in_use(self, obj: Obj) -> bool:
        name = obj["metadata"]["name"]
        for store in (self.claims, self.volumes):
            if any(name in _class_names(s.object) for s in store.list("", ListOptions()).items):
                return True
        return False


def _class_names(obj: Obj) -> set[str]:
    """The VolumeAttributesClasses a claim or volume names."""
    status = obj.get("status") or {}
    names = {
        (obj.get("spec") or {}).get("volumeAttributesClassName"),
        status.get("currentVolumeAttributesClassName"),
        (status.get("modifyVolumeStatus") or {}).get("targetVolumeAttributesClassName"),
    }
    return {n for n in names if n}
