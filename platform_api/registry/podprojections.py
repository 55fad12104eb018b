"""Pod data projected into files and env vars, as kube validates it: keys of secrets and
config maps mapped to paths, downwardAPI and projected volumes (kube's
validateDownwardAPIVolumeSource and validateProjectionSources), and the field and
resource selectors downwardAPI files share with env vars.
"""

from __future__ import annotations

from typing import Any

from platform_api.quantity import QuantityError, parse
from platform_api.registry.certificates_validation import validate_signer_name
from platform_api.registry.gointernal import go_text
from platform_api.registry.pvsources import descending_path
from platform_api.validation import field
from platform_api.validation.field import FieldError
from platform_api.validation.labelselector import validate_label_selector
from platform_api.validation.names import (
    ANNOTATIONS_SIZE_LIMIT,
    is_dns1123_subdomain,
    is_qualified_name,
)

Obj = dict[str, Any]
MODE_RANGE = "must be a number between 0 and 0777 (octal), both inclusive"
# The pod fields a downwardAPI file may read (kube's set, sorted).
VOLUME_FIELDS = [
    "metadata.annotations",
    "metadata.labels",
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
]
# The fields ConvertDownwardAPIFieldLabel knows (``spec.host`` stands for nodeName).
_FIELD_LABELS = frozenset(
    {
        *VOLUME_FIELDS,
        "spec.nodeName",
        "spec.restartPolicy",
        "spec.serviceAccountName",
        "spec.schedulerName",
        "status.phase",
        "status.hostIP",
        "status.hostIPs",
        "status.podIP",
        "status.podIPs",
    }
)
CONTAINER_RESOURCES = [
    "limits.cpu",
    "limits.ephemeral-storage",
    "limits.memory",
    "requests.cpu",
    "requests.ephemeral-storage",
    "requests.memory",
]
_HUGEPAGES = ("requests.hugepages-", "limits.hugepages-")
_BYTE_DIVISORS = frozenset(
    ["1", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei"]
)
_BYTES = (
    "only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are "
    "supported with the {} resource"
)
KEY_TYPES = ["RSA3072", "RSA4096", "ECDSAP256", "ECDSAP384", "ECDSAP521", "ED25519"]
MAX_EXPIRATION, KUBERNETES_MAX_EXPIRATION = 91 * 24 * 3600, 24 * 3600
CONFLICT = "conflicting duplicate paths"


def default_selectors(source: Any) -> None:
    """An env var's ``valueFrom`` or a downwardAPI file: an object field selector's
    apiVersion; a resource selector's divisor (a Go Quantity, written as 0 when unset)."""
    if not isinstance(source, dict):
        return
    if isinstance(source.get("fieldRef"), dict):
        source["fieldRef"].setdefault("apiVersion", "v1")
    if isinstance(source.get("resourceFieldRef"), dict):
        source["resourceFieldRef"].setdefault("divisor", "0")


def default_projections(sources: list[Any]) -> None:
    """A projected volume's sources: a token lives an hour, files' selectors as above."""
    for source in sources:
        if not isinstance(source, dict):
            continue
        if isinstance(source.get("serviceAccountToken"), dict):
            source["serviceAccountToken"].setdefault("expirationSeconds", 3600)
        for item in (source.get("downwardAPI") or {}).get("items") or []:
            default_selectors(item)


def file_mode(source: Obj, key: str, at: str) -> list[FieldError]:
    mode = source.get(key)
    if isinstance(mode, int) and not 0 <= mode <= 0o777:
        return [field.invalid(f"{at}.{key}", mode, MODE_RANGE)]
    return []


def non_reserved_path(path: str, at: str) -> list[FieldError]:
    """``ValidateLocalNonReservedPath``: a descending path not starting with ``..``
    (the kubelet's own ``..data`` links)."""
    errs = descending_path(path, at)
    if path.startswith("..") and not path.startswith("../"):  # "../" says it already
        errs.append(field.invalid(at, path, "must not start with '..'"))
    return errs


def key_path(item: Obj, at: str) -> list[FieldError]:
    """``validateKeyToPath``: a key of a secret or config map, the file it goes to."""
    errs = [] if item.get("key") else [field.required(f"{at}.key")]
    target = item.get("path", "")
    if not target:
        errs.append(field.required(f"{at}.path"))
    return errs + non_reserved_path(target, f"{at}.path") + file_mode(item, "mode", at)


def object_field_selector(ref: Obj, at: str, expressions: list[str]) -> list[FieldError]:
    """``validateObjectFieldSelector``: a field kube can convert, one of ``expressions``
    or a subscripted label or annotation whose key is a qualified name."""
    version, label = ref.get("apiVersion") or "", ref.get("fieldPath") or ""
    if not version:
        return [field.required(f"{at}.apiVersion")]
    if not label:
        return [field.required(f"{at}.fieldPath")]
    path, subscript = _split_subscript(label)
    problem = ""
    if version != "v1":
        problem = f"unsupported pod version: {version}"
    elif subscript is not None and path not in ("metadata.annotations", "metadata.labels"):
        problem = f"field label does not support subscript: {label}"
    elif subscript is None and label not in _FIELD_LABELS and label != "spec.host":
        problem = f"field label not supported: {label}"
    if problem:
        return [field.invalid(f"{at}.fieldPath", label, f"error converting fieldPath: {problem}")]
    if subscript is not None:
        key = subscript.lower() if path == "metadata.annotations" else subscript
        return [field.invalid(at, key, m) for m in is_qualified_name(key)]
    path = "spec.nodeName" if label == "spec.host" else label
    if path not in expressions:
        return [field.not_supported(f"{at}.fieldPath", path, expressions)]
    return []


def _split_subscript(label: str) -> tuple[str, str | None]:
    """fieldpath.SplitMaybeSubscriptedPath: ``metadata.labels['key']``."""
    if not label.endswith("']"):
        return label, None
    path, found, subscript = label[:-2].partition("['")
    return (path, subscript) if found and path else (label, None)


def resource_field_selector(ref: Obj, at: str, volume: bool) -> list[FieldError]:
    """``validateContainerResourceFieldSelector``: a file names its container."""
    resource = ref.get("resource") or ""
    errs: list[FieldError] = []
    if volume and not ref.get("containerName"):
        errs.append(field.required(f"{at}.containerName"))
    elif not resource:
        errs.append(field.required(f"{at}.resource"))
    elif resource not in CONTAINER_RESOURCES and not resource.startswith(_HUGEPAGES):
        errs.append(field.not_supported(f"{at}.resource", resource, CONTAINER_RESOURCES))
    return errs + _divisor(resource, ref.get("divisor"), at)


def _divisor(resource: str, divisor: Any, at: str) -> list[FieldError]:
    try:
        quantity = None if divisor is None else parse(str(divisor))
    except QuantityError:
        return []  # the decoder refuses what is no quantity
    if quantity is None or quantity.value == 0:
        return []
    shown = str(quantity)
    if resource in ("limits.cpu", "requests.cpu") and shown not in ("1m", "1"):
        why = "only divisor's values 1m and 1 are supported with the cpu resource"
    elif resource in ("limits.memory", "requests.memory") and shown not in _BYTE_DIVISORS:
        why = _BYTES.format("memory")
    elif resource.endswith(".ephemeral-storage") and shown not in _BYTE_DIVISORS:
        why = _BYTES.format("local ephemeral storage")
    elif resource.startswith(_HUGEPAGES) and shown not in _BYTE_DIVISORS:
        why = _BYTES.format("hugepages")
    else:
        return []
    return [field.invalid(f"{at}.divisor", resource, why)]


def downward_file(item: Obj, at: str) -> list[FieldError]:
    """``validateDownwardAPIVolumeFile``; kube names its fields under the source."""
    target = item.get("path") or ""
    errs = [] if target else [field.required(f"{at}.path")]
    errs += non_reserved_path(target, f"{at}.path")
    if isinstance(item.get("fieldRef"), dict):
        errs += object_field_selector(item["fieldRef"], f"{at}.fieldRef", VOLUME_FIELDS)
        if item.get("resourceFieldRef") is not None:
            why = "fieldRef and resourceFieldRef can not be specified simultaneously"
            errs.append(field.invalid(at, "resource", why))
    elif isinstance(item.get("resourceFieldRef"), dict):
        errs += resource_field_selector(item["resourceFieldRef"], f"{at}.resourceFieldRef", True)
    else:
        errs.append(field.required(at, "one of fieldRef and resourceFieldRef is required"))
    return errs + file_mode(item, "mode", at)


def downward_api(source: Obj, at: str) -> list[FieldError]:
    errs = file_mode(source, "defaultMode", at)
    for item in source.get("items") or []:
        errs += downward_file(item if isinstance(item, dict) else {}, at)
    return errs


def projected(source: Obj, at: str) -> list[FieldError]:
    """``validateProjectedVolumeSource``: each source one kind, no path twice."""
    errs = file_mode(source, "defaultMode", at)
    paths: set[str] = set()
    for i, item in enumerate(source.get("sources") or []):
        where = f"{at}.sources[{i}]"
        kinds = [key for key in _PROJECTIONS if isinstance((item or {}).get(key), dict)]
        for key in kinds:
            errs += _PROJECTIONS[key](item[key], f"{where}.{key}", at, paths)
        if len(kinds) > 1:
            why = "may not specify more than 1 volume type per source"
            errs.append(field.forbidden(where, why))
    return errs


def _claim_path(paths: set[str], path: str, at: str, shown: Any) -> list[FieldError]:
    """A path a projection writes; a second one is refused under the volume."""
    if path in paths:
        return [field.invalid(at, shown, CONFLICT)]
    paths.add(path)
    return []


def _keys(source: Obj, at: str, volume: str, paths: set[str]) -> list[FieldError]:
    """A secret's or a config map's keys."""
    name = source.get("name") or ""
    errs = [] if name else [field.required(f"{at}.name")]
    for j, given in enumerate(source.get("items") or []):
        item = given if isinstance(given, dict) else {}
        errs += key_path(item, f"{at}.items[{j}]")
        if item.get("path"):
            errs += _claim_path(paths, item["path"], volume, name)
    return errs


def _downward(source: Obj, at: str, volume: str, paths: set[str]) -> list[FieldError]:
    errs: list[FieldError] = []
    for given in source.get("items") or []:
        item = given if isinstance(given, dict) else {}
        errs += downward_file(item, at)
        if item.get("path"):
            errs += _claim_path(paths, item["path"], volume, item["path"])
    return errs


def _token(source: Obj, at: str, volume: str, paths: set[str]) -> list[FieldError]:
    seconds = source.get("expirationSeconds") or 0
    errs: list[FieldError] = []
    if seconds < 600:
        why = "may not specify a duration less than 10 minutes"
        errs.append(field.invalid(f"{at}.expirationSeconds", seconds, why))
    if seconds > 1 << 32:
        why = "may not specify a duration larger than 2^32 seconds"
        errs.append(field.invalid(f"{at}.expirationSeconds", seconds, why))
    path = source.get("path") or ""  # kube names the volume's path here
    if not path:
        return [*errs, field.required(f"{volume}.path")]
    return errs + non_reserved_path(path, f"{volume}.path")


def _trust_bundle(source: Obj, at: str, volume: str, paths: set[str]) -> list[FieldError]:
    name, signer = source.get("name"), source.get("signerName")
    errs: list[FieldError] = []
    if name is not None and signer is not None:
        shown = go_text("core.ClusterTrustBundleProjection", source)
        errs.append(field.invalid(at, shown, "only one of name and signerName may be used"))
    elif name is not None:
        if not name:
            errs.append(field.required(f"{at}.name", "must be a valid object name"))
        why = "not a valid clustertrustbundlename: "
        errs += [field.invalid(f"{at}.name", name, why + m) for m in bundle_name_errors(name)]
        if source.get("labelSelector") is not None:
            shown = go_text("metav1.LabelSelector", source["labelSelector"])
            why = "labelSelector must be unset if name is specified"
            errs.append(field.invalid(f"{at}.labelSelector", shown, why))
    elif signer is not None:
        if not signer:
            errs.append(field.required(f"{at}.signerName", "must be a valid signer name"))
        errs += validate_signer_name(f"{at}.signerName", signer)
        if source.get("labelSelector") is not None:
            errs += validate_label_selector(source["labelSelector"], f"{at}.labelSelector")
    else:
        errs.append(field.required(at, "either name or signerName must be specified"))
    path = source.get("path") or ""
    if not path:
        errs.append(field.required(f"{at}.path"))
    errs += non_reserved_path(path, f"{at}.path")
    return errs + _claim_path(paths, path, volume, path)


def bundle_name_errors(name: str) -> list[str]:
    """``ValidateClusterTrustBundleName`` of the signer the name's prefix names."""
    if ":" not in name:
        return is_dns1123_subdomain(name)
    signer = name[: name.rindex(":")].replace(":", "/")
    prefix = signer.replace("/", ":") + ":"
    if not name.startswith(prefix):
        return [f"ClusterTrustBundle for signerName {signer} must be named with prefix {prefix}"]
    return is_dns1123_subdomain(name[len(prefix) :])


def _pod_certificate(source: Obj, at: str, volume: str, paths: set[str]) -> list[FieldError]:
    signer = source.get("signerName") or ""
    errs = validate_signer_name(f"{at}.signerName", signer)
    annotations = source.get("userAnnotations")
    if isinstance(annotations, dict):
        errs += _user_annotations(annotations, f"{at}.userAnnotations")
    kind = source.get("keyType") or ""
    if kind not in KEY_TYPES:
        errs.append(field.not_supported(f"{at}.keyType", kind, KEY_TYPES))
    seconds = source.get("maxExpirationSeconds")
    if isinstance(seconds, int):
        host = signer.split("/", 1)[0]
        kube = host == "kubernetes.io" or host.endswith(".kubernetes.io")
        ceiling = KUBERNETES_MAX_EXPIRATION if kube else MAX_EXPIRATION
        if seconds < 3600:
            why = "if provided, maxExpirationSeconds must be >= 3600"
            errs.append(field.invalid(f"{at}.maxExpirationSeconds", seconds, why))
        if seconds > ceiling:
            why = f"if provided, maxExpirationSeconds must be <= {ceiling}"
            errs.append(field.invalid(f"{at}.maxExpirationSeconds", seconds, why))
    given = 0
    for key in ("credentialBundlePath", "keyPath", "certificateChainPath"):
        path = source.get(key) or ""
        if path:
            given += 1
            errs += non_reserved_path(path, f"{at}.{key}")
            errs += _claim_path(paths, path, volume, path)
    if not given:
        why = "specify at least one of credentialBundlePath, keyPath, and certificateChainPath"
        errs.append(field.required(at, why))
    return errs


def _user_annotations(annotations: Obj, at: str) -> list[FieldError]:
    """``ValidateUserAnnotations``: domain-prefixed keys (any case), a bounded size."""
    errs: list[FieldError] = []
    for key in annotations:
        lower = key.lower()
        if not lower:
            errs.append(field.required(at))
            continue
        found = [field.invalid(at, lower, m) for m in is_qualified_name(lower)]
        if not found and len(lower.split("/")) != 2:
            why = 'must be a domain-prefixed key (such as "acme.io/foo")'
            found.append(field.invalid(at, lower, why))
        errs += found
    size = sum(len(k) + len(str(v)) for k, v in annotations.items())
    if size > ANNOTATIONS_SIZE_LIMIT:
        errs.append(field.too_long(at, ANNOTATIONS_SIZE_LIMIT))
    return errs


_PROJECTIONS = {
    "secret": _keys,
    "configMap": _keys,
    "downwardAPI": _downward,
    "serviceAccountToken": _token,
    "clusterTrustBundle": _trust_bundle,
    "podCertificate": _pod_certificate,
}
