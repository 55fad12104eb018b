"""A CRD's ``spec.conversion``: strategy, webhook client config, review versions.

kube's ``validateCustomResourceConversion`` and the webhook checks it shares with
admission webhooks (k8s.io/apiserver ``util/webhook``): the URL as Go's ``net/url``
parses it, the service reference, and the CA bundle as client-go loads it.
"""

from __future__ import annotations

import base64
import re
from typing import Any

from cryptography import x509

from platform_api import gourl
from platform_api.apiextensions import validation_gojson as gojson
from platform_api.validation import field
from platform_api.validation.field import FieldError
from platform_api.validation.names import is_dns1035_label, is_dns1123_subdomain

Obj = dict[str, Any]

# ConversionReview versions the previous server release understands.
ACCEPTED_REVIEW_VERSIONS = ("v1", "v1beta1")
_FORM = "; desired format: https://host[/path]"


def validate_webhook_url(path: str, url: str) -> list[FieldError]:
    """``ValidateWebhookURL`` with https required."""
    try:
        parsed = gourl.parse(url)
    except gourl.URLError as e:
        return [field.required(path, f"url must be a valid URL: {e}{_FORM}")]
    errs = []
    if parsed.scheme != "https":
        errs.append(
            field.invalid(path, parsed.scheme, "'https' is the only allowed URL scheme" + _FORM)
        )
    if not parsed.host:
        errs.append(field.invalid(path, parsed.host, "host must be specified" + _FORM))
    if parsed.user is not None:
        errs.append(
            field.invalid(path, parsed.user, "user information is not permitted in the URL")
        )
    if parsed.fragment:
        errs.append(field.invalid(path, parsed.fragment, "fragments are not permitted in the URL"))
    if parsed.raw_query:
        errs.append(
            field.invalid(path, parsed.raw_query, "query parameters are not permitted in the URL")
        )
    return errs


def validate_webhook_service(path: str, service: Obj) -> list[FieldError]:
    """``ValidateWebhookService``: name, namespace, port, and a path of DNS segments.

    kube's callers pass the service's name and namespace in each other's parameters, so a
    missing namespace is reported at ``.name`` and a missing name at ``.namespace``."""
    errs = []
    if not service.get("namespace"):
        errs.append(field.required(f"{path}.name"))
    if not service.get("name"):
        errs.append(field.required(f"{path}.namespace"))
    port = service.get("port") or 0
    if not 1 <= port <= 65535:
        errs.append(
            field.invalid(
                f"{path}.port", port, "port is not valid: must be between 1 and 65535, inclusive"
            )
        )
    url_path = service.get("path")
    if url_path is None or url_path in ("/", ""):
        return errs
    at = f"{path}.path"
    if url_path == "//":
        return [*errs, field.invalid(at, url_path, "segment[0] may not be empty")]
    if not url_path.startswith("/"):
        errs.append(field.invalid(at, url_path, "must start with a '/'"))
    check = url_path[1:]
    if check.endswith("/"):
        check = check[:-1]
    for i, step in enumerate(check.split("/")):
        if not step:
            errs.append(field.invalid(at, url_path, f"segment[{i}] may not be empty"))
            continue
        errs += [
            field.invalid(at, url_path, f"segment[{i}]: {m}") for m in is_dns1123_subdomain(step)
        ]
    return errs


_PEM = re.compile(
    rb"(?:^|\n)-----BEGIN ([^\n]*)-----[ \t\r]*\n(.*?\n)?-----END \1-----[ \t\r]*(?:\n|$)",
    re.DOTALL,
)


def _pem_decode(data: bytes) -> tuple[tuple[bytes, bool, bytes] | None, bytes]:
    """Go's ``pem.Decode``: the next block (type, has headers, body) and the rest."""
    for match in _PEM.finditer(data):
        body = match.group(2) or b""
        first = body.split(b"\n", 1)[0]
        headers = b":" in first
        lines = body.split(b"\n\n", 1)[1] if headers and b"\n\n" in body else body
        try:
            der = base64.b64decode(b"".join(lines.split()), validate=True)
        except ValueError:
            continue
        return (match.group(1), headers, der), data[match.end() :]
    return None, data


def ca_bundle_error(bundle: bytes) -> str | None:
    """Why client-go cannot load the bundle as root certificates, or None."""
    blocks = []
    rest = bundle
    while True:
        block, rest = _pem_decode(rest)
        if block is None:
            break
        blocks.append(block)
    for kind, headers, der in blocks:
        if kind == b"CERTIFICATE" and not headers and _parses(der):
            return None
    rest = bundle
    while rest:
        block, rest = _pem_decode(rest)
        if block is None:
            return "unable to parse bytes as PEM block"
        kind, headers, der = block
        if kind == b"CERTIFICATE" and not headers and not _parses(der):
            return "failed to parse certificate: x509: malformed certificate"
    return "no valid certificate authority data seen"


def _parses(der: bytes) -> bool:
    try:
        x509.load_der_x509_certificate(der)
    except ValueError:
        return False
    return True


def validate_ca_bundle(path: str, bundle: str) -> list[FieldError]:
    error = ca_bundle_error(gojson.decode_ca_bundle(bundle))
    if error is None:
        return []
    shown = gojson.text(gojson.ca_bundle(bundle))
    return [field.invalid(path, shown, f"unable to load root certificates: {error}")]


def _review_versions(
    versions: list[str] | None, require_known: bool, path: str
) -> list[FieldError]:
    if not versions:
        return [field.required(path)]
    errs: list[FieldError] = []
    seen: set[str] = set()
    known = False
    for i, v in enumerate(versions):
        if v in seen:
            errs.append(field.invalid(f"{path}[{i}]", v, "duplicate version"))
            continue
        seen.add(v)
        errs += [field.invalid(f"{path}[{i}]", v, m) for m in is_dns1035_label(v)]
        known = known or v in ACCEPTED_REVIEW_VERSIONS
    if require_known and not known:
        errs.append(
            field.invalid(path, gojson.text(versions), "must include at least one of v1, v1beta1")
        )
    return errs


def has_valid_review_version_or_empty(versions: list[str] | None) -> bool:
    return not versions or any(v in ACCEPTED_REVIEW_VERSIONS for v in versions)


def validate_conversion(
    conversion: Obj | None, require_known: bool, allow_invalid_ca: bool, path: str
) -> list[FieldError]:
    """``validateCustomResourceConversion`` of the internal conversion."""
    if conversion is None:
        return []
    strategy = conversion.get("strategy") or ""
    errs: list[FieldError] = []
    if not strategy:
        errs.append(field.required(f"{path}.strategy"))
    elif strategy not in ("None", "Webhook"):
        # validateEnumStrings: a plain string, quoted with %q
        errs.append(
            field.not_supported(f"{path}.strategy", field.plain(strategy), ["None", "Webhook"])
        )
    config = conversion.get("webhookClientConfig")
    config_path = f"{path}.webhookClientConfig"
    if strategy != "Webhook":
        if config is not None:
            errs.append(
                field.forbidden(
                    config_path, "should not be set when strategy is not set to Webhook"
                )
            )
        if conversion.get("conversionReviewVersions"):
            errs.append(
                field.forbidden(
                    f"{path}.conversionReviewVersions",
                    "should not be set when strategy is not set to Webhook",
                )
            )
        return errs
    if config is None:
        errs.append(field.required(config_path, "required when strategy is set to Webhook"))
    else:
        url, service = config.get("url"), config.get("service")
        if (url is None) == (service is None):
            errs.append(field.required(config_path, "exactly one of url or service is required"))
        elif url is not None:
            errs += validate_webhook_url(f"{config_path}.url", url)
        else:
            errs += validate_webhook_service(f"{config_path}.service", service)
        if config.get("caBundle") and not allow_invalid_ca:
            errs += validate_ca_bundle(f"{config_path}.caBundle", config["caBundle"])
    errs += _review_versions(
        conversion.get("conversionReviewVersions"),
        require_known,
        f"{path}.conversionReviewVersions",
    )
    return errs
