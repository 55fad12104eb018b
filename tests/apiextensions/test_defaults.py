"""CRD defaulting: kube's v1 ``SetObjectDefaults_CustomResourceDefinition`` cases."""

from __future__ import annotations

from typing import Any

import pytest

from platform_api.apiextensions.defaults import default_crd


@pytest.mark.parametrize(
    ("original", "expected"),
    [
        pytest.param({}, {"spec": {"conversion": {"strategy": "None"}}}, id="empty"),
        pytest.param(
            {
                "spec": {
                    "scope": "Namespaced",
                    "conversion": {
                        "strategy": "Webhook",
                        "webhook": {"clientConfig": {"service": {}}},
                    },
                }
            },
            {
                "spec": {
                    "scope": "Namespaced",
                    "conversion": {
                        "strategy": "Webhook",
                        "webhook": {"clientConfig": {"service": {"port": 443}}},
                    },
                }
            },
            id="conversion defaults",
        ),
        pytest.param(
            {
                "spec": {
                    "conversion": {"strategy": "None"},
                    "versions": [
                        {"name": "v1", "storage": False, "served": True},
                        {"name": "v2", "storage": True, "served": True},
                        {"name": "v3", "storage": False, "served": True},
                    ],
                }
            },
            {
                "spec": {
                    "conversion": {"strategy": "None"},
                    "versions": [
                        {"name": "v1", "storage": False, "served": True},
                        {"name": "v2", "storage": True, "served": True},
                        {"name": "v3", "storage": False, "served": True},
                    ],
                },
                "status": {"storedVersions": ["v2"]},
            },
            id="storage status defaults",
        ),
        pytest.param(
            {"spec": {"names": {"plural": "foos", "kind": "Foo"}}},
            {
                "spec": {
                    "names": {
                        "plural": "foos",
                        "kind": "Foo",
                        "singular": "foo",
                        "listKind": "FooList",
                    },
                    "conversion": {"strategy": "None"},
                }
            },
            id="names defaults",
        ),
        pytest.param(
            {
                "spec": {
                    "names": {"kind": "Foo", "singular": "f", "listKind": "Foos"},
                    "conversion": {
                        "strategy": "Webhook",
                        "webhook": {"clientConfig": {"service": {"port": 8443}}},
                    },
                },
                "status": {"storedVersions": ["v0"]},
            },
            {
                "spec": {
                    "names": {"kind": "Foo", "singular": "f", "listKind": "Foos"},
                    "conversion": {
                        "strategy": "Webhook",
                        "webhook": {"clientConfig": {"service": {"port": 8443}}},
                    },
                },
                "status": {"storedVersions": ["v0"]},
            },
            id="set values are kept",
        ),
    ],
)
def test_defaults(original: dict[str, Any], expected: dict[str, Any]) -> None:
    default_crd(original)
    assert original == expected
