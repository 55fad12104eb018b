"""Strategies of the kinds that hold configuration data: Secrets and ConfigMaps.

kube's ValidateSecret and ValidateConfigMap but for the metadata (the generic strategy's):
their keys, 1 MiB of data in all, what each built-in Secret type must hold, and the data
an ``immutable`` object keeps.
"""

from __future__ import annotations

import base64

from platform_api.codec.bounds import BodyError
from platform_api.codec.text import parse_json
from platform_api.registry.strategy import GenericStrategy, Obj, register
from platform_api.validation import field
from platform_api.validation.field import FieldError
from platform_api.validation.names import is_config_map_key

MAX_DATA_SIZE = 1024 * 1024  # kube's MaxSecretSize, for ConfigMaps too


@register("", "Secret")
class SecretStrategy(GenericStrategy):
    update_meta_checks = "UC"

    # ``stringData`` was merged into ``data`` as the write was decoded (defaults.py).
    def prepare_for_create(self, obj: Obj) -> None:
        super().prepare_for_create(obj)
        obj.setdefault("type", "Opaque")

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        super().prepare_for_update(new, old)
        new.setdefault("type", old.get("type", "Opaque"))

    def validate(self, obj: Obj) -> list[FieldError]:
        return super().validate(obj) + _secret_content(obj, self._upstream())

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        """kube's ValidateSecretUpdate: the update's rules, then the whole Secret's."""
        errs = super().validate_update(new, old)
        if new.get("type", "") != old.get("type", ""):
            errs.append(field.invalid("type", new.get("type", ""), "field is immutable"))
        return errs + _immutable_data(new, old, ("data",)) + _secret_content(new, self._upstream())

    def _upstream(self) -> bool:
        """Whether kube's own type names (``kubernetes.io/tls``...) are served too, and so
        held to their rules: under --serve-upstream-groups, as stock tools write them."""
        return self.aliases is not None and self.aliases.enabled


@register("", "ConfigMap")
class ConfigMapStrategy(GenericStrategy):
    update_meta_checks = "UC"

    def validate(self, obj: Obj) -> list[FieldError]:
        return super().validate(obj) + _config_map_content(obj)

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        """kube's ValidateConfigMapUpdate: the update's rules, then the whole ConfigMap's."""
        errs = super().validate_update(new, old)
        return errs + _immutable_data(new, old, ("data", "binaryData")) + _config_map_content(new)


def _secret_content(obj: Obj, upstream: bool = False) -> list[FieldError]:
    """kube's ValidateSecret but for the metadata: keys, 1 MiB, what the type needs."""
    data = obj.get("data") or {}
    errs = _keys("data", data)
    if sum(len(_decoded(v)) for v in data.values()) > MAX_DATA_SIZE:
        errs.append(field.too_long("data", MAX_DATA_SIZE))
    kind = str(obj.get("type", ""))
    if upstream and kind.startswith(_UPSTREAM_TYPE):
        kind = _BRANDED_TYPE + kind[len(_UPSTREAM_TYPE) :]
        return errs + _secret_type(kind, data, obj["metadata"], _UPSTREAM_TYPE)
    return errs + _secret_type(kind, data, obj["metadata"])


def _config_map_content(obj: Obj) -> list[FieldError]:
    """kube's ValidateConfigMap but for the metadata: keys, no key in both bags, 1 MiB
    of data in all."""
    data, binary = obj.get("data") or {}, obj.get("binaryData") or {}
    errs = _keys("data", data)
    errs += [
        field.invalid(f"data[{key}]", key, "duplicate of key present in binaryData")
        for key in data
        if key in binary
    ]
    errs += _keys("binaryData", binary)
    size = sum(len(str(v).encode()) for v in data.values())
    size += sum(len(_decoded(v)) for v in binary.values())
    if size > MAX_DATA_SIZE:  # kube names the whole object: an empty path
        errs.append(field.too_long("[]", MAX_DATA_SIZE))
    return errs


# The keys each built-in Secret type must hold (kube's ValidateSecret).
_REQUIRED_KEYS = {
    "platform.io/tls": ("tls.crt", "tls.key"),
    "platform.io/dockercfg": (".dockercfg",),
    "platform.io/dockerconfigjson": (".dockerconfigjson",),
    "platform.io/ssh-auth": ("ssh-privatekey",),
}
SERVICE_ACCOUNT_NAME = "platform.io/service-account.name"
_BRANDED_TYPE, _UPSTREAM_TYPE = "platform.io/", "kubernetes.io/"


def _secret_type(kind: str, data: Obj, meta: Obj, prefix: str = _BRANDED_TYPE) -> list[FieldError]:
    """What a Secret of a built-in type must hold; ``prefix`` is the brand its type was
    written in, which the service account annotation then takes too."""
    if kind == "platform.io/service-account-token":
        annotation = prefix + SERVICE_ACCOUNT_NAME[len(_BRANDED_TYPE) :]
        if not (meta.get("annotations") or {}).get(annotation):
            return [field.required(f"metadata.annotations[{annotation}]")]
        return []
    if kind == "platform.io/basic-auth":
        if "username" in data or "password" in data:
            return []
        return [field.required("data[username]"), field.required("data[password]")]
    if kind == "platform.io/ssh-auth":  # present and not empty
        return [] if data.get("ssh-privatekey") else [field.required("data[ssh-privatekey]")]
    keys = _REQUIRED_KEYS.get(kind, ())
    missing = [field.required(f"data[{key}]") for key in keys if key not in data]
    if missing or kind not in _JSON_KEYS:
        return missing
    key = _JSON_KEYS[kind]  # a docker config must be a JSON object
    problem = _json_object_error(_decoded(data[key]))
    return [field.invalid(f"data[{key}]", "<secret contents redacted>", problem)] if problem else []


_JSON_KEYS = {
    "platform.io/dockercfg": ".dockercfg",
    "platform.io/dockerconfigjson": ".dockerconfigjson",
}


def _json_object_error(data: bytes) -> str:
    """What Go's json.Unmarshal into a map says of ``data``, or "" when it is an object."""
    try:
        value, _ = parse_json(data)
    except BodyError as e:
        return str(e)
    if isinstance(value, dict):
        return ""
    kind = {list: "array", str: "string", bool: "bool", type(None): ""}.get(type(value), "number")
    if not kind:
        return ""  # null leaves the map empty, as Go's decoder does
    return f"json: cannot unmarshal {kind} into Go value of type map[string]interface {{}}"


def _keys(path: str, data: Obj) -> list[FieldError]:
    return [
        field.invalid(f"{path}[{key}]", key, message)
        for key in data
        for message in is_config_map_key(str(key))
    ]


def _decoded(value: object) -> bytes:
    """A base64 value's bytes (already checked against the schema by the decoder)."""
    try:
        return base64.b64decode(str(value), validate=False)
    except ValueError:
        return str(value).encode()


def _immutable_data(new: Obj, old: Obj, fields: tuple[str, ...]) -> list[FieldError]:
    """ConfigMaps and Secrets marked ``immutable: true`` keep their data and the flag."""
    if not old.get("immutable"):
        return []
    errs = []
    if not new.get("immutable"):
        errs.append(field.forbidden("immutable", "field is immutable when `immutable` is set"))
    for name in fields:
        if new.get(name) != old.get(name):
            errs.append(field.forbidden(name, "field is immutable when `immutable` is set"))
    return errs
