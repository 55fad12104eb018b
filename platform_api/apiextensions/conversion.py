"""Converting custom resources between the versions of their CRD.

With ``strategy: None`` kube's converter only rewrites ``apiVersion``: the versions
share one schema in practice.  A converter returns the object in the wanted version,
or None when it already is in it (so reads in the storage version cost nothing).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Obj = dict[str, Any]
Convert = Callable[[Obj, str], Obj | None]


def convert_none(obj: Obj, api_version: str) -> Obj | None:
    if obj.get("apiVersion") == api_version:
        return None
    return {**obj, "apiVersion": api_version}


def converter_for(crd: Obj) -> Convert:
    """The CRD's conversion between its versions."""
    return convert_none
