"""ConfigMap and Secret data as kube's ValidateConfigMap/ValidateSecret check it: the keys
(file names once mounted) and 1 MiB of data in all."""

from __future__ import annotations

import base64

from platform_api.registry.configdata import MAX_DATA_SIZE, ConfigMapStrategy, SecretStrategy
from platform_api.scheme.catalog import builtin_scheme

SCHEME = builtin_scheme()
KEY_REGEX = (
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. "
    "'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"
)


def _errors(strategy: type, kind: str, plural: str, **body: object) -> list[tuple[str, str]]:
    rt = SCHEME.lookup("", "v1", plural)
    obj = {"apiVersion": "v1", "kind": kind, "metadata": {"name": "x", "namespace": "ns"}}
    errs = strategy(rt).validate({**obj, **body})
    return [(e.field, e.body()) for e in errs]


def test_config_map_keys_and_size() -> None:
    assert _errors(ConfigMapStrategy, "ConfigMap", "configmaps", data={"a.b_c-1": "v"}) == []
    assert _errors(ConfigMapStrategy, "ConfigMap", "configmaps", data={"a b": "v", "..x": "v"}) == [
        ("data[a b]", f'Invalid value: "a b": {KEY_REGEX}'),
        ("data[..x]", "Invalid value: \"..x\": must not start with '..'"),
    ]
    both = _errors(
        ConfigMapStrategy, "ConfigMap", "configmaps", data={"k": "v"}, binaryData={"k": "dg=="}
    )
    assert both == [("data[k]", 'Invalid value: "k": duplicate of key present in binaryData')]
    at_limit = {"k": "x" * MAX_DATA_SIZE}
    assert _errors(ConfigMapStrategy, "ConfigMap", "configmaps", data=at_limit) == []
    over = {"k": "x" * (MAX_DATA_SIZE - 1), "j": "éé"}  # UTF-8 bytes count, as in Go
    assert _errors(ConfigMapStrategy, "ConfigMap", "configmaps", data=over) == [
        ("[]", "Too long: may not be more than 1048576 bytes")
    ]


def test_secret_keys_and_decoded_size() -> None:
    value = base64.b64encode(b"x" * MAX_DATA_SIZE).decode()  # 1 MiB decoded, ~1.4 MiB sent
    assert _errors(SecretStrategy, "Secret", "secrets", data={"k": value}) == []
    more = {"k": value, "j": base64.b64encode(b"y").decode()}
    assert _errors(SecretStrategy, "Secret", "secrets", data=more) == [
        ("data", "Too long: may not be more than 1048576 bytes")
    ]
    assert _errors(SecretStrategy, "Secret", "secrets", data={".": "eA=="}) == [
        ("data[.]", "Invalid value: \".\": must not be '.'")
    ]


def _update_errors(strategy: type, kind: str, plural: str, **body: object) -> list[tuple[str, str]]:
    rt = SCHEME.lookup("", "v1", plural)
    meta = {"name": "x", "namespace": "ns", "uid": "u", "resourceVersion": "1"}
    old = {"apiVersion": "v1", "kind": kind, "metadata": meta, "type": "Opaque"}
    if kind == "ConfigMap":
        del old["type"]
    errs = strategy(rt).validate_update({**old, **body}, old)
    return [(e.field, e.body()) for e in errs]


def test_updates_are_checked_as_whole_objects() -> None:
    """kube's ValidateConfigMapUpdate and ValidateSecretUpdate end with the whole object's
    rules: a key a create would refuse is refused on update (a JSON patch to /data/~)."""
    assert _update_errors(ConfigMapStrategy, "ConfigMap", "configmaps", data={"a~": "v"}) == [
        ("data[a~]", f'Invalid value: "a~": {KEY_REGEX}')
    ]
    both = {"data": {"k": "v"}, "binaryData": {"k": "dg=="}}
    assert _update_errors(ConfigMapStrategy, "ConfigMap", "configmaps", **both) == [
        ("data[k]", 'Invalid value: "k": duplicate of key present in binaryData')
    ]
    assert _update_errors(SecretStrategy, "Secret", "secrets", data={"b~": "eA=="}) == [
        ("data[b~]", f'Invalid value: "b~": {KEY_REGEX}')
    ]
    # the type's required keys, as on create (kube's ValidateSecret)
    auth = {"type": "platform.io/basic-auth"}
    rt = SCHEME.lookup("", "v1", "secrets")
    meta = {"name": "x", "namespace": "ns", "uid": "u", "resourceVersion": "1"}
    old = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": meta,
        **auth,
        "data": {"username": "eA=="},
    }
    errs = SecretStrategy(rt).validate_update({**old, "data": {}}, old)
    assert [(e.field, e.body()) for e in errs] == [
        ("data[username]", "Required value"),
        ("data[password]", "Required value"),
    ]
