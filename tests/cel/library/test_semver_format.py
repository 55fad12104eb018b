"""kube's semver and format libraries (cases of library/semver_test.go, format_test.go)."""

from __future__ import annotations

import pytest

from tests.cel.conftest import run, runtime_error

_LABEL_ERROR = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)


@pytest.mark.parametrize(
    ("expr", "value"),
    [
        ('isSemver("1.2.3-beta.1+build.1")', True),
        ('isSemver("")', False),
        ('isSemver("v1.0.0")', False),
        ('isSemver(" 1.0.0")', False),
        ('isSemver("1. 0.0")', False),
        ('isSemver("1.0.0 ")', False),
        ('isSemver("01.01.01")', False),
        ('isSemver("1")', False),
        ('isSemver("1.1")', False),
        ('isSemver("", true)', False),
        ('isSemver(" 1.0.0", true)', False),
        ('isSemver("1. 0.0", true)', False),
        ('isSemver("1.0.0 ", true)', False),
        ('isSemver("v1.0.0", true)', True),
        ('isSemver("01.01.01", true)', True),
        ('isSemver("1", true)', True),
        ('isSemver("1.1", true)', True),
        ('semver("v01.01", true) == semver("1.1.0")', True),
        ('semver("1.2.3") == semver("1.2.3")', True),
        ('semver("1.2.3") == semver("1.0.0")', False),
        ('semver("1.2.3+a") == semver("1.2.3+b")', True),
        ('semver("1.0.0").isLessThan(semver("1.2.3"))', True),
        ('semver("1.0.0").isLessThan(semver("1.0.0"))', False),
        ('semver("1.2.3").isGreaterThan(semver("1.0.0"))', True),
        ('semver("1.0.0").isGreaterThan(semver("1.0.0"))', False),
        ('semver("1.2.3").compareTo(semver("1.2.3"))', 0),
        ('semver("1.0.0").compareTo(semver("1.2.3"))', -1),
        ('semver("1.2.3").compareTo(semver("1.0.0"))', 1),
        ('semver("1.0.0-alpha").compareTo(semver("1.0.0-alpha.1"))', -1),
        ('semver("1.0.0-alpha.1").compareTo(semver("1.0.0-alpha.beta"))', -1),
        ('semver("1.0.0-rc.1").compareTo(semver("1.0.0"))', -1),
        ('semver("1.2.3").major()', 1),
        ('semver("1.2.3").minor()', 2),
        ('semver("1.2.3").patch()', 3),
    ],
)
def test_semver(expr: str, value: object) -> None:
    assert run(expr) == value


def test_semver_errors() -> None:
    assert (
        runtime_error('semver("v1.0") == semver("1.0.0")') == "No Major.Minor.Patch elements found"
    )
    assert runtime_error('semver("1.2", true) == semver("1.2-x", true)') == (
        "short version cannot contain PreRelease/Build meta data"
    )
    assert runtime_error('semver("01.1.1").major() == 1') == (
        'Major number must not contain leading zeroes "01"'
    )


@pytest.mark.parametrize(
    ("expr", "value"),
    [
        ('format.dns1123Label().validate("my-label-name")', None),
        ('format.dns1123Subdomain().validate("apiextensions.k8s.io")', None),
        ('format.qualifiedName().validate("apiextensions.k8s.io/v1beta1")', None),
        ('format.dns1123LabelPrefix().validate("my-label-prefix-")', None),
        ('format.dns1123SubdomainPrefix().validate("mysubdomain.prefix.-")', None),
        ('format.dns1035LabelPrefix().validate("my-label-prefix-")', None),
        ('format.uri().validate("http://example.com")', None),
        ('format.uuid().validate("123e4567-e89b-12d3-a456-426614174000")', None),
        ('format.byte().validate("aGVsbG8=")', None),
        ('format.date().validate("2021-01-01")', None),
        ('format.datetime().validate("2021-01-01T00:00:00Z")', None),
        ('format.dns1123Label().validate("contains a space")', [_LABEL_ERROR]),
        ('format.byte().validate("aGVsbG8")', ["invalid base64"]),
        ('format.date().validate("2020-01-32")', ["invalid date"]),
        ('format.datetime().validate("2020-01-32T00:00:00Z")', ["invalid datetime"]),
        ('format.named("unknown").hasValue()', False),
        ('format.named("dns1123Label").hasValue()', True),
        ('format.named("dns1123Label").value() == format.dns1123Label()', True),
        ("format.dns1123Label() == format.dns1035Label()", False),
        ('format.labelValue().validate("my-cool-label-Value")', None),
    ],
)
def test_format(expr: str, value: object) -> None:
    assert run(expr) == value


def test_format_validate_optional_in_rules() -> None:
    assert run('format.dns1123Label().validate("Bad").hasValue()') is True
    assert run('format.named("uuid").value().validate("nope").value()') == [
        "does not match the UUID format"
    ]
