"""Loading and validating ``--encryption-provider-config`` (EncryptionConfiguration).

The file is kube's ``apiserver.config.k8s.io/v1`` EncryptionConfiguration under our
group ``apiserver.config.platform.io/v1``; validation follows kube's
``ValidateEncryptionConfiguration`` with its field paths and messages, and a failure is
one line, as kube-apiserver prints it before exiting.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

import yaml

from platform_api.apiserver.flagvalues import parse_duration
from platform_api.gotext import open_error
from platform_api.validation import field as fe

API_VERSIONS = ("apiserver.config.platform.io/v1",)
KIND = "EncryptionConfiguration"
LOCAL_PROVIDERS = ("aesgcm", "aescbc", "secretbox")
PROVIDER_ORDER = ("kms", "aesgcm", "aescbc", "secretbox", "identity")
_KEY_SIZES = {"aesgcm": [16, 24, 32], "aescbc": [16, 24, 32], "secretbox": [32]}
_NO_REST = ("apiserveripinfo", "serviceipallocations", "servicenodeportallocations")
_GO_TYPES = {
    "aesgcm": ("AESGCM", "AESConfiguration"),
    "aescbc": ("AESCBC", "AESConfiguration"),
    "secretbox": ("Secretbox", "SecretboxConfiguration"),
    "identity": ("Identity", "IdentityConfiguration"),
    "kms": ("KMS", "KMSConfiguration"),
}


class EncryptionConfigError(Exception):
    """The configuration is unusable: the text is kube's one-line error."""


@dataclass(frozen=True)
class KMSConfig:
    name: str
    endpoint: str
    timeout: float = 3.0
    api_version: str = "v1"


@dataclass(frozen=True)
class Provider:
    kind: str  # one of PROVIDER_ORDER
    keys: tuple[tuple[str, bytes], ...] = ()
    kms: KMSConfig | None = None


@dataclass(frozen=True)
class ResourceRule:
    resources: tuple[str, ...]
    providers: tuple[Provider, ...]


@dataclass(frozen=True)
class EncryptionConfig:
    rules: tuple[ResourceRule, ...]
    content_hash: str = ""
    kms_names: tuple[str, ...] = field(default=())


def parse_group_resource(text: str) -> tuple[str, str]:
    """``schema.ParseGroupResource``: ``resource.group`` split at the first dot."""
    resource, dot, group = text.partition(".")
    return (group, resource) if dot else ("", text)


def gr_text(group: str, resource: str) -> str:
    """kube's ``grYAMLString``: how a rule names a group/resource in errors."""
    if group == "" and resource == "*":
        return "*."
    return f"{resource}.{group}" if group else resource


def content_hash(data: bytes) -> str:
    """kube's ``computeEncryptionConfigHash``: reloads compare it to spot a change."""
    return "k8s:enc:unidling:v1:" + hashlib.sha256(data).hexdigest()


def load(path: str, reload: bool = False) -> EncryptionConfig:
    """Read, decode and validate the file; EncryptionConfigError in kube's words."""
    try:
        data, digest = _read(path)
        raw = _decode(path, data)
        config = _validate(raw, reload)
    except EncryptionConfigError as e:
        raise EncryptionConfigError(f"error while parsing file: {e}") from None
    try:
        _check_masking(config)
    except EncryptionConfigError as e:
        raise EncryptionConfigError(f"error while building transformers: {e}") from None
    return EncryptionConfig(config.rules, digest, config.kms_names)


def _read(path: str) -> tuple[bytes, str]:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise EncryptionConfigError(
            "error while loading file: error reading encryption provider configuration "
            f'file "{path}": {open_error(path, e)}'
        ) from None
    if not data:
        raise EncryptionConfigError(
            f'error while loading file: encryption provider configuration file "{path}" is empty'
        )
    return data, content_hash(data)


def _decode(path: str, data: bytes) -> dict[str, Any]:
    prefix = f'error decoding encryption provider configuration file "{path}"'
    try:
        raw = yaml.safe_load(data)
    except yaml.YAMLError as e:
        raise EncryptionConfigError(f"{prefix}: {e}") from None
    if not isinstance(raw, dict) or not raw.get("kind"):
        raise EncryptionConfigError(f"{prefix}: Object 'Kind' is missing in '{data.decode()}'")
    if raw.get("apiVersion") not in API_VERSIONS or raw["kind"] != KIND:
        raise EncryptionConfigError(
            f'{prefix}: no kind "{raw["kind"]}" is registered for version '
            f'"{raw.get("apiVersion", "")}" in scheme "pkg/runtime/scheme.go:100"'
        )
    return raw


def _validate(raw: dict[str, Any], reload: bool) -> EncryptionConfig:
    errs: list[fe.FieldError] = []
    entries = raw.get("resources") or []
    if not entries:
        raise EncryptionConfigError(
            str(fe.required("resources", "at least one resources is required"))
        )
    rules: list[ResourceRule] = []
    kms_names: list[str] = []
    for i, given in enumerate(entries):
        entry = given or {}
        r, p = f"resources[{i}].resources", f"resources[{i}].providers"
        resources = [str(x) for x in entry.get("resources") or []]
        if not resources:
            errs.append(fe.required(r, f"at least one {r} is required"))
        errs += _resource_overlap(resources, r) + _resource_names(resources, r)
        providers: list[Provider] = []
        if not entry.get("providers"):
            errs.append(fe.required(p, f"at least one {p} is required"))
        for j, item in enumerate(entry.get("providers") or []):
            provider = _provider(item or {}, f"{p}[{j}]", kms_names, reload, errs)
            if provider is not None:
                providers.append(provider)
        rules.append(ResourceRule(tuple(resources), tuple(providers)))
    if errs:
        raise EncryptionConfigError(fe.aggregate(errs))
    return EncryptionConfig(tuple(rules), kms_names=tuple(kms_names))


def _provider_text(item: dict[str, Any]) -> fe.GoText:
    """The provider struct as Go's ``%#v`` shows it (pointers left abstract)."""
    parts = []
    for kind in ("aesgcm", "aescbc", "secretbox", "identity", "kms"):
        name, go_type = _GO_TYPES[kind]
        pointer = "0xc000000000" if item.get(kind) is not None else "nil"
        parts.append(f"{name}:(*apiserver.{go_type})({pointer})")
    return fe.GoText("apiserver.ProviderConfiguration{" + ", ".join(parts) + "}")


def _provider(
    item: dict[str, Any], path: str, kms_names: list[str], reload: bool, errs: list[fe.FieldError]
) -> Provider | None:
    kinds = [k for k in PROVIDER_ORDER if item.get(k) is not None]
    if not kinds:
        errs.append(
            fe.invalid(
                path,
                _provider_text(item),
                "provider does not contain any of the expected providers: "
                "KMS, AESGCM, AESCBC, Secretbox, Identity",
            )
        )
        return None
    if len(kinds) > 1:
        errs.append(
            fe.invalid(
                path,
                _provider_text(item),
                "more than one provider specified in a single element, "
                "should split into different list elements",
            )
        )
        return None
    kind = kinds[0]
    if kind == "identity":
        return Provider("identity")
    if kind == "kms":
        kms = _kms(item["kms"] or {}, f"{path}.kms", kms_names, reload, errs)
        return Provider("kms", kms=kms)
    keys = _keys((item[kind] or {}).get("keys") or [], f"{path}.{kind}.keys", kind, errs)
    return Provider(kind, keys=keys)


def _keys(
    keys: list[Any], path: str, kind: str, errs: list[fe.FieldError]
) -> tuple[tuple[str, bytes], ...]:
    if not keys:
        errs.append(fe.required(path, "at least one keys is required"))
        return ()
    out = []
    for i, item in enumerate(keys):
        key = item or {}
        name, secret = str(key.get("name") or ""), str(key.get("secret") or "")
        if not name:
            errs.append(fe.required(f"{path}[{i}].name", "name is a mandatory field for a key"))
        if not secret:
            errs.append(fe.required(f"{path}[{i}].secret", "secret is a mandatory field for a key"))
            continue
        try:
            decoded = base64.b64decode(secret, validate=True)
        except (binascii.Error, ValueError):
            errs.append(
                fe.invalid(f"{path}[{i}].secret", "REDACTED", "secrets must be base64 encoded")
            )
            continue
        sizes = _KEY_SIZES[kind]
        if len(decoded) not in sizes:
            expected = "[" + " ".join(map(str, sizes)) + "]"
            errs.append(
                fe.invalid(
                    f"{path}[{i}].secret",
                    "REDACTED",
                    f"secret is not of the expected length, got {len(decoded)}, "
                    f"expected one of {expected}",
                )
            )
            continue
        out.append((name, decoded))
    return tuple(out)


def _kms(
    raw: dict[str, Any], path: str, kms_names: list[str], reload: bool, errs: list[fe.FieldError]
) -> KMSConfig:
    api_version = str(raw.get("apiVersion") or "v1")  # kube's defaulting
    name = str(raw.get("name") or "")
    if not name:
        errs.append(fe.required(f"{path}.name", "name is a mandatory field for a provider"))
    if api_version != "v1" and ":" in name:
        errs.append(
            fe.invalid(
                f"{path}.name", name, f"invalid KMS provider name {name}, must not contain ':'"
            )
        )
    if (reload or api_version != "v1") and name in kms_names:
        errs.append(
            fe.invalid(
                f"{path}.name", name, f"duplicate KMS provider name {name}, names must be unique"
            )
        )
    kms_names.append(name)
    timeout = 3.0
    if raw.get("timeout") is not None:
        try:
            timeout = parse_duration("timeout", str(raw["timeout"]))
        except Exception:
            timeout = 0.0
    if timeout <= 0:
        errs.append(
            fe.invalid(
                f"{path}.timeout",
                str(raw.get("timeout")),
                "timeout should be a positive value",
            )
        )
    endpoint = str(raw.get("endpoint") or "")
    if not endpoint:
        errs.append(fe.invalid(f"{path}.endpoint", "", "endpoint is a mandatory field for a kms"))
    elif (scheme := urlparse(endpoint).scheme) != "unix":
        errs.append(
            fe.invalid(
                f"{path}.endpoint",
                endpoint,
                f'unsupported scheme "{scheme}" for KMS provider, only unix is supported',
            )
        )
    if api_version != "v1" and raw.get("cachesize") is not None:
        errs.append(
            fe.invalid(f"{path}.cachesize", raw["cachesize"], "cachesize is not supported in v2")
        )
    if api_version not in ("v1", "v2"):
        errs.append(
            fe.invalid(
                f"{path}.apiVersion",
                api_version,
                "unsupported apiVersion apiVersion for KMS provider, only v1 and v2 are supported",
            )
        )
    return KMSConfig(name, endpoint, timeout, api_version)


def _resource_overlap(resources: list[str], path: str) -> list[fe.FieldError]:
    if len(resources) < 2:
        return []
    grs = [parse_group_resource(r) for r in resources]
    duplicate = overlap = False
    for i, a in enumerate(grs):
        for j, b in enumerate(grs):
            if i == j:
                continue
            if a == b and not duplicate:
                duplicate = True
                continue
            if overlap:
                continue
            if a == ("*", "*") or (a[0] == b[0] and "*" in (a[1], b[1])):
                overlap = True
    errs = []
    if duplicate:
        errs.append(
            fe.invalid(path, resources, "the same resource cannot be specified multiple times")
        )
    if overlap:
        errs.append(
            fe.invalid(
                path,
                resources,
                "using overlapping resources such as 'secrets' and '*.' in the same resource "
                "list is not allowed as they will be masked",
            )
        )
    return errs


def _resource_name_error(res: str) -> str | None:
    group, resource = parse_group_resource(res)
    if res.lower() != res:
        return "resource name should not contain capital letters"
    if res == "*":
        return "use '*.' to encrypt all the resources from core API group or *.* to encrypt all resources"
    if res in _NO_REST:
        return "resources which do not have REST API/s cannot be encrypted"
    if group == "events.platform.io":
        return (
            "'*.events.platform.io' objects are stored using the 'events' API group in etcd. "
            "Use 'events' instead in the config file"
        )
    if group == "extensions":
        return "'extensions' group has been removed and cannot be used for encryption"
    if group == "*" and resource != "*":
        return "encrypting the same resource across groups is not supported"
    return None


def _resource_names(resources: list[str], path: str) -> list[fe.FieldError]:
    errs = []
    for j, res in enumerate(resources):
        why = _resource_name_error(res)
        if why:
            errs.append(fe.invalid(f"{path}[{j}]", res, why))
    return errs


def _check_masking(config: EncryptionConfig) -> None:
    """A rule after ``*.group`` or ``*.*`` could never apply: kube refuses it."""
    seen: set[tuple[str, str]] = set()
    for rule in config.rules:
        for res in rule.resources:
            group, resource = parse_group_resource(res)
            for wide in ((group, "*"), ("*", "*")):
                if wide in seen:
                    raise EncryptionConfigError(
                        f'resource "{gr_text(group, resource)}" is masked by earlier rule '
                        f'"{gr_text(*wide)}"'
                    )
            seen.add((group, resource))
