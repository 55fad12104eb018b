"""DefaultStorageClass: a claim created without a class gets the default StorageClass.

kube's ``setdefault`` plugin: a claim that names a class (even ``""``, or through the
beta annotation) keeps it; otherwise the newest class annotated as default is written to
``spec.storageClassName``; with no default class the claim is left as it is.
"""

from __future__ import annotations

from typing import Any

from platform_api.admission.classes import newest_default
from platform_api.admission.interface import Attributes
from platform_api.admission.plugins import PluginContext
from platform_api.admission.storage import DEFAULT_CLASS_ANNOTATIONS, claim_class
from platform_api.storage.interface import Storage

Obj = dict[str, Any]


class DefaultStorageClass:
    name = "DefaultStorageClass"
    resources = frozenset({("", "persistentvolumeclaims")})

    def __init__(self, storage: Storage, classes_prefix: bytes) -> None:
        self._storage = storage
        self._prefix = classes_prefix

    def admit(self, attrs: Attributes, obj: Obj | None, old: Obj | None) -> None:
        rt = attrs.resource
        if attrs.operation != "CREATE" or (rt.group, rt.plural) != ("", "persistentvolumeclaims"):
            return
        if attrs.subresource or obj is None or claim_class(obj) is not None:
            return
        default = newest_default(self._storage, self._prefix, DEFAULT_CLASS_ANNOTATIONS)
        if default is not None:
            obj.setdefault("spec", {})["storageClassName"] = default["metadata"]["name"]


def build(ctx: PluginContext) -> DefaultStorageClass:
    classes = ctx.stores[("storage.platform.io", "v1", "storageclasses")]
    return DefaultStorageClass(ctx.storage, classes.prefix)
