"""ConfigMap and Secret data as kube's ValidateConfigMap/ValidateSecret check it: the keys
(file names once mounted) and 1 MiB of data in all."""

from __future__ import annotations

import base64

from platform_api.registry.core import MAX_DATA_SIZE, ConfigMapStrategy, SecretStrategy
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
