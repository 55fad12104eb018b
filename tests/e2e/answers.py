"""Recorded kube-apiserver answers: a Status body, and replaying one dry-run create."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import requests


def assert_create_answered(
    admin: requests.Session, url: str, case: dict[str, Any], shown: Callable[[Any], Any]
) -> None:
    """POST ``case["body"]`` as a dry run: kube's status code, then its message (an error)
    or ``shown`` of the created object (what the case recorded of it)."""
    got = admin.post(url + "?dryRun=All", json=case["body"])
    assert got.status_code == case["code"], got.text
    answer = got.json()["message"] if case["code"] >= 300 else shown(got.json())
    assert answer == case["answer"]


def status(
    code: int, reason: str, message: str, details: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A failure Status body as kube writes it (``details`` only when it sends some; no
    ``reason`` for an error that is no Status, which kube passes on as a plain 500)."""
    body: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
    }
    if reason:
        body["reason"] = reason
    if details is not None:
        body["details"] = details
    body["code"] = code
    return body


def unknown(message: str) -> dict[str, Any]:
    """kube's Status for an error that is no Status (etcd's, a patch it cannot apply):
    500, the error's text, no reason."""
    return status(500, "", message)


def internal_error(message: str) -> dict[str, Any]:
    """kube's InternalError Status: the error's text once in the message, once as a cause."""
    causes = {"causes": [{"message": message}]}
    return status(500, "InternalError", f"Internal error occurred: {message}", causes)
