"""ResourceClaims and ResourceClaimTemplates (resource.platform.io): kube's strategies and
``ValidateResourceClaim``/``ValidateResourceClaimTemplate`` with their updates.

A claim's spec never changes after creation (kube checks only that, not the spec again);
its status is written through ``/status`` and checked by ``claimstatus``.  A template is
validated in full on every write, and its spec is immutable too.  Asking for admin
access to devices needs the ``resource.platform.io/admin-access: "true"`` label on the
namespace (kube's AuthorizedForAdmin), checked when the server has connected the strategy
to its stores; status writes also need the authorizer's leave for the parts they change
(``claimauthz``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from platform_api import errors
from platform_api.authorization.interface import Authorizer
from platform_api.registry import requester
from platform_api.registry.claimauthz import status_denials
from platform_api.registry.claimstatus import device_id, validate_status_update
from platform_api.registry.defaults import defaults
from platform_api.registry.deviceclaims import (
    CONSUMABLE_CAPACITY,
    default_device_claim,
    default_tolerations,
    request_names,
    validate_device_claim,
)
from platform_api.registry.dranames import GROUP, IMMUTABLE, Obj, items, obj
from platform_api.registry.gointernal import go_text, same
from platform_api.registry.strategy import RESET_FOR_STATUS, GenericStrategy, register
from platform_api.validation import field
from platform_api.validation.field import FieldError
from platform_api.validation.names import validate_annotations, validate_labels
from platform_api.validation.objectmeta import (
    OBJECT_META_ORDER,
    validate_kube_finalizers,
    validate_object_meta,
    validate_object_meta_update,
)

ADMIN_LABEL = "resource.platform.io/admin-access"  # kube's DRAAdminNamespaceLabelKey
NamespaceLabels = Callable[[str], Mapping[str, str] | None]
_FINALIZERS = "metadata.finalizers"
DEVICE_STATUS = "DRAResourceClaimDeviceStatus"
GRANULAR_STATUS = "DRAResourceClaimGranularStatusAuthorization"


@defaults(GROUP, "ResourceClaim")
def _claim_defaults(claim: Obj) -> None:
    default_device_claim(obj(claim.get("spec")).get("devices"))
    allocation = obj(obj(claim.get("status")).get("allocation"))
    for result in items(obj(allocation.get("devices")).get("results")):
        if isinstance(result, dict):
            default_tolerations(result.get("tolerations"))


@defaults(GROUP, "ResourceClaimTemplate")
def _template_defaults(template: Obj) -> None:
    default_device_claim(obj(obj(obj(template.get("spec")).get("spec")).get("devices")))


def _meta(meta: Obj, namespaced: bool = True) -> list[FieldError]:
    """core's ValidateObjectMeta (names as DNS subdomains)."""
    errs = validate_object_meta(meta, namespaced, "subdomain")
    return errs + validate_kube_finalizers(meta.get("finalizers") or [], _FINALIZERS)


def _meta_update(new: Obj, old: Obj) -> list[FieldError]:
    """core's ValidateObjectMetaUpdate."""
    errs = validate_object_meta_update(new, old)
    return errs + validate_kube_finalizers(new.get("finalizers") or [], _FINALIZERS)


class _AdminAccess(GenericStrategy):
    """Reads a namespace's labels for kube's admin-access checks (once wired)."""

    returns_deleted_object = True  # as each of kube's DRA stores

    namespace_labels: NamespaceLabels | None = None
    authorizer: Callable[[], Authorizer | None] = staticmethod(lambda: None)

    def connect(
        self, stores: Mapping[tuple[str, str, str], Any], authorizer: Callable[[], Any]
    ) -> None:
        """Called by the server: read namespaces from its core store, authorize with its
        authorizer (a getter: the server builds it after the stores)."""
        self.authorizer = authorizer
        namespaces = stores[("", "v1", "namespaces")]

        def labels(name: str) -> Mapping[str, str] | None:
            try:
                found = namespaces.get("", name).object
            except errors.StatusError:
                return None
            return dict(obj(found.get("metadata")).get("labels") or {})

        self.namespace_labels = labels

    def admin_errors(self, namespace: str, path: str) -> list[FieldError]:
        """``AuthorizedForAdmin``: admin access asked for at ``path``."""
        if self.namespace_labels is None:
            return []
        labels = self.namespace_labels(namespace)
        if labels is None:
            detail = (
                "could not retrieve namespace to verify admin access: "
                f'namespaces "{namespace}" not found'
            )
            return [FieldError(field.INTERNAL, path, field.OMIT, detail)]
        if labels.get(ADMIN_LABEL) != "true":
            detail = (
                f"admin access to devices requires the `{ADMIN_LABEL}: true` label on the "
                "containing namespace"
            )
            return [field.forbidden(path, detail)]
        return []


def _admin_request(devices: Any) -> str | None:
    """The path of the first request asking for admin access (claims' paths)."""
    for i, request in enumerate(items(obj(devices).get("requests"))):
        exactly = obj(request).get("exactly")
        if isinstance(exactly, dict) and exactly.get("adminAccess") is True:
            return f"spec.devices.requests[{i}].adminAccess"
    return None


def _admin_result(status: Obj) -> str | None:
    results = items(obj(obj(status.get("allocation")).get("devices")).get("results"))
    for i, result in enumerate(results):
        if obj(result).get("adminAccess") is True:
            return f"status.allocation.devices.results[{i}].adminAccess"
    return None


@register(GROUP, "ResourceClaim")
class ResourceClaimStrategy(_AdminAccess):
    # kube's status strategy resets these (ResetObjectMetaForStatus)
    status_keeps_old_metadata: tuple[str, ...] = RESET_FOR_STATUS

    def validate(self, claim: Obj) -> list[FieldError]:
        meta, spec = claim["metadata"], obj(claim.get("spec"))
        where = _admin_request(spec.get("devices"))
        errs = self.admin_errors(meta.get("namespace", ""), where) if where else []
        errs += super().validate(claim)
        consumable = self.gates(CONSUMABLE_CAPACITY)
        return errs + validate_device_claim(spec.get("devices"), "spec.devices", False, consumable)

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        """The metadata, and a spec as it was (nothing else of it is checked again)."""
        meta = new["metadata"]
        errs = _meta(meta) + _meta_update(meta, old["metadata"])
        spec, before = obj(new.get("spec")), obj(old.get("spec"))
        if not same("dra.ResourceClaimSpec", spec, before):
            errs.append(field.invalid("spec", go_text("dra.ResourceClaimSpec", spec), IMMUTABLE))
        return errs

    def prepare_status_update(self, new: Obj, old: Obj) -> None:
        """kube's dropDeallocatedStatusDevices: status of devices no longer allocated goes."""
        status, before = obj(new.get("status")), obj(old.get("status"))
        if not self.gates(DEVICE_STATUS) and not items(before.get("devices")):
            return
        results = items(obj(obj(before.get("allocation")).get("devices")).get("results"))
        gone = {device_id(r) for r in results}
        results = items(obj(obj(status.get("allocation")).get("devices")).get("results"))
        gone -= {device_id(r) for r in results}
        devices = status.get("devices")
        if not isinstance(devices, list) or not gone:
            return
        kept = [d for d in devices if device_id(d) not in gone]
        if kept:
            status["devices"] = kept
        else:
            del status["devices"]

    async def authorize_status(self, new: Obj, old: Obj) -> list[FieldError]:
        """kube's first checks of a status write, before its validation: admin access
        (AuthorizedForAdminStatus), then what the writer may change (``claimauthz``)."""
        namespace = new["metadata"].get("namespace", "")
        status, before = obj(new.get("status")), obj(old.get("status"))
        where = _admin_result(status)
        errs = self.admin_errors(namespace, where) if where and not _admin_result(before) else []
        authorizer, user = self.authorizer(), requester.current()
        if authorizer is None or user is None or not self.gates(GRANULAR_STATUS):
            return errs  # a write the server makes itself, or no authorizer wired
        verb = requester.VERB.get() or "update"
        return errs + await status_denials(authorizer, user, verb, namespace, status, before)

    def validate_status_update(self, new: Obj, old: Obj) -> list[FieldError]:
        meta, status, before = new["metadata"], obj(new.get("status")), obj(old.get("status"))
        errs = _meta_update(meta, old["metadata"])
        names = request_names(obj(new.get("spec")).get("devices"))
        deleted = bool(meta.get("deletionTimestamp"))
        return errs + validate_status_update(status, before, deleted, names)


@register(GROUP, "ResourceClaimTemplate")
class ResourceClaimTemplateStrategy(_AdminAccess):
    def validate(self, template: Obj) -> list[FieldError]:
        meta, spec = template["metadata"], obj(template.get("spec"))
        where = _admin_request(obj(spec.get("spec")).get("devices"))
        errs = self.admin_errors(meta.get("namespace", ""), where) if where else []
        return errs + super().validate(template) + self._spec(spec)

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        """kube validates the whole template again, then that its spec is unchanged."""
        meta, spec = new["metadata"], obj(new.get("spec"))
        errs = _meta(meta) + self._spec(spec) + _meta_update(meta, old["metadata"])
        before = obj(old.get("spec"))
        if not same("dra.ResourceClaimTemplateSpec", spec, before):
            shown = go_text("dra.ResourceClaimTemplateSpec", spec)
            errs.append(field.invalid("spec", shown, IMMUTABLE))
        return errs

    def _spec(self, spec: Obj) -> list[FieldError]:
        """``validateResourceClaimTemplateSpec``: the claims' metadata, then their spec."""
        devices = obj(spec.get("spec")).get("devices")
        consumable = self.gates(CONSUMABLE_CAPACITY)
        errs = _template_meta(obj(spec.get("metadata")))
        return errs + validate_device_claim(devices, "spec.spec.devices", False, consumable)


def _template_meta(meta: Obj) -> list[FieldError]:
    """core's ValidateTemplateObjectMeta: labels and annotations, nothing else."""
    errs = validate_annotations(meta.get("annotations") or {}, "spec.metadata.annotations")
    errs += validate_labels(meta.get("labels") or {}, "spec.metadata.labels")
    for key in OBJECT_META_ORDER:  # kube's ValidateTemplateObjectMeta: nothing else set
        if key not in ("labels", "annotations") and meta.get(key) not in (None, "", 0):
            name = "uID" if key == "uid" else key  # the Go field's name, lower-cased first
            errs.append(field.forbidden(f"spec.metadata.{name}", "cannot be set"))
    return errs
