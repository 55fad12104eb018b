"""Converting custom resources between the versions of their CRD.

With ``strategy: None`` kube's converter only rewrites ``apiVersion``.  A converter
returns the object in the wanted version, or None when it already is in it (so reads in
the storage version cost nothing).  Whatever converted it, kube then coerces the object
to the version it now has (``coerced``): a field that version's schema does not know is
pruned, so a field only v2 declares is not stored in v1, nor shown in v2 when v1 holds it.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import orjson

from platform_api.apiextensions import crd as crds
from platform_api.apiextensions.schema.compiled import CompiledSchema, DecodeError

Obj = dict[str, Any]
Convert = Callable[[Obj, str], Obj | None]


def convert_none(obj: Obj, api_version: str) -> Obj | None:
    if obj.get("apiVersion") == api_version:
        return None
    return {**obj, "apiVersion": api_version}


def converter_for(crd: Obj) -> Convert:
    """The CRD's conversion between its versions."""
    return convert_none


def schema_for(crd: Obj, version: str) -> CompiledSchema:
    """The coercion of objects converted into ``version``."""
    preserve = crd["spec"].get("preserveUnknownFields", False)
    return CompiledSchema(crds.schema_of(crd, version) or {}, preserve)


def coerced(obj: Obj, schema: CompiledSchema) -> Obj:
    """kube's ``unstructuredSchemaCoercer.apply`` after a conversion: a copy with the
    metadata coerced and what ``schema`` does not know pruned (as it stands when that
    cannot be done, as kube serves what it cannot coerce), its keys sorted as Go writes
    a custom resource's maps."""
    fixed = copy.deepcopy(obj)
    try:
        schema.decode(fixed, from_storage=True)
    except DecodeError:
        return obj
    meta, was = fixed.get("metadata"), obj.get("metadata") or {}
    if isinstance(meta, dict) and "resourceVersion" in was:  # its place, for storage to fill
        meta.setdefault("resourceVersion", was["resourceVersion"])
    return orjson.loads(orjson.dumps(fixed, option=orjson.OPT_SORT_KEYS))
