"""The sources of a PersistentVolume, each checked as kube's validatePersistentVolumeSpec
checks it: one source, the fields it cannot do without, the formats of the others.

Where kube shares a validator between a pod's volume and a PV's (hostPath, nfs, fc,
gcePersistentDisk, ...) this module holds the full rule; the PV variants (iscsi, rbd,
cephfs, glusterfs, cinder, flexVolume, azureFile, scaleIO, storageos, csi) are kube's
``...PersistentVolumeSource`` ones.  A few paths are kube's own slips, kept because
clients see them: a GCE disk's fields are under ``persistentDisk``, a second cephfs
source is named ``cephFS`` and an iSCSI initiator ``initiatorname``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from platform_api.validation import field
from platform_api.validation.field import FieldError
from platform_api.validation.names import (
    is_dns1123_label,
    is_dns1123_subdomain,
    validate_driver_name,
)

Obj = dict[str, Any]
Check = Callable[[Obj, str], list[FieldError]]
MORE_THAN_ONE = "may not specify more than 1 volume type"
HOST_PATH_TYPES = [
    "",
    "BlockDevice",
    "CharDevice",
    "Directory",
    "DirectoryOrCreate",
    "File",
    "FileOrCreate",
    "Socket",
]
PARTITION_RANGE = "must be between 1 and 255, inclusive"  # kube's words; 0 passes
LUN_RANGE = "must be between 0 and 255, inclusive"
VALID_FORMAT = "must be valid format"
QUOBYTE_REGISTRY = "must be a host:port pair or multiple pairs separated by commas"
CACHING_MODES = ["None", "ReadOnly", "ReadWrite"]
DISK_KINDS = ["Dedicated", "Managed", "Shared"]
MANAGED_URI = "/subscriptions/{sub-id}/resourcegroups/{group-name}/providers/microsoft.compute/disks/{disk-id}"
BLOB_URI = "https://{account-name}.blob.core.windows.net/{container-name}/{disk-name}.vhd"
# RE2's classes, written for Python: ASCII digits, Go's \s, and `$` as the text's end.
_IQN = re.compile(r"iqn\.[0-9]{4}-[0-9]{2}\.([A-Za-z0-9.-]+)(:[^,;*&$|\t\n\f\r ]+)\Z")
_EUI = re.compile(r"^eui.[A-Za-z0-9]{16}\Z")
_NAA = re.compile(r"^naa.[A-Za-z0-9]{32}\Z")


def _required(source: Obj, at: str, *keys: str) -> list[FieldError]:
    """Required for each key whose value is empty ("", [], absent)."""
    return [field.required(f"{at}.{key}") for key in keys if not source.get(key)]


def no_backsteps(path: str, at: str) -> list[FieldError]:
    """``validatePathNoBacksteps``: no ``..`` element."""
    if ".." in path.split("/"):
        return [field.invalid(at, path, "must not contain '..'")]
    return []


def descending_path(path: str, at: str) -> list[FieldError]:
    """``validateLocalDescendingPath``: relative, without a ``..`` element."""
    errs = [field.invalid(at, path, "must be a relative path")] if path.startswith("/") else []
    return errs + no_backsteps(path, at)


def label_errors(value: str, at: str) -> list[FieldError]:
    return [field.invalid(at, value, m) for m in is_dns1123_label(value)]


def host_path(source: Obj, at: str) -> list[FieldError]:
    """``validateHostPathVolumeSource`` (pods' and PVs')."""
    path = source.get("path") or ""
    if not path:
        return [field.required(f"{at}.path")]
    errs = no_backsteps(path, f"{at}.path")
    kind = source.get("type")
    if kind is not None and kind not in HOST_PATH_TYPES:
        errs.append(field.not_supported(f"{at}.type", kind, HOST_PATH_TYPES))
    return errs


def _partition(source: Obj, at: str) -> list[FieldError]:
    partition = source.get("partition") or 0
    if not 0 <= partition <= 255:
        return [field.invalid(f"{at}.partition", partition, PARTITION_RANGE)]
    return []


def gce_disk(source: Obj, at: str) -> list[FieldError]:
    return _required(source, at, "pdName") + _partition(source, at)


def aws_disk(source: Obj, at: str) -> list[FieldError]:
    return _required(source, at, "volumeID") + _partition(source, at)


def glusterfs(source: Obj, at: str) -> list[FieldError]:
    errs = _required(source, at, "endpoints", "path")
    namespace = source.get("endpointsNamespace")
    if namespace == "":
        detail = "if the endpointnamespace is set, it must be a valid namespace name"
        errs.append(field.invalid(f"{at}.endpointsNamespace", namespace, detail))
    elif namespace is not None:
        errs += label_errors(namespace, f"{at}.endpointsNamespace")
    return errs


def flocker(source: Obj, at: str) -> list[FieldError]:
    name, uuid = source.get("datasetName") or "", source.get("datasetUUID") or ""
    errs: list[FieldError] = []
    if not name and not uuid:
        errs.append(field.required(at, "one of datasetName and datasetUUID is required"))
    if name and uuid:
        detail = "datasetName and datasetUUID can not be specified simultaneously"
        errs.append(field.invalid(at, "resource", detail))
    if "/" in name:
        errs.append(field.invalid(f"{at}.datasetName", name, "must not contain '/'"))
    return errs


def nfs(source: Obj, at: str) -> list[FieldError]:
    errs = _required(source, at, "server", "path")
    path = source.get("path") or ""
    if not path.startswith("/"):
        errs.append(field.invalid(f"{at}.path", path, "must be an absolute path"))
    return errs


def rbd(source: Obj, at: str) -> list[FieldError]:
    return _required(source, at, "monitors", "image")


def split_host_port(text: str) -> bool:
    """Whether Go's ``net.SplitHostPort`` takes ``text`` (the port may be empty)."""
    colon = text.rfind(":")
    if colon < 0:
        return False
    start = end = 0
    if text.startswith("["):
        close = text.find("]")
        if close < 0 or close + 1 != colon:
            return False
        start, end = 1, close + 1
    elif ":" in text[:colon]:
        return False  # too many colons
    return "[" not in text[start:] and "]" not in text[end:]


def quobyte(source: Obj, at: str) -> list[FieldError]:
    registry = source.get("registry") or ""
    errs: list[FieldError] = []
    if not registry:
        errs.append(field.required(f"{at}.registry", QUOBYTE_REGISTRY))
    elif len(source.get("tenant") or "") >= 65:
        detail = "must be a UUID and may not exceed a length of 64 characters"
        errs.append(field.required(f"{at}.tenant", detail))
    else:
        errs += [
            field.invalid(f"{at}.registry", registry, QUOBYTE_REGISTRY)
            for pair in registry.split(",")
            if not split_host_port(pair)
        ]
    return errs + _required(source, at, "volume")


def cephfs(source: Obj, at: str) -> list[FieldError]:
    return _required(source, at, "monitors")


def iscsi_name(name: str, at: str) -> list[FieldError]:
    """An IQN or initiator name: ``iqn``, ``eui`` or ``naa`` and its format (Go's
    MatchString: the IQN pattern may match anywhere)."""
    if not name.startswith(("iqn", "eui", "naa")):
        return [field.invalid(at, name, VALID_FORMAT)]
    pattern = {"iqn": _IQN, "eui": _EUI, "naa": _NAA}[name[:3]]
    return [] if pattern.search(name) else [field.invalid(at, name, VALID_FORMAT)]


def iscsi(source: Obj, at: str, pv_name: str) -> list[FieldError]:
    portal = source.get("targetPortal") or ""
    errs = _required(source, at, "targetPortal")
    initiator = source.get("initiatorName")
    if initiator is not None and len(f"{pv_name}:{portal}") > 64:
        detail = (
            "Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters "
            "if iscsi.initiatorName is specified."
        )
        errs.append(field.invalid(f"{at}.targetportal", portal, detail))
    iqn = source.get("iqn") or ""
    errs += iscsi_name(iqn, f"{at}.iqn") if iqn else [field.required(f"{at}.iqn")]
    lun = source.get("lun") or 0
    if not 0 <= lun <= 255:
        errs.append(field.invalid(f"{at}.lun", lun, LUN_RANGE))
    secret = source.get("secretRef")
    chap = source.get("chapAuthDiscovery") or source.get("chapAuthSession")
    if chap and secret is None:
        errs.append(field.required(f"{at}.secretRef"))
    if secret is not None:
        errs += _required(secret, f"{at}.secretRef", "name")
    if initiator is not None:
        errs += iscsi_name(initiator, f"{at}.initiatorname")
    return errs


def cinder(source: Obj, at: str) -> list[FieldError]:
    errs = _required(source, at, "volumeID")
    secret = source.get("secretRef")
    if secret is not None:
        errs += _required(secret, f"{at}.secretRef", "name", "namespace")
    return errs


def fc(source: Obj, at: str) -> list[FieldError]:
    """``validateFCVolumeSource`` (pods' and PVs')."""
    wwns, wwids = source.get("targetWWNs") or [], source.get("wwids") or []
    errs: list[FieldError] = []
    if not wwns and not wwids:
        detail = "must specify either targetWWNs or wwids, but not both"
        errs.append(field.required(f"{at}.targetWWNs", detail))
    if wwns and wwids:
        detail = "targetWWNs and wwids can not be specified simultaneously"
        errs.append(field.invalid(f"{at}.targetWWNs", wwns, detail))
    lun = source.get("lun")
    if not wwns:
        return errs
    if lun is None:
        detail = "lun is required if targetWWNs is specified"
        errs.append(field.required(f"{at}.lun", detail))
    elif not 0 <= lun <= 255:
        errs.append(field.invalid(f"{at}.lun", lun, LUN_RANGE))
    return errs


def flex(source: Obj, at: str) -> list[FieldError]:
    errs = _required(source, at, "driver")
    for key in sorted(source.get("options") or {}):
        namespace = key.split("/", 1)[0]
        if ("." + namespace.lower()).endswith((".kubernetes.io", ".k8s.io")):
            detail = "kubernetes.io and k8s.io namespaces are reserved"
            errs.append(field.invalid(f"{at}.options[{key}]", key, detail))
    return errs


def azure_file(source: Obj, at: str) -> list[FieldError]:
    errs = _required(source, at, "secretName", "shareName")
    if source.get("secretNamespace") == "":
        errs.append(field.required(f"{at}.secretNamespace"))
    return errs


def azure_disk(source: Obj, at: str) -> list[FieldError]:
    """``validateAzureDisk`` (pods' and PVs')."""
    errs = _required(source, at, "diskName", "diskURI")
    uri, mode, kind = source.get("diskURI") or "", source.get("cachingMode"), source.get("kind")
    if mode is not None and mode not in CACHING_MODES:
        errs.append(field.not_supported(f"{at}.cachingMode", mode, CACHING_MODES))
    if kind is not None and kind not in DISK_KINDS:
        errs.append(field.not_supported(f"{at}.kind", kind, DISK_KINDS))
    if kind == "Managed" and not uri.startswith("/subscriptions/"):
        errs.append(field.not_supported(f"{at}.diskURI", uri, [MANAGED_URI]))
    if kind is not None and kind != "Managed" and not uri.startswith("https://"):
        errs.append(field.not_supported(f"{at}.diskURI", uri, [BLOB_URI]))
    return errs


def one_field(key: str) -> Check:
    def check(source: Obj, at: str) -> list[FieldError]:
        return _required(source, at, key)

    return check


def scale_io(source: Obj, at: str) -> list[FieldError]:
    return _required(source, at, "gateway", "system", "volumeName")


def local(source: Obj, at: str) -> list[FieldError]:
    path = source.get("path") or ""
    if not path:
        return [field.required(f"{at}.path")]
    return no_backsteps(path, f"{at}.path")


def storageos(source: Obj, at: str) -> list[FieldError]:
    name, namespace = source.get("volumeName") or "", source.get("volumeNamespace") or ""
    errs = label_errors(name, f"{at}.volumeName") if name else [field.required(f"{at}.volumeName")]
    if namespace:
        errs += label_errors(namespace, f"{at}.volumeNamespace")
    secret = source.get("secretRef")
    if secret is not None:
        errs += _required(secret, f"{at}.secretRef", "name", "namespace")
    return errs


CSI_SECRETS = (
    "controllerPublishSecretRef",
    "controllerExpandSecretRef",
    "nodePublishSecretRef",
    "nodeExpandSecretRef",
)  # kube checks these four (not nodeStageSecretRef), in this order


def _secret_reference(ref: Obj, at: str) -> list[FieldError]:
    """``validatePVSecretReference``: a secret's name and namespace."""
    name, namespace = ref.get("name") or "", ref.get("namespace") or ""
    errs = (
        [field.invalid(f"{at}.name", name, m) for m in is_dns1123_subdomain(name)]
        if name
        else [field.required(f"{at}.name")]
    )
    return errs + (
        label_errors(namespace, f"{at}.namespace")
        if namespace
        else [field.required(f"{at}.namespace")]
    )


def csi(source: Obj, at: str) -> list[FieldError]:
    errs = validate_driver_name(source.get("driver") or "", f"{at}.driver")
    errs += _required(source, at, "volumeHandle")
    for key in CSI_SECRETS:
        ref = source.get(key)
        if ref is not None:
            errs += _secret_reference(ref, f"{at}.{key}")
    return errs


# Each source in the order kube counts them: (key, the name a second one is refused
# under, the path its fields are checked under, its check).  ``iscsi`` also needs the
# volume's name, so its check is bound by the caller.
ORDER: tuple[tuple[str, str, str, Check | None], ...] = (
    ("hostPath", "hostPath", "hostPath", host_path),
    ("gcePersistentDisk", "gcePersistentDisk", "persistentDisk", gce_disk),
    ("awsElasticBlockStore", "awsElasticBlockStore", "awsElasticBlockStore", aws_disk),
    ("glusterfs", "glusterfs", "glusterfs", glusterfs),
    ("flocker", "flocker", "flocker", flocker),
    ("nfs", "nfs", "nfs", nfs),
    ("rbd", "rbd", "rbd", rbd),
    ("quobyte", "quobyte", "quobyte", quobyte),
    ("cephfs", "cephFS", "cephfs", cephfs),
    ("iscsi", "iscsi", "iscsi", None),
    ("cinder", "cinder", "cinder", cinder),
    ("fc", "fc", "fc", fc),
    ("flexVolume", "flexVolume", "flexVolume", flex),
    ("azureFile", "azureFile", "azureFile", azure_file),
    ("vsphereVolume", "vsphereVolume", "vsphereVolume", one_field("volumePath")),
    ("photonPersistentDisk", "photonPersistentDisk", "photonPersistentDisk", one_field("pdID")),
    ("portworxVolume", "portworxVolume", "portworxVolume", one_field("volumeID")),
    ("azureDisk", "azureDisk", "azureDisk", azure_disk),
    ("scaleIO", "scaleIO", "scaleIO", scale_io),
    ("local", "local", "local", local),
    ("storageos", "storageos", "storageos", storageos),
    ("csi", "csi", "csi", csi),
)
SOURCE_KEYS = tuple(key for key, _, _, _ in ORDER)


def validate_sources(spec: Obj, pv_name: str, at: str) -> list[FieldError]:
    """The errors of the spec's sources: the first one's rules (a local volume's include
    node affinity), a Forbidden for each further one (a flexVolume is never refused as
    the second, though it counts: kube's slip), Required when there is none."""
    errs: list[FieldError] = []
    present: list[str] = []
    for key, dup_name, where, check in ORDER:
        source = spec.get(key)
        if source is None:
            continue
        if present and key != "flexVolume":
            errs.append(field.forbidden(f"{at}.{dup_name}", MORE_THAN_ONE))
            continue
        present.append(key)
        source = source if isinstance(source, dict) else {}
        if check is None:
            errs += iscsi(source, f"{at}.{where}", pv_name)
        else:
            errs += check(source, f"{at}.{where}")
        if key == "local" and spec.get("nodeAffinity") is None:
            detail = "Local volume requires node affinity"
            errs.append(field.required(f"{at}.nodeAffinity", detail))
    if not present:
        errs.append(field.required(at, "must specify a volume type"))
    return errs


# kube's defaults for a PV's sources (SetObjectDefaults_PersistentVolume): string
# fields take theirs when empty, pointer fields when absent.
_STRING_DEFAULTS = {
    "rbd": {"pool": "rbd", "user": "admin", "keyring": "/etc/ceph/keyring"},
    "iscsi": {"iscsiInterface": "default"},
    "scaleIO": {"storageMode": "ThinProvisioned", "fsType": "xfs"},
}
_POINTER_DEFAULTS: dict[str, Obj] = {
    "hostPath": {"type": ""},
    "azureDisk": {
        "cachingMode": "ReadWrite",
        "fsType": "ext4",
        "readOnly": False,
        "kind": "Shared",
    },
}


def default_sources(spec: Obj) -> None:
    """Fill in the defaults of the spec's sources, in place."""
    for defaults, when_empty in ((_STRING_DEFAULTS, True), (_POINTER_DEFAULTS, False)):
        for key, values in defaults.items():
            source = spec.get(key)
            if not isinstance(source, dict):
                continue
            for name, value in values.items():
                if source.get(name) is None or (when_empty and source[name] == ""):
                    source[name] = value
