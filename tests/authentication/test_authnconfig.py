"""AuthenticationConfiguration: validation at load, claim rules, and reloads."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from twisted.internet.task import Clock

from platform_api.apiserver.authn import ConfigReloader
from platform_api.apiserver.config import ServerConfig
from platform_api.apiserver.metrics import render
from platform_api.authentication import authnconfig
from platform_api.authentication.interface import AuthenticationError
from platform_api.authentication.union import RequestAuthenticator

HEAD = "apiVersion: apiserver.config.platform.io/v1beta1\nkind: AuthenticationConfiguration\n"


def write(tmp_path: Path, body: str) -> str:
    path = tmp_path / "authn.yaml"
    path.write_text(HEAD + body)
    return str(path)


def jwt_entry(
    url: str = "https://idp", mappings: str = "username: {claim: sub, prefix: ''}"
) -> str:
    return f"- issuer: {{url: {url}, audiences: [a]}}\n  claimMappings: {{{mappings}}}\n"


def test_validation_errors_are_all_reported(tmp_path: Path) -> None:
    body = "jwt:\n" + jwt_entry("http://idp") + jwt_entry("https://sa")
    body += "- issuer: {url: https://two, audiences: [a, b]}\n  claimMappings: {username: {claim: sub}}\n"
    with pytest.raises(authnconfig.ConfigError) as failed:
        authnconfig.load(write(tmp_path, body), ("https://sa",))
    assert str(failed.value).splitlines() == [
        "jwt[0].issuer.url: Invalid value: 'http://idp': URL scheme must be https",
        "jwt[1].issuer.url: Invalid value: 'https://sa': issuer URL must not overlap with "
        "disallowed issuers: ['https://sa']",
        "jwt[2].issuer.audienceMatchPolicy: Invalid value: '': audienceMatchPolicy must be "
        "MatchAny for multiple audiences",
        "jwt[2].claimMappings.username.prefix: Required value: prefix is required when claim is set",
    ]


def test_cel_type_errors(tmp_path: Path) -> None:
    body = "jwt:\n" + jwt_entry(mappings="username: {expression: '1 + 2'}")
    with pytest.raises(authnconfig.ConfigError, match="must evaluate to one of"):
        authnconfig.load(write(tmp_path, body))


def test_claim_rules_and_mappings(tmp_path: Path) -> None:
    body = (
        "jwt:\n"
        + jwt_entry(mappings="username: {expression: 'claims.email'}, uid: {claim: id}")
        + "  claimValidationRules: [{claim: hd, requiredValue: example.com}]\n"
    )
    rule = authnconfig.load(write(tmp_path, body)).jwt[0]
    user = rule.user({"email": "a@example.com", "id": 7, "hd": "example.com"})
    assert (user.name, user.uid) == ("a@example.com", "7")
    with pytest.raises(AuthenticationError, match="required claim hd"):
        rule.user({"email": "a@b", "hd": "other"})
    with pytest.raises(AuthenticationError, match="error evaluating"):
        rule.user({"hd": "example.com"})  # no email claim


def test_reload_swaps_authenticators_and_keeps_a_good_config(tmp_path: Path) -> None:
    path = write(tmp_path, "jwt:\n" + jwt_entry())
    fixed: Any = object()
    chain = RequestAuthenticator([], [fixed], None)
    cfg = ServerConfig(authentication_config=path)
    reloader = ConfigReloader(chain, cfg, Clock())
    reloader.check()
    assert chain.token_methods[0] is fixed and len(chain.token_methods) == 2
    Path(path).write_text(HEAD + "jwt:\n" + jwt_entry() + jwt_entry("https://two"))
    os.utime(path, (1, 1))
    reloader.check()
    assert len(chain.token_methods) == 3
    Path(path).write_text(HEAD + "jwt: [{issuer: {url: 'http://bad'}}]\n")
    os.utime(path, (2, 2))
    reloader.check()
    assert len(chain.token_methods) == 3  # the broken file is not applied
    text = render("")[0].decode()
    name = "apiserver_authentication_config_controller_automatic_reloads_total"
    assert f'{name}{{status="success"}} 1' in text.split("\n")
    assert f'{name}{{status="failure"}} 1' in text.split("\n")
    assert 'automatic_reload_last_timestamp_seconds{status="failure"}' in text
