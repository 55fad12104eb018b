"""Events: kube's ValidateEventCreate and ValidateEventUpdate, for both Event APIs.

kube validates one internal Event whichever API wrote it, so the field paths in its
messages are core v1's (``involvedObject``, ``message``, ``count``), and an invalid
``events.platform.io`` Event is an invalid ``Event`` of the core group.

- Every Event gets the legacy rules: an old-style one (no ``eventTime``) is about an
  object of its own namespace (or, without one, lives in ``default``); a new-style one
  says who reports it, what happened and why, within kube's lengths.
- One written through ``events.platform.io`` also gets the strict rules: a DNS-subdomain
  name, ``eventTime``, ``type`` Normal or Warning, a sane ``series``, the deprecated
  fields unset; and on update, everything but ``series`` is immutable.
- A core v1 Event's name is any path segment, as kube's generic checks allow.
"""

from __future__ import annotations

from typing import Any

from platform_api.gotext import Struct, marshal
from platform_api.registry.core import CoreCreateOnUpdateStrategy
from platform_api.registry.deletion import UNSUPPORTED
from platform_api.registry.eventconversion import to_core
from platform_api.registry.strategy import GenericStrategy, Obj, register
from platform_api.scheme import namespaces
from platform_api.validation import field
from platform_api.validation.field import FieldError, GoText
from platform_api.validation.names import is_dns1123_subdomain, is_qualified_name

LENGTH_LIMIT = 128
NOTE_LIMIT = 1024
MISMATCH = "does not match event.namespace"
# Where a new-style Event without an involved namespace may live (kube's default and
# kube-system).
_UNNAMESPACED_HOMES = (
    namespaces.DEFAULT,
    namespaces.SYSTEM,
    namespaces.UPSTREAM[namespaces.SYSTEM],
)
_REFERENCE = (
    ("Kind", "kind"),
    ("Namespace", "namespace"),
    ("Name", "name"),
    ("UID", "uid"),
    ("APIVersion", "apiVersion"),
    ("ResourceVersion", "resourceVersion"),
    ("FieldPath", "fieldPath"),
)
_SOURCE = (("Component", "component"), ("Host", "host"))


def legacy_rules(event: Obj, core_request: bool) -> list[FieldError]:
    """kube's legacyValidateEvent, over the core form of the Event."""
    namespace = event["metadata"].get("namespace", "")
    involved = (event.get("involvedObject") or {}).get("namespace") or ""
    errs: list[FieldError] = []
    if not event.get("eventTime"):
        if (not involved and namespace not in ("", namespaces.DEFAULT)) or (
            involved and involved != namespace
        ):
            errs.append(field.invalid("involvedObject.namespace", involved, MISMATCH))
    else:
        if not involved and namespace not in _UNNAMESPACED_HOMES:
            errs.append(field.invalid("involvedObject.namespace", involved, MISMATCH))
        errs += _reporter_rules(
            event, "reportingComponent" if core_request else "reportingController"
        )
    errs += [field.invalid("namespace", namespace, m) for m in is_dns1123_subdomain(namespace)]
    return errs


def _reporter_rules(event: Obj, controller_path: str) -> list[FieldError]:
    controller = event.get("reportingComponent") or ""
    errs: list[FieldError] = []
    if not controller:
        errs.append(field.required(controller_path))
    errs += [field.invalid(controller_path, controller, m) for m in is_qualified_name(controller)]
    for name in ("reportingInstance", "action", "reason"):
        value = event.get(name) or ""
        if not value:
            errs.append(field.required(name))
        if len(value) > LENGTH_LIMIT:
            errs.append(field.invalid(name, "", f"can have at most {LENGTH_LIMIT} characters"))
    if len(event.get("message") or "") > NOTE_LIMIT:
        errs.append(field.invalid("message", "", f"can have at most {NOTE_LIMIT} characters"))
    return errs


def series_rules(event: Obj) -> list[FieldError]:
    series = event.get("series")
    if series is None:
        return []
    errs: list[FieldError] = []
    if (series.get("count") or 0) < 2:
        errs.append(field.invalid("series.count", "", "should be at least 2"))
    if not series.get("lastObservedTime"):
        errs.append(field.required("series.lastObservedTime"))
    return errs


def strict_rules(event: Obj) -> list[FieldError]:
    """The rest of ValidateEventCreate for ``events.platform.io`` (after the metadata)."""
    errs = series_rules(event)
    if not event.get("eventTime"):
        errs.append(field.required("eventTime"))
    kind = event.get("type") or ""
    if kind not in ("Normal", "Warning"):
        errs.append(field.invalid("type", "", f"has invalid value: {kind}"))
    for name in ("firstTimestamp", "lastTimestamp", "count"):
        if event.get(name):
            errs.append(field.invalid(name, "", "needs to be unset"))
    source = event.get("source") or {}
    if source.get("component") or source.get("host"):
        errs.append(field.invalid("source", "", "needs to be unset"))
    return errs


def strict_update_rules(new: Obj, old: Obj) -> list[FieldError]:
    """ValidateEventUpdate for ``events.platform.io``: the series is checked again when
    it changed; nothing else may change (eventTime below a microsecond aside, which the
    decoder has already cut)."""
    errs = series_rules(new) if new.get("series") != old.get("series") else []
    for path, key, show in _IMMUTABLE:
        if (new.get(key) or _EMPTY.get(key)) != (old.get(key) or _EMPTY.get(key)):
            errs.append(field.invalid(path, show(new.get(key)), "field is immutable"))
    return errs


def _struct(value: Any, fields: tuple[tuple[str, str], ...]) -> GoText:
    """An internal Go struct as the error prints it: JSON with Go's field names."""
    if value is None:
        return GoText("null")
    return GoText(marshal(Struct((go, value.get(key) or "") for go, key in fields)))


def _plain(value: Any) -> Any:
    return value


def _text(value: Any) -> Any:
    """A string field as Go holds it: an absent one is ``""``."""
    return "" if value is None else value


_EMPTY: dict[str, Any] = {"involvedObject": {}, "source": {}, "count": 0}
_IMMUTABLE = (  # (path in kube's message, core v1 field, how kube prints the value)
    ("involvedObject", "involvedObject", lambda v: _struct(v or {}, _REFERENCE)),
    ("reason", "reason", _text),
    ("message", "message", _text),
    ("source", "source", lambda v: _struct(v or {}, _SOURCE)),
    ("firstTimestamp", "firstTimestamp", _plain),
    ("lastTimestamp", "lastTimestamp", _plain),
    ("count", "count", lambda v: v or 0),
    ("reason", "reason", _text),  # kube checks it twice; the message says it once
    ("type", "type", _text),
    ("eventTime", "eventTime", _plain),
    ("action", "action", _text),
    ("related", "related", lambda v: _struct(v, _REFERENCE)),
    ("reportingController", "reportingComponent", _text),
    ("reportingInstance", "reportingInstance", _text),
)


@register("events.platform.io", "Event")
class EventStrategy(GenericStrategy):
    allow_create_on_update = True
    default_propagation = UNSUPPORTED
    error_kind: tuple[str, str] | None = (
        "Event",
        "",
    )  # kube's internal Event names the invalid object

    def validate(self, obj: Obj) -> list[FieldError]:
        event = to_core(obj)
        errs = legacy_rules(event, core_request=False) + super().validate(obj)
        return errs + strict_rules(event)

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        event = to_core(new)
        errs = super().validate_update(new, old) + legacy_rules(event, core_request=False)
        return errs + strict_update_rules(event, to_core(old))


@register("", "Event")
class CoreEventStrategy(CoreCreateOnUpdateStrategy):
    """v1 Events: the legacy rules only, then the generic metadata checks."""

    default_propagation = UNSUPPORTED

    def validate(self, obj: Obj) -> list[FieldError]:
        return legacy_rules(obj, core_request=True) or super().validate(obj)

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        return super().validate_update(new, old) + legacy_rules(new, core_request=True)
