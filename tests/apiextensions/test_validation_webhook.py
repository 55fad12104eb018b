"""``spec.conversion``: strategy, webhook URL or service, CA bundle, review versions (kube's
messages, checked against kube v1.36), and Go's URL parsing underneath."""

from __future__ import annotations

import base64
import datetime
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from platform_api.apiextensions.validation_webhook import ca_bundle_error
from platform_api.validation.names import is_dns1035_label, is_dns1123_subdomain
from tests.apiextensions.builders import crd, create_errors, stored, update_errors, ver

DNS1035 = is_dns1035_label("A")[0]
SUBDOMAIN = is_dns1123_subdomain("A_")[0]
TWO = [ver("v1"), ver("v2", storage=False)]


def conv(config: dict[str, Any], versions: Any = ("v1",)) -> dict[str, Any]:
    webhook: dict[str, Any] = {"clientConfig": config}
    if versions is not None:
        webhook["conversionReviewVersions"] = list(versions)
    return crd(TWO, conversion={"strategy": "Webhook", "webhook": webhook})


CASES = [
    pytest.param(
        conv({"service": {"name": "n", "namespace": "ns", "port": 0}}),
        [
            "spec.conversion.webhookClientConfig.service.port: Invalid value: 0: port is not valid: must be between 1 and 65535, inclusive",
        ],
        id="service port 0",
    ),
    pytest.param(
        conv({"service": {"name": "n", "namespace": "ns", "port": 65536}}),
        [
            "spec.conversion.webhookClientConfig.service.port: Invalid value: 65536: port is not valid: must be between 1 and 65535, inclusive",
        ],
        id="service port 65536",
    ),
    pytest.param(
        conv({"service": {"name": "n", "namespace": "ns"}}),
        [],
        id="service port defaults to 443",
    ),
    pytest.param(
        conv({"service": {"path": "foo//Bar/"}}),
        [
            "spec.conversion.webhookClientConfig.service.name: Required value",
            "spec.conversion.webhookClientConfig.service.namespace: Required value",
            "spec.conversion.webhookClientConfig.service.path: Invalid value: \"foo//Bar/\": must start with a '/'",
            'spec.conversion.webhookClientConfig.service.path: Invalid value: "foo//Bar/": segment[1] may not be empty',
            f'spec.conversion.webhookClientConfig.service.path: Invalid value: "foo//Bar/": segment[2]: {SUBDOMAIN}',
        ],
        id="service without name, namespace, with bad path",
    ),
    pytest.param(
        conv({"service": {"name": "n"}}),
        ["spec.conversion.webhookClientConfig.service.name: Required value"],
        id="service without namespace: kube reports it at name",
    ),
    pytest.param(
        conv({"service": {"namespace": "ns"}}),
        ["spec.conversion.webhookClientConfig.service.namespace: Required value"],
        id="service without name: kube reports it at namespace",
    ),
    pytest.param(
        conv({"service": {"name": "n", "namespace": "ns", "path": "//"}}),
        [
            'spec.conversion.webhookClientConfig.service.path: Invalid value: "//": segment[0] may not be empty',
        ],
        id="service path //",
    ),
    pytest.param(
        conv({"service": {"name": "n", "namespace": "ns", "path": "/"}}),
        [],
        id="service path /",
    ),
    pytest.param(
        conv({"url": "https://example.com/x", "service": {"name": "n", "namespace": "ns"}}),
        [
            "spec.conversion.webhookClientConfig: Required value: exactly one of url or service is required",
        ],
        id="url and service",
    ),
    pytest.param(
        conv({}),
        [
            "spec.conversion.webhookClientConfig: Required value: exactly one of url or service is required",
        ],
        id="neither url nor service",
    ),
    pytest.param(
        crd(
            TWO, conversion={"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"]}}
        ),
        [
            "spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook",
        ],
        id="no clientConfig",
    ),
    pytest.param(
        crd(TWO, conversion={"strategy": "Webhook"}),
        [
            "spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook",
            "spec.conversion.conversionReviewVersions: Required value",
        ],
        id="no webhook",
    ),
    pytest.param(
        conv({"url": ""}),
        [
            "spec.conversion.webhookClientConfig.url: Invalid value: \"\": 'https' is the only allowed URL scheme; desired format: https://host[/path]",
            'spec.conversion.webhookClientConfig.url: Invalid value: "": host must be specified; desired format: https://host[/path]',
        ],
        id="blank url",
    ),
    pytest.param(
        conv({"url": "http://u:p@example.com/x?a=b#frag"}),
        [
            "spec.conversion.webhookClientConfig.url: Invalid value: \"http\": 'https' is the only allowed URL scheme; desired format: https://host[/path]",
            'spec.conversion.webhookClientConfig.url: Invalid value: "u:p": user information is not permitted in the URL',
            'spec.conversion.webhookClientConfig.url: Invalid value: "frag": fragments are not permitted in the URL',
            'spec.conversion.webhookClientConfig.url: Invalid value: "a=b": query parameters are not permitted in the URL',
        ],
        id="http url with user, query, fragment",
    ),
    pytest.param(
        conv({"url": "https://exa mple.com/"}),
        [
            'spec.conversion.webhookClientConfig.url: Required value: url must be a valid URL: parse "https://exa mple.com/": invalid character " " in host name; desired format: https://host[/path]',
        ],
        id="space in host",
    ),
    pytest.param(
        conv({"url": "https://[::1/x"}),
        [
            "spec.conversion.webhookClientConfig.url: Required value: url must be a valid URL: parse \"https://[::1/x\": missing ']' in host; desired format: https://host[/path]",
        ],
        id="unclosed IPv6 host",
    ),
    pytest.param(
        conv({"url": "https://h:12a/x"}),
        [
            'spec.conversion.webhookClientConfig.url: Required value: url must be a valid URL: parse "https://h:12a/x": invalid port ":12a" after host; desired format: https://host[/path]',
        ],
        id="bad port",
    ),
    pytest.param(
        conv({"url": "%zz"}),
        [
            'spec.conversion.webhookClientConfig.url: Required value: url must be a valid URL: parse "%zz": invalid URL escape "%zz"; desired format: https://host[/path]',
        ],
        id="bad escape",
    ),
    pytest.param(
        conv({"url": "https://example.com/%zz"}),
        [
            'spec.conversion.webhookClientConfig.url: Required value: url must be a valid URL: parse "https://example.com/%zz": invalid URL escape "%zz"; desired format: https://host[/path]',
        ],
        id="bad escape in path",
    ),
    pytest.param(
        conv({"url": "https://example.com/a#%zz"}),
        [
            'spec.conversion.webhookClientConfig.url: Required value: url must be a valid URL: parse "https://example.com/a#%zz": invalid URL escape "%zz"; desired format: https://host[/path]',
        ],
        id="bad escape in fragment",
    ),
    pytest.param(
        conv({"url": "https:/example.com/a"}),
        [
            'spec.conversion.webhookClientConfig.url: Invalid value: "": host must be specified; desired format: https://host[/path]',
        ],
        id="no host",
    ),
    pytest.param(
        conv({"url": "example.com/a"}),
        [
            "spec.conversion.webhookClientConfig.url: Invalid value: \"\": 'https' is the only allowed URL scheme; desired format: https://host[/path]",
            'spec.conversion.webhookClientConfig.url: Invalid value: "": host must be specified; desired format: https://host[/path]',
        ],
        id="no scheme",
    ),
    pytest.param(
        conv({"url": "https://a b@example.com/a"}),
        [
            'spec.conversion.webhookClientConfig.url: Required value: url must be a valid URL: parse "https://a b@example.com/a": net/url: invalid userinfo; desired format: https://host[/path]',
        ],
        id="space in user",
    ),
    pytest.param(
        conv({"url": "https://%41.com/a"}),
        [
            'spec.conversion.webhookClientConfig.url: Required value: url must be a valid URL: parse "https://%41.com/a": invalid URL escape "%41"; desired format: https://host[/path]',
        ],
        id="escape in host",
    ),
    pytest.param(
        conv({"url": "https://example.com"}, versions=None),
        [
            "spec.conversion.conversionReviewVersions: Required value",
        ],
        id="no review versions",
    ),
    pytest.param(
        conv({"url": "https://example.com"}, versions=["v3", "v3", "V4"]),
        [
            'spec.conversion.conversionReviewVersions[1]: Invalid value: "v3": duplicate version',
            f'spec.conversion.conversionReviewVersions[2]: Invalid value: "V4": {DNS1035}',
            'spec.conversion.conversionReviewVersions: Invalid value: ["v3","v3","V4"]: must include at least one of v1, v1beta1',
        ],
        id="unknown review versions",
    ),
    pytest.param(
        conv({"url": "https://example.com"}, versions=["v1beta1"]),
        [],
        id="review version v1beta1",
    ),
    pytest.param(
        crd(
            TWO,
            conversion={
                "strategy": "None",
                "webhook": {
                    "clientConfig": {"url": "https://x"},
                    "conversionReviewVersions": ["v1"],
                },
            },
        ),
        [
            "spec.conversion.webhookClientConfig: Forbidden: should not be set when strategy is not set to Webhook",
            "spec.conversion.conversionReviewVersions: Forbidden: should not be set when strategy is not set to Webhook",
        ],
        id="None strategy with webhook settings",
    ),
    pytest.param(
        crd(TWO, conversion={"strategy": "Foo"}),
        [
            'spec.conversion.strategy: Unsupported value: "Foo": supported values: "None", "Webhook"',
        ],
        id="unknown strategy",
    ),
    pytest.param(
        crd(TWO, conversion={"strategy": ""}),
        [
            "spec.conversion.strategy: Required value",
        ],
        id="empty strategy",
    ),
    pytest.param(
        conv({"url": "https://example.com", "caBundle": "Cg=="}),
        [],
        id="invalid CA bundle allowed on create",
    ),
]


@pytest.mark.parametrize(("definition", "expected"), CASES)
def test_conversion(definition: dict[str, Any], expected: list[str]) -> None:
    assert create_errors(definition) == expected


def _pem() -> bytes:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "example.com")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(1)
        .not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(days=1))
        .sign(key, hashes.SHA256())
    )
    return cert.public_bytes(serialization.Encoding.PEM)


PEM = _pem()


def test_ca_bundle_errors() -> None:
    garbage = b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"
    key = b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"
    assert ca_bundle_error(PEM) is None
    assert ca_bundle_error(garbage + PEM) is None
    assert ca_bundle_error(b"\n") == "unable to parse bytes as PEM block"
    assert ca_bundle_error(garbage) == "failed to parse certificate: x509: malformed certificate"
    assert ca_bundle_error(key) == "no valid certificate authority data seen"
    assert ca_bundle_error(key + b"junk") == "unable to parse bytes as PEM block"


def _with_bundle(bundle: bytes) -> dict[str, Any]:
    return conv({"url": "https://example.com", "caBundle": base64.b64encode(bundle).decode()})


def test_invalid_ca_bundle_ratchets_on_update() -> None:
    invalid = _with_bundle(b"\n")
    bad = (
        'spec.conversion.webhookClientConfig.caBundle: Invalid value: "Cg==": unable to load '
        "root certificates: unable to parse bytes as PEM block"
    )
    # established with a valid bundle: the new one must be valid too
    assert update_errors(invalid, stored(_with_bundle(PEM))) == [bad]
    # not yet established: anything goes
    assert update_errors(invalid, stored(_with_bundle(PEM), established=False)) == []
    # the stored bundle was already invalid
    assert update_errors(invalid, stored(_with_bundle(b"\x00"))) == []
    assert update_errors(_with_bundle(PEM), stored(_with_bundle(PEM))) == []


def test_unknown_review_versions_ratchet_on_update() -> None:
    unknown = conv({"url": "https://example.com"}, versions=["v3"])
    error = (
        'spec.conversion.conversionReviewVersions: Invalid value: ["v3"]: must include at '
        "least one of v1, v1beta1"
    )
    assert update_errors(unknown, stored(conv({"url": "https://example.com"}))) == [error]
    assert update_errors(unknown, stored(crd(TWO))) == [error]  # None strategy: no versions
    assert (
        update_errors(unknown, stored(conv({"url": "https://example.com"}, versions=["v4"]))) == []
    )
