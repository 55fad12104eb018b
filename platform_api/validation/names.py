"""Name, label and annotation syntax with apimachinery's exact messages (ObjectMeta as a
whole: objectmeta.py)."""

from __future__ import annotations

import re
from collections.abc import Callable

from platform_api.validation import field
from platform_api.validation.field import FieldError
from platform_api.validation.ips import strict_ip_errors

_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character"
)
_SUBDOMAIN_FMT = _LABEL_FMT + "(\\." + _LABEL_FMT + ")*"
_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character"
)
# DNS search domains may hold underscores (kube's IsDNS1123SubdomainWithUnderscore).
_UNDERSCORE_LABEL_FMT = "_?[a-z0-9]([-_a-z0-9]*[a-z0-9])?"
_UNDERSCORE_FMT = _UNDERSCORE_LABEL_FMT + "(\\." + _UNDERSCORE_LABEL_FMT + ")*"
_UNDERSCORE_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '_', "
    "'-' or '.', and must start and end with an alphanumeric character"
)
_DNS1035_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character"
)
_KEY_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_KEY_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character"
)
_VALUE_FMT = "(" + _KEY_FMT + ")?"
_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character"
)

_label_re = re.compile(f"^{_LABEL_FMT}\\Z")
_subdomain_re = re.compile(f"^{_SUBDOMAIN_FMT}\\Z")
_dns1035_re = re.compile(f"^{_DNS1035_FMT}\\Z")
_underscore_re = re.compile(f"^{_UNDERSCORE_FMT}\\Z")
_key_re = re.compile(f"^{_KEY_FMT}\\Z")
_value_re = re.compile(f"^{_VALUE_FMT}\\Z")

ANNOTATIONS_SIZE_LIMIT = 256 * 1024


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """kube's ``RegexError``: every example is followed by ``', '``, so two read
    ``(e.g. 'my-name',  or '123-abc', regex used ...)`` with its double space."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


_CONFIG_KEY_FMT = "[-._a-zA-Z0-9]+"
_config_key_re = re.compile(f"^{_CONFIG_KEY_FMT}\\Z")


def is_config_map_key(value: str) -> list[str]:
    """kube's ``IsConfigMapKey``: the keys of ConfigMap and Secret data (file names when
    mounted, hence no ``.``/``..``)."""
    errs = []
    if len(value) > 253:
        errs.append("must be no more than 253 characters")
    if not _config_key_re.match(value):
        errs.append(
            regex_error(
                "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
                _CONFIG_KEY_FMT,
                "key.name",
                "KEY_NAME",
                "key-name",
            )
        )
    if value == ".":
        errs.append("must not be '.'")
    elif value == "..":
        errs.append("must not be '..'")
    elif value.startswith(".."):
        errs.append("must not start with '..'")
    return errs


def is_dns1123_label(value: str) -> list[str]:
    errs = []
    if len(value) > 63:
        errs.append("must be no more than 63 characters")
    if not _label_re.match(value):
        if _subdomain_re.match(value):
            errs.append("must not contain dots")
        else:
            errs.append(regex_error(_LABEL_MSG, _LABEL_FMT, "my-name", "123-abc"))
    return errs


def is_dns1123_subdomain(value: str, unit: str = "characters") -> list[str]:
    """``IsDNS1123Subdomain``; label-key prefixes count ``bytes`` (apimachinery's
    ``content`` package words the same limit differently)."""
    errs = []
    if len(value) > 253:
        errs.append(f"must be no more than 253 {unit}")
    if not _subdomain_re.match(value):
        errs.append(regex_error(_SUBDOMAIN_MSG, _SUBDOMAIN_FMT, "example.com"))
    return errs


def is_dns1123_subdomain_with_underscore(value: str) -> list[str]:
    errs = []
    if len(value) > 253:
        errs.append("must be no more than 253 characters")
    if not _underscore_re.match(value):
        errs.append(regex_error(_UNDERSCORE_MSG, _UNDERSCORE_FMT, "example.com"))
    return errs


def is_dns1035_label(value: str) -> list[str]:
    errs = []
    if len(value) > 63:
        errs.append("must be no more than 63 characters")
    if not _dns1035_re.match(value):
        errs.append(regex_error(_DNS1035_MSG, _DNS1035_FMT, "my-name", "abc-123"))
    return errs


def is_path_segment_name(value: str) -> list[str]:
    if value in (".", ".."):
        return [f"may not be '{value}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in value]


def is_path_segment_prefix(value: str) -> list[str]:
    """``IsValidPathSegmentPrefix``: a generateName only may not hold a separator."""
    return [f"may not contain '{c}'" for c in ("/", "%") if c in value]


def is_long_name(value: str) -> list[str]:
    """apimachinery's ``validate.LongName``: a DNS subdomain as its ``content`` package
    words it (the limit in bytes)."""
    return is_dns1123_subdomain(value, "bytes")


def is_qualified_name(value: str) -> list[str]:
    """``IsQualifiedName`` / ``IsLabelKey``: ``[prefix/]name``."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in is_dns1123_subdomain(prefix, "bytes"))
    else:
        return [
            "a valid label key "
            + regex_error(_KEY_MSG, _KEY_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part must be no more than 63 bytes")
    if not _key_re.match(name):
        errs.append("name part " + regex_error(_KEY_MSG, _KEY_FMT, "MyName", "my.name", "123-abc"))
    return errs


_HTTP_PATH = r"[A-Za-z0-9/\-._~%!$&'()*+,;=:]+"
_http_path_re = re.compile(f"^{_HTTP_PATH}\\Z")


def domain_prefixed_path(value: str, at: str) -> list[FieldError]:
    """kube's IsDomainPrefixedPath (``acme.io/foo``): the names of controllers that
    manage an object (a Job's ``managedBy``, an IngressClass's ``controller``)."""
    if not value:
        return [field.required(at)]
    host, _, path = value.partition("/")
    if not host or not path:
        detail = 'must be a domain-prefixed path (such as "acme.io/foo")'
        return [field.invalid(at, value, detail)]
    errs = [field.invalid(at, host, m) for m in is_dns1123_subdomain(host)]
    if not _http_path_re.match(path):
        errs.append(field.invalid(at, path, regex_error("Invalid path", _HTTP_PATH)))
    return errs


def is_label_value(value: str) -> list[str]:
    errs = []
    if len(value) > 63:
        errs.append("must be no more than 63 bytes")
    if not _value_re.match(value):
        errs.append(regex_error(_VALUE_MSG, _VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


def _mask_trailing_dash(name: str) -> str:
    """A generateName prefix may end in '-': validate it as if it ended in a letter."""
    if len(name) > 1 and name.endswith("-"):
        return name[:-2] + "a"
    return name


NameCheck = Callable[[str], list[str]]
NAME_RULES: dict[str, NameCheck] = {
    "subdomain": is_dns1123_subdomain,
    "label": is_dns1123_label,
    "dns1035": is_dns1035_label,
    "path-segment": is_path_segment_name,
    "long-name": is_long_name,  # kinds validated with validate.LongName; no generateName
    "ip": strict_ip_errors,  # an IPAddress: its address, canonical
    "any": lambda _name: [],  # a CertificateSigningRequest's (BeforeCreate's check follows)
}


# The generic store's own checks of names (BeforeCreate's, validateCommonFields' on an
# update: ``ValidatePathSegmentName``), which, unlike the kinds that take path segments
# as names (RBAC's), check a generateName as a prefix.
GENERIC_NAMES = "generic"


def validate_name(rule: str, name: str, prefix: bool = False) -> list[str]:
    if rule == GENERIC_NAMES:
        return is_path_segment_prefix(name) if prefix else is_path_segment_name(name)
    check = NAME_RULES[rule]
    if prefix and rule not in ("path-segment", "ip"):
        name = _mask_trailing_dash(name)
    return check(name)


def validate_labels(labels: dict[str, str], path: str) -> list[FieldError]:
    errs = []
    for key, value in labels.items():
        errs += [field.invalid(path, key, m) for m in is_qualified_name(key)]
        errs += [field.invalid(path, value, m) for m in is_label_value(value)]
    return errs


def validate_annotations(annotations: dict[str, str], path: str) -> list[FieldError]:
    errs = []
    for key in annotations:
        errs += [field.invalid(path, key, m) for m in is_qualified_name(key.lower())]
    if sum(len(k) + len(v) for k, v in annotations.items()) > ANNOTATIONS_SIZE_LIMIT:
        errs.append(field.too_long(path, ANNOTATIONS_SIZE_LIMIT))
    return errs


DRIVER_NAME_MAX_LENGTH = 63


def validate_driver_name(name: str, path: str) -> list[FieldError]:
    """kube's ValidateCSIDriverName."""
    if not name:
        return [field.required(path)]
    errs = (
        [field.too_long(path, DRIVER_NAME_MAX_LENGTH)] if len(name) > DRIVER_NAME_MAX_LENGTH else []
    )
    return errs + [field.invalid(path, name, m) for m in is_dns1123_subdomain(name.lower())]
