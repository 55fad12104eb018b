"""Events: the create rules of kube's ValidateEventCreate.

New-style events must say who reports them (``reportingController``,
``reportingInstance``), what happened (``action``, ``reason``) and when
(``eventTime``); ``type`` is Normal or Warning; the deprecated fields must be unset.
"""

from __future__ import annotations

from platform_api.registry.core import CoreCreateOnUpdateStrategy
from platform_api.registry.strategy import GenericStrategy, Obj, register
from platform_api.validation import field
from platform_api.validation.field import FieldError
from platform_api.validation.names import is_qualified_name

LENGTH_LIMIT = 128
NOTE_LIMIT = 1024
DEPRECATED = (
    "deprecatedFirstTimestamp",
    "deprecatedLastTimestamp",
    "deprecatedCount",
    "deprecatedSource",
)


@register("events.platform.io", "Event")
class EventStrategy(GenericStrategy):
    allow_create_on_update = True

    def validate(self, obj: Obj) -> list[FieldError]:
        errs = super().validate(obj)
        controller = obj.get("reportingController", "")
        if not controller:
            errs.append(field.required("reportingController"))
        else:
            errs += [
                field.invalid("reportingController", controller, m)
                for m in is_qualified_name(controller)
            ]
        for name in ("reportingInstance", "action", "reason"):
            value = obj.get(name, "")
            if not value:
                errs.append(field.required(name))
            elif len(value) > LENGTH_LIMIT:
                errs.append(field.invalid(name, "", f"can have at most {LENGTH_LIMIT} characters"))
        if len(obj.get("note", "")) > NOTE_LIMIT:
            errs.append(field.invalid("note", "", f"can have at most {NOTE_LIMIT} characters"))
        if not obj.get("eventTime"):
            errs.append(field.required("eventTime"))
        if obj.get("type") not in ("Normal", "Warning"):
            errs.append(field.invalid("type", "", f"has invalid value: {obj.get('type', '')}"))
        for name in DEPRECATED:
            if obj.get(name):
                errs.append(field.invalid(name, "", "needs to be unset"))
        return errs


@register("", "Event")
class CoreEventStrategy(CoreCreateOnUpdateStrategy):
    """v1 Events: an old-style one (no eventTime) is about an object of its own
    namespace (or, without one, lives in ``default``), as kube's legacyValidateEvent
    requires."""

    def validate(self, obj: Obj) -> list[FieldError]:
        errs = super().validate(obj)
        if obj.get("eventTime"):
            return errs
        namespace = obj["metadata"].get("namespace", "")
        involved = (obj.get("involvedObject") or {}).get("namespace") or ""
        if (not involved and namespace not in ("", "default")) or (
            involved and involved != namespace
        ):
            errs.append(
                field.invalid(
                    "involvedObject.namespace", involved, "does not match event.namespace"
                )
            )
        return errs
