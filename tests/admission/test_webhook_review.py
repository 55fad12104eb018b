"""AdmissionReview requests and kube's checks on a webhook's answer."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from platform_api.admission.webhook import review
from platform_api.admission.webhook.review import InvalidResponse
from tests.admission.test_webhook_matching import request

V1 = "admission.platform.io/v1"
PATCH = base64.b64encode(b'[{"op":"add","path":"/a","value":1}]').decode()


def answer(api_version: str = V1, **response: Any) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": "AdmissionReview", "response": response}


def test_request_fields_in_kube_order() -> None:
    req = request(subresource="scale", kind=("autoscaling", "v1", "Scale"), dry_run=True)
    req.options = {"kind": "UpdateOptions", "apiVersion": "meta.platform.io/v1"}
    uid, body = review.new_review(req, "v1", "admission.platform.io")
    assert body["apiVersion"] == V1
    assert body["kind"] == "AdmissionReview"
    got = body["request"]
    assert list(got) == [
        "uid",
        "kind",
        "resource",
        "subResource",
        "requestKind",
        "requestResource",
        "requestSubResource",
        "name",
        "namespace",
        "operation",
        "userInfo",
        "object",
        "oldObject",
        "dryRun",
        "options",
    ]
    assert got["uid"] == uid
    assert got["kind"] == {"group": "autoscaling", "version": "v1", "kind": "Scale"}
    assert got["resource"] == {"group": "apps", "version": "v1", "resource": "deployments"}
    assert got["userInfo"] == {"username": "jane", "uid": "7", "groups": ["dev"]}
    assert got["dryRun"] is True
    assert got["oldObject"] is None


def test_review_version_is_the_first_known() -> None:
    assert review.review_version(("v2", "v1beta1", "v1")) == "v1beta1"
    assert review.review_version(("v2",)) == ""


@pytest.mark.parametrize(
    ("body", "mutating", "message"),
    [
        ({}, False, "webhook response was absent"),
        (answer(uid="other", allowed=True), False, 'expected response.uid="u", got "other"'),
        (
            answer("admission.platform.io/v1beta1", uid="u", allowed=True),
            False,
            "expected webhook response of admission.platform.io/v1, Kind=AdmissionReview, "
            "got admission.platform.io/v1beta1, Kind=AdmissionReview",
        ),
        (
            answer(uid="u", allowed=True, patch=PATCH),
            False,
            "validating webhook may not return response.patch",
        ),
        (
            answer(uid="u", allowed=True, patchType="JSONPatch"),
            False,
            "validating webhook may not return response.patchType",
        ),
        (
            answer(uid="u", allowed=True, patch=PATCH),
            True,
            "webhook returned response.patch but not response.patchType",
        ),
        (
            answer(uid="u", allowed=True, patchType="JSONPatch"),
            True,
            "webhook returned response.patchType but not response.patch",
        ),
    ],
)
def test_invalid_answers(body: dict[str, Any], mutating: bool, message: str) -> None:
    with pytest.raises(InvalidResponse) as info:
        review.verify(body, "u", V1, mutating)
    assert str(info.value) == message


def test_a_v1beta1_patch_needs_no_type() -> None:
    verdict = review.verify(
        answer("admission.platform.io/v1beta1", allowed=True, patch=PATCH),
        "ignored",
        "admission.platform.io/v1beta1",
        True,
    )
    assert verdict.patch_type == "JSONPatch"
    assert verdict.patch == b'[{"op":"add","path":"/a","value":1}]'


def test_warnings_and_audit_annotations() -> None:
    verdict = review.verify(
        answer(uid="u", allowed=True, warnings=["careful"], auditAnnotations={"k": "v"}),
        "u",
        V1,
        False,
    )
    assert verdict.allowed
    assert verdict.warnings == ["careful"]
    assert verdict.audit_annotations == {"k": "v"}


@pytest.mark.parametrize(
    ("result", "code", "reason", "message"),
    [
        (None, 400, "", 'admission webhook "h" denied the request without explanation'),
        ({"code": 200}, 400, "", 'admission webhook "h" denied the request without explanation'),
        (
            {"code": 403, "reason": "Forbidden"},
            403,
            "Forbidden",
            'admission webhook "h" denied the request: Forbidden',
        ),
        (
            {"code": 422, "message": "no", "reason": "Invalid"},
            422,
            "Invalid",
            'admission webhook "h" denied the request: no',
        ),
    ],
)
def test_denials(result: dict[str, Any] | None, code: int, reason: str, message: str) -> None:
    error = review.denied("h", result)
    assert (error.code, error.reason, error.message) == (code, reason, message)
    assert error.status()["status"] == "Failure"
