"""An admission request as webhooks and policies see it: kube's ``admission.Attributes``
with the objects in the version the request named, and the AdmissionRequest body built
from them (the ``request`` of a review, and the ``request`` variable of CEL)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from platform_api.authentication.user import UserInfo
from platform_api.context import Trace

Obj = dict[str, Any]


@dataclass
class AdmissionRequest:
    """kube's admission attributes as webhooks and policies see them (one per request)."""

    operation: str  # CREATE, UPDATE, DELETE, CONNECT
    group: str
    version: str
    resource: str
    subresource: str
    kind: tuple[str, str, str]  # group, version, kind of the object sent
    namespaced: bool
    namespace: str
    name: str
    user: UserInfo
    dry_run: bool
    options: Obj | None
    object: Obj | None
    old_object: Obj | None
    warnings: list[str] = field(default_factory=list)
    audit_annotations: dict[str, str] = field(default_factory=dict)
    # What the client asked for, when a webhook or policy matched an equivalent version
    # and sees the request converted to it (matchPolicy: Equivalent); else None.
    request_kind: tuple[str, str, str] | None = None
    request_resource: tuple[str, str, str] | None = None
    trace: Trace | None = None  # the request's spans, when it is traced


def request_body(req: AdmissionRequest, uid: str) -> Obj:
    """The ``request`` of an AdmissionReview, in kube's field order."""
    group, version, kind = req.kind
    gvk = {"group": group, "version": version, "kind": kind}
    gvr = {"group": req.group, "version": req.version, "resource": req.resource}
    body: Obj = {"uid": uid, "kind": gvk, "resource": gvr}
    if req.subresource:
        body["subResource"] = req.subresource
    body["requestKind"] = dict(gvk)
    if req.request_kind is not None:
        body["requestKind"] = dict(zip(("group", "version", "kind"), req.request_kind, strict=True))
    body["requestResource"] = dict(gvr)
    if req.request_resource is not None:
        names = ("group", "version", "resource")
        body["requestResource"] = dict(zip(names, req.request_resource, strict=True))
    if req.subresource:
        body["requestSubResource"] = req.subresource
    if req.name:
        body["name"] = req.name
    if req.namespace:
        body["namespace"] = req.namespace
    body["operation"] = req.operation
    body["userInfo"] = req.user.to_review()
    body["object"] = req.object
    body["oldObject"] = req.old_object
    body["dryRun"] = req.dry_run
    body["options"] = req.options
    return body
