"""A VolumeAttachment's attacher, as kube-apiserver v1.36 answered each (2026-12-07):
ValidateCSIDriverName checks the name lowercased, so "A" and "1Gi" are attachers."""

from __future__ import annotations

import pytest

from platform_api.registry.volumeattachment import validate_volume_attachment_spec

SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
    "or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "
    "regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)


@pytest.mark.parametrize(
    ("attacher", "messages"),
    [
        ("A", []),
        ("1Gi", []),
        ("", ["spec.attacher: Required value"]),
        ("A" * 64, ["spec.attacher: Too long: may not be more than 63 bytes"]),
        ("a_b", [f'spec.attacher: Invalid value: "a_b": {SUBDOMAIN}']),
    ],
)
def test_attacher_names(attacher: str, messages: list[str]) -> None:
    spec = {"attacher": attacher, "nodeName": "n", "source": {"persistentVolumeName": "pv"}}
    assert [str(e) for e in validate_volume_attachment_spec(spec)] == messages
