"""RBAC's refusals print their values as kube does: its kinds and groups are plain Go
strings, quoted with %q (the reference's answers)."""

from __future__ import annotations

from typing import Any

import pytest

from platform_api.registry.rbac import validate_subject

GROUP = "rbac.authorization.platform.io"


@pytest.mark.parametrize(
    ("subject", "message"),
    [
        (
            {"kind": "\x01", "name": "u"},
            'subjects[0].kind: Unsupported value: "\\x01": supported values: '
            '"ServiceAccount", "User", "Group"',
        ),
        (
            {"kind": "User", "name": "u", "apiGroup": "\x01"},
            f'subjects[0].apiGroup: Unsupported value: "\\x01": supported values: "{GROUP}"',
        ),
        (
            {"kind": "ServiceAccount", "name": "u", "apiGroup": "\x01", "namespace": "x"},
            'subjects[0].apiGroup: Unsupported value: "\\x01": supported values: ""',
        ),
    ],
)
def test_subject_values_are_plain_strings(subject: dict[str, Any], message: str) -> None:
    assert [str(e) for e in validate_subject(subject, True, "subjects[0]")] == [message]
