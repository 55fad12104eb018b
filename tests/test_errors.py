"""Status errors and field errors render exactly as apimachinery's."""

from __future__ import annotations

from platform_api import errors
from platform_api.validation import field


def test_not_found_in_a_named_group() -> None:
    error = errors.not_found("deployments", "apps", "nginx")
    assert error.status() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'deployments.apps "nginx" not found',
        "reason": "NotFound",
        "details": {"name": "nginx", "group": "apps", "kind": "deployments"},
        "code": 404,
    }
    assert list(error.status()) == [
        "kind",
        "apiVersion",
        "metadata",
        "status",
        "message",
        "reason",
        "details",
        "code",
    ]


def test_invalid_aggregates_messages() -> None:
    errs = [
        field.required("metadata.name", "name or generateName is required"),
        field.invalid("spec.x", 5, "too big"),
    ]
    error = errors.invalid("Deployment", "apps", "d", errs)
    assert error.code == 422
    assert error.message == (
        'Deployment.apps "d" is invalid: [metadata.name: Required value: name or generateName is required, '
        "spec.x: Invalid value: 5: too big]"
    )
    assert error.details["causes"][1] == {
        "reason": "FieldValueInvalid",
        "message": "Invalid value: 5: too big",
        "field": "spec.x",
    }


def test_field_error_value_rendering() -> None:
    assert str(field.invalid("a", "x", "d")) == 'a: Invalid value: "x": d'
    assert str(field.invalid("a", True, "")) == "a: Invalid value: true"
    assert str(field.invalid("a", ["x"], "d")) == 'a: Invalid value: ["x"]: d'
    assert (
        str(field.not_supported("dryRun", ["x"], ["All"]))
        == 'dryRun: Unsupported value: ["x"]: supported values: "All"'
    )
    assert (
        str(field.too_long("metadata.annotations", 262144))
        == "metadata.annotations: Too long: may not be more than 262144 bytes"
    )
    assert str(field.forbidden("x", "nope")) == "x: Forbidden: nope"


def test_too_large_resource_version() -> None:
    error = errors.too_large_resource_version(100, 50)
    body = error.status()
    assert error.code == 504 and body["reason"] == "Timeout"
    assert body["message"] == "Timeout: Too large resource version: 100, current: 50"
    assert body["details"] == {
        "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
        "retryAfterSeconds": 1,
    }
    assert error.headers == {"Retry-After": "1"}
