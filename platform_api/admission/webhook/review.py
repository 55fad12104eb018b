"""AdmissionReview: the request a webhook is sent, and kube's checks on its answer.

As k8s.io/apiserver's ``webhook/request``: v1 or v1beta1 (the first of the webhook's
``admissionReviewVersions`` this server knows), every request field filled, and an
answer refused unless it echoes the request's uid and kind (v1) and keeps patches to
mutating webhooks.  A denial becomes the Status kube builds (``ToStatusErr``).
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field
from typing import Any

from platform_api import errors
from platform_api.admission.request import AdmissionRequest, request_body
from platform_api.uid import new_uid

Obj = dict[str, Any]
KNOWN_VERSIONS = ("v1", "v1beta1")


class InvalidResponse(Exception):
    """The answer is not a usable AdmissionReview; the text is kube's."""


def review_version(versions: tuple[str, ...]) -> str:
    """The first version the webhook accepts that this server speaks ("" if none)."""
    return next((v for v in versions if v in KNOWN_VERSIONS), "")


def new_review(req: AdmissionRequest, version: str, group: str) -> tuple[str, Obj]:
    """A fresh uid and the AdmissionReview to POST."""
    uid = new_uid()
    review = {
        "kind": "AdmissionReview",
        "apiVersion": f"{group}/{version}",
        "request": request_body(req, uid),
    }
    return uid, review


@dataclass
class Verdict:
    allowed: bool
    result: Obj | None
    patch: bytes = b""
    patch_type: str = ""
    warnings: list[str] = field(default_factory=list)
    audit_annotations: dict[str, str] = field(default_factory=dict)


def verify(answer: Any, uid: str, api_version: str, mutating: bool) -> Verdict:
    """kube's ``VerifyAdmissionResponse``: the answer's checks, in its order."""
    if not isinstance(answer, dict):
        raise InvalidResponse("webhook response was absent")
    response = answer.get("response")
    if not isinstance(response, dict):
        raise InvalidResponse("webhook response was absent")
    v1 = not api_version.endswith("/v1beta1")
    if v1:
        got_uid = str(response.get("uid", ""))
        if got_uid != uid:
            raise InvalidResponse(f'expected response.uid="{uid}", got "{got_uid}"')
        got = f"{answer.get('apiVersion', '')}, Kind={answer.get('kind', '')}"
        if got != f"{api_version}, Kind=AdmissionReview":
            raise InvalidResponse(
                f"expected webhook response of {api_version}, Kind=AdmissionReview, got {got}"
            )
    patch = _patch_bytes(response.get("patch"))
    has_type = response.get("patchType") is not None
    patch_type = str(response.get("patchType") or "")
    if not mutating:
        if patch:
            raise InvalidResponse("validating webhook may not return response.patch")
        if has_type and v1:
            raise InvalidResponse("validating webhook may not return response.patchType")
        patch_type = ""
    elif v1:
        if patch and not has_type:
            raise InvalidResponse("webhook returned response.patch but not response.patchType")
        if not patch and has_type:
            raise InvalidResponse("webhook returned response.patchType but not response.patch")
        if has_type and not patch_type:
            raise InvalidResponse(f'webhook returned invalid response.patchType of "{patch_type}"')
    elif patch:
        patch_type = "JSONPatch"
    result = response.get("status")
    return Verdict(
        allowed=response.get("allowed") is True,
        result=result if isinstance(result, dict) else None,
        patch=patch,
        patch_type=patch_type,
        warnings=[str(w) for w in response.get("warnings") or () if isinstance(w, str)],
        audit_annotations={
            str(k): str(v) for k, v in (response.get("auditAnnotations") or {}).items()
        },
    )


def _patch_bytes(value: Any) -> bytes:
    if not value:
        return b""
    if not isinstance(value, str):
        raise InvalidResponse("json: cannot unmarshal patch into Go value of type []uint8")
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError) as e:
        raise InvalidResponse(f"illegal base64 data in response.patch: {e}") from None


def denied(name: str, result: Obj | None) -> errors.StatusError:
    """kube's ``ToStatusErr``: a webhook's refusal, never below 400 nor a Success."""
    result = dict(result or {})
    code = result.get("code")
    code = code if isinstance(code, int) and code >= 400 else 400
    by = f'admission webhook "{name}" denied the request'
    if result.get("message"):
        message = f"{by}: {result['message']}"
    elif result.get("reason"):
        message = f"{by}: {result['reason']}"
    else:
        message = f"{by} without explanation"
    details = result.get("details")
    error = errors.StatusError(
        code,
        str(result.get("reason") or ""),
        message,
        details if isinstance(details, dict) else None,
    )
    if isinstance(result.get("metadata"), dict):
        error.metadata = result["metadata"]
    return error
