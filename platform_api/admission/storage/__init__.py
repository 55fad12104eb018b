"""kube's storage admission plugins: DefaultStorageClass, StorageObjectInUseProtection and
PersistentVolumeClaimResize, one module each (the plugin table names a module per plugin)."""

from __future__ import annotations

from typing import Any

# kube's ``volume.beta.kubernetes.io/storage-class``: the claim's class before the field.
BETA_CLASS_ANNOTATION = "volume.beta.platform.io/storage-class"
# kube's ``storageclass(.beta).kubernetes.io/is-default-class``.
DEFAULT_CLASS_ANNOTATIONS = (
    "storageclass.platform.io/is-default-class",
    "storageclass.beta.platform.io/is-default-class",
)


def claim_class(claim: dict[str, Any]) -> str | None:
    """The claim's class (the beta annotation first), None when it names none."""
    annotations = (claim.get("metadata") or {}).get("annotations") or {}
    if BETA_CLASS_ANNOTATION in annotations:
        return str(annotations[BETA_CLASS_ANNOTATION])
    name = (claim.get("spec") or {}).get("storageClassName")
    return None if name is None else str(name)
