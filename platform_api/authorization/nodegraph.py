"""Which objects each node may read: kube's node-authorizer graph, as reference counts.

kube keeps a directed graph (secret -> pod -> node, pv -> pvc -> pod -> node, ...) and
walks it per request.  The only paths that exist are short and fixed, so here each
object a bound pod references maps straight to the nodes that need it, with a count of
the pods that do; a decision is one or two dict lookups.  Persistent volumes keep their
claim and their kubelet-visible secrets, so ``secret -> pv -> pvc -> pod -> node`` is a
look-up of the claim.  The maps are fed by an ``Informer`` over pods, persistent volumes
and (when the type is served) volume attachments, never by storage reads per request.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from platform_api.controllers.informer import Informer
from platform_api.registry.podannotations import MIRROR_ANNOTATION
from platform_api.storage.interface import Storage
from platform_api.storage.watch import WatchHub

Obj = dict[str, Any]
Ref = tuple[str, str, str]  # (plural, namespace, name)

PODS = b"/core/pods/"
PERSISTENT_VOLUMES = b"/core/persistentvolumes/"
VOLUME_ATTACHMENTS = b"/storage.platform.io/volumeattachments/"
RESOURCE_SLICES = b"/resource.platform.io/resourceslices/"

# Volume sources naming a secret: (source, field holding a reference or a name).
_POD_SECRET_VOLUMES = (
    ("azureFile", "secretName"),
    ("cephfs", "secretRef"),
    ("cinder", "secretRef"),
    ("flexVolume", "secretRef"),
    ("iscsi", "secretRef"),
    ("rbd", "secretRef"),
    ("scaleIO", "secretRef"),
    ("storageos", "secretRef"),
    ("csi", "nodePublishSecretRef"),
)
# Persistent volume sources whose secrets the kubelet reads (kube's ``kubeletVisible``).
_PV_SECRETS = (
    *_POD_SECRET_VOLUMES,
    ("csi", "nodeStageSecretRef"),
    ("csi", "nodeExpandSecretRef"),
)


def _containers(spec: Obj) -> Iterator[Obj]:
    for key in ("initContainers", "containers", "ephemeralContainers"):
        yield from spec.get(key) or []


def _named(value: Any) -> str:
    """A reference object's ``name``, or a bare name."""
    if isinstance(value, dict):
        return str(value.get("name") or "")
    return str(value or "")


def _container_refs(spec: Obj, from_key: str, env_key: str) -> set[str]:
    """Names containers take environment from: ``envFrom[].<from_key>``, ``env[].valueFrom``."""
    names = set()
    for container in _containers(spec):
        for source in container.get("envFrom") or []:
            names.add(_named(source.get(from_key)))
        for env in container.get("env") or []:
            names.add(_named((env.get("valueFrom") or {}).get(env_key)))
    return names


def _projected(volume: Obj, key: str) -> Iterator[str]:
    for source in (volume.get("projected") or {}).get("sources") or []:
        yield _named(source.get(key))


def pod_secrets(spec: Obj) -> set[str]:
    """Secrets a pod spec names (kube's ``VisitPodSecretNames``)."""
    names = {_named(s) for s in spec.get("imagePullSecrets") or []}
    names |= _container_refs(spec, "secretRef", "secretKeyRef")
    for volume in spec.get("volumes") or []:
        names.add(str((volume.get("secret") or {}).get("secretName") or ""))
        names.update(_projected(volume, "secret"))
        for kind, key in _POD_SECRET_VOLUMES:
            names.add(_named((volume.get(kind) or {}).get(key)))
    names.discard("")
    return names


def pod_configmaps(spec: Obj) -> set[str]:
    """Config maps a pod spec names (kube's ``VisitPodConfigmapNames``)."""
    names = _container_refs(spec, "configMapRef", "configMapKeyRef")
    for volume in spec.get("volumes") or []:
        names.add(_named(volume.get("configMap")))
        names.update(_projected(volume, "configMap"))
    names.discard("")
    return names


def pod_refs(pod: Obj) -> frozenset[Ref]:
    """Everything a bound pod gives its node access to (none for a mirror pod)."""
    meta = pod.get("metadata") or {}
    ns, name = meta.get("namespace", ""), meta.get("name", "")
    refs: set[Ref] = {("pods", ns, name)}
    if MIRROR_ANNOTATION in (meta.get("annotations") or {}):
        return frozenset(refs)  # a node must never gain access through a pod it created
    spec = pod.get("spec") or {}
    if spec.get("serviceAccountName"):
        refs.add(("serviceaccounts", ns, spec["serviceAccountName"]))
    refs.update(("secrets", ns, s) for s in pod_secrets(spec))
    refs.update(("configmaps", ns, c) for c in pod_configmaps(spec))
    for volume in spec.get("volumes") or []:
        claim = (volume.get("persistentVolumeClaim") or {}).get("claimName")
        if not claim and volume.get("ephemeral") is not None:
            claim = f"{name}-{volume.get('name', '')}"
        if claim:
            refs.add(("persistentvolumeclaims", ns, claim))
    statuses = {
        s.get("name"): s.get("resourceClaimName")
        for s in (pod.get("status") or {}).get("resourceClaimStatuses") or []
    }
    for claim in spec.get("resourceClaims") or []:
        claim_name = claim.get("resourceClaimName") or statuses.get(claim.get("name"))
        if claim_name:
            refs.add(("resourceclaims", ns, claim_name))
    # the claim the scheduler made for the pod's extended resources (DRAExtendedResource)
    extended = ((pod.get("status") or {}).get("extendedResourceClaimStatus") or {}).get(
        "resourceClaimName"
    )
    if extended:
        refs.add(("resourceclaims", ns, extended))
    return frozenset(refs)


def pv_secrets(pv: Obj) -> frozenset[tuple[str, str]]:
    """(namespace, name) of the secrets the kubelet reads to mount a persistent volume."""
    spec = pv.get("spec") or {}
    claim_ns = (spec.get("claimRef") or {}).get("namespace", "")
    found = set()
    for kind, key in _PV_SECRETS:
        source = spec.get(kind) or {}
        value = source.get(key)
        if not value:
            continue
        if isinstance(value, dict):
            found.add((value.get("namespace") or claim_ns, _named(value)))
        else:  # azureFile: a name, with its own namespace field
            found.add((source.get("secretNamespace") or claim_ns, str(value)))
    return frozenset((ns, name) for ns, name in found if name)


@dataclass(frozen=True)
class _Volume:
    claim: tuple[str, str]
    secrets: frozenset[tuple[str, str]]


class NodeGraph:
    """Objects reachable from each node; kept current by an informer."""

    def __init__(
        self,
        storage: Storage,
        hub: WatchHub,
        volume_attachments: bool = False,
        resource_slices: bool = False,
    ) -> None:
        prefixes = (PODS, PERSISTENT_VOLUMES) + (
            (VOLUME_ATTACHMENTS,) if volume_attachments else ()
        )
        prefixes += (RESOURCE_SLICES,) if resource_slices else ()
        self.informer = Informer(storage, hub, prefixes)
        # object -> node -> number of that node's pods that reference it
        self._nodes_of: dict[Ref, dict[str, int]] = {}
        self._pods: dict[tuple[str, str], tuple[str, frozenset[Ref]]] = {}
        self._volumes: dict[str, _Volume] = {}
        self._volumes_of_secret: dict[tuple[str, str], set[str]] = {}
        self._attachments: dict[str, str] = {}
        self._slices: dict[str, str] = {}  # a ResourceSlice's name -> its spec.nodeName
        self.informer.add_listener(self._changed)

    def start(self) -> None:
        """List, then follow the watch hub; the graph is complete when this returns."""
        self.informer.start()

    def stop(self) -> None:
        self.informer.stop()

    # -- questions --------------------------------------------------------------------

    def related(self, node: str, plural: str, namespace: str, name: str) -> bool:
        """Whether a path leads from the object to the node (kube's ``hasPathFrom``)."""
        if plural == "persistentvolumes":
            return self._volume_on(node, name)
        if plural == "volumeattachments":
            return bool(node) and self._attachments.get(name) == node
        if plural == "resourceslices":
            return bool(node) and self._slices.get(name) == node
        if node in self._nodes_of.get((plural, namespace, name), ()):
            return True
        if plural == "secrets":
            volumes = self._volumes_of_secret.get((namespace, name), ())
            return any(self._volume_on(node, pv) for pv in volumes)
        return False

    def node_of_pod(self, namespace: str, name: str) -> str | None:
        entry = self._pods.get((namespace, name))
        return entry[0] if entry else None

    def _volume_on(self, node: str, pv: str) -> bool:
        volume = self._volumes.get(pv)
        if volume is None:
            return False
        return node in self._nodes_of.get(("persistentvolumeclaims", *volume.claim), ())

    # -- keeping current --------------------------------------------------------------

    def _changed(self, key: bytes, old: Obj | None, new: Obj | None) -> None:
        if key.startswith(PODS):
            self._pod_changed(old, new)
        elif key.startswith(PERSISTENT_VOLUMES):
            self._volume_changed(old, new)
        else:  # a VolumeAttachment or a ResourceSlice: an edge to its spec.nodeName
            obj = new if new is not None else old
            assert obj is not None
            name = (obj.get("metadata") or {}).get("name", "")
            node = ((new or {}).get("spec") or {}).get("nodeName")
            by_name = self._slices if key.startswith(RESOURCE_SLICES) else self._attachments
            if node:
                by_name[name] = node
            else:
                by_name.pop(name, None)

    def _pod_changed(self, old: Obj | None, new: Obj | None) -> None:
        meta = ((new if new is not None else old) or {}).get("metadata") or {}
        pod = (meta.get("namespace", ""), meta.get("name", ""))
        node = ((new or {}).get("spec") or {}).get("nodeName") or ""
        refs = pod_refs(new) if new is not None and node else frozenset()
        previous = self._pods.get(pod)
        if previous == (node, refs):
            return  # a status write: nothing a node may reach has changed
        if previous is not None:
            self._count(previous[0], previous[1], -1)
            del self._pods[pod]
        if node and new is not None:
            self._pods[pod] = (node, refs)
            self._count(node, refs, 1)

    def _count(self, node: str, refs: frozenset[Ref], step: int) -> None:
        for ref in refs:
            nodes = self._nodes_of.setdefault(ref, {})
            count = nodes.get(node, 0) + step
            if count > 0:
                nodes[node] = count
                continue
            nodes.pop(node, None)
            if not nodes:
                del self._nodes_of[ref]

    def _volume_changed(self, old: Obj | None, new: Obj | None) -> None:
        name = ((new if new is not None else old) or {}).get("metadata", {}).get("name", "")
        previous = self._volumes.pop(name, None)
        if previous is not None:
            for secret in previous.secrets:
                users = self._volumes_of_secret.get(secret, set())
                users.discard(name)
                if not users:
                    self._volumes_of_secret.pop(secret, None)
        claim = ((new or {}).get("spec") or {}).get("claimRef")
        if not claim or new is None:
            return  # kube links a volume only once it is claimed
        volume = _Volume((claim.get("namespace", ""), claim.get("name", "")), pv_secrets(new))
        self._volumes[name] = volume
        for secret in volume.secrets:
            self._volumes_of_secret.setdefault(secret, set()).add(name)
