"""Who owns a workload's replicas, as its ``scale`` sub-resource sees them and back
(kube's managedfields ScaleHandler), for server-side apply to a Scale.

The Scale (autoscaling/v1) has one field an apply can own, ``spec.replicas``; the object
has it at its own path (``spec.replicas``, or a custom resource's ``specReplicasPath``).
``scale_owners`` gives the Scale the object's owners of that path; ``parent_owners`` folds the
Scale's owners after the apply back into the object's: an owner the apply took the
field from loses it there, and the apply's own entry owns the object's path, in the
object's version, stamped with no time (as kube rebuilds it).
"""

from __future__ import annotations

from dataclasses import replace

from platform_api.fieldmanager.entries import Managers
from platform_api.fieldmanager.fieldpath import Path

SCALE_VERSION = "autoscaling/v1"
SCALE_REPLICAS: Path = ("f:spec", "f:replicas")
Origins = dict[tuple[str, str, str, str], tuple[str, str, str, str]]


def replicas_path(dotted: str) -> Path:
    """``.spec.replicas`` as a managedFields path."""
    return tuple(f"f:{part}" for part in dotted.strip(".").split("."))


def scale_owners(parent: Managers, replicas: Path) -> tuple[Managers, Origins]:
    """The Scale's owners: each owner of the object's replicas, in the Scale's version;
    and, for each, the key of the object's entry it came from."""
    owners: Managers = {}
    origins: Origins = {}
    for key, entry in parent.items():
        if replicas in entry.fields:
            scaled = replace(entry, api_version=SCALE_VERSION, fields={SCALE_REPLICAS})
            owners[scaled.key] = scaled
            origins[scaled.key] = key
    return owners, origins


def parent_owners(
    parent: Managers, scale: Managers, origins: Origins, replicas: Path, version: str
) -> Managers:
    """The object's owners once the Scale's (after the apply) are folded back in."""
    remaining = {origins.get(key, key): entry for key, entry in scale.items()}
    out: Managers = {}
    for key, entry in parent.items():
        if replicas not in entry.fields:
            out[key] = entry
        elif key in remaining:  # still an owner on the Scale: kept as it is
            out[key] = entry
            del remaining[key]
        elif entry.fields - {replicas}:  # the apply took the replicas from it
            out[key] = replace(entry, fields=entry.fields - {replicas})
    for key, entry in remaining.items():
        if SCALE_REPLICAS in entry.fields:
            time = parent[key].time if key in parent else None
            owner = replace(entry, api_version=version, time=time, fields={replicas})
            out[owner.key] = owner
    return out
