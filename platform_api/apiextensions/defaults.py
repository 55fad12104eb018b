"""Defaulting of CustomResourceDefinition objects: kube's v1 ``SetDefaults_*``.

Run on every write before validation, so what a client reads back is what kube stores:
singular and list kind from the kind, conversion ``None``, a webhook service on port 443,
and the storage version as the first stored version.
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]


def default_crd_spec(spec: Obj) -> None:
    names = spec.get("names")
    kind = (names or {}).get("kind") or ""
    if names is not None and kind:
        if not names.get("singular"):
            names["singular"] = kind.lower()
        if not names.get("listKind"):
            names["listKind"] = kind + "List"
    if spec.get("conversion") is None:
        spec["conversion"] = {"strategy": "None"}
    webhook = spec["conversion"].get("webhook") or {}
    service = (webhook.get("clientConfig") or {}).get("service")
    if service is not None and service.get("port") is None:
        service["port"] = 443


def default_crd(crd: Obj) -> None:
    """``SetObjectDefaults_CustomResourceDefinition``."""
    spec = crd.setdefault("spec", {})
    default_crd_spec(spec)
    status = crd.get("status") or {}
    if not status.get("storedVersions"):
        for version in spec.get("versions") or []:
            if version.get("storage"):
                crd["status"] = {**status, "storedVersions": [version.get("name", "")]}
                break
