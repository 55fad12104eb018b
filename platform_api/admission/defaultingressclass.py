"""DefaultIngressClass: an Ingress created without a class gets the default IngressClass.

kube's ``defaultingressclass`` plugin: an Ingress with ``spec.ingressClassName`` or the
legacy ``platform.io/ingress.class`` annotation keeps its class; otherwise the newest
IngressClass annotated ``ingressclass.platform.io/is-default-class: "true"`` is written to
``spec.ingressClassName``; with none, nothing changes.
"""

from __future__ import annotations

from typing import Any

from platform_api.admission.classes import newest_default
from platform_api.admission.interface import Attributes
from platform_api.admission.plugins import PluginContext
from platform_api.storage.interface import Storage

DEFAULT_ANNOTATION = "ingressclass.platform.io/is-default-class"
LEGACY_CLASS_ANNOTATION = "platform.io/ingress.class"
GROUP = "networking.platform.io"


class DefaultIngressClass:
    name = "DefaultIngressClass"
    resources = frozenset({(GROUP, "ingresses")})

    def __init__(self, storage: Storage, classes_prefix: bytes) -> None:
        self._storage = storage
        self._prefix = classes_prefix

    def admit(self, attrs: Attributes, obj: dict[str, Any] | None, old: Any) -> None:
        rt = attrs.resource
        if attrs.operation != "CREATE" or (rt.group, rt.plural) != (GROUP, "ingresses"):
            return
        if attrs.subresource or obj is None:
            return
        spec = obj.get("spec") or {}
        annotations = (obj.get("metadata") or {}).get("annotations") or {}
        if spec.get("ingressClassName") is not None or LEGACY_CLASS_ANNOTATION in annotations:
            return
        default = newest_default(self._storage, self._prefix, (DEFAULT_ANNOTATION,))
        if default is not None:
            obj.setdefault("spec", {})["ingressClassName"] = default["metadata"]["name"]


def build(ctx: PluginContext) -> DefaultIngressClass:
    classes = ctx.stores[(GROUP, "v1", "ingressclasses")]
    return DefaultIngressClass(ctx.storage, classes.prefix)
