"""The credentials --admission-control-config-file gives each webhook host."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
from twisted.internet.defer import fail
from twisted.internet.error import ConnectionRefusedError
from twisted.internet.testing import MemoryReactor

from platform_api.admission.webhook.caller import CallError, WebhookCaller
from platform_api.admission.webhook.credentials import (
    ClientCredentials,
    CredentialResolver,
    load_admission_config,
)
from platform_api.apiserver.flagvalues import ConfigError
from platform_api.registry.serviceresolver import Address
from tests.admission.plugin_kit import run


def creds(token: str) -> ClientCredentials:
    return ClientCredentials(token=token)


@pytest.mark.parametrize(
    ("target", "token"),
    [
        ("hook.team.svc:443", "exact"),
        ("other.team.svc:443", "team-wildcard"),
        ("hook.other.svc:8443", "svc-wildcard"),
        ("example.com:443", "no-port"),
        ("example.org:9000", "default"),
    ],
)
def test_kube_lookup_order(target: str, token: str) -> None:
    resolver = CredentialResolver(
        {
            "hook.team.svc:443": creds("exact"),
            "*.team.svc:443": creds("team-wildcard"),
            "*.svc:8443": creds("svc-wildcard"),
            "example.com": creds("no-port"),
            "*": creds("default"),
        },
        None,
    )
    found = resolver.for_target(target)
    assert found is not None and found.token == token


def test_the_current_context_then_nothing() -> None:
    assert CredentialResolver({}, creds("current")).for_target("x:1") == creds("current")
    assert CredentialResolver({}, None).for_target("x:1") is None


def write_config(tmp_path: Path, kubeconfig: str) -> str:
    (tmp_path / "hooks.kubeconfig").write_text(
        "apiVersion: v1\nkind: Config\nusers:\n- name: '*'\n  user: {token: secret}\n"
    )
    path = tmp_path / "admission.yaml"
    path.write_text(
        "apiVersion: apiserver.config.platform.io/v1\nkind: AdmissionConfiguration\nplugins:\n"
        "- name: ValidatingAdmissionWebhook\n  configuration:\n"
        "    apiVersion: apiserver.config.platform.io/v1\n"
        "    kind: WebhookAdmissionConfiguration\n"
        f"    kubeConfigFile: {kubeconfig}\n"
    )
    return str(path)


def test_load(tmp_path: Path) -> None:
    loaded = load_admission_config(write_config(tmp_path, str(tmp_path / "hooks.kubeconfig")))
    assert list(loaded) == ["ValidatingAdmissionWebhook"]
    found = loaded["ValidatingAdmissionWebhook"].for_target("127.0.0.1:9443")
    assert found is not None and found.token == "secret"


def test_refusals(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_admission_config(write_config(tmp_path, "hooks.kubeconfig"))
    assert str(info.value) == (
        'kubeConfigFile: Invalid value: "hooks.kubeconfig": must be an absolute file path'
    )
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: Something\n")
    with pytest.raises(ConfigError):
        load_admission_config(str(bad))
    with pytest.raises(ConfigError):
        load_admission_config(str(tmp_path / "missing.yaml"))


@pytest.mark.parametrize(
    ("bundle", "problem"),
    [
        # as kube-apiserver v1.36 answered a pod create through such a webhook (2026-12-07)
        (b"a", "unable to parse bytes as PEM block"),
        (
            b"-----BEGIN CERTIFICATE-----\nYWJj\n-----END CERTIFICATE-----\n",
            "failed to parse certificate: x509: malformed certificate",
        ),
        (
            b"-----BEGIN FOO-----\nYWJj\n-----END FOO-----\n",
            "no valid certificate authority data seen",
        ),
    ],
)
def test_a_ca_bundle_client_go_cannot_load_is_no_call(bundle: bytes, problem: str) -> None:
    """client-go fails building the REST client before dialing: the call fails in its
    words (a Fail policy's 500, an Ignore policy's skip)."""
    caller = WebhookCaller(MemoryReactor(), None)
    config = {"url": "https://x.example.com/v", "caBundle": base64.b64encode(bundle).decode()}
    with pytest.raises(CallError) as caught:
        caller._connection(config, "ValidatingAdmissionWebhook")
    assert str(caught.value) == (
        f"could not get REST client: unable to load root certificates: {problem}"
    )


class _Resolver:
    def resolve(self, namespace: str, name: str, port: int) -> Address:
        return Address("127.0.0.1", 9, f"{name}.{namespace}.svc")


class _Refusing:
    def post(self, url: str, **kwargs: Any) -> Any:
        return fail(ConnectionRefusedError())


def test_a_service_is_named_by_its_dns_name() -> None:
    """As kube's webhook client calls a service: by ``name.namespace.svc`` in the URL,
    dialing the address its resolver finds."""
    caller = WebhookCaller(MemoryReactor(), _Resolver())  # type: ignore[arg-type]
    caller._client = lambda connection: _Refusing()  # type: ignore[method-assign]
    config = {"service": {"namespace": "ns", "name": "hook", "path": "/v"}}
    with pytest.raises(CallError) as caught:
        run(caller.call(config, {}, 10, "ValidatingAdmissionWebhook"))
    assert str(caught.value) == (
        'failed to call webhook: Post "https://hook.ns.svc:443/v?timeout=10s": '
        "dial tcp 127.0.0.1:9: connect: connection refused"
    )
