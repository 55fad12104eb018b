"""EncryptionConfiguration loading and validation: kube's field paths and messages."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from platform_api.apiserver.config import from_flags
from platform_api.apiserver.flagvalues import ConfigError
from platform_api.storage.encryption.config import EncryptionConfigError, load
from platform_api.storage.encryption.dynamic import check

from .helpers import key, keys, rule, write_config


def error(tmp_path: Path, *rules: dict[str, Any], reload: bool = False) -> str:
    path = write_config(tmp_path / "enc.yaml", *rules)
    with pytest.raises(EncryptionConfigError) as info:
        check(path, reload)
    return str(info.value)


def test_valid_config_loads(tmp_path: Path) -> None:
    path = write_config(
        tmp_path / "enc.yaml",
        rule(["secrets", "configmaps"], {"aescbc": keys("a", "b")}, {"identity": {}}),
        rule(["*.apps"], {"secretbox": keys("s")}),
        rule(["*.*"], {"aesgcm": keys("g", size=16)}),
    )
    config = load(path)
    assert [r.resources for r in config.rules] == [("secrets", "configmaps"), ("*.apps",), ("*.*",)]
    assert [p.kind for p in config.rules[0].providers] == ["aescbc", "identity"]
    assert config.content_hash.startswith("k8s:enc:unidling:v1:")


def test_key_length(tmp_path: Path) -> None:
    bad = {"keys": [{"name": "k", "secret": key(8)}]}
    assert error(tmp_path, rule(["secrets"], {"aescbc": bad})) == (
        "error while parsing file: resources[0].providers[0].aescbc.keys[0].secret: "
        'Invalid value: "REDACTED": secret is not of the expected length, got 8, '
        "expected one of [16 24 32]"
    )
    assert error(tmp_path, rule(["secrets"], {"secretbox": keys("k", size=16)})) == (
        "error while parsing file: resources[0].providers[0].secretbox.keys[0].secret: "
        'Invalid value: "REDACTED": secret is not of the expected length, got 16, '
        "expected one of [32]"
    )


def test_base64_and_mandatory_fields(tmp_path: Path) -> None:
    bad = {"keys": [{"name": "", "secret": "not base64!"}, {"name": "x"}]}
    assert error(tmp_path, rule(["secrets"], {"aesgcm": bad})) == (
        "error while parsing file: ["
        "resources[0].providers[0].aesgcm.keys[0].name: Required value: name is a mandatory "
        "field for a key, "
        'resources[0].providers[0].aesgcm.keys[0].secret: Invalid value: "REDACTED": secrets '
        "must be base64 encoded, "
        "resources[0].providers[0].aesgcm.keys[1].secret: Required value: secret is a "
        "mandatory field for a key]"
    )
    assert error(tmp_path, rule(["secrets"], {"aesgcm": {"keys": []}})) == (
        "error while parsing file: resources[0].providers[0].aesgcm.keys: Required value: "
        "at least one keys is required"
    )


def test_resources_and_providers_required(tmp_path: Path) -> None:
    assert error(tmp_path) == (
        "error while parsing file: resources: Required value: at least one resources is required"
    )
    assert error(tmp_path, {"resources": [], "providers": []}) == (
        "error while parsing file: [resources[0].resources: Required value: at least one "
        "resources[0].resources is required, resources[0].providers: Required value: at least "
        "one resources[0].providers is required]"
    )


def test_more_than_one_provider(tmp_path: Path) -> None:
    text = error(tmp_path, rule(["secrets"], {"identity": {}, "aescbc": keys("k")}))
    assert text.startswith("error while parsing file: resources[0].providers[0]: Invalid value: ")
    assert text.endswith(
        "more than one provider specified in a single element, should split into different "
        "list elements"
    )


@pytest.mark.parametrize(
    ("resource", "why"),
    [
        ("Secrets", "resource name should not contain capital letters"),
        (
            "*",
            "use '*.' to encrypt all the resources from core API group or *.* to encrypt all "
            "resources",
        ),
        ("serviceipallocations", "resources which do not have REST API/s cannot be encrypted"),
        ("*.extensions", "'extensions' group has been removed and cannot be used for encryption"),
        ("secrets.*", "encrypting the same resource across groups is not supported"),
    ],
)
def test_resource_names(tmp_path: Path, resource: str, why: str) -> None:
    assert error(tmp_path, rule([resource], {"identity": {}})) == (
        f'error while parsing file: resources[0].resources[0]: Invalid value: "{resource}": {why}'
    )


def test_overlap_and_duplicates(tmp_path: Path) -> None:
    assert error(tmp_path, rule(["secrets", "*."], {"identity": {}})) == (
        'error while parsing file: resources[0].resources: Invalid value: ["secrets","*."]: '
        "using overlapping resources such as 'secrets' and '*.' in the same resource list is "
        "not allowed as they will be masked"
    )
    assert error(tmp_path, rule(["secrets", "secrets"], {"identity": {}})) == (
        'error while parsing file: resources[0].resources: Invalid value: ["secrets","secrets"]: '
        "the same resource cannot be specified multiple times"
    )


def test_masked_by_earlier_rule(tmp_path: Path) -> None:
    assert error(
        tmp_path, rule(["*.apps"], {"identity": {}}), rule(["deployments.apps"], {"identity": {}})
    ) == (
        'error while building transformers: resource "deployments.apps" is masked by earlier '
        'rule "*.apps"'
    )
    assert error(
        tmp_path, rule(["*.*"], {"identity": {}}), rule(["secrets"], {"identity": {}})
    ) == ('error while building transformers: resource "secrets" is masked by earlier rule "*.*"')


def test_kms_fields(tmp_path: Path) -> None:
    kms = {"apiVersion": "v2", "name": "a:b", "endpoint": "tcp://x", "timeout": "0s"}
    assert error(tmp_path, rule(["secrets"], {"kms": kms})) == (
        "error while parsing file: ["
        'resources[0].providers[0].kms.name: Invalid value: "a:b": invalid KMS provider name '
        "a:b, must not contain ':', "
        'resources[0].providers[0].kms.timeout: Invalid value: "0s": timeout should be a '
        "positive value, "
        'resources[0].providers[0].kms.endpoint: Invalid value: "tcp://x": unsupported scheme '
        '"tcp" for KMS provider, only unix is supported]'
    )
    same = {"apiVersion": "v2", "name": "k", "endpoint": "unix:///k.sock"}
    assert error(tmp_path, rule(["secrets"], {"kms": same}, {"kms": same})) == (
        'error while parsing file: resources[0].providers[1].kms.name: Invalid value: "k": '
        "duplicate KMS provider name k, names must be unique"
    )


def test_kms_v1_is_refused(tmp_path: Path) -> None:
    v1 = {"name": "old", "endpoint": "unix:///k.sock"}
    assert error(tmp_path, rule(["secrets"], {"kms": v1})).startswith(
        "error while building transformers: KMSv1 is deprecated"
    )


def test_file_errors(tmp_path: Path) -> None:
    missing = str(tmp_path / "nope.yaml")
    with pytest.raises(EncryptionConfigError) as info:
        load(missing)
    assert str(info.value) == (
        "error while parsing file: error while loading file: error reading encryption provider "
        f'configuration file "{missing}": open {missing}: no such file or directory'
    )
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    with pytest.raises(EncryptionConfigError, match=r"is empty$"):
        load(str(empty))
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text("apiVersion: v1\nkind: ConfigMap\n")
    with pytest.raises(EncryptionConfigError, match='no kind "ConfigMap" is registered'):
        load(str(wrong))


def test_flags(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        from_flags({"encryption-provider-config-automatic-reload": ""})
    assert str(info.value) == (
        "--encryption-provider-config-automatic-reload must be set with "
        "--encryption-provider-config"
    )
    bad = write_config(tmp_path / "bad.yaml", rule(["Secrets"], {"identity": {}}))
    with pytest.raises(ConfigError, match=r"^error while parsing file: resources"):
        from_flags({"encryption-provider-config": bad})
    good = write_config(tmp_path / "good.yaml", rule(["secrets"], {"aescbc": keys("k")}))
    cfg = from_flags(
        {"encryption-provider-config": good, "encryption-provider-config-automatic-reload": ""}
    )
    assert cfg.encryption_provider_config == good
    assert cfg.encryption_provider_config_automatic_reload
