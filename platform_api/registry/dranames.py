"""Shared rules of dynamic resource allocation (resource.platform.io): kube's
pkg/apis/resource/validation helpers, for DeviceClasses, ResourceClaims, their templates
and ResourceSlices.

kube validates the Go form of a write: a missing string is ``""``, a missing list is
empty, a ``null`` list entry is a zero struct; so every reader here takes what is not of
the expected JSON type as that zero value.  Lengths are Go's: bytes, not characters.
The list helpers keep kube's ``validateSlice``/``validateSet``/``validateMap``: a list
over its limit is reported once (TooMany) and nothing in it is checked, and map keys in
paths are cut in the middle when long.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Hashable, Iterable
from typing import Any

from platform_api.registry.podscheduling import node_selector_term
from platform_api.validation import field
from platform_api.validation.field import FieldError
from platform_api.validation.names import (
    is_dns1123_label,
    is_dns1123_subdomain,
    is_label_value,
    is_qualified_name,
    regex_error,
)

Obj = dict[str, Any]
GROUP = "resource.platform.io"
Check = Callable[[Any, str], list[FieldError]]

# kube's pkg/apis/resource/types.go limits
POOL_NAME_MAX_LENGTH = 253
DEVICE_MAX_DOMAIN_LENGTH = 63
DEVICE_MAX_ID_LENGTH = 32
ATTRIBUTE_KEY_MAX_LENGTH = DEVICE_MAX_DOMAIN_LENGTH + 1 + DEVICE_MAX_ID_LENGTH
BINDING_CONDITIONS_MAX_SIZE = 4
TAINT_EFFECTS = ["NoExecute", "NoSchedule", "None"]  # sets.List: sorted
TOLERATION_OPERATORS = ["Equal", "Exists"]
IMMUTABLE = "field is immutable"

_C_IDENTIFIER_FMT = "[A-Za-z_][A-Za-z0-9_]*"
_C_IDENTIFIER_RE = re.compile(f"^{_C_IDENTIFIER_FMT}\\Z")
_C_IDENTIFIER_MSG = (
    "a valid C identifier must start with alphabetic character or '_', followed by a "
    "string of alphanumeric characters or '_'"
)
_HEX = frozenset(b"0123456789abcdefABCDEF")


# -- Go's view of JSON values -----------------------------------------------------------


def text(value: Any) -> str:
    """A Go string field: "" when absent or not a string."""
    return value if isinstance(value, str) else ""


def obj(value: Any) -> Obj:
    """A Go struct field: the zero struct when absent or null."""
    return value if isinstance(value, dict) else {}


def items(value: Any) -> list[Any]:
    """A Go slice field: empty when absent or null."""
    return value if isinstance(value, list) else []


def integer(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def size(value: str) -> int:
    """Go's ``len`` of a string: its UTF-8 bytes."""
    return len(value.encode())


# -- kube's list and map helpers --------------------------------------------------------


def validate_slice(values: Any, max_size: int, check: Check, path: str) -> list[FieldError]:
    """``validateSlice``: too many items is the only error (kube's DoS guard)."""
    entries = items(values)
    if 0 <= max_size < len(entries):
        return [field.too_many(path, len(entries), max_size)]
    errs: list[FieldError] = []
    for i, entry in enumerate(entries):
        errs += check(entry, f"{path}[{i}]")
    return errs


def validate_set(
    values: Any,
    max_size: int,
    check: Check,
    key: Callable[[Any], Hashable],
    path: str,
    shown: Callable[[Any], Any] = lambda k: k,
) -> list[FieldError]:
    """``validateSet``: ``validate_slice``, then each repeated key (shown by ``shown``)."""
    entries = items(values)
    if 0 <= max_size < len(entries):
        return [field.too_many(path, len(entries), max_size)]
    errs = validate_slice(entries, -1, check, path)
    seen: set[Hashable] = set()
    for i, entry in enumerate(entries):
        k = key(entry)
        if k in seen:
            errs.append(field.duplicate(f"{path}[{i}]", shown(k)))
        seen.add(k)
    return errs


def truncate(key: str, max_length: int) -> str:
    """``truncateIfTooLong``: a long key shown by its ends, ``...`` in the middle."""
    max_length = max(max_length, 16)
    raw = key.encode()
    if len(raw) <= max_length:
        return key
    remaining = max_length - 3
    cut = raw[: (remaining + 1) // 2] + b"..." + raw[len(raw) - remaining // 2 :]
    return cut.decode(errors="replace")


def validate_map(
    values: Any,
    max_size: int,
    key_length: int,
    check_key: Callable[[str, str], list[FieldError]],
    check: Check,
    path: str,
) -> list[FieldError]:
    """``validateMap``: each key (errors at the map's path), then its item at
    ``path[key]``; Go's map order is random, this takes the keys as given."""
    entries = obj(values)
    if 0 <= max_size < len(entries):
        return [field.too_many(path, len(entries), max_size)]
    errs: list[FieldError] = []
    for key, value in entries.items():
        errs += check_key(key, path)
        errs += check(value, f"{path}[{truncate(key, key_length)}]")
    return errs


def no_errors(value: Any, path: str) -> list[FieldError]:
    return []


# -- names ------------------------------------------------------------------------------


def dns_label(value: str, path: str) -> list[FieldError]:
    """``ValidateDNS1123Label``: device, request and counter names."""
    return [field.invalid(path, value, m) for m in is_dns1123_label(value)]


def dns_subdomain(value: str, path: str) -> list[FieldError]:
    """``ValidateDNS1123Subdomain``: device class names, pool name segments."""
    return [field.invalid(path, value, m) for m in is_dns1123_subdomain(value)]


def driver_name(value: str, path: str) -> list[FieldError]:
    """``ValidateCSIDriverName`` (names.validate_driver_name), its limit in bytes."""
    if not value:
        return [field.required(path)]
    errs = [field.too_long(path, 63)] if size(value) > 63 else []
    return errs + [field.invalid(path, value, m) for m in is_dns1123_subdomain(value.lower())]


def pool_name(name: str, path: str) -> list[FieldError]:
    """``validatePoolName``: DNS subdomains joined by ``/``."""
    if not name:
        return [field.required(path)]
    errs = [field.too_long(path, POOL_NAME_MAX_LENGTH)] if size(name) > POOL_NAME_MAX_LENGTH else []
    for part in name.split("/"):
        errs += dns_subdomain(part, path)
    return errs


def node_name(name: str, path: str) -> list[FieldError]:
    """``validateNodeName``: ValidateNodeName's complaints, each Invalid."""
    return dns_subdomain(name, path)


def c_identifier(value: str, path: str) -> list[FieldError]:
    errs = (
        [field.too_long(path, DEVICE_MAX_ID_LENGTH)] if size(value) > DEVICE_MAX_ID_LENGTH else []
    )
    if not _C_IDENTIFIER_RE.match(value):
        message = regex_error(_C_IDENTIFIER_MSG, _C_IDENTIFIER_FMT, "my_name", "MY_NAME", "MyName")
        errs.append(field.invalid(path, value, message))
    return errs


def qualified_name(name: str, path: str) -> list[FieldError]:
    """``validateQualifiedName``: a C identifier, optionally after a driver-name domain
    and ``/`` (more than one ``/`` passes, as in kube)."""
    parts = name.split("/")
    if len(parts) == 1:
        return c_identifier(parts[0], path)
    if len(parts) != 2:
        return []
    domain, ident = parts
    errs = [field.invalid(path, "", "the domain must not be empty")] if not domain else []
    errs += driver_name(domain, path) if domain else []
    if not ident:
        return [*errs, field.invalid(path, "", "the name must not be empty")]
    return errs + c_identifier(ident, path)


def fully_qualified_name(name: str, path: str) -> list[FieldError]:
    errs = qualified_name(name, path)
    if "/" not in name:
        detail = "a fully qualified name must be a domain and a name separated by a slash"
        errs.append(field.invalid(path, name, detail))
    return errs


def label_name(value: str, path: str) -> list[FieldError]:
    """metav1's ``ValidateLabelName``."""
    return [field.invalid(path, value, m) for m in is_qualified_name(value)]


def label_value(value: str, path: str) -> list[FieldError]:
    return [field.invalid(path, value, m) for m in is_label_value(value)]


def uid(value: str, path: str) -> list[FieldError]:
    """``validateUID``: google/uuid's Validate, then RFC 4122's normalized form."""
    problem = _uuid_problem(value.encode())
    if problem:
        return [field.invalid(path, value, f"error validating uid: {problem}")]
    if size(value) != 36 or value != value.lower():
        detail = (
            "uid must be in RFC 4122 normalized form, "
            "`xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` with lowercase hexadecimal characters"
        )
        return [field.invalid(path, value, detail)]
    return []


def _uuid_problem(raw: bytes) -> str:
    if len(raw) == 45:
        if raw[:9].lower() != b"urn:uuid:":
            return f"invalid urn prefix: {_go_quote_bytes(raw[:9])}"
        raw = raw[9:]
    elif len(raw) == 38:
        if raw[:1] != b"{" or raw[-1:] != b"}":
            return "invalid bracketed UUID format"
        raw = raw[1:-1]
    elif len(raw) == 32:
        return "" if all(b in _HEX for b in raw) else "invalid UUID format"
    elif len(raw) != 36:
        return f"invalid UUID length: {len(raw)}"
    if any(raw[i] != ord("-") for i in (8, 13, 18, 23)):
        return "invalid UUID format"
    digits = raw[:8] + raw[9:13] + raw[14:18] + raw[19:23] + raw[24:]
    return "" if all(b in _HEX for b in digits) else "invalid UUID format"


def _go_quote_bytes(raw: bytes) -> str:
    return field.go_quote(raw.decode(errors="replace"))


# -- shared structures ------------------------------------------------------------------


def raw_extension(value: Any, path: str, stored: bool, max_length: int) -> list[FieldError]:
    """``validateRawExtension``: a JSON object of at most ``max_length`` bytes (as sent;
    here measured compact) unless already stored."""
    if value is None:
        return [field.required(path)]
    raw = json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()
    if not stored and len(raw) > max_length:
        return [field.too_long(path, max_length)]
    if not isinstance(value, dict):
        return [field.invalid(path, "<value omitted>", "must be a valid JSON object")]
    return []


def node_selector(selector: Obj, path: str) -> list[FieldError]:
    """core's ``ValidateNodeSelector`` (label values checked)."""
    terms = items(selector.get("nodeSelectorTerms"))
    at = f"{path}.nodeSelectorTerms"
    if not terms:
        return [field.required(at, "must have at least one node selector term")]
    errs: list[FieldError] = []
    for i, term in enumerate(terms):
        errs += node_selector_term(_term(term), f"{at}[{i}]", label_values=True)
    return errs


def _term(term: Any) -> Obj:
    """A term with its null requirements as Go's zero ones."""
    term = obj(term)
    return {
        key: [obj(r) for r in items(term.get(key))] for key in ("matchExpressions", "matchFields")
    }


def device_toleration(toleration: Any, path: str) -> list[FieldError]:
    """``validateDeviceToleration``."""
    toleration = obj(toleration)
    key, value = text(toleration.get("key")), text(toleration.get("value"))
    errs = label_name(key, f"{path}.key") if key else []
    operator = text(toleration.get("operator"))
    if operator == "Exists":
        if value:
            errs.append(
                field.invalid(f"{path}.value", value, "must be empty for operator `Exists`")
            )
    elif operator == "Equal":
        errs += label_value(value, f"{path}.value")
    elif not operator:
        errs.append(field.required(f"{path}.operator"))
    else:
        errs.append(field.not_supported(f"{path}.operator", operator, TOLERATION_OPERATORS))
    effect = text(toleration.get("effect"))
    if effect and effect not in TAINT_EFFECTS:
        errs.append(field.not_supported(f"{path}.effect", effect, TAINT_EFFECTS))
    return errs


def device_taint(taint: Any, path: str) -> list[FieldError]:
    """``validateDeviceTaint`` of a new taint."""
    taint = obj(taint)
    errs = label_name(text(taint.get("key")), f"{path}.key")
    value = text(taint.get("value"))
    if value:
        errs += label_value(value, f"{path}.value")
    effect = text(taint.get("effect"))
    if not effect:
        errs.append(field.required(f"{path}.effect"))
    elif effect not in TAINT_EFFECTS:
        errs.append(field.not_supported(f"{path}.effect", effect, TAINT_EFFECTS))
    return errs


def binding_parameters(item: Obj, path: str) -> list[FieldError]:
    """``validateDeviceBindingParameters`` of a device or an allocation result."""
    conditions = [text(c) for c in items(item.get("bindingConditions"))]
    failures = [text(c) for c in items(item.get("bindingFailureConditions"))]
    at, failures_at = f"{path}.bindingConditions", f"{path}.bindingFailureConditions"
    errs = validate_slice(conditions, BINDING_CONDITIONS_MAX_SIZE, label_name, at)
    errs += validate_slice(failures, BINDING_CONDITIONS_MAX_SIZE, label_name, failures_at)
    errs += _repeated(conditions, at)
    seen: set[str] = set()
    for i, condition in enumerate(failures):  # kube checks both per item, in one pass
        if condition in seen:
            errs.append(field.duplicate(f"{failures_at}[{i}]", condition))
        seen.add(condition)
        if condition in conditions:
            detail = "bindingFailureConditions must not overlap with bindingConditions"
            errs.append(field.invalid(f"{failures_at}[{i}]", condition, detail))
    if not conditions and failures:
        detail = "bindingConditions are required to use bindingFailureConditions"
        errs.append(field.invalid(at, _go_strings(item.get("bindingConditions")), detail))
    if not failures and conditions:
        detail = "bindingFailureConditions are required to use bindingConditions"
        errs.append(
            field.invalid(failures_at, _go_strings(item.get("bindingFailureConditions")), detail)
        )
    return errs


def _repeated(values: Iterable[str], path: str) -> list[FieldError]:
    seen: set[str] = set()
    errs: list[FieldError] = []
    for i, value in enumerate(values):
        if value in seen:
            errs.append(field.duplicate(f"{path}[{i}]", value))
        seen.add(value)
    return errs


def _go_strings(value: Any) -> Any:
    """A ``[]string`` as json.Marshal writes it: nil is ``null``, empty ``[]``."""
    return [text(v) for v in value] if isinstance(value, list) else None
