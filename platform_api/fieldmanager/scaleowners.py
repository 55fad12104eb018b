"""Who owns a workload's replicas, as its ``scale`` sub-resource sees them and back
(kube's managedfields ScaleHandler), for every write to a Scale.

The Scale (autoscaling/v1) has one field a write can own, ``spec.replicas``; the object
has it at its own path in each of its versions (``spec.replicas``, or a custom resource's
``specReplicasPath``): the ``Mappings``.  ``scale_owners`` gives the Scale the object's
owners of that path; ``parent_owners`` folds the Scale's owners after the write back
into the object's.

kube matches the two sides by manager identifier, and an Update entry's identifier names
its version: on the Scale it is autoscaling/v1, on the object the object's version.  So
only Apply entries are ever matched.  An Update entry that still owns the replicas after
the write comes back as a second entry of its own (in the request's version, with no
time) beside what is left of the first; an owner the write took the field from loses
it; the writer's entry owns the object's path, stamped with no time.
"""

from __future__ import annotations

from dataclasses import replace

from platform_api.fieldmanager.entries import Managers
from platform_api.fieldmanager.fieldpath import Path

SCALE_VERSION = "autoscaling/v1"
SCALE_REPLICAS: Path = ("f:spec", "f:replicas")
SPEC_REPLICAS: Path = ("f:spec", "f:replicas")
# apiVersion -> where that version keeps the replicas (None: a version without a Scale)
Mappings = dict[str, Path | None]
# the built-in kinds' versions kube's ScaleHandlers know; an entry of any other is dropped
_BUILT_IN: dict[tuple[str, str], tuple[str, ...]] = {
    ("apps", "deployments"): ("apps/v1beta1", "apps/v1beta2", "apps/v1"),
    ("apps", "statefulsets"): ("apps/v1beta1", "apps/v1beta2", "apps/v1"),
    ("apps", "replicasets"): ("apps/v1beta2", "apps/v1"),
    ("", "replicationcontrollers"): ("v1",),
}


def replicas_path(dotted: str) -> Path:
    """``.spec.replicas`` as a managedFields path."""
    return tuple(f"f:{part}" for part in dotted.strip(".").split("."))


def built_in_mappings(group: str, plural: str) -> Mappings:
    """A built-in workload's versions, each keeping its replicas at ``spec.replicas``."""
    return dict.fromkeys(_BUILT_IN.get((group, plural), ()), SPEC_REPLICAS)


def scale_owners(parent: Managers, mappings: Mappings) -> Managers:
    """The Scale's owners: each owner of the object's replicas, in the Scale's version
    (keyed as the Scale's field manager keys them)."""
    owners: Managers = {}
    for entry in parent.values():
        path = mappings.get(entry.api_version)
        if path is not None and path in entry.fields:
            scaled = replace(entry, api_version=SCALE_VERSION, fields={SCALE_REPLICAS})
            owners[scaled.key] = scaled
    return owners


def parent_owners(parent: Managers, scale: Managers, mappings: Mappings, version: str) -> Managers:
    """The object's owners once the Scale's (after the write) are folded back in, the
    write made through the object's ``version``.  Entries of versions the kind does not
    know are dropped; an Update entry that kept the replicas becomes two (a key of the
    result is then its Scale-side key, so both are written)."""
    remaining = dict(scale)
    out: Managers = {}
    for key, entry in parent.items():
        if entry.api_version not in mappings:
            continue
        path = mappings[entry.api_version]
        if path is None or path not in entry.fields:
            out[key] = entry
        elif key in remaining:  # an applier still owning them on the Scale: kept
            out[key] = entry
            del remaining[key]
        elif entry.fields - {path}:  # the write took the replicas from it
            out[key] = replace(entry, fields=entry.fields - {path})
    target = mappings.get(version)
    for key, entry in remaining.items():
        if target is not None and SCALE_REPLICAS in entry.fields:
            time = parent[key].time if key in parent else None
            out[key] = replace(entry, api_version=version, time=time, fields={target})
    return out
