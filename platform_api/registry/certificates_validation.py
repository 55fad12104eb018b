"""kube's CertificateSigningRequest validation (pkg/apis/certificates/validation).

The rules of a create apply to every write; the update rules add what each path may
change: ``/approval`` the Approved and Denied conditions, ``/status`` the certificate.
Data that is already stored in a form the rules now refuse stays acceptable on update
(kube's compatibility options), so old objects can still be changed.
"""

from __future__ import annotations

import base64
import binascii
import copy
from dataclasses import dataclass

from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

from platform_api.apiextensions.validation_webhook import _pem_decode as pem_decode
from platform_api.goasn1 import check_struct
from platform_api.registry.strategy import Obj
from platform_api.scheme import signers
from platform_api.validation import field
from platform_api.validation.field import FieldError, GoText, go_quote
from platform_api.validation.names import is_dns1123_label, is_dns1123_subdomain

APPROVED, DENIED, FAILED = "Approved", "Denied", "Failed"
MIN_EXPIRATION_SECONDS = 600
# kube's KeyUsage values, sorted as its "supported values" list prints them.
USAGES = sorted(
    (
        "signing",
        "digital signature",
        "content commitment",
        "key encipherment",
        "key agreement",
        "data encipherment",
        "cert sign",
        "crl sign",
        "encipher only",
        "decipher only",
        "any",
        "server auth",
        "client auth",
        "code signing",
        "email protection",
        "s/mime",
        "ipsec end system",
        "ipsec tunnel",
        "ipsec user",
        "timestamping",
        "ocsp signing",
        "microsoft sgc",
        "netscape sgc",
    )
)
_DOMAIN_MAX = 253
_SIGNER_MAX = _DOMAIN_MAX + (253 + 63 + 1) + 1
_CERTIFICATE_DATA = "<certificate data>"


@dataclass(frozen=True)
class Options:
    """What one write may do (kube's certificateValidationOptions)."""

    set_approval: bool = False  # through /approval
    set_certificate: bool = False  # through /status
    both_approved_and_denied: bool = False
    legacy_signer: bool = False
    duplicate_condition_types: bool = False
    empty_condition_type: bool = False
    arbitrary_certificate: bool = False
    unknown_usages: bool = False
    duplicate_usages: bool = False


def _decoded(value: object) -> bytes:
    if not isinstance(value, str):
        return b""
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return b""


def parse_request(encoded: object) -> x509.CertificateSigningRequest:
    """The PKCS#10 request of ``spec.request`` (base64 of PEM); ValueError says why not."""
    block, _ = pem_decode(_decoded(encoded))
    if block is None or block[0] != b"CERTIFICATE REQUEST":
        raise ValueError("PEM block type must be CERTIFICATE REQUEST")
    der = block[2]
    end = check_struct(der, "certificateRequest")  # encoding/asn1's words first
    try:
        csr = x509.load_der_x509_csr(der[:end])
    except ValueError:
        raise ValueError("x509: malformed certificate request") from None
    if end < len(der):
        raise ValueError("asn1: syntax error: trailing data")
    return csr


def request_error(encoded: object) -> str | None:
    """Why ``spec.request`` is not a well-signed PEM certificate request, or None."""
    try:
        csr = parse_request(encoded)
    except ValueError as e:
        return str(e)
    if csr.is_signature_valid:
        return None
    key = csr.public_key()
    if isinstance(key, rsa.RSAPublicKey):
        return "crypto/rsa: verification error"
    if isinstance(key, ed25519.Ed25519PublicKey):
        return "x509: Ed25519 verification failure"
    if isinstance(key, ec.EllipticCurvePublicKey):
        return "x509: ECDSA verification failure"
    return "x509: cannot verify signature: algorithm unimplemented"


def certificate_error(encoded: object) -> str | None:
    """Why ``status.certificate`` is not a chain of PEM certificates, or None (empty)."""
    data = _decoded(encoded)
    if not data:
        return None
    blocks = 0
    while True:
        block, data = pem_decode(data)
        if block is None:
            break
        kind, headers, der = block
        if kind != b"CERTIFICATE":
            return f"only CERTIFICATE PEM blocks are allowed, found {go_quote(kind.decode())}"
        if headers:
            return "no PEM block headers are permitted"
        blocks += 1
        try:
            x509.load_der_x509_certificate(der)
        except ValueError:
            return "x509: malformed certificate"
    return None if blocks else "must contain at least one CERTIFICATE PEM block"


def validate_signer_name(path: str, name: str) -> list[FieldError]:
    """kube's ValidateSignerName: ``<domain>/<path>``, both DNS names."""
    if not name:
        return [field.required(path)]
    segments = name.split("/")
    if len(segments) != 2:
        detail = "must be a fully qualified domain and path of the form 'example.com/signer-name'"
        return [field.invalid(path, name, detail)]
    domain, rest = segments
    errs: list[FieldError] = []
    if len(domain) > _DOMAIN_MAX:
        errs.append(field.too_long(path, _DOMAIN_MAX))
    labels = domain.split(".")
    for label in labels:
        messages = is_dns1123_label(label)
        errs += [field.invalid(path, domain, f'validating label "{label}": {m}') for m in messages]
        if messages:
            break
    if len(labels) < 2:
        detail = "should be a domain with at least two segments separated by dots"
        errs.append(field.invalid(path, domain, detail))
    for label in rest.split("."):
        messages = is_dns1123_subdomain(label)
        errs += [field.invalid(path, rest, f'validating label "{label}": {m}') for m in messages]
        if messages:
            break
    if len(name) > _SIGNER_MAX:
        errs.append(field.too_long(path, _SIGNER_MAX))
    return errs


def _spec(csr: Obj) -> Obj:
    return csr.get("spec") or {}


def conditions(csr: Obj, kind: str | None = None) -> list[Obj]:
    found = (csr.get("status") or {}).get("conditions") or []
    return [c for c in found if kind is None or c.get("type") == kind]


def _usage_errors(usages: list[str], opts: Options) -> list[FieldError]:
    errs: list[FieldError] = []
    if not usages:
        errs.append(field.required("spec.usages"))
    if not opts.unknown_usages:
        for i, usage in enumerate(usages):
            if usage not in USAGES:
                errs.append(field.not_supported(f"spec.usages[{i}]", usage, USAGES))
    if not opts.duplicate_usages:
        for i, usage in enumerate(usages):
            if usage in usages[:i]:
                errs.append(field.duplicate(f"spec.usages[{i}]", usage))
    return errs


def validate_csr(csr: Obj, opts: Options) -> list[FieldError]:
    """The spec and status rules every write of a CSR passes (metadata is the caller's)."""
    spec = _spec(csr)
    errs: list[FieldError] = []
    why = request_error(spec.get("request"))
    if why:
        errs.append(field.invalid("spec.request", spec.get("request"), why))
    errs += _usage_errors(spec.get("usages") or [], opts)
    signer = spec.get("signerName") or ""
    if not opts.legacy_signer and signer == signers.LEGACY_UNKNOWN:
        detail = "the legacy signerName is not allowed via this API version"
        errs.append(field.invalid("spec.signerName", signer, detail))
    else:
        errs += validate_signer_name("spec.signerName", signer)
    seconds = spec.get("expirationSeconds")
    if seconds is not None and seconds < MIN_EXPIRATION_SECONDS:
        detail = "may not specify a duration less than 600 seconds (10 minutes)"
        errs.append(field.invalid("spec.expirationSeconds", seconds, detail))
    errs += _condition_errors(csr, opts)
    if not opts.arbitrary_certificate:
        why = certificate_error((csr.get("status") or {}).get("certificate"))
        if why:
            errs.append(field.invalid("status.certificate", _CERTIFICATE_DATA, why))
    return errs


def _condition_errors(csr: Obj, opts: Options) -> list[FieldError]:
    path = "status.conditions"
    errs: list[FieldError] = []
    seen: set[str] = set()
    approved = denied = False
    for i, condition in enumerate(conditions(csr)):
        kind, status = condition.get("type") or "", condition.get("status") or ""
        if not opts.empty_condition_type and not kind:
            errs.append(field.required(f"{path}[{i}].type"))
        allowed = ["True"] if kind in (APPROVED, DENIED, FAILED) else ["False", "True", "Unknown"]
        if not status:
            errs.append(field.required(f"{path}[{i}].status"))
        elif status not in allowed:
            errs.append(field.not_supported(f"{path}[{i}].status", status, allowed))
        if not opts.both_approved_and_denied and kind in (APPROVED, DENIED):
            approved, denied = approved or kind == APPROVED, denied or kind == DENIED
            if approved and denied:
                detail = "Approved and Denied conditions are mutually exclusive"
                errs.append(field.invalid(path, kind, detail))
        if not opts.duplicate_condition_types:
            if kind in seen:
                errs.append(field.duplicate(f"{path}[{i}].type", kind))
            seen.add(kind)
    return errs


def update_options(new: Obj, old: Obj, **paths: bool) -> Options:
    """What an update may leave as it was stored (kube's getValidationOptions)."""
    old_types = [c.get("type") or "" for c in conditions(old)]
    old_usages = _spec(old).get("usages") or []
    new_cert = (new.get("status") or {}).get("certificate")
    old_cert = (old.get("status") or {}).get("certificate")
    return Options(
        both_approved_and_denied=APPROVED in old_types and DENIED in old_types,
        legacy_signer=_spec(old).get("signerName") == signers.LEGACY_UNKNOWN,
        duplicate_condition_types=len(set(old_types)) != len(old_types),
        empty_condition_type="" in old_types,
        arbitrary_certificate=new_cert == old_cert or certificate_error(old_cert) is not None,
        unknown_usages=any(u not in USAGES for u in old_usages),
        duplicate_usages=len(set(old_usages)) != len(old_usages),
        **paths,
    )


def validate_csr_update(new: Obj, old: Obj, opts: Options) -> list[FieldError]:
    """The create rules plus what no update may do to conditions and the certificate
    (ObjectMeta is the caller's)."""
    errs = validate_csr(new, opts)
    path = "status.conditions"
    for kind in (APPROVED, DENIED, FAILED):
        if len(conditions(new, kind)) < len(conditions(old, kind)):
            errs.append(
                field.forbidden(path, f'updates may not remove a condition of type "{kind}"')
            )
    if not opts.set_approval:
        for kind in (APPROVED, DENIED):
            before, after = conditions(old, kind), conditions(new, kind)
            if len(after) > len(before):
                detail = f'updates may not add a condition of type "{kind}"'
                errs.append(field.forbidden(path, detail))
            elif len(after) == len(before) and after != before:
                detail = (
                    f'updates may not modify a condition of type "{kind}"\n{_diff(before, after)}'
                )
                errs.append(field.forbidden(path, detail))
    new_cert = (new.get("status") or {}).get("certificate") or ""
    old_cert = (old.get("status") or {}).get("certificate") or ""
    if new_cert != old_cert:
        if not opts.set_certificate:
            errs.append(
                field.forbidden("status.certificate", "updates may not set certificate content")
            )
        elif old_cert:
            detail = "updates may not modify existing certificate content"
            errs.append(field.forbidden("status.certificate", detail))
    return errs


def _diff(before: list[Obj], after: list[Obj]) -> str:
    """The changed conditions, old then new (kube prints a cmp.Diff here)."""
    return "\n".join(
        f"- {GoText(str(a))}\n+ {GoText(str(b))}"
        for a, b in zip(before, after, strict=True)
        if a != b
    )


def preserve_conditions(new: Obj, old: Obj, kind: str) -> None:
    """Keep the stored instances of ``kind`` when a write keeps their number (kube's
    preserveConditionInstances: a /status write cannot edit Approved or Denied)."""
    old_found = [c for c in conditions(old) if c.get("type") == kind]
    new_all = (new.get("status") or {}).get("conditions") or []
    at = [i for i, c in enumerate(new_all) if c.get("type") == kind]
    if len(at) != len(old_found):
        return
    for i, condition in zip(at, old_found, strict=True):
        new_all[i] = copy.deepcopy(condition)


def stamp_conditions(new: Obj, old: Obj, now: str) -> None:
    """Fill missing condition times: ``lastUpdateTime`` now, ``lastTransitionTime`` the
    stored one of the same type and status, else now."""
    for condition in conditions(new):
        if not condition.get("lastUpdateTime"):
            condition["lastUpdateTime"] = now
        if not condition.get("lastTransitionTime"):
            same = [
                c.get("lastTransitionTime")
                for c in conditions(old)
                if c.get("type") == condition.get("type")
                and c.get("status") == condition.get("status")
                and c.get("lastTransitionTime")
            ]
            condition["lastTransitionTime"] = same[0] if same else now
