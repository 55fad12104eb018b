"""What admission's policies and webhooks are given and what they hand back: the
AdmissionRequest a request becomes (objects in the group and version asked for, kube's
options object), the structured merge a mutating policy's apply configurations use, and
the warnings and audit annotations they report, passed on to the response and audit."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from platform_api.admission.interface import Attributes
from platform_api.admission.policy.mutating import Atomics, Merge
from platform_api.admission.request import AdmissionRequest
from platform_api.fieldmanager import walk

if TYPE_CHECKING:
    from platform_api.endpoints.scope import Scope

Obj = dict[str, Any]
META_GROUP_VERSION = "meta.platform.io/v1"
_OPTIONS_KIND = {"CREATE": "CreateOptions", "UPDATE": "UpdateOptions", "DELETE": "DeleteOptions"}


def admission_request(
    scope: Scope, attrs: Attributes, obj: Obj | None, old: Obj | None
) -> AdmissionRequest:
    """What a webhook is told about this request (objects in the group asked for)."""
    rt = attrs.resource
    options: Obj = {
        "kind": _OPTIONS_KIND.get(attrs.operation, ""),
        "apiVersion": META_GROUP_VERSION,
    }
    if attrs.dry_run:
        options["dryRun"] = ["All"]
    if scope.ctx.field_manager and attrs.operation != "DELETE":
        options["fieldManager"] = scope.ctx.field_manager
    return AdmissionRequest(
        operation=attrs.operation,
        group=rt.group,
        version=rt.version,
        resource=rt.plural,
        subresource=attrs.subresource,
        kind=rt.gvk(attrs.subresource),
        namespaced=rt.namespaced,
        namespace=attrs.namespace,
        name=attrs.name,
        user=attrs.user,
        dry_run=attrs.dry_run,
        options=options if attrs.operation in _OPTIONS_KIND else None,
        object=obj,
        old_object=old,
        trace=scope.ctx.trace,
    )


def merging(scope: Scope) -> tuple[Merge, Atomics]:
    """Structured-merge-diff for the request's kind: a mutating policy's apply
    configurations merge as server-side apply merges."""
    manager = scope.handlers.field_manager(scope.resource)
    typed, node = manager.typed, manager.node

    def merge(live: Obj, config: Obj) -> Obj:
        merged: Obj = walk.merge(typed, node, live, config)
        return merged if typed.unstructured else walk.without_nulls(merged)

    def atomics(config: Obj) -> list[str]:
        return walk.atomic_paths(typed, node, config)

    return merge, atomics


def report(scope: Scope, req: AdmissionRequest) -> None:
    """Webhook and policy warnings become the response's Warning headers, their audit
    annotations the request's audit event's."""
    for text in req.warnings:
        scope.ctx.warn(text)
    req.warnings.clear()
    for key, value in req.audit_annotations.items():
        scope.ctx.annotate(key, value)
    req.audit_annotations.clear()
