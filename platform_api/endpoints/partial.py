"""PartialObjectMetadata: an object's metadata alone, as kube's metadata-only views
(``as=PartialObjectMetadata``, a Table row's ``object``) give it."""

from __future__ import annotations

from typing import Any

import orjson

from platform_api.codec.goshape import STORED, shaper
from platform_api.codec.protobuf_schema import message_for
from platform_api.registry.apps import TEMPLATE_GENERATION

Obj = dict[str, Any]
_OBJECT_META = "k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta"


def metadata_only(obj: Obj, api_version: str) -> Obj:
    """``obj``'s PartialObjectMetadata in ``api_version`` (the meta group asked).  Its
    metadata is a typed ObjectMeta: a custom resource's (a map, keys sorted) takes the
    struct's order and omissions, as kube's conversion gives it; a built-in kind's is
    in that shape already and is shared, not copied."""
    meta = obj.get("metadata", {})
    if message_for(obj.get("apiVersion") or "", obj.get("kind") or "") is None:
        meta = orjson.loads(orjson.dumps(meta))  # JSON's own copy: deepcopy's is 9x slower
        shaper(_OBJECT_META)(meta, STORED)
    elif obj.get("kind") == "DaemonSet" and TEMPLATE_GENERATION in (meta.get("annotations") or {}):
        # kube cuts the metadata from its internal object, whose template generation
        # is a spec field: the annotation v1 carries it in is not there
        annotations = {k: v for k, v in meta["annotations"].items() if k != TEMPLATE_GENERATION}
        meta = {
            k: annotations if k == "annotations" else v
            for k, v in meta.items()
            if k != "annotations" or annotations
        }
    return {"kind": "PartialObjectMetadata", "apiVersion": api_version, "metadata": meta}
