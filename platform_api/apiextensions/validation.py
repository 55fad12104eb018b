"""Validation of CustomResourceDefinition objects (``apiextensions.platform.io/v1``).

kube's ``pkg/apis/apiextensions/validation``: the object is read in kube's internal form
(``validation_internal``), so messages, paths and order are kube's.  An update is held to
no stricter rules than the stored object met (``validation_options``).  The parts live in
``validation_spec`` (spec, versions, names), ``validation_schema`` and
``validation_openapi`` (the schemas), ``validation_webhook`` (conversion).
"""

from __future__ import annotations

from typing import Any

from platform_api import gourl
from platform_api.apiextensions import validation_gojson as gojson
from platform_api.apiextensions import validation_internal as internal
from platform_api.apiextensions.validation_options import CREATE, Options, update_options
from platform_api.apiextensions.validation_spec import validate_names, validate_spec
from platform_api.validation import field
from platform_api.validation.field import FieldError
from platform_api.validation.objectmeta import validate_object_meta, validate_object_meta_update

Obj = dict[str, Any]
APPROVAL_ANNOTATION = "api-approved.platform.io"
_PLURAL_GROUP = 'must be spec.names.plural+"."+spec.group'
_APPROVAL_PR = "see https://github.com/kubernetes/enhancements/pull/1111"


def _metadata(crd: Obj) -> list[FieldError]:
    """ObjectMeta of a cluster-scoped object named ``<plural>.<group>``."""
    meta = crd.get("metadata") or {}
    spec = crd.get("spec") or {}
    wanted = f"{(spec.get('names') or {}).get('plural', '')}.{spec.get('group', '')}"
    errs = validate_object_meta(meta, False, "subdomain")
    generate, name = meta.get("generateName", ""), meta.get("name", "")
    split = sum(1 for e in errs if e.field == "metadata.generateName")
    named = split + sum(1 for e in errs[split:] if e.field == "metadata.name")
    extra_generate = [field.invalid("metadata.generateName", generate, _PLURAL_GROUP)]
    extra_name = [field.invalid("metadata.name", name, _PLURAL_GROUP)]
    return (
        errs[:split]
        + (extra_generate if generate and generate != wanted else [])
        + errs[split:named]
        + (extra_name if name and name != wanted else [])
        + errs[named:]
    )


def validate_stored_versions(stored: list[str] | None, versions: list[Obj]) -> list[FieldError]:
    """``status.storedVersions`` names the storage version and only versions still in spec."""
    path = "status.storedVersions"
    shown = gojson.text(stored or None)
    if not stored:
        return [field.invalid(path, shown, "must have at least one stored version")]
    errs = []
    remaining = {v: i for i, v in enumerate(stored)}
    for version in versions:
        name = version.get("name", "")
        if version.get("storage") and name not in remaining:
            errs.append(field.invalid(path, shown, f"must have the storage version {name}"))
        remaining.pop(name, None)
    for v, i in sorted(remaining.items(), key=lambda item: item[1]):
        errs.append(
            field.invalid(
                f"{path}[{i}]",
                v,
                f"missing from spec.versions; {v} was previously a storage version, and must "
                f"remain in spec.versions until a storage migration ensures no data remains "
                f"persisted in {v} and removes {v} from status.storedVersions",
            )
        )
    return errs


def _approval_state(crd: Obj) -> tuple[str, str]:
    value = ((crd.get("metadata") or {}).get("annotations") or {}).get(APPROVAL_ANNOTATION, "")
    quoted = field.go_quote(APPROVAL_ANNOTATION)
    if not value:
        return "missing", f"protected groups must have approval annotation {quoted}, {_APPROVAL_PR}"
    if value.startswith("unapproved"):
        return "bypassed", f"not approved: {field.go_quote(value)}"
    try:
        url = gourl.parse_request_uri(value)
    except gourl.URLError:
        url = None
    if url is not None and url.host and url.scheme:
        return "approved", f"approved in {value}"
    return "invalid", (
        f"protected groups must have approval annotation {quoted} with either a URL or a reason "
        f'starting with "unapproved", {_APPROVAL_PR}'
    )


def _api_approval(crd: Obj, old: Obj | None) -> list[FieldError]:
    """Groups under ``platform.io`` need the API approval annotation."""
    group = (crd.get("spec") or {}).get("group", "")
    if group != "platform.io" and not group.endswith(".platform.io"):
        return []
    state, reason = _approval_state(crd)
    if old is not None and _approval_state(old)[0] == state:
        return []
    path = f"metadata.annotations[{APPROVAL_ANNOTATION}]"
    if state == "missing":
        return [field.required(path, reason)]
    if state == "invalid":
        value = ((crd.get("metadata") or {}).get("annotations") or {}).get(APPROVAL_ANNOTATION)
        return [field.invalid(path, value, reason)]
    return []


def _preserve_unknown_fields(crd: Obj, old: Obj | None) -> list[FieldError]:
    if old is not None and (old.get("spec") or {}).get("preserveUnknownFields"):
        return []
    if (crd.get("spec") or {}).get("preserveUnknownFields"):
        return [
            field.invalid(
                "spec.preserveUnknownFields",
                True,
                "cannot set to true, set x-kubernetes-preserve-unknown-fields to true in "
                "spec.versions[*].schema instead",
            )
        ]
    return []


def validate_crd_status(crd: Obj) -> list[FieldError]:
    """``ValidateCustomResourceDefinitionStatus``: the accepted names."""
    status = crd.get("status") or {}
    return validate_names(status.get("acceptedNames") or {}, "status.acceptedNames")


def _rest(crd: Obj, old: Obj | None, spec: Obj) -> list[FieldError]:
    stored = (crd.get("status") or {}).get("storedVersions")
    return (
        validate_crd_status(crd)
        + validate_stored_versions(stored, spec.get("versions") or [])
        + _api_approval(crd, old)
        + _preserve_unknown_fields(crd, old)
    )


def validate_crd(crd: Obj, opts: Options = CREATE) -> list[FieldError]:
    """``ValidateCustomResourceDefinition``: a create."""
    spec = internal.internal_spec(crd.get("spec") or {})
    return _metadata(crd) + validate_spec(spec, opts) + _rest(crd, None, spec)


def _immutable(new: Any, old: Any, path: str) -> list[FieldError]:
    return [] if new == old else [field.invalid(path, new, "field is immutable")]


def validate_crd_update(new: Obj, old: Obj) -> list[FieldError]:
    """``ValidateCustomResourceDefinitionUpdate``."""
    spec = internal.internal_spec(new.get("spec") or {})
    old_spec = internal.internal_spec(old.get("spec") or {})
    opts = update_options(spec, old_spec, old)
    errs = validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {})
    errs += validate_spec(spec, opts)
    names, old_names = spec.get("names") or {}, old_spec.get("names") or {}
    if opts.require_immutable_names:
        errs += _immutable(spec.get("scope", ""), old_spec.get("scope", ""), "spec.scope")
        errs += _immutable(names.get("kind", ""), old_names.get("kind", ""), "spec.names.kind")
    errs += _immutable(spec.get("group", ""), old_spec.get("group", ""), "spec.group")
    errs += _immutable(names.get("plural", ""), old_names.get("plural", ""), "spec.names.plural")
    return errs + _rest(new, old, spec)


def validate_crd_status_update(new: Obj, old: Obj) -> list[FieldError]:
    """``ValidateUpdateCustomResourceDefinitionStatus``."""
    errs = validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {})
    return errs + validate_crd_status(new)
